// SPDX-License-Identifier: GPL-2.0
//
// xiw-peer: an iWARP peer in userspace, over an ordinary TCP socket, that
// does what no well-behaved peer does.
//
//   xiw-peer run --target PATH --addr ADDR [--port P] [--filter STR,...]
//                [--skip NAME,...] [--markers] [--soft-rnr MS] [--timeout S]
//                [--quiet]
//   xiw-peer list
//   xiw-peer decode [--crc|--no-crc] [--markers|--no-markers] [--hex] FILE
//   xiw-peer fuzz --target PATH --addr ADDR... [--seed N] [--frames N] ...
//   xiw-peer replay --target PATH --addr ADDR... FILE...
//
// run: starts PATH (xiw-target) listening on ADDR (an address of the RDMA
// device under test: xiw or siw), then plays every scenario (or those
// whose name contains STR) against it.  Each scenario opens its own
// connection: the peer is the MPA initiator, xiw-target accepts through
// librdmacm and libsiw, registers its memory regions and reports their
// STags, so the peer can aim Writes, Reads and Atomics at kernel-managed
// memory.  The peer then sends scripted RDMAP traffic, some of it broken
// on purpose, checks every octet and every TERMINATE that comes back, and
// asks xiw-target what the device did: completions, QP state, placed data.
//
// A scenario that breaks a receiver rule of RFC 5040, 5041, 5044, 6581 or
// 7306 passes only when the device answers with the TERMINATE triplet the
// RFC names (layer/type/code, the echoed DDP and RDMAP headers where
// present), its QP is in the error state, its posted receives are flushed
// and the TCP connection ends.  --markers adds the scenarios that need a
// device created with MPA markers allowed (xiw's mpa_markers=prefer);
// --soft-rnr MS the rnr.* scenarios, for an xiw device whose soft_rnr_ms
// is MS (at least 1000).
//
// Output is KTAP: one "ok"/"not ok" line per scenario, with the reason of
// a failure; exit 0 when all passed, 1 otherwise, 2 on usage errors.
//
// decode: see xiw_peer_decode.h.  fuzz and replay: see xiw_peer_fuzz.h
// and xiw_peer_fuzz.cc.

#include "xiw_cli.h"
#include "xiw_pattern.h"
#include "xiw_peer_decode.h"
#include "xiw_peer_fuzz.h"
#include "xiw_peer_scenario.h"
#include "xiw_peer_target.h"
#include "xiw_peer_wire.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace xiw::peer {
namespace {

using namespace std::chrono_literals;

// ---------------------------------------------------------------------
// The scenarios

struct Scenario {
	const char *name;
	const char *rule;
	bool markers;
	std::function<void(Ctx &)> run;
};

std::vector<Scenario> scenarios();

} // namespace
} // namespace xiw::peer

