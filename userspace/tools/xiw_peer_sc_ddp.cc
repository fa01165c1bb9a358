// SPDX-License-Identifier: GPL-2.0
//
// xiw-peer's scenarios of DDP (RFC 5041 7), and of xiw's soft-RNR wait
// for a receive (soft_rnr_ms).

#include "xiw_peer_scenario.h"

#include <chrono>
#include <functional>

namespace xiw::peer {

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

void ddp_t_write(Ctx &x, const std::function<SegSpec(Ctx &)> &mk, uint8_t code, bool rdmap)
{
	x.connect();
	SegSpec s = mk(x);
	breaks(x, s, rdmap ? kProt(code) : kDdpT(code));
	x.check("rw", 0, kRegionLen, 0);	// nothing placed anywhere in rw
}
// The target reads 2000 octets from us; we answer as @answer says.
static void read_answer(Ctx &x, const std::function<SegSpec(const xiw_read_req &)> &answer,
			xiw_term_code want)
{
	x.connect();
	x.t_.must(fmt("post read 2000 stag=0x%x to=0x%llx", kPeerStag, (unsigned long long)kPeerTo));
	Segment r = x.recv("the target's Read Request");
	need(r.hdr.opcode == RDMAP_OP_READ_REQ, fmt("opcode 0x%x instead of a Read Request", r.hdr.opcode));
	SegSpec s = answer(r.hdr.u.read_req);
	breaks(x, s, want);
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

} // namespace xiw::peer
