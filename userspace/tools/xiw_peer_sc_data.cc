// SPDX-License-Identifier: GPL-2.0
//
// xiw-peer's scenarios of the data transfers that must work, edge cases
// included.

#include "xiw_peer_scenario.h"

namespace xiw::peer {

void data_send_multiseg(Ctx &x)
{
	ConnOpts co;
	co.rlen = 4096;
	x.connect(co);
	Bytes m = pattern(3000, 44);
	for (uint32_t mo = 0; mo < 3000; mo += 1000)
		x.send(x.send_seg(Bytes(m.begin() + mo, m.begin() + mo + 1000), 1, mo, mo == 2000));
	x.expect_wc("SUCCESS", 3000, "RECV");
	x.check("rcv", 0, 3000, 44);
}

void data_send_bytewise(Ctx &x)
{
	x.connect();
	SegSpec s = x.send_seg(pattern(300, 45), x.c.next_msn(0));
	s.bytewise = true;
	x.send(s);
	x.expect_wc("SUCCESS", 300, "RECV");
	x.check("rcv", 0, 300, 45);
}

void data_crc_bytewise(Ctx &x)
{
	ConnOpts co;
	co.crc = true;
	x.connect(co);
	SegSpec s = x.send_seg(pattern(200, 46), x.c.next_msn(0));
	s.bytewise = true;
	x.send(s);
	x.expect_wc("SUCCESS", 200, "RECV");
	x.check("rcv", 0, 200, 46);
}

void data_send_zero(Ctx &x)
{
	x.connect();
	x.send_msg({});
	x.expect_wc("SUCCESS", 0, "RECV");
	x.alive();
}

void data_send_sequence(Ctx &x)
{
	x.connect();
	Bytes all;
	for (int i = 0; i < 4; i++) {
		Bytes f = x.c.frame(x.send_seg(pattern(100 + i, uint32_t(50 + i)), x.c.next_msn(0)));
		all.insert(all.end(), f.begin(), f.end());
	}
	x.c.write(all);
	auto v = x.poll(4);
	need(v.size() == 4, fmt("%zu completions for 4 Sends", v.size()));
	for (int i = 0; i < 4; i++) {
		need(v[i].status == "SUCCESS" && v[i].len == uint32_t(100 + i) && v[i].id == uint64_t(1000 + i),
		     fmt("completion %d: %s len %u id %llu", i, v[i].status.c_str(), v[i].len,
			 (unsigned long long)v[i].id));
		x.check("rcv", uint64_t(i) * 1024, size_t(100 + i), uint32_t(50 + i));
	}
}

void data_send_exact_fit(Ctx &x)
{
	x.connect();
	x.send_msg(pattern(1024, 47));
	x.expect_wc("SUCCESS", 1024, "RECV");
	x.check("rcv", 0, 1024, 47);
}

void data_write_ooo(Ctx &x)
{
	x.connect();
	Region g = x.reg["rw"];
	Bytes m = pattern(3000, 48);
	for (int part : { 2, 0, 1 })
		x.send(x.write_seg(g.stag, g.base + 1000 * part,
				   Bytes(m.begin() + 1000 * part, m.begin() + 1000 * (part + 1)),
				   part == 2));
	x.alive();	// Writes before a Send are placed when the Send completes
	x.check("rw", 0, 3000, 48);
}

void data_write_edges(Ctx &x)
{
	x.connect();
	Region g = x.reg["rw"];
	x.send(x.write_seg(g.stag, g.base, pattern(1, 49)));
	x.send(x.write_seg(g.stag, g.base + kRegionLen - 7, pattern(7, 50)));
	x.alive();
	x.check("rw", 0, 1, 49);
	x.check("rw", kRegionLen - 7, 7, 50);
	x.check("rw", 1, 100, 0);
}

void data_write_zero_bad_stag(Ctx &x)
{
	x.connect();
	x.send(x.write_seg(0xabcdef00, 0x1234, {}));
	x.alive();
}

void data_read_zero_bad_stag(Ctx &x)
{
	x.connect();
	x.send(x.read_req(0xabcdef00, 0x1234, 0, x.c.next_msn(1)));
	Segment s = x.recv("a zero-length Read Response");
	need(s.hdr.opcode == RDMAP_OP_READ_RESP && s.payload.empty() && s.hdr.last &&
	     s.hdr.stag == kPeerStag,
	     fmt("opcode 0x%x len %zu STag 0x%x", s.hdr.opcode, s.payload.size(), s.hdr.stag));
	x.alive();
}

void data_read(Ctx &x)
{
	x.connect();
	Region g = x.reg["ro"];
	x.send(x.read_req(g.stag, g.base + 100, 5000, x.c.next_msn(1)));
	Bytes got;
	for (;;) {
		Segment s = x.recv("a Read Response");
		need(s.hdr.opcode == RDMAP_OP_READ_RESP, fmt("opcode 0x%x", s.hdr.opcode));
		need(s.hdr.stag == kPeerStag && s.hdr.to == kPeerTo + got.size(),
		     fmt("Read Response to STag 0x%x TO 0x%llx, expected TO 0x%llx", s.hdr.stag,
			 (unsigned long long)s.hdr.to, (unsigned long long)(kPeerTo + got.size())));
		got.insert(got.end(), s.payload.begin(), s.payload.end());
		if (s.hdr.last)
			break;
	}
	need(got == pattern(5000, 1, 100), fmt("Read returned %zu octets, not the region's", got.size()));
}

void data_read_whole(Ctx &x)
{
	x.connect();
	Region r = x.reg["ro"];
	x.send(x.read_req(r.stag, r.base, kRegionLen, x.c.next_msn(1)));
	size_t n = 0;
	for (;;) {
		Segment s = x.recv("a Read Response");
		need(s.hdr.opcode == RDMAP_OP_READ_RESP, fmt("opcode 0x%x", s.hdr.opcode));
		need(s.payload == pattern(s.payload.size(), 1, n), fmt("Read data at %zu", n));
		n += s.payload.size();
		if (s.hdr.last)
			break;
	}
	need(n == kRegionLen, fmt("%zu octets", n));
}

void data_target_send(Ctx &x)
{
	x.connect();
	x.t_.must("post send 3000 seed=55");
	need(x.recv_send(1) == pattern(3000, 55), "the target's Send differs");
	x.t_.must("post send 0");
	need(x.recv_send(2).empty(), "zero-length Send carried data");
	x.expect_wc("SUCCESS", 3000, "SEND");
	x.expect_wc("SUCCESS", 0, "SEND");
}

void data_target_write(Ctx &x)
{
	x.connect();
	x.t_.must(fmt("post write 5000 seed=56 stag=0x%x to=0x%llx", kPeerStag,
		      (unsigned long long)(kPeerTo + 64)));
	size_t n = 0;
	while (n < 5000) {
		Segment s = x.recv("the target's Write");
		need(s.hdr.opcode == RDMAP_OP_WRITE && s.hdr.stag == kPeerStag &&
		     s.hdr.to == kPeerTo + 64 + n,
		     fmt("Write segment opcode 0x%x STag 0x%x TO 0x%llx", s.hdr.opcode, s.hdr.stag,
			 (unsigned long long)s.hdr.to));
		need(s.payload == pattern(s.payload.size(), 56, n), fmt("Write data at %zu", n));
		n += s.payload.size();
		need(s.hdr.last == (n == 5000), "L flag not on the last segment only");
	}
	x.expect_wc("SUCCESS", 5000, "RDMA_WRITE");
}

void data_target_read(Ctx &x)
{
	x.connect();
	x.t_.must(fmt("post read 6000 off=128 stag=0x%x to=0x%llx", kPeerStag,
		      (unsigned long long)(kPeerTo + 8)));
	Segment r = x.recv("the target's Read Request");
	need(r.hdr.opcode == RDMAP_OP_READ_REQ && r.hdr.qn == RDMAP_QN_READ_REQ && r.hdr.msn == 1,
	     fmt("opcode 0x%x QN %u MSN %u", r.hdr.opcode, r.hdr.qn, r.hdr.msn));
	const xiw_read_req &rr = r.hdr.u.read_req;
	need(rr.size == 6000 && rr.src_stag == kPeerStag && rr.src_to == kPeerTo + 8,
	     fmt("Read Request size %u src 0x%x/0x%llx", rr.size, rr.src_stag,
		 (unsigned long long)rr.src_to));
	Bytes m = pattern(6000, 57);
	for (uint32_t off = 0; off < 6000; off += 2000) {
		SegSpec s;
		s.hdr = tagged(RDMAP_OP_READ_RESP, rr.sink_stag, rr.sink_to + off, off == 4000);
		s.payload.assign(m.begin() + off, m.begin() + off + 2000);
		x.send(s);
	}
	x.expect_wc("SUCCESS", 6000, "RDMA_READ");
	x.check("rw", 128, 6000, 57);
}

void data_write_then_send(Ctx &x)
{
	x.connect();
	Bytes all = x.c.frame(x.write_seg(x.reg["wo"].stag, x.reg["wo"].base + 4096, pattern(9000, 58)));
	Bytes f = x.c.frame(x.send_seg(pattern(10, 59), x.c.next_msn(0)));
	all.insert(all.end(), f.begin(), f.end());
	x.c.write(all);
	x.expect_wc("SUCCESS", 10, "RECV");
	x.check("wo", 4096, 9000, 58);	// placed before the Send completed
}

// A Send of 6 SGEs of 10000 octets, each starting at the last octet of a
// page: 24 page pieces in one FPDU, more than a zero-copy FPDU carries, so
// the engine copies that FPDU after having begun it zero-copy.  The
// target's MSS must allow a 60000-octet FPDU: TCP bounds it by half the
// largest window we announced, so the Sends before it open our window
// first (a large receive buffer, data read at once).
void data_send_zc_fallback(Ctx &x)
{
	ConnOpts co;
	co.rcvbuf = 1 << 22;
	x.connect(co);
	uint32_t msn = 1;
	for (uint32_t seed = 62; seed < 65; seed++, msn++) {
		x.t_.must(fmt("post send 60000 seed=%u", seed));
		need(x.recv_send(msn) == pattern(60000, seed), fmt("Send %u differs", msn));
	}
	x.t_.must(fmt("post send 60000 seed=61 sges=6 off=4095 stride=16384"));
	Segment s = x.recv("the 6-SGE Send");
	need(s.hdr.opcode == RDMAP_OP_SEND && s.hdr.msn == msn && !s.hdr.mo,
	     fmt("opcode 0x%x MSN %u MO %u instead of the 6-SGE Send", s.hdr.opcode, s.hdr.msn,
		 s.hdr.mo));
	need(s.hdr.last && s.payload.size() == 60000,
	     fmt("the 6-SGE Send came in FPDUs of %zu octets: the test needs one of 60000",
		 s.payload.size()));
	need(s.payload == pattern(60000, 61), "the 6-SGE Send differs");
	x.t_.must("post send 3000 seed=65");
	need(x.recv_send(msn + 1) == pattern(3000, 65), "the Send after it differs");
	for (int i = 0; i < 5; i++)
		x.expect_wc("SUCCESS", -1, "SEND");
}

} // namespace xiw::peer
