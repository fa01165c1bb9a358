// SPDX-License-Identifier: GPL-2.0
//
// xiw-peer's scenarios of faults of the transport: a TCP reset (RFC 5040
// 5.4, LLP lost).

#include "xiw_peer_scenario.h"

namespace xiw::peer {

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

} // namespace xiw::peer
