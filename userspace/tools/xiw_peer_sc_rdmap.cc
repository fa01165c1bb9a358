// SPDX-License-Identifier: GPL-2.0
//
// xiw-peer's scenarios of RDMAP (RFC 5040 7), its atomics (RFC 7306) and
// the verbs fence.

#include "xiw_peer_scenario.h"

#include <cstring>

namespace xiw::peer {

// A fenced Send behind the target's own Read: it must stay in the send
// queue until our Read Response is in (verbs fence semantics).
void rdmap_fence_send(Ctx &x, const char *op)
{
	x.connect();
	x.t_.must(fmt("post read 2000 stag=0x%x to=0x%llx", kPeerStag, (unsigned long long)kPeerTo));
	Segment r = x.recv("the target's Read Request");
	need(r.hdr.opcode == RDMAP_OP_READ_REQ, fmt("opcode 0x%x instead of a Read Request", r.hdr.opcode));
	x.t_.must(fmt("post %s 300 seed=61 fence=1", op));
	if (auto early = x.c.recv(1.5))
		throw Failure(fmt("opcode 0x%x went out before the Read it is fenced behind completed",
				  early->hdr.opcode));
	const xiw_read_req &rr = r.hdr.u.read_req;
	SegSpec s;
	s.hdr = tagged(RDMAP_OP_READ_RESP, rr.sink_stag, rr.sink_to, true);
	s.payload = pattern(rr.size, 62);
	x.send(s);
	uint8_t want = strcmp(op, "send_inv") ? RDMAP_OP_SEND : RDMAP_OP_SEND_INV;
	Segment f = x.recv("the fenced Send");
	need(f.hdr.opcode == want && f.hdr.last && f.hdr.mo == 0 && f.payload == pattern(300, 61),
	     fmt("after the Read Response: opcode 0x%x L %d MO %u, %zu octets", f.hdr.opcode,
		 f.hdr.last, f.hdr.mo, f.payload.size()));
	x.expect_wc("SUCCESS", 2000, "RDMA_READ");
	x.expect_wc("SUCCESS", 300, "SEND");
	x.check("rw", 0, 2000, 62);
}
void rdmap_version(Ctx &x, bool write, uint8_t rv)
{
	x.connect();
	SegSpec s = write ? x.write_seg(x.reg["rw"].stag, x.reg["rw"].base, pattern(64, 37))
			  : x.send_seg(pattern(64, 37), x.c.next_msn(0));
	s.rdmap_ctrl = (rv << RDMAP_RV_SHIFT) | s.hdr.opcode;
	breaks(x, s, kOp(RDMAP_ECODE_VERSION));
}

void rdmap_opcode(Ctx &x, uint8_t op)
{
	x.connect();
	SegSpec s = x.send_seg(pattern(16, 38), 1);
	s.rdmap_ctrl = (RDMAP_VERSION << RDMAP_RV_SHIFT) | op;
	breaks(x, s, kOp(RDMAP_ECODE_OPCODE));
}

void rdmap_send_tagged(Ctx &x)
{
	x.connect();
	// A Write header with the Send opcode: tagged where Send is untagged.
	SegSpec s = x.write_seg(x.reg["rw"].stag, x.reg["rw"].base, pattern(16, 39));
	s.rdmap_ctrl = (RDMAP_VERSION << RDMAP_RV_SHIFT) | RDMAP_OP_SEND;
	breaks(x, s, kOp(RDMAP_ECODE_OPCODE));
}

void rdmap_resp_unsolicited(Ctx &x)
{
	x.connect();
	SegSpec s;
	s.hdr = tagged(RDMAP_OP_READ_RESP, x.reg["rw"].stag, x.reg["rw"].base, true);
	s.payload = pattern(64, 40);
	breaks(x, s, kOp(RDMAP_ECODE_OPCODE));
	x.check("rw", 0, 64, 0);
}

void rdmap_read_bad(Ctx &x, const char *region, int64_t off, uint32_t size, uint8_t code,
		    uint32_t stag_xor)
{
	x.connect();
	Region g = x.reg[region];
	SegSpec s = x.read_req(g.stag ^ stag_xor, g.base + uint64_t(off), size, x.c.next_msn(1));
	breaks(x, s, kProt(code));
}

void rdmap_read_wrap(Ctx &x)
{
	x.connect();
	SegSpec s = x.read_req(x.reg["ro"].stag, ~0ull - 15, 64, x.c.next_msn(1));
	breaks(x, s, kProt(RDMAP_ECODE_TO_WRAP));
}

void rdmap_read_beyond_ird(Ctx &x)
{
	ConnOpts co;
	co.t_ird = 1;
	co.ird = 1;
	x.connect(co);
	need(x.reply.frame.ird == 1 || !x.reply.frame.enhanced,
	     fmt("Reply IRD %u, the target accepted 1", x.reply.frame.ird));
	// Three 64 KiB Reads in one write: the second exceeds IRD 1 while
	// the first is still being answered.
	Bytes all;
	for (int i = 0; i < 3; i++) {
		Bytes b = x.c.frame(x.read_req(x.reg["ro"].stag, x.reg["ro"].base, kRegionLen,
					       x.c.next_msn(1)));
		all.insert(all.end(), b.begin(), b.end());
	}
	x.c.write(all);
	x.expect_term(kDdpU(DDP_ECODE_UT_INVALID_MSN_NOBUF));
	x.expect_dead();
}

void rdmap_read_segmented(Ctx &x)
{
	x.connect();
	SegSpec s = x.read_req(x.reg["ro"].stag, x.reg["ro"].base, 64, x.c.next_msn(1));
	s.hdr.last = false;
	breaks(x, s, kOp(RDMAP_ECODE_UNSPECIFIED));
}

void rdmap_read_payload(Ctx &x)
{
	x.connect();
	SegSpec s = x.read_req(x.reg["ro"].stag, x.reg["ro"].base, 64, x.c.next_msn(1));
	s.payload = pattern(8, 41);
	breaks(x, s, kOp(RDMAP_ECODE_UNSPECIFIED));
}

void rdmap_send_inv_bad(Ctx &x)
{
	x.connect();
	SegSpec s = x.send_seg(pattern(64, 42), x.c.next_msn(0), 0, true, RDMAP_OP_SEND_INV);
	s.hdr.rsvdulp = 0xfeedbe00;
	x.send(s);
	x.expect_term(kOp(RDMAP_ECODE_CANNOT_INVALIDATE));
	x.expect_state("ERR");
}

void rdmap_imm_user(Ctx &x)
{
	x.connect();
	SegSpec s;
	s.hdr = untagged(RDMAP_OP_IMM_DATA, RDMAP_QN_SEND, x.c.next_msn(0), 0, true);
	s.hdr.u.imm_data = 0x1122334455667788ull;
	breaks(x, s, kOp(RDMAP_ECODE_OPCODE));
}

static SegSpec atomic(Ctx &x, uint8_t op, uint32_t stag, uint64_t to)
{
	SegSpec s;
	s.hdr = untagged(RDMAP_OP_ATOMIC_REQ, RDMAP_QN_READ_REQ, x.c.next_msn(1), 0, true);
	s.hdr.u.atomic_req.op = op;
	s.hdr.u.atomic_req.req_id = 77;
	s.hdr.u.atomic_req.stag = stag;
	s.hdr.u.atomic_req.to = to;
	s.hdr.u.atomic_req.data = 1;
	s.hdr.u.atomic_req.data_mask = ~0ull;
	return s;
}

void rdmap_atomic_rights(Ctx &x)
{
	x.connect();
	breaks(x, atomic(x, RDMAP_ATOMIC_FETCHADD, x.reg["rw"].stag, x.reg["rw"].base),
	       kProt(RDMAP_ECODE_ACCESS_RIGHTS));
	x.check("rw", 0, 8, 0);
}

void rdmap_atomic_bad_op(Ctx &x)
{
	x.connect();
	SegSpec s = atomic(x, RDMAP_ATOMIC_FETCHADD, x.reg["rw"].stag, x.reg["rw"].base);
	// The atomic operation code is the low nibble of the RDMAP header's
	// first octet: make it a reserved one after building.
	x.send([&] {
		SegSpec t = s;
		t.hdr.u.atomic_req.op = 0xf;
		return t;
	}());
	x.expect_term(kOp(RDMAP_ECODE_OPCODE));
	x.expect_dead();
}

void rdmap_atomic_resp_unsolicited(Ctx &x)
{
	x.connect();
	SegSpec s;
	s.hdr = untagged(RDMAP_OP_ATOMIC_RESP, RDMAP_QN_ATOMIC_RESP, 1, 0, true);
	s.hdr.u.atomic_resp = { 5, 42 };
	breaks(x, s, kOp(RDMAP_ECODE_OPCODE));
}
// The source goes while its Read Response is half way out: the rest is
// not read from it (the pages may be anyone's by now); a TERMINATE with
// the Read Request's headers ends the stream instead.
void rdmap_read_source_dereg(Ctx &x)
{
	x.connect(small_window());
	SegSpec s = read_ro_started(x);
	Reply r = x.t_.cmd("dereg ro timeout=5", 30);
	need(r.ok, "deregistering ro under a Read Response: " + r.line);
	printf("# dereg ro: %s\n", r.line.c_str());
	x.term_and_dead(kProt(RDMAP_ECODE_INVALID_STAG), header(s));
}

// A Read Request for an MSN ahead of the expected one (one skipped).
void rdmap_read_msn_ahead(Ctx &x)
{
	x.connect();
	uint32_t msn = x.c.next_msn(1) + 1;
	breaks(x, x.read_req(x.reg["ro"].stag, x.reg["ro"].base, 64, msn),
	       kDdpU(DDP_ECODE_UT_INVALID_MSN_RANGE));
}

} // namespace xiw::peer