namespace xiw::peer {
namespace {

// ---- MPA connection setup (RFC 5044 sec 7.1, RFC 6581)

void shutdown_write(Ctx &x)
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
void refused(Ctx &x, const std::function<void(Bytes &)> &edit, bool reject_ok)
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

void p2p(Ctx &x, uint8_t rtr)
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

// ---- DDP (RFC 5041 sec 7)

void ddp_ut_version(Ctx &x, uint8_t dv)
{
	x.connect();
	SegSpec s = x.send_seg(pattern(64, 25), x.c.next_msn(0));
	s.ddp_ctrl = DDP_FLAG_L | dv;
	breaks(x, s, kDdpU(DDP_ECODE_UT_VERSION));
}

void ddp_t_version(Ctx &x)
{
	x.connect();
	SegSpec s = x.write_seg(x.reg["rw"].stag, x.reg["rw"].base, pattern(64, 26));
	s.ddp_ctrl = DDP_FLAG_T | DDP_FLAG_L | 0;
	breaks(x, s, kDdpT(DDP_ECODE_T_VERSION));
	x.check("rw", 0, 64, 0);
}

void ddp_bad_qn(Ctx &x, uint32_t qn)
{
	x.connect();
	SegSpec s;
	s.hdr = untagged(RDMAP_OP_SEND, qn, 1, 0, true);
	s.payload = pattern(32, 27);
	breaks(x, s, kDdpU(DDP_ECODE_UT_INVALID_QN));
}

void ddp_msn_nobuf(Ctx &x)
{
	ConnOpts co;
	co.recvs = 0;
	x.connect(co);
	breaks(x, x.send_seg(pattern(32, 28), x.c.next_msn(0)), kDdpU(DDP_ECODE_UT_INVALID_MSN_NOBUF));
}

void ddp_msn_nobuf_after(Ctx &x)
{
	ConnOpts co;
	co.recvs = 1;
	x.connect(co);
	x.alive(32, 29);
	breaks(x, x.send_seg(pattern(32, 30), x.c.next_msn(0)), kDdpU(DDP_ECODE_UT_INVALID_MSN_NOBUF));
}

void ddp_msn_range(Ctx &x, uint32_t msn)
{
	x.connect();
	breaks(x, x.send_seg(pattern(32, 31), msn), kDdpU(DDP_ECODE_UT_INVALID_MSN_RANGE));
}

void ddp_mo_beyond(Ctx &x)
{
	x.connect();
	SegSpec first = x.send_seg(pattern(100, 32), 1, 0, false);
	x.send(first);
	breaks(x, x.send_seg(pattern(100, 32, 5000), 1, 5000, true), kDdpU(DDP_ECODE_UT_INVALID_MO));
}

void ddp_too_long(Ctx &x)
{
	x.connect();
	breaks(x, x.send_seg(pattern(1500, 33), x.c.next_msn(0)), kDdpU(DDP_ECODE_UT_MSG_TOOLONG));
}

void ddp_too_long_multiseg(Ctx &x)
{
	x.connect();
	x.send(x.send_seg(pattern(800, 34), 1, 0, false));
	breaks(x, x.send_seg(pattern(800, 34, 800), 1, 800, true), kDdpU(DDP_ECODE_UT_MSG_TOOLONG));
}

void ddp_t_write(Ctx &x, const std::function<SegSpec(Ctx &)> &mk, uint8_t code, bool rdmap = false)
{
	x.connect();
	SegSpec s = mk(x);
	breaks(x, s, rdmap ? kProt(code) : kDdpT(code));
	x.check("rw", 0, kRegionLen, 0);	// nothing placed anywhere in rw
}

void ddp_term_msn(Ctx &x)
{
	x.connect();
	SegSpec s;
	s.hdr = untagged(RDMAP_OP_TERMINATE, RDMAP_QN_TERMINATE, 2, 0, true);
	s.hdr.u.term.code = kOp(RDMAP_ECODE_UNSPECIFIED);
	breaks(x, s, kDdpU(DDP_ECODE_UT_INVALID_MSN_RANGE));
}

// The target reads 2000 octets from us; we answer as @answer says.
void read_answer(Ctx &x, const std::function<SegSpec(const xiw_read_req &)> &answer,
		 xiw_term_code want)
{
	x.connect();
	x.t_.must(fmt("post read 2000 stag=0x%x to=0x%llx", kPeerStag, (unsigned long long)kPeerTo));
	Segment r = x.recv("the target's Read Request");
	need(r.hdr.opcode == RDMAP_OP_READ_REQ, fmt("opcode 0x%x instead of a Read Request", r.hdr.opcode));
	SegSpec s = answer(r.hdr.u.read_req);
	breaks(x, s, want);
}

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

void ddp_resp_bad_stag(Ctx &x)
{
	read_answer(x, [](const xiw_read_req &rr) {
		SegSpec s;
		s.hdr = tagged(RDMAP_OP_READ_RESP, rr.sink_stag ^ 0x5500, rr.sink_to, true);
		s.payload = pattern(rr.size, 35);
		return s;
	}, kDdpT(DDP_ECODE_T_INVALID_STAG));
}

void ddp_resp_too_long(Ctx &x)
{
	read_answer(x, [](const xiw_read_req &rr) {
		SegSpec s;
		s.hdr = tagged(RDMAP_OP_READ_RESP, rr.sink_stag, rr.sink_to, true);
		s.payload = pattern(rr.size + 64, 36);
		return s;
	}, kDdpT(DDP_ECODE_T_BASE_BOUNDS));
}

// ---- RDMAP (RFC 5040 sec 7, RFC 7306)

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
		    uint32_t stag_xor = 0)
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

SegSpec atomic(Ctx &x, uint8_t op, uint32_t stag, uint64_t to)
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

void rdmap_peer_terminate(Ctx &x)
{
	x.connect();
	SegSpec s;
	s.hdr = untagged(RDMAP_OP_TERMINATE, RDMAP_QN_TERMINATE, 1, 0, true);
	s.hdr.u.term.code = kOp(RDMAP_ECODE_CATASTROPHIC_STREAM);
	x.send(s);
	// Nothing comes back after a TERMINATE; the QP goes to error.
	auto r = x.c.recv(1.0);
	need(!r || r->hdr.opcode != RDMAP_OP_TERMINATE, "the target answered a TERMINATE with one");
	x.expect_dead();
	Reply a = x.t_.cmd("async timeout=5");
	need(a.ok, "no asynchronous event for the TERMINATE: " + a.line);
}

void rdmap_terminate_midstream(Ctx &x)
{
	ConnOpts co;
	co.rlen = 4096;
	x.connect(co);
	// Half a Send, then a TERMINATE: the receive never completes well.
	x.send(x.send_seg(pattern(1000, 43), 1, 0, false));
	SegSpec s;
	s.hdr = untagged(RDMAP_OP_TERMINATE, RDMAP_QN_TERMINATE, 1, 0, true);
	s.hdr.u.term.code = kDdpU(DDP_ECODE_UT_INVALID_MO);
	x.send(s);
	x.expect_dead();
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

// The target reads 2000 octets into rw at 0; our response lands 4096 on,
// inside rw (the STag is right) but not where the target asked.
void ddp_resp_wrong_to(Ctx &x)
{
	read_answer(x, [](const xiw_read_req &rr) {
		SegSpec s;
		s.hdr = tagged(RDMAP_OP_READ_RESP, rr.sink_stag, rr.sink_to + 4096, true);
		s.payload = pattern(rr.size, 36);
		return s;
	}, kDdpT(DDP_ECODE_T_BASE_BOUNDS));
	x.check("rw", 0, kRegionLen, 0);
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

// ---- The device as initiator (P2P, RFC 6581)

// The target connects to us with P2P and a Read RTR: its MPA Request.
MpaIn initiator_request(Ctx &x)
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
void initiator_p2p_reply(Ctx &x, const MpaIn &m, uint8_t rtr)
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

// ---- A TERMINATE behind a closed window (RFC 5040 5.4: the TERMINATE
// goes out, then the stream closes)

// The target's socket is full with the Read Response we do not read when
// our Write to an unknown STag reaches it.  Its TERMINATE must wait for
// room (we read again well within the bound), then arrive whole, followed
// by a FIN.
void term_closed_window(Ctx &x)
{
	x.connect(small_window());
	read_ro_started(x);
	std::this_thread::sleep_for(500ms);
	SegSpec s = x.write_seg(x.reg["rw"].stag ^ 0x7700, x.reg["rw"].base, pattern(64, 70));
	x.send(s);
	std::this_thread::sleep_for(1500ms);
	x.term_and_dead(kDdpT(DDP_ECODE_T_INVALID_STAG), header(s));
}

// As above, but we never read: the TERMINATE cannot leave and the target
// gives up on it after its bound (5 s in xiw), resetting the connection.
// Nothing arrives but Read Response segments, then the reset.  Four Reads
// of 64 KiB (the target's IRD) stand before the TERMINATE, more than the
// target's send buffer and our window together hold on any kernel (with
// one, 6.1's send buffer took all of it and the TERMINATE went out).
void term_closed_window_bound(Ctx &x)
{
	x.connect(small_window());
	read_ro_started(x);
	for (int i = 0; i < 3; i++)
		x.send(x.read_req(x.reg["ro"].stag, x.reg["ro"].base, kRegionLen, x.c.next_msn(1)));
	std::this_thread::sleep_for(500ms);
	x.send(x.write_seg(x.reg["rw"].stag ^ 0x7700, x.reg["rw"].base, pattern(64, 71)));
	std::this_thread::sleep_for(7000ms);
	x.expect_state("ERR");
	for (;;) {
		auto r = x.c.recv(x.o_.timeout);
		if (!r)
			break;
		need(r->hdr.opcode == RDMAP_OP_READ_RESP,
		     fmt("opcode 0x%x arrived after the bound; only the reset may", r->hdr.opcode));
	}
	need(x.c.closed() && x.c.reset(), "the connection did not end in a reset: " + x.lost());
}

// ---- Faults of the transport

// A TCP reset in the middle of a Send: the QP goes to error, every
// receive completes in error (the one being filled included), nothing
// is left posted.
void fault_rst(Ctx &x, bool mid_message)
{
	ConnOpts co;
	co.rlen = 4096;
	x.connect(co);
	x.alive(100, 70);
	if (mid_message)
		x.send(x.send_seg(pattern(1000, 71), x.c.next_msn(0), 0, false));
	x.c.abort();
	x.expect_state("ERR");
	auto v = x.poll(x.recvs_left + 1, 3);
	int errs = 0;
	for (auto &w : v) {
		need(w.status != "SUCCESS", "a receive completed successfully after the reset");
		errs += w.id >= 1000;
	}
	need(errs == x.recvs_left, fmt("%d of %d receives completed after the reset", errs, x.recvs_left));
}

// A TCP reset while Read Requests wait to be answered: deregistering
// their source must not wait for responses nobody will send.
void fault_rst_read_queued(Ctx &x)
{
	x.connect(small_window());
	Bytes all;
	for (int i = 1; i < 4; i++) {
		Bytes b = x.c.frame(x.read_req(x.reg["ro"].stag, x.reg["ro"].base, kRegionLen,
					       x.c.peek_msn(1) + uint32_t(i)));
		all.insert(all.end(), b.begin(), b.end());
	}
	read_ro_started(x);	// the first, then three more behind it
	need(x.c.write(all), "connection lost sending the Read Requests");
	x.c.abort();
	x.expect_state("ERR");
	Reply r = x.t_.cmd("dereg ro timeout=5", 30);
	need(r.ok, "deregistering ro after the reset: " + r.line);
	printf("# dereg ro: %s\n", r.line.c_str());
}

// ---- Data: what must work, edge cases included

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

// ---- Soft-RNR: xiw's soft_rnr_ms device setting, not an RFC rule.  A
// Send that finds no posted receive holds the receive engine for up to
// that long instead of ending the stream; nothing else changes.

// The receive is posted while the Send waits: it lands, the stream goes on.
void rnr_soft_wait(Ctx &x)
{
	need(x.o_.soft_rnr_ms >= 1000, "needs --soft-rnr of at least 1000 ms");
	ConnOpts co;
	co.recvs = 0;
	x.connect(co);
	Bytes m = pattern(3000, 61);
	uint32_t msn = x.c.next_msn(0);
	for (uint32_t mo = 0; mo < 3000; mo += 1000)
		x.send(x.send_seg(Bytes(m.begin() + mo, m.begin() + mo + 1000), msn, mo, mo == 2000));
	x.expect_no_wc();	// waits 0.3 s: no receive, nothing completes
	x.t_.must("post_recv 1 4096");
	x.recvs_left++;
	x.rlen = 4096;
	x.expect_wc("SUCCESS", 3000, "RECV");
	x.check("rcv", 0, 3000, 61);
	x.t_.must("post_recv 1 4096");
	x.recvs_left++;
	x.alive(100, 62);
	need(x.t_.must("state").at("state") == "RTS", "QP left RTS");
}

// No receive comes: the TERMINATE of RFC 5041 goes out, but only after
// the wait.
void rnr_soft_timeout(Ctx &x)
{
	need(x.o_.soft_rnr_ms >= 1000, "needs --soft-rnr of at least 1000 ms");
	ConnOpts co;
	co.recvs = 0;
	x.connect(co);
	auto t0 = std::chrono::steady_clock::now();
	SegSpec s = x.send_seg(pattern(32, 63), x.c.next_msn(0));
	x.send(s);
	x.expect_term(kDdpU(DDP_ECODE_UT_INVALID_MSN_NOBUF), header(s));
	double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	need(waited * 1000 >= 0.9 * x.o_.soft_rnr_ms,
	     fmt("TERMINATE after %.0f ms, soft_rnr_ms is %u", waited * 1000, x.o_.soft_rnr_ms));
	x.expect_dead();
}

// The peer closes its side (FIN) behind a Send that waits: no receive can
// make up for that, so the TERMINATE comes at once, not after the wait,
// and the Send is not dropped in a quiet close.
void rnr_soft_fin(Ctx &x)
{
	need(x.o_.soft_rnr_ms >= 1000, "needs --soft-rnr of at least 1000 ms");
	ConnOpts co;
	co.recvs = 0;
	x.connect(co);
	auto t0 = std::chrono::steady_clock::now();
	SegSpec s = x.send_seg(pattern(32, 64), x.c.next_msn(0));
	x.send(s);
	x.c.shutdown_write();
	x.expect_term(kDdpU(DDP_ECODE_UT_INVALID_MSN_NOBUF), header(s));
	double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	need(waited * 1000 < 0.5 * x.o_.soft_rnr_ms,
	     fmt("TERMINATE after %.0f ms of a %u ms wait, though the peer had closed",
		 waited * 1000, x.o_.soft_rnr_ms));
	x.expect_dead();
}

std::vector<Scenario> scenarios()
{
	using S = Scenario;
	return {
	S{ "mpa.rev2_enhanced", "RFC 5044 7.1, RFC 6581 5: rev 2 Request with IRD/ORD gets a rev 2 Reply; data both ways", false, mpa_rev2 },
	S{ "mpa.rev1", "RFC 5044 7.1: a rev 1 Request is answered in rev 1", false, mpa_rev1 },
	S{ "mpa.responder_first", "RFC 5044 7.1.2 (not followed, as siw): without P2P the responder's ULP may send first", false, mpa_responder_first },
	S{ "mpa.crc_requested", "RFC 5044 7.1: C set by the initiator: CRC on in both directions", false, mpa_crc_on },
	S{ "mpa.crc_not_requested", "RFC 5044 7.1: CRC agreed as either end asked", false, mpa_crc_off },
	S{ "mpa.pdata_255_rev2", "RFC 5044 7.1, RFC 6581: 255 octets of private data after IRD/ORD reach the ULP", false, [](Ctx &x) { mpa_pdata(x, 2); } },
	S{ "mpa.pdata_255_rev1", "RFC 5044 7.1: 255 octets of private data reach the ULP", false, [](Ctx &x) { mpa_pdata(x, 1); } },
	S{ "mpa.pdata_508", "RFC 5044 7.1: 508 octets are valid MPA but more than iw_cm carries: rejected", false, mpa_pdata_over },
	S{ "mpa.reply_pdata", "RFC 5044 7.1: the ULP's accept private data is in the Reply", false, mpa_reply_pdata },
	S{ "mpa.ulp_reject", "RFC 5044 7.1: a ULP reject is a Reply with R and its private data, then close", false, mpa_ulp_reject },
	S{ "mpa.bad_key", "RFC 5044 7.1.2: a Request with a wrong key is not answered; the connection closes", false, mpa_bad_key },
	S{ "mpa.reply_key_in_request", "RFC 5044 7.1.2: a Reply where a Request is due closes the connection", false, mpa_reply_key },
	S{ "mpa.rev0", "RFC 5044 7.1: revision 0 is refused", false, mpa_rev0 },
	S{ "mpa.rev3", "RFC 5044 7.1: a revision above 2 is refused", false, mpa_rev3 },
	S{ "mpa.pd_len_513", "RFC 5044 7.1: PD_Length above 512 is refused", false, mpa_pd_too_long },
	S{ "mpa.enhanced_pd_short", "RFC 6581 5: an enhanced Request without room for IRD/ORD is refused", false, mpa_enhanced_short },
	S{ "mpa.truncated_request", "RFC 5044 7.1: a Request cut short by FIN is not answered", false, mpa_truncated },
	S{ "mpa.markers_refused", "RFC 5044 7.1: a device that cannot send markers rejects M", false, mpa_markers_refused },
	S{ "mpa.reject_plain", "RFC 6581 5: a reject to a rev 2 Request without the enhanced flag has no IRD/ORD words", false, mpa_reject_plain },
	S{ "mpa.reserved_flags", "RFC 5044 7.1: reserved flag bits are ignored on receipt and sent as zero", false, mpa_rsvd_flags },
	S{ "mpa.p2p_read_rtr", "RFC 6581 5: P2P with a zero-length Read RTR, answered by a Read Response", false, mpa_p2p_read },
	S{ "mpa.p2p_write_rtr", "RFC 6581 5: P2P with a zero-length Write RTR", false, mpa_p2p_write },
	S{ "mpa.p2p_send_rtr", "RFC 6581 5: P2P with a zero-length Send RTR, no receive consumed", false, mpa_p2p_send },
	S{ "mpa.rtr_mismatch", "RFC 6581 5: a Send where the agreed Write RTR is due: LLP/MPA No Matching RTR", false, mpa_rtr_missing },
	S{ "mpa.ird_ord", "RFC 6581 5: Reply ORD not above our IRD; as many Reads as its IRD are answered", false, mpa_ird_ord },
	S{ "llp.crc_error_send", "RFC 5044 8: a CRC error in a Send: LLP/MPA CRC Error", false, llp_crc_error },
	S{ "llp.crc_error_write", "RFC 5044 8: a CRC error in a Write: LLP/MPA CRC Error", false, llp_crc_error_write },
	S{ "llp.crc_field_without_crc", "RFC 5044 4: without CRC the CRC field is not checked", false, llp_crc_field_ignored },
	S{ "llp.ulpdu_shorter_than_header", "RFC 5041 7 / 5040 7: a ULPDU too short for its headers is terminated", false, llp_ulpdu_short },
	S{ "llp.markers_both_ways", "RFC 5044 5: markers every 512 octets both ways", true, llp_markers_ok },
	S{ "llp.marker_mismatch", "RFC 5044 8: a marker that disagrees with the FPDU start: LLP/MPA 0x03", true, llp_marker_mismatch },
	S{ "ddp.untagged_version_0", "RFC 5041 7.2: untagged DV 0: DDP untagged Invalid DDP Version", false, [](Ctx &x) { ddp_ut_version(x, 0); } },
	S{ "ddp.untagged_version_2", "RFC 5041 7.2: untagged DV 2: DDP untagged Invalid DDP Version", false, [](Ctx &x) { ddp_ut_version(x, 2); } },
	S{ "ddp.tagged_version_0", "RFC 5041 7.2: tagged DV 0: DDP tagged Invalid DDP Version, nothing placed", false, ddp_t_version },
	S{ "ddp.qn_3_send", "RFC 5041 7.2: a Send on queue 3: DDP Invalid QN", false, [](Ctx &x) { ddp_bad_qn(x, 3); } },
	S{ "ddp.qn_large", "RFC 5041 7.2: queue number 0x10000: DDP Invalid QN", false, [](Ctx &x) { ddp_bad_qn(x, 0x10000); } },
	S{ "ddp.msn_no_buffer", "RFC 5041 7.2: no receive posted: Invalid MSN, no buffer", false, ddp_msn_nobuf },
	S{ "ddp.msn_no_buffer_after_one", "RFC 5041 7.2: the second Send with one receive: no buffer", false, ddp_msn_nobuf_after },
	S{ "ddp.msn_out_of_range", "RFC 5041 7.2: MSN far ahead: Invalid MSN, range not valid", false, [](Ctx &x) { ddp_msn_range(x, 1000); } },
	S{ "ddp.msn_zero", "RFC 5041 5.1: MSN starts at 1; MSN 0 is out of range", false, [](Ctx &x) { ddp_msn_range(x, 0); } },
	S{ "ddp.mo_beyond_buffer", "RFC 5041 7.2: MO past the receive buffer: Invalid MO", false, ddp_mo_beyond },
	S{ "ddp.send_too_long", "RFC 5041 7.2: 1500 octets into a 1024 receive: message too long", false, ddp_too_long },
	S{ "ddp.send_too_long_2nd_seg", "RFC 5041 7.2: the second segment overflows: message too long", false, ddp_too_long_multiseg },
	S{ "ddp.write_invalid_stag", "RFC 5041 7.1: Write to an unknown STag: DDP tagged Invalid STag", false, [](Ctx &x) { ddp_t_write(x, [](Ctx &c) { return c.write_seg(c.reg["rw"].stag ^ 0x7700, c.reg["rw"].base, pattern(64, 60)); }, DDP_ECODE_T_INVALID_STAG); } },
	S{ "ddp.write_dead_stag", "RFC 5041 7.1: Write to a deregistered STag: Invalid STag", false, [](Ctx &x) { ddp_t_write(x, [](Ctx &c) { return c.write_seg(c.reg["dead"].stag, c.reg["dead"].base, pattern(64, 61)); }, DDP_ECODE_T_INVALID_STAG); } },
	S{ "ddp.write_foreign_pd", "RFC 5041 7.1: Write to another PD's STag: STag not associated", false, [](Ctx &x) { ddp_t_write(x, [](Ctx &c) { return c.write_seg(c.reg["foreign"].stag, c.reg["foreign"].base, pattern(64, 62)); }, DDP_ECODE_T_STAG_NOT_ASSOC); } },
	S{ "ddp.write_past_end", "RFC 5041 7.1: Write across the region's end: base or bounds", false, [](Ctx &x) { ddp_t_write(x, [](Ctx &c) { return c.write_seg(c.reg["rw"].stag, c.reg["rw"].base + kRegionLen - 10, pattern(20, 63)); }, DDP_ECODE_T_BASE_BOUNDS); } },
	S{ "ddp.write_below_base", "RFC 5041 7.1: Write below the region's base: base or bounds", false, [](Ctx &x) { ddp_t_write(x, [](Ctx &c) { return c.write_seg(c.reg["rw"].stag, c.reg["rw"].base - 16, pattern(8, 64)); }, DDP_ECODE_T_BASE_BOUNDS); } },
	S{ "ddp.write_to_wrap", "RFC 5041 7.1: TO + length wraps 2^64: TO wrap", false, [](Ctx &x) { ddp_t_write(x, [](Ctx &c) { return c.write_seg(c.reg["rw"].stag, ~0ull - 7, pattern(16, 65)); }, DDP_ECODE_T_TO_WRAP); } },
	S{ "ddp.write_read_only", "RFC 5040 7.1: Write to an STag without remote write: RDMAP access rights", false, [](Ctx &x) { ddp_t_write(x, [](Ctx &c) { return c.write_seg(c.reg["ro"].stag, c.reg["ro"].base, pattern(64, 66)); }, RDMAP_ECODE_ACCESS_RIGHTS, true); } },
	S{ "ddp.terminate_bad_msn", "RFC 5040 4.8, 5041 7.2: a TERMINATE with MSN 2: Invalid MSN range", false, ddp_term_msn },
	S{ "ddp.read_resp_bad_stag", "RFC 5041 7.1: a Read Response to another STag: Invalid STag", false, ddp_resp_bad_stag },
	S{ "ddp.read_resp_too_long", "RFC 5041 7.1: a Read Response longer than asked: base or bounds", false, ddp_resp_too_long },
	S{ "ddp.read_resp_wrong_to", "RFC 5040 4.4, 5041 7.1: a Read Response to the sink STag at another TO: base or bounds, nothing placed", false, ddp_resp_wrong_to },
	S{ "rdmap.fence_send", "verbs fence: a fenced Send waits for the Read before it", false, [](Ctx &x) { rdmap_fence_send(x, "send"); } },
	S{ "rdmap.fence_send_inv", "verbs fence: a fenced Send with Invalidate waits for the Read before it", false, [](Ctx &x) { rdmap_fence_send(x, "send_inv"); } },
	S{ "rdmap.version_0_send", "RFC 5040 7.2: RDMAP version 0: Invalid RDMAP version", false, [](Ctx &x) { rdmap_version(x, false, 0); } },
	S{ "rdmap.version_2_write", "RFC 5040 7.2: RDMAP version 2 on a Write: Invalid RDMAP version", false, [](Ctx &x) { rdmap_version(x, true, 2); } },
	S{ "rdmap.opcode_reserved_c", "RFC 5040 7.2: reserved opcode 0xc: Unexpected OpCode", false, [](Ctx &x) { rdmap_opcode(x, 0xc); } },
	S{ "rdmap.opcode_reserved_f", "RFC 5040 7.2: reserved opcode 0xf: Unexpected OpCode", false, [](Ctx &x) { rdmap_opcode(x, 0xf); } },
	S{ "rdmap.send_tagged", "RFC 5040 7.2: a Send in the tagged model: Unexpected OpCode", false, rdmap_send_tagged },
	S{ "rdmap.read_resp_unsolicited", "RFC 5040 7.2: a Read Response without a Read Request: Unexpected OpCode", false, rdmap_resp_unsolicited },
	S{ "rdmap.read_invalid_stag", "RFC 5040 7.1: Read Request for an unknown STag: Invalid STag", false, [](Ctx &x) { rdmap_read_bad(x, "ro", 0, 64, RDMAP_ECODE_INVALID_STAG, 0x6600); } },
	S{ "rdmap.read_dead_stag", "RFC 5040 7.1: Read Request for a deregistered STag: Invalid STag", false, [](Ctx &x) { rdmap_read_bad(x, "dead", 0, 64, RDMAP_ECODE_INVALID_STAG); } },
	S{ "rdmap.read_foreign_pd", "RFC 5040 7.1: Read Request for another PD's STag: not associated", false, [](Ctx &x) { rdmap_read_bad(x, "foreign", 0, 64, RDMAP_ECODE_STAG_NOT_ASSOC); } },
	S{ "rdmap.read_past_end", "RFC 5040 7.1: Read Request across the end: base or bounds", false, [](Ctx &x) { rdmap_read_bad(x, "ro", kRegionLen - 32, 64, RDMAP_ECODE_BASE_BOUNDS); } },
	S{ "rdmap.read_below_base", "RFC 5040 7.1: Read Request below the base: base or bounds", false, [](Ctx &x) { rdmap_read_bad(x, "ro", -64, 32, RDMAP_ECODE_BASE_BOUNDS); } },
	S{ "rdmap.read_write_only", "RFC 5040 7.1: Read Request for an STag without remote read: access rights", false, [](Ctx &x) { rdmap_read_bad(x, "wo", 0, 64, RDMAP_ECODE_ACCESS_RIGHTS); } },
	S{ "rdmap.read_to_wrap", "RFC 5040 7.1: Read Request whose TO + size wraps: TO wrap", false, rdmap_read_wrap },
	S{ "rdmap.read_beyond_ird", "RFC 5041 7.1: a Read Request past IRD finds no buffer on queue 1: Invalid MSN, no buffer", false, rdmap_read_beyond_ird },
	S{ "rdmap.read_segmented", "RFC 5040 4.4: a Read Request with L=0", false, rdmap_read_segmented },
	S{ "rdmap.read_with_payload", "RFC 5040 4.4: a Read Request carrying payload", false, rdmap_read_payload },
	S{ "rdmap.read_msn_ahead", "RFC 5041 7.1: a Read Request one MSN ahead on queue 1: Invalid MSN, range not valid", false, rdmap_read_msn_ahead },
	S{ "rdmap.read_source_dereg", "RFC 5040 7.1: the source deregistered half way through its Read Response: Invalid STag; dereg does not wait", false, rdmap_read_source_dereg },
	S{ "rdmap.send_inv_bad_stag", "RFC 5040 7.2: Send with Invalidate of an unknown STag: cannot invalidate", false, rdmap_send_inv_bad },
	S{ "rdmap.imm_data_user_qp", "RFC 7306 9: Immediate Data to a QP that cannot deliver it: Unexpected OpCode", false, rdmap_imm_user },
	S{ "rdmap.atomic_no_rights", "RFC 7306 8: FetchAdd on an STag without atomic rights: access rights", false, rdmap_atomic_rights },
	S{ "rdmap.atomic_reserved_op", "RFC 7306 8: a reserved atomic operation: Unexpected OpCode", false, rdmap_atomic_bad_op },
	S{ "rdmap.atomic_resp_unsolicited", "RFC 7306 8: an Atomic Response without a request: Unexpected OpCode", false, rdmap_atomic_resp_unsolicited },
	S{ "term.closed_window", "RFC 5040 5.4: a TERMINATE behind a full socket waits for the peer's window, then FIN", false, term_closed_window },
	S{ "term.closed_window_bound", "xiw: a TERMINATE that cannot leave within 5 s: the connection is reset", false, term_closed_window_bound },
	S{ "rdmap.peer_terminate", "RFC 5040 5.4: a TERMINATE from the peer: QP to error, nothing sent back", false, rdmap_peer_terminate },
	S{ "rdmap.terminate_midstream", "RFC 5040 5.4: a TERMINATE in the middle of a Send", false, rdmap_terminate_midstream },
	S{ "fault.rst_idle", "RFC 5040 5.4 (LLP lost): a TCP reset on an idle stream: QP error, receives flushed", false, [](Ctx &x) { fault_rst(x, false); } },
	S{ "fault.rst_mid_send", "RFC 5040 5.4 (LLP lost): a TCP reset half way through a Send", false, [](Ctx &x) { fault_rst(x, true); } },
	S{ "fault.rst_read_queued", "RFC 5040 5.4 (LLP lost): a reset with Read Requests queued: their source deregisters at once", false, fault_rst_read_queued },
	S{ "data.send_multiseg", "RFC 5041 5: a Send of three segments lands whole", false, data_send_multiseg },
	S{ "data.send_bytewise", "RFC 5044 4: an FPDU one octet per TCP segment", false, data_send_bytewise },
	S{ "data.crc_bytewise", "RFC 5044 4: with CRC, one octet per TCP segment", false, data_crc_bytewise },
	S{ "data.send_zero_length", "RFC 5040 5.3: a zero-length Send completes a receive with 0 octets", false, data_send_zero },
	S{ "data.send_sequence", "RFC 5041 5: four Sends in one TCP write complete in MSN order", false, data_send_sequence },
	S{ "data.send_exact_fit", "RFC 5041 7.2: a Send exactly the receive's size", false, data_send_exact_fit },
	S{ "data.write_out_of_order", "RFC 5041 5: tagged segments placed by TO in any order", false, data_write_ooo },
	S{ "data.write_region_edges", "RFC 5041 7.1: Writes at the first and last octets of a region", false, data_write_edges },
	S{ "data.write_zero_length", "RFC 5040 5.1: a zero-length Write validates no STag", false, data_write_zero_bad_stag },
	S{ "data.read_zero_length", "RFC 5040 5.2: a zero-length Read Request validates no STag", false, data_read_zero_bad_stag },
	S{ "data.read_5000", "RFC 5040 5.2: a Read Response carries sink STag/TO and the source's data", false, data_read },
	S{ "data.read_64k", "RFC 5040 5.2: a 64 KiB Read, every octet", false, data_read_whole },
	S{ "data.target_send", "RFC 5040 5.3: the target's Sends, 3000 and 0 octets", false, data_target_send },
	S{ "data.target_write", "RFC 5040 5.1: the target's Write into our STag", false, data_target_write },
	S{ "data.target_read", "RFC 5040 5.2: the target's Read, answered in three segments", false, data_target_read },
	S{ "data.write_then_send", "RFC 5040 5.5: a Write is placed before the Send after it completes", false, data_write_then_send },
	S{ "data.send_zc_fallback", "RFC 5044 4: a 60000-octet Send from 6 scattered SGEs: one FPDU, intact, and the stream in step after it", false, data_send_zc_fallback },
	S{ "initiator.rev1_reject_pdata", "RFC 5044 7.1: a revision 1 reject with private data (a ULP's): no retry", false, [](Ctx &x) { initiator_rev1_reject(x, true); } },
	S{ "initiator.rev1_reject_retry", "RFC 6581 5: a revision 1 reject without private data: one retry with revision 1", false, [](Ctx &x) { initiator_rev1_reject(x, false); } },
	S{ "initiator.reply_no_rtr", "RFC 6581 6: a Reply agreeing to an RTR we did not offer: TERMINATE No Matching RTR, then FIN", false, initiator_reply_no_rtr },
	S{ "initiator.rtr_read_payload", "RFC 6581 5, 5041 7.1: data in the Read Response to the target's Read RTR: Invalid STag, nothing placed", false, initiator_rtr_read_payload },
	S{ "rnr.soft_wait", "xiw soft_rnr_ms: a Send without a receive waits for one, then lands", false, rnr_soft_wait },
	S{ "rnr.soft_timeout", "xiw soft_rnr_ms: no receive within the wait: RFC 5041 7.2 no buffer, after the wait", false, rnr_soft_timeout },
	S{ "rnr.soft_fin", "xiw soft_rnr_ms: the peer's FIN behind a waiting Send: the TERMINATE at once", false, rnr_soft_fin },
	};
}

} // namespace
} // namespace xiw::peer

namespace xiw::peer {
namespace {

const xiw::cli::Usage kUsage = {
	"xiw-peer",
	"usage: xiw-peer run --target PATH --addr ADDR [--port P] [--filter STR,...]\n"
	"                    [--skip NAME,...] [--markers] [--p2p-read-rtr] [--soft-rnr MS]\n"
	"                    [--timeout S] [--quiet]\n"
	"       xiw-peer list\n"
	"       xiw-peer table SIW_KTAP XIW_KTAP KERNEL\n"
	"       xiw-peer decode [--crc|--no-crc] [--markers|--no-markers] [--hex] FILE\n"
	"       xiw-peer fuzz --target PATH --addr ADDR... [OPTION...]\n"
	"       xiw-peer replay --target PATH --addr ADDR... [OPTION...] FILE...\n",
	"NAME\n"
	"    xiw-peer - an iWARP peer over a plain TCP socket that does what no\n"
	"    well-behaved peer does, and a capture decoder\n"
	"\n"
	"SYNOPSIS\n"
	"    xiw-peer run --target PATH --addr ADDR [--port P] [--filter STR,...]\n"
	"                 [--skip NAME,...] [--markers] [--p2p-read-rtr]\n"
	"                 [--soft-rnr MS] [--timeout S] [--quiet]\n"
	"    xiw-peer list\n"
	"    xiw-peer table SIW_KTAP XIW_KTAP KERNEL\n"
	"    xiw-peer decode [--crc|--no-crc] [--markers|--no-markers] [--hex] FILE\n"
	"    xiw-peer fuzz --target PATH --addr ADDR... [OPTION...]\n"
	"    xiw-peer replay --target PATH --addr ADDR... [OPTION...] FILE...\n"
	"\n"
	"DESCRIPTION\n"
	"    run starts PATH (xiw-target) listening on ADDR, an address of the\n"
	"    RDMA device under test (xiw or siw), and plays every conformance\n"
	"    scenario against it, each on its own connection: MPA as the\n"
	"    initiator, then scripted RDMAP traffic, some of it broken on\n"
	"    purpose.  It checks every octet and every TERMINATE that comes\n"
	"    back and asks xiw-target what the device did.  A scenario that\n"
	"    breaks a receiver rule of RFC 5040, 5041, 5044, 6581 or 7306\n"
	"    passes only when the device answers with the TERMINATE the RFC\n"
	"    names, its QP is in the error state, its receives are flushed and\n"
	"    the TCP connection ends.  Output is KTAP.\n"
	"    list prints every scenario with the rule it checks.\n"
	"    table writes the RST table of the scenarios siw did not pass, from\n"
	"    the KTAP logs of a run against siw and one against xiw.\n"
	"    decode lists the MPA frames and DDP segments of a capture (pcap or\n"
	"    pcapng) or of one raw stream direction; xiw-peer decode --help.\n"
	"    fuzz sends seeded random FPDU streams to xiw-target's live QPs and\n"
	"    saves the connections that show a bug; replay runs them again;\n"
	"    xiw-peer fuzz --help.\n"
	"\n"
	"OPTIONS (run)\n"
	"    --target PATH      the xiw-target binary to start\n"
	"    --addr ADDR        the device's address (IPv4 or IPv6 literal)\n"
	"    --port P           xiw-target's port, 1..65535 (default 18700)\n"
	"    --filter STR,...   only scenarios whose name contains one of STR\n"
	"    --skip NAME,...    not these scenarios\n"
	"    --markers          add the scenarios that need a device created\n"
	"                       with MPA markers allowed (mpa_markers=prefer)\n"
	"    --p2p-read-rtr     add the scenarios of a device that initiates\n"
	"                       with P2P and a Read RTR\n"
	"    --soft-rnr MS      add the rnr.* scenarios, for a device whose\n"
	"                       soft_rnr_ms is MS, 1..10000 (they need 1000 or more)\n"
	"    --timeout S        seconds to wait for the device, 0..3600,\n"
	"                       fractions allowed (default 10)\n"
	"    --quiet            no rule line under each result\n"
	"    -h, --help         this text\n"
	"\n"
	"EXIT STATUS\n"
	"    0 every scenario passed, 1 otherwise, 2 bad usage, 4 (skip)\n"
	"    xiw-target could not start\n",
};

// What a KTAP log of `run` says of each scenario: "" passed, the reason of
// a "not ok", or "not run: " and the reason of a SKIP.
std::map<std::string, std::string> ktap_results(const char *path)
{
	std::map<std::string, std::string> r;
	FILE *f = fopen(path, "r");
	if (!f)
		throw Failure(std::string(path) + ": " + strerror(errno));
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		std::string l(line);
		while (!l.empty() && (l.back() == '\n' || l.back() == '\r'))
			l.pop_back();
		bool bad = !l.rfind("not ok ", 0);
		if (!bad && l.rfind("ok ", 0))
			continue;
		std::istringstream is(l.substr(bad ? 7 : 3));
		std::string num, name;
		is >> num >> name;
		size_t hash = l.find(" # ");
		std::string why = hash == std::string::npos ? "" : l.substr(hash + 3);
		if (!bad && !why.rfind("SKIP ", 0))
			why = "not run: " + why.substr(5);
		else if (!bad)
			why.clear();
		r[name] = why;
	}
	fclose(f);
	return r;
}

// Text for a cell of an RST table, markup characters escaped.
std::string rst_text(const std::string &t)
{
	std::string r;
	for (char c : t) {
		if (c == '*' || c == '`' || c == '|' || c == '\\')
			r += '\\';
		r += c;
	}
	return r;
}

// Text for a cell of an RST table, shown literally.
std::string rst_literal(std::string t)
{
	std::replace(t.begin(), t.end(), '`', '\'');
	return t.empty() ? "" : "``" + t + "``";
}

// Documentation/siw-differences.rst from the KTAP logs of one
// conformance run against siw and one against xiw: every scenario siw
// did not pass, with the RFC rule it checks and what each device did.
int table_main(const char *siw_log, const char *xiw_log, const char *kernel)
{
	auto siw = ktap_results(siw_log);
	auto xiw = ktap_results(xiw_log);
	printf(".. SPDX-License-Identifier: GPL-2.0\n"
	       ".. Generated by `xiw-peer table` from a conformance run; do not edit.\n\n"
	       "==================================\n"
	       "Where siw answers differently\n"
	       "==================================\n\n"
	       "The scenarios of ``xiw-peer`` (``tests/selftests/xiw_conformance.sh``)\n"
	       "that siw does not pass, from one run of each against the same scenarios\n"
	       "on the same kernel (%s).  The siw case of ``xiw_conformance.sh``\n"
	       "(``make check-full``) writes this file as ``siw-differences.rst`` into\n"
	       "its VM log directory and says whether it still matches this copy.\n\n"
	       ".. list-table::\n"
	       "   :header-rows: 1\n"
	       "   :widths: 20 12 30 12 26\n\n"
	       "   * - Scenario\n"
	       "     - RFC\n"
	       "     - Rule\n"
	       "     - xiw\n"
	       "     - siw\n",
	       rst_text(kernel).c_str());
	int rows = 0;
	for (const Scenario &s : scenarios()) {
		auto it = siw.find(s.name);
		auto x = xiw.find(s.name);
		if (it == siw.end() || it->second.empty())
			continue;
		// Left out of both runs alike (a device setting neither had).
		if (x != xiw.end() && x->second == it->second)
			continue;
		std::string rule = s.rule, sect;
		size_t colon = rule.find(": ");
		if (colon != std::string::npos) {
			sect = rule.substr(0, colon);
			rule = rule.substr(colon + 2);
		}
		std::string xr = x == xiw.end() ? "not run" : x->second.empty() ? "passes" : x->second;
		printf("   * - ``%s``\n     - %s\n     - %s\n     - %s\n     - %s\n", s.name,
		       rst_text(sect).c_str(), rst_text(rule).c_str(),
		       xr == "passes" ? "passes" : rst_literal(xr).c_str(),
		       rst_literal(it->second).c_str());
		rows++;
	}
	printf("\n%d of %zu scenarios differ.\n", rows, scenarios().size());
	return 0;
}

int run(const Options &o)
{
	auto all = scenarios();
	std::vector<const Scenario *> sel;
	// --filter: comma-separated substrings of scenario names, any may match.
	std::vector<std::string> filters;
	std::istringstream fs(o.filter);
	for (std::string f; std::getline(fs, f, ',');)
		if (!f.empty())
			filters.push_back(f);
	for (auto &s : all) {
		std::string name = s.name;
		if (filters.empty() || std::any_of(filters.begin(), filters.end(), [&](const std::string &f) {
			    return name.find(f) != std::string::npos;
		    }))
			sel.push_back(&s);
	}

	Target t;
	try {
		t.start(o.target, o.addr, o.port);
	} catch (const Failure &f) {
		printf("KTAP version 1\n1..0 # SKIP %s\n", f.what());
		return 4;
	}
	printf("KTAP version 1\n1..%zu\n", sel.size());
	fflush(stdout);
	int pass = 0, fail = 0, skip = 0, n = 0;
	for (const Scenario *s : sel) {
		n++;
		if (std::find(o.skip.begin(), o.skip.end(), s->name) != o.skip.end()) {
			printf("ok %d %s # SKIP --skip\n", n, s->name);
			skip++;
			continue;
		}
		if (s->markers && !o.markers) {
			printf("ok %d %s # SKIP needs a device with MPA markers (--markers)\n", n, s->name);
			skip++;
			continue;
		}
		if (!std::string(s->name).rfind("initiator.", 0) && !o.p2p_read_rtr) {
			printf("ok %d %s # SKIP needs a device that initiates with P2P and a Read RTR (--p2p-read-rtr)\n",
			       n, s->name);
			skip++;
			continue;
		}
		if (!std::string(s->name).rfind("rnr.", 0) && !o.soft_rnr_ms) {
			printf("ok %d %s # SKIP needs a device with soft_rnr_ms set (--soft-rnr MS)\n", n, s->name);
			skip++;
			continue;
		}
		std::string how;
		if (t.dead(how)) {
			printf("# xiw-target died (%s) before %s: restarted\n", how.c_str(), s->name);
			try {
				t.start(o.target, o.addr, o.port);
			} catch (const Failure &f) {
				printf("not ok %d %s # xiw-target: %s\n", n, s->name, f.what());
				fail++;
				continue;
			}
		}
		Ctx x(o, t);
		std::string why;
		auto t0 = std::chrono::steady_clock::now();
		try {
			s->run(x);
		} catch (const Failure &f) {
			why = f.what();
		} catch (const std::exception &e) {
			why = std::string("exception: ") + e.what();
		}
		x.c.close();
		try {
			t.must("close");
		} catch (const Failure &f) {
			if (why.empty())
				why = f.what();
		}
		double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
		if (why.empty()) {
			printf("ok %d %s\n", n, s->name);
			pass++;
		} else {
			printf("not ok %d %s # %s\n", n, s->name, why.c_str());
			fail++;
		}
		if (!o.quiet)
			printf("#   %s (%.1f s)\n", s->rule, secs);
		fflush(stdout);
	}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n", pass, fail, skip);
	return fail ? 1 : 0;
}

} // namespace
} // namespace xiw::peer

