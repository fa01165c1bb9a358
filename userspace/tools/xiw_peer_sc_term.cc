// SPDX-License-Identifier: GPL-2.0
//
// xiw-peer's scenarios of TERMINATE: an invalid one, a peer's, and the
// device's behind a closed window (RFC 5040 4.8, 5.4).

#include "xiw_peer_scenario.h"

#include <thread>

namespace xiw::peer {

using namespace std::chrono_literals;

void ddp_term_msn(Ctx &x)
{
	x.connect();
	SegSpec s;
	s.hdr = untagged(RDMAP_OP_TERMINATE, RDMAP_QN_TERMINATE, 2, 0, true);
	s.hdr.u.term.code = kOp(RDMAP_ECODE_UNSPECIFIED);
	breaks(x, s, kDdpU(DDP_ECODE_UT_INVALID_MSN_RANGE));
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

} // namespace xiw::peer
