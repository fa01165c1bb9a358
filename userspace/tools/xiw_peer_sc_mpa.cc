// SPDX-License-Identifier: GPL-2.0
//
// xiw-peer's scenarios of MPA: connection setup (RFC 5044 7.1, RFC 6581),
// full operation with CRC and markers (RFC 5044 4, 5), and the device as
// the P2P initiator (RFC 6581).

#include "xiw_peer_scenario.h"

#include <algorithm>
#include <cstring>
#include <functional>

namespace xiw::peer {

// ---- MPA connection setup (RFC 5044 sec 7.1, RFC 6581)

static void shutdown_write(Ctx &x)
{
	x.c.shutdown_write();
}

void mpa_rev2(Ctx &x)
{
	x.connect();
	const xiw_mpa_frame &f = x.reply.frame;
	need(f.rev == 2 && f.enhanced, fmt("Reply rev %u enhanced %d, expected rev 2 enhanced",
					   f.rev, f.enhanced));
	need(f.ord <= x.req.ird, fmt("Reply ORD %u above our IRD %u", f.ord, x.req.ird));
	need(!f.markers && !f.p2p, "Reply asks for markers or P2P nobody requested");
	x.alive(100, 3);
	x.t_.must("post send 200 seed=4");
	Bytes b = x.recv_send(1);
	need(b == pattern(200, 4), "the target's Send arrived with other data");
	x.expect_wc("SUCCESS", 200, "SEND");
}

// Without P2P the target's ULP sends first, before any FPDU of ours.
// RFC 5044 7.1.2 has a responder wait for the initiator's first FPDU;
// xiw, like siw, does not hold it (Documentation/cm.rst says why), and a
// peer that needs the wait negotiates P2P (RFC 6581).
void mpa_responder_first(Ctx &x)
{
	x.connect();
	x.t_.must("post send 100 seed=80");
	need(x.recv_send(1) == pattern(100, 80), "the target's first Send arrived with other data");
	x.expect_wc("SUCCESS", 100, "SEND");
	x.alive(64, 81);
}

void mpa_rev1(Ctx &x)
{
	ConnOpts co;
	co.rev = 1;
	x.connect(co);
	need(x.reply.frame.rev == 1 && !x.reply.frame.enhanced,
	     fmt("Reply rev %u, expected 1", x.reply.frame.rev));
	x.alive(100, 5);
}

void mpa_crc_on(Ctx &x)
{
	ConnOpts co;
	co.crc = true;
	x.connect(co);
	need(x.reply.frame.crc, "Reply without the C flag to a Request with it");
	x.alive(300, 6);
	x.t_.must("post send 1500 seed=7");
	need(x.recv_send(1) == pattern(1500, 7), "the target's Send arrived with other data");
	x.expect_wc("SUCCESS", 1500, "SEND");
}

void mpa_crc_off(Ctx &x)
{
	x.connect();
	// CRC is on when either end asked: the deframer checks either way.
	x.alive(300, 8);
	x.t_.must("post send 700 seed=9");
	need(x.recv_send(1) == pattern(700, 9), "the target's Send arrived with other data");
}

// The kernel's iw_cm hands a ULP at most 255 octets of private data.
void mpa_pdata(Ctx &x, uint8_t rev)
{
	ConnOpts co;
	co.rev = rev;
	co.pdata = pattern(255, 10);
	x.connect(co);
	need(x.target_pdata == co.pdata,
	     fmt("target saw %zu octets of private data, not the 255 sent", x.target_pdata.size()));
	x.alive();
}

// More than iw_cm can carry, within MPA's 512: refused by a Reply with R.
void mpa_pdata_over(Ctx &x)
{
	ConnOpts co;
	co.pdata = pattern(MPA_MAX_PD_LEN - MPA_V2_HDR_LEN, 11);
	x.tcp();
	x.c.write(x.request(co));
	x.expect_refused(true);
}

void mpa_reply_pdata(Ctx &x)
{
	ConnOpts co;
	Bytes pd = pattern(40, 12);
	co.accept = "pdata=" + hex(pd.data(), pd.size());
	x.connect(co);
	need(x.reply.pdata == pd, "Reply private data " + hex(x.reply.pdata.data(), x.reply.pdata.size()));
}

void mpa_ulp_reject(Ctx &x)
{
	ConnOpts co;
	Bytes pd = pattern(16, 13);
	x.tcp();
	need(x.c.write(x.request(co)), "connection lost");
	x.t_.must("accept reject=1 pdata=" + hex(pd.data(), pd.size()));
	MpaIn m = x.c.read_mpa(x.o_.timeout);
	need(m.result == MpaResult::Frame && m.frame.reply && m.frame.reject,
	     "no Reply with the R flag after the ULP rejected");
	need(m.pdata == pd, "reject private data " + hex(m.pdata.data(), m.pdata.size()));
	need(x.c.wait_closed(x.o_.timeout), "connection still open after the reject");
}

// A raw Request, edited after building.
static void refused(Ctx &x, const std::function<void(Bytes &)> &edit, bool reject_ok)
{
	ConnOpts co;
	Bytes r = x.request(co);
	edit(r);
	x.tcp();
	x.c.write(r);
	x.expect_refused(reject_ok);
}

void mpa_bad_key(Ctx &x)
{
	refused(x, [](Bytes &r) { r[4] ^= 0x20; }, false);
}

void mpa_reply_key(Ctx &x)
{
	refused(x, [](Bytes &r) { memcpy(r.data(), MPA_KEY_REP, MPA_KEY_LEN); }, false);
}

void mpa_rev0(Ctx &x)
{
	refused(x, [](Bytes &r) { r[MPA_RR_REV_OFF] = 0; }, false);
}

void mpa_rev3(Ctx &x)
{
	refused(x, [](Bytes &r) { r[MPA_RR_REV_OFF] = 3; }, false);
}

void mpa_pd_too_long(Ctx &x)
{
	refused(x, [](Bytes &r) {
		r.resize(MPA_RR_HDR_LEN + MPA_MAX_PD_LEN + 1, 0x5a);
		xiw_put_be16(r.data() + MPA_RR_PDLEN_OFF, MPA_MAX_PD_LEN + 1);
	}, false);
}

void mpa_enhanced_short(Ctx &x)
{
	refused(x, [](Bytes &r) {
		r.resize(MPA_RR_HDR_LEN + 2);
		xiw_put_be16(r.data() + MPA_RR_PDLEN_OFF, 2);
	}, false);
}

void mpa_truncated(Ctx &x)
{
	ConnOpts co;
	Bytes r = x.request(co);
	r.resize(10);
	x.tcp();
	x.c.write(r);
	shutdown_write(x);
	x.expect_refused(false);
}

void mpa_markers_refused(Ctx &x)
{
	ConnOpts co;
	co.markers = true;
	x.tcp();
	x.c.write(x.request(co));
	// A device that cannot send markers rejects; one that can accepts.
	MpaIn m = x.c.read_mpa(x.o_.timeout);
	if (m.result == MpaResult::Frame && m.frame.reply && !m.frame.reject)
		throw Failure("Request for markers accepted by a device without markers");
	need(m.result == MpaResult::Frame && m.frame.reject,
	     "Request for markers not rejected by a Reply: " +
	     std::string(m.result == MpaResult::Closed ? "closed without a Reply" : "no Reply"));
	need(x.c.wait_closed(x.o_.timeout), "connection still open after the reject");
}

// The same refusal of a revision 2 Request without the enhanced flag
// (0x10): the reject must not carry IRD/ORD words the Request did not
// have (RFC 6581 5: the words are there only with the flag), so its
// header is the 20 octets of RFC 5044.
void mpa_reject_plain(Ctx &x)
{
	ConnOpts co;
	co.markers = true;
	co.enhanced = false;
	x.tcp();
	x.c.write(x.request(co));
	MpaIn m = x.c.read_mpa(x.o_.timeout);
	need(m.result == MpaResult::Frame && m.frame.reply && m.frame.reject,
	     "Request for markers not rejected by a Reply");
	need(!m.frame.enhanced && m.raw.size() == MPA_RR_HDR_LEN,
	     fmt("the reject has %zu octets, enhanced flag %d: IRD/ORD words the Request did not have",
		 m.raw.size(), m.frame.enhanced));
	need(x.c.wait_closed(x.o_.timeout), "connection still open after the reject");
}

void mpa_rsvd_flags(Ctx &x)
{
	ConnOpts co;
	Bytes r = x.request(co);
	r[MPA_RR_FLAGS_OFF] |= MPA_RR_FLAG_RSVD;
	x.tcp();
	x.c.write(r);
	x.target_accept(co);
	x.reply = x.c.read_mpa(x.o_.timeout);
	need(x.reply.result == MpaResult::Frame && !x.reply.frame.reject,
	     "Request with reserved flag bits set was not accepted");
	need(!(x.reply.raw[MPA_RR_FLAGS_OFF] & MPA_RR_FLAG_RSVD), "Reply sets reserved flag bits");
	x.c.start_fpdus(x.reply.frame.crc, false, false);
	x.t_.must("established");
	x.alive();
}

static void p2p(Ctx &x, uint8_t rtr)
{
	ConnOpts co;
	co.p2p = true;
	co.rtr = rtr;
	x.connect(co);
	const xiw_mpa_frame &f = x.reply.frame;
	need(f.p2p && f.rtr == rtr, fmt("Reply P2P %d RTR 0x%x, requested 0x%x", f.p2p, f.rtr, rtr));
	if (rtr == XIW_MPA_RTR_READ) {
		Segment s = x.recv("the zero-length Read Response to our Read RTR");
		need(s.hdr.opcode == RDMAP_OP_READ_RESP && s.payload.empty() && s.hdr.last,
		     fmt("answer to the Read RTR: opcode 0x%x len %zu", s.hdr.opcode, s.payload.size()));
	}
	x.expect_no_wc();
	x.alive(500, 14);
}

void mpa_p2p_read(Ctx &x) { p2p(x, XIW_MPA_RTR_READ); }
void mpa_p2p_write(Ctx &x) { p2p(x, XIW_MPA_RTR_WRITE); }
void mpa_p2p_send(Ctx &x) { p2p(x, XIW_MPA_RTR_SEND); }

void mpa_rtr_missing(Ctx &x)
{
	ConnOpts co;
	co.p2p = true;
	co.rtr = XIW_MPA_RTR_WRITE;
	x.tcp();
	x.c.write(x.request(co));
	x.target_accept(co);
	x.reply = x.c.read_mpa(x.o_.timeout);
	need(x.reply.result == MpaResult::Frame && x.reply.frame.p2p, "no P2P Reply");
	x.c.start_fpdus(x.reply.frame.crc, false, false);
	// A 100 octet Send where the zero-length Write RTR is due.
	SegSpec s = x.send_seg(pattern(100, 15), x.c.next_msn(0));
	x.send(s);
	x.expect_term(kMpa(LLP_ECODE_NO_MATCHING_RTR));
	x.expect_state("ERR");
}

void mpa_ird_ord(Ctx &x)
{
	ConnOpts co;
	co.ird = 2;
	co.ord = 7;
	co.t_ird = 3;
	co.t_ord = 6;
	x.connect(co);
	const xiw_mpa_frame &f = x.reply.frame;
	need(f.ord <= co.ird, fmt("Reply ORD %u above our IRD %u", f.ord, co.ird));
	need(f.ird >= 1, fmt("Reply IRD %u", f.ird));
	// As many Reads as the Reply's IRD, at once: all answered.
	unsigned int n = std::min<unsigned int>(f.ird, 8);
	Bytes all;
	for (unsigned int i = 0; i < n; i++) {
		Bytes b = x.c.frame(x.read_req(x.reg["ro"].stag, x.reg["ro"].base + i * 512, 512,
					       x.c.next_msn(1)));
		all.insert(all.end(), b.begin(), b.end());
	}
	need(x.c.write(all), "connection lost");
	for (unsigned int i = 0; i < n; i++) {
		Segment s = x.recv("a Read Response");
		need(s.hdr.opcode == RDMAP_OP_READ_RESP && s.hdr.last && s.payload.size() == 512,
		     fmt("Read Response %u: opcode 0x%x len %zu", i, s.hdr.opcode, s.payload.size()));
		need(s.payload == pattern(512, 1, i * 512), fmt("Read Response %u data", i));
	}
	x.alive();
}
// ---- MPA full operation: CRC, markers (RFC 5044 sec 4, 5)

void llp_crc_error(Ctx &x)
{
	ConnOpts co;
	co.crc = true;
	x.connect(co);
	SegSpec s = x.send_seg(pattern(100, 16), x.c.next_msn(0));
	s.bad_crc = true;
	x.send(s);
	x.expect_term(kMpa(LLP_ECODE_CRC));
	x.expect_dead();
}

void llp_crc_error_write(Ctx &x)
{
	ConnOpts co;
	co.crc = true;
	x.connect(co);
	SegSpec s = x.write_seg(x.reg["rw"].stag, x.reg["rw"].base, pattern(2000, 17));
	s.bad_crc = true;
	x.send(s);
	x.expect_term(kMpa(LLP_ECODE_CRC));
	x.expect_dead();
}

void llp_crc_field_ignored(Ctx &x)
{
	x.connect();
	need(!x.c.crc, "CRC was agreed although neither end asked");
	SegSpec s = x.send_seg(pattern(100, 18), x.c.next_msn(0));
	s.bad_crc = true;	// a non-zero CRC field without CRC
	x.send(s);
	x.expect_wc("SUCCESS", 100, "RECV");
	x.check("rcv", 0, 100, 18);
}

void llp_ulpdu_short(Ctx &x)
{
	x.connect();
	SegSpec s = x.send_seg({}, x.c.next_msn(0));
	s.ulpdu_len = 6;	// less than the 18 octets of the DDP header
	s.payload = pattern(2, 19);
	x.send(s);
	x.expect_term(tc(TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OPERATION, RDMAP_ECODE_UNSPECIFIED));
	x.expect_dead();
}

void llp_markers_ok(Ctx &x)
{
	ConnOpts co;
	co.markers = true;
	x.connect(co);
	need(x.reply.frame.markers, "device with markers did not ask for them in return");
	for (int i = 0; i < 3; i++)
		x.alive(900, uint32_t(20 + i));
	x.t_.must("post send 3000 seed=23");
	need(x.recv_send(1) == pattern(3000, 23), "the target's Send (with markers) differs");
}

void llp_marker_mismatch(Ctx &x)
{
	ConnOpts co;
	co.markers = true;
	co.rlen = 4096;
	x.connect(co);
	need(x.c.markers_tx, "device did not ask to receive markers");
	Bytes f = x.c.frame(x.send_seg(pattern(1200, 24), x.c.next_msn(0)));
	// The first marker of the stream sits at octet 0; the next one at 512.
	f[512 + 3] ^= 0x08;	// its FPDUPTR now points elsewhere
	x.c.write(f);
	x.expect_term(kMpa(LLP_ECODE_FPDU_START));
	x.expect_dead();
}
// ---- The device as initiator (P2P, RFC 6581)

// The target connects to us with P2P and a Read RTR: its MPA Request.
static MpaIn initiator_request(Ctx &x)
{
	uint16_t port = uint16_t(x.o_.port + 1);
	x.c.listen(x.o_.addr, port);
	Reply r = x.t_.must(fmt("connect %s %u", x.o_.addr.c_str(), port));
	for (const char *n : { "rw", "ro" }) {
		const std::string &v = r.at(n);
		x.reg[n].stag = uint32_t(std::stoul(v.substr(0, v.find(':')), nullptr, 16));
		x.reg[n].base = std::stoull(v.substr(v.find(':') + 1), nullptr, 16);
	}
	x.recvs_left = 4;
	x.c.accept(x.o_.timeout);
	MpaIn m = x.c.read_mpa(x.o_.timeout);
	need(m.result == MpaResult::Frame && !m.frame.reply, "no MPA Request from the target");
	need(m.frame.p2p && (m.frame.rtr & XIW_MPA_RTR_READ),
	     fmt("the target's Request offers P2P %d RTR 0x%x, not a Read RTR", m.frame.p2p, m.frame.rtr));
	return m;
}

// Accept the target's Request @m with a revision 2 P2P Reply choosing
// @rtr, and go on in FPDUs.
static void initiator_p2p_reply(Ctx &x, const MpaIn &m, uint8_t rtr)
{
	xiw_mpa_frame f = {};
	f.reply = true;
	f.rev = 2;
	f.enhanced = true;
	f.crc = m.frame.crc;
	f.p2p = true;
	f.rtr = rtr;
	f.ird = 4;
	f.ord = 4;
	need(x.c.write(Conn::mpa_frame(f)), "connection lost sending the MPA Reply");
	x.c.start_fpdus(m.frame.crc, false, false);
}

// We answer the target's zero-length RTR Read with a Read Response
// carrying data into one of its regions.  The RTR asked for nothing:
// nothing may be placed.
void initiator_rtr_read_payload(Ctx &x)
{
	initiator_p2p_reply(x, initiator_request(x), XIW_MPA_RTR_READ);
	x.t_.must("established");
	Segment rtr = x.recv("the target's Read RTR");
	need(rtr.hdr.opcode == RDMAP_OP_READ_REQ && rtr.hdr.u.read_req.size == 0,
	     fmt("opcode 0x%x size %u instead of the zero-length Read RTR", rtr.hdr.opcode,
		 rtr.hdr.u.read_req.size));
	SegSpec s;
	s.hdr = tagged(RDMAP_OP_READ_RESP, x.reg["rw"].stag, x.reg["rw"].base, true);
	s.payload = pattern(64, 37);
	breaks(x, s, kDdpT(DDP_ECODE_T_INVALID_STAG));
	x.check("rw", 0, kRegionLen, 0);
}

// Our Reply agrees to P2P with a Write RTR only, which the target did not
// offer: it sends the TERMINATE of RFC 6581 (No Matching RTR), then ends
// the stream with a FIN, and its ULP sees the connection fail.
void initiator_reply_no_rtr(Ctx &x)
{
	MpaIn m = initiator_request(x);
	need(!(m.frame.rtr & XIW_MPA_RTR_WRITE),
	     fmt("the target's Request offers RTR 0x%x, a Write among them", m.frame.rtr));
	initiator_p2p_reply(x, m, XIW_MPA_RTR_WRITE);
	x.expect_term(kMpa(LLP_ECODE_NO_MATCHING_RTR));
	x.expect_fin("the TERMINATE");
	Reply e = x.t_.cmd("established");
	need(!e.ok, "the target's connection was established: " + e.line);
}

// We refuse the target's revision 2 Request with a revision 1 Reply:
// with private data (a ULP's reject, which a revision 1 peer sends as
// well) the target's connect fails and it does not try again; without
// (a peer refusing revision 2) it retries once with a revision 1 Request
// on a new TCP connection.
void initiator_rev1_reject(Ctx &x, bool pdata)
{
	initiator_request(x);
	x.c.listen(x.o_.addr, uint16_t(x.o_.port + 1));
	xiw_mpa_frame f = {};
	Bytes pd = pattern(8, 38);
	f.reply = true;
	f.reject = true;
	f.rev = 1;
	if (pdata) {
		f.pdata = pd.data();
		f.pdata_len = uint16_t(pd.size());
	}
	need(x.c.write(Conn::mpa_frame(f)), "connection lost sending the MPA Reply");
	if (pdata) {
		Reply e = x.t_.cmd("established");
		need(!e.ok, "the target's connection was established: " + e.line);
		need(!x.c.connection_waiting(1.5),
		     "the target connected again after a reject carrying private data");
		return;
	}
	x.c.accept(x.o_.timeout);
	MpaIn m = x.c.read_mpa(x.o_.timeout);
	need(m.result == MpaResult::Frame && !m.frame.reply, "no second MPA Request from the target");
	need(m.frame.rev == 1 && !m.frame.enhanced,
	     fmt("the second Request is revision %u, expected 1", m.frame.rev));
	f.pdata = pd.data();
	f.pdata_len = uint16_t(pd.size());
	need(x.c.write(Conn::mpa_frame(f)), "connection lost sending the second MPA Reply");
	Reply e = x.t_.cmd("established");
	need(!e.ok, "the target's connection was established: " + e.line);
	need(!x.c.connection_waiting(1.0), "the target connected a third time");
}

} // namespace xiw::peer