int main(int argc, char **argv)
{
	using namespace xiw::peer;

	using xiw::cli::usage_error;

	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		usage_error(kUsage, "");
	std::string cmd = argv[1];
	if (cmd == "-h" || cmd == "--help")
		xiw::cli::help(kUsage);
	if (cmd == "decode")
		return decode_main(argc - 1, argv + 1);
	if (cmd == "fuzz")
		return fuzz_main(argc - 1, argv + 1);
	if (cmd == "replay")
		return replay_main(argc - 1, argv + 1);
	if (cmd == "table") {
		if (argc != 5)
			usage_error(kUsage, "table takes SIW_KTAP XIW_KTAP KERNEL");
		try {
			return table_main(argv[2], argv[3], argv[4]);
		} catch (const Failure &f) {
			fprintf(stderr, "xiw-peer table: %s\n", f.what());
			return 1;
		}
	}
	if (cmd == "list") {
		for (auto &s : scenarios())
			printf("%-34s %s\n", s.name, s.rule);
		return 0;
	}
	if (cmd != "run")
		usage_error(kUsage, "unknown command '" + cmd + "'");
	Options o;
	for (int i = 2; i < argc; i++) {
		std::string a = argv[i];
		auto val = [&]() -> const char * {
			if (i + 1 >= argc)
				usage_error(kUsage, a + " needs a value");
			return argv[++i];
		};
		if (a == "--target")
			o.target = val();
		else if (a == "--addr")
			o.addr = val();
		else if (a == "--port")
			o.port = uint16_t(xiw::cli::uint_opt(kUsage, "--port", val(), 1, 65535));
		else if (a == "--filter")
			o.filter = val();
		else if (a == "--skip") {
			std::istringstream is(val());
			std::string name;
			while (std::getline(is, name, ','))
				o.skip.push_back(name);
		} else if (a == "--timeout")
			o.timeout = xiw::cli::secs_opt(kUsage, "--timeout", val(), 0, 3600);
		else if (a == "--markers")
			o.markers = true;
		else if (a == "--p2p-read-rtr")
			o.p2p_read_rtr = true;
		else if (a == "--soft-rnr")
			o.soft_rnr_ms = unsigned(xiw::cli::uint_opt(kUsage, "--soft-rnr", val(), 1, 10000));
		else if (a == "--quiet")
			o.quiet = true;
		else if (a == "-h" || a == "--help")
			xiw::cli::help(kUsage);
		else
			usage_error(kUsage, "unknown option '" + a + "'");
	}
	if (o.target.empty() || o.addr.empty())
		usage_error(kUsage, "run needs --target and --addr");
	return run(o);
}
