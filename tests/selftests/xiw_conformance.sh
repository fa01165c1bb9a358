#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_conformance.sh: the iWARP conformance scenarios of xiw-peer
# (userspace/tools/xiw_peer_scenarios.cc) against an xiw device, and the same
# scenarios against siw for comparison.
#
# xiw-peer speaks MPA, DDP and RDMAP itself over a plain TCP socket and
# breaks the receiver rules of RFC 5040, 5041, 5044, 6581 and 7306 one at
# a time; xiw-target (userspace/tools/xiw-target.cc), a librdmacm + libsiw
# program on the device under test, accepts each connection, exposes its
# memory regions and reports completions, QP state and placed data.  Every
# scenario asserts the exact TERMINATE triplet and what follows it.
#
# Cases:
#   xiw, IPv4: every scenario but those needing markers; all must pass.
#   xiw, markers: a device created with mpa_markers=prefer, the marker
#     scenarios (markers both ways, a marker that points elsewhere).
#   xiw, IPv6: the data scenarios over IPv6.
#   xiw, netem loss: the TERMINATE scenarios with 20% of the packets
#     dropped; TCP's retransmissions must bring every TERMINATE and FIN.
#   xiw, P2P initiator: a device with mpa_p2p=1 and mpa_p2p_rtr=read
#     connects to xiw-peer (the initiator scenarios, --p2p-read-rtr).
#   siw: every scenario against siw.  Where siw answers differently the
#     scenario's line is printed as a difference; the case fails only if
#     the run itself breaks (no KTAP totals) or the kernel complains.
#     Skips without a siw module, and on the debug kernel (see below).
#     With the xiw run of the same script it writes the table of
#     differences (xiw-peer table) into the VM log directory and compares
#     it with Documentation/siw-differences.rst.
#
# siw's connection manager has a use-after-free: after some of the
# malformed MPA Requests (a revision 0 Request, which siw never answers,
# or a Request cut short by FIN) its listener's list keeps a freed
# endpoint, and later one of the process's rdma_destroy_id() calls
# reaches siw_destroy_listen(), which WARNs in siw_cep_put() (refcount
# underflow) and, under KASAN, reports the use-after-free and oopses.
# Seen in one run of two with every MPA scenario, never with mpa.rev0 and
# mpa.truncated_request left out, which the siw run therefore does; on
# the debug kernel the siw run is left out altogether.
. "$(dirname "$0")/lib.sh"

require_env
need_peer
top=$(cd "$(dirname "$0")/../.." && pwd)

MARKERS_PARAM=/sys/module/xiw/parameters/mpa_markers
MIN_SCENARIOS=60

# peer_run LOG ARG...: xiw-peer run against the target; KTAP to LOG.
peer_run() {
	local log=$1 rc=0
	shift
	echo "# + xiw-peer run $*"
	timeout 1500 "$PEER" run --target "$TARGET" --quiet "$@" >"$log" 2>"$log.err" || rc=$?
	return $rc
}

# totals LOG: "pass fail skip" from xiw-peer's KTAP totals line.
totals() {
	sed -n 's/^# Totals: pass:\([0-9]*\) fail:\([0-9]*\) .* skip:\([0-9]*\) .*/\1 \2 \3/p' "$1"
}

t_xiw() {
	local log=$XIW_TMP/xiw.log rc=0 n
	xiw_on_dummies xcf0 192.0.2.1 xcf
	n=$("$PEER" list | wc -l)
	diag "$n scenarios"
	((n >= MIN_SCENARIOS)) || fail "only $n scenarios, want at least $MIN_SCENARIOS"
	peer_run "$log" --addr 192.0.2.1 || rc=$?
	grep -E '^(not ok|# Totals)' "$log" | sed 's/^/# /'
	cat "$log.err" | head -20 | sed 's/^/# target: /'
	((rc == 0)) || fail "xiw-peer exit $rc"
	read -r p f s <<<"$(totals "$log")"
	diag "xiw: $p passed, $f failed, $s skipped"
	((p + s == n && f == 0)) || fail "not every scenario passed"
}

t_xiw_markers() {
	local log=$XIW_TMP/markers.log rc=0 saved
	[ -w "$MARKERS_PARAM" ] || skip "xiw has no mpa_markers parameter"
	add_dummy xcf1
	xrun ip addr add 192.0.2.5/24 dev xcf1
	saved=$(cat "$MARKERS_PARAM")
	echo prefer >"$MARKERS_PARAM"
	xiw_add xcfm xcf1 || rc=$?
	echo "${saved%% *}" >"$MARKERS_PARAM"
	((rc == 0)) || fail "rdma link add xcfm failed"
	peer_run "$log" --addr 192.0.2.5 --markers --filter llp.marker || rc=$?
	sed 's/^/# /' "$log"
	((rc == 0)) || fail "xiw-peer exit $rc"
	read -r p f s <<<"$(totals "$log")"
	((p == 2 && f == 0)) || fail "marker scenarios: $p passed, $f failed"
}

t_xiw_ipv6() {
	local log=$XIW_TMP/ipv6.log rc=0
	add_dummy xcf2
	xrun ip addr add 2001:db8:7::1/64 dev xcf2 nodad
	xiw_add xcf6 xcf2
	peer_run "$log" --addr 2001:db8:7::1 --filter data. || rc=$?
	grep -E '^(not ok|# Totals)' "$log" | sed 's/^/# /'
	((rc == 0)) || fail "xiw-peer exit $rc"
	read -r p f s <<<"$(totals "$log")"
	((p >= 10 && f == 0)) || fail "IPv6: $p passed, $f failed"
}

t_xiw_initiator() {
	local log=$XIW_TMP/initiator.log rc=0 n
	add_dummy xcf4
	xrun ip addr add 192.0.2.9/24 dev xcf4
	xiw_add xcfp xcf4
	echo 1 >"$IBDIR/xcfp/mpa_p2p"
	echo read >"$IBDIR/xcfp/mpa_p2p_rtr"
	n=$("$PEER" list | grep -c '^initiator\.')
	((n >= 1)) || fail "no initiator scenarios"
	peer_run "$log" --addr 192.0.2.9 --p2p-read-rtr --filter initiator. || rc=$?
	sed 's/^/# /' "$log"
	((rc == 0)) || fail "xiw-peer exit $rc"
	read -r p f s <<<"$(totals "$log")"
	((p == n && f == 0)) || fail "initiator scenarios: $p of $n passed, $f failed"
}

# The TERMINATE scenarios in a namespace whose loopback drops 20% of the
# packets: a TERMINATE lost on the way is retransmitted by TCP (the close
# behind it is a FIN, not a reset that would discard it), so every
# scenario still sees it, then the FIN.  TcpRetransSegs shows the loss.
# Not the two behind a closed window: with a 4 KiB window and TCP's
# backoff under this loss, the window may stay shut past the TERMINATE's
# 5 s bound (they run without loss in the first case).  Every wait is
# 60 s: after a retransmitted SYN, TCP's first RTO for data is 3 s and
# doubles with each loss, so a segment lost three times in a row arrives
# 21 s late, four times 45 s.
t_xiw_netem() {
	local log=$XIW_TMP/netem.log rc=0 ns r0 r1
	need_module sch_netem || skip "no netem"
	setup_ns ns
	xrun ip -n "$ns" link add xcf5 type dummy
	xrun ip -n "$ns" link set xcf5 up
	xrun ip -n "$ns" addr add 192.0.2.13/24 dev xcf5
	xrun ip netns exec "$ns" rdma link add xcfn type xiw netdev xcf5
	record rdma xcfn
	wait_for "$WAIT_TIMEOUT" ibdev_exists xcfn
	xrun ip netns exec "$ns" tc qdisc add dev lo root netem loss 20%
	r0=$(ip netns exec "$ns" nstat -az TcpRetransSegs | awk '/TcpRetransSegs/ { print $2 }')
	echo "# + ip netns exec $ns xiw-peer run --filter term,ddp.write_invalid_stag,rdmap.read_dead_stag"
	ip netns exec "$ns" timeout 600 "$PEER" run --target "$TARGET" --quiet \
		--addr 192.0.2.13 --timeout 60 --skip term.closed_window,term.closed_window_bound \
		--filter term,ddp.write_invalid_stag,rdmap.read_dead_stag \
		>"$log" 2>"$log.err" || rc=$?
	r1=$(ip netns exec "$ns" nstat -az TcpRetransSegs | awk '/TcpRetransSegs/ { print $2 }')
	sed 's/^/# /' "$log"
	((rc == 0)) || fail "xiw-peer exit $rc"
	read -r p f s <<<"$(totals "$log")"
	((p >= 5 && f == 0)) || fail "TERMINATE scenarios under loss: $p passed, $f failed"
	diag "TCP retransmitted $((r1 - r0)) segments"
	((r1 > r0)) || fail "no retransmission under 20% loss: the loss did not happen"
}

t_siw() {
	local log=$XIW_TMP/siw.log rc=0
	modinfo siw >/dev/null 2>&1 || skip "no siw module for $(uname -r)"
	[[ $(uname -r) != *xiwdebug* ]] || skip "siw's CM use-after-free oopses under KASAN"
	need_module siw || skip "cannot load siw"
	add_dummy xcf3
	xrun ip addr add 198.51.100.1/24 dev xcf3
	xrun rdma link add xcfs type siw netdev xcf3
	record rdma xcfs
	wait_for "$WAIT_TIMEOUT" ibdev_exists xcfs
	peer_run "$log" --addr 198.51.100.1 --skip mpa.rev0,mpa.truncated_request || rc=$?
	grep -E '^not ok' "$log" | sed 's/^not ok [0-9]* /# siw differs: /'
	grep -E '^# xiw-target died' "$log" || true
	[ -s "$log.err" ] && tail -n 20 "$log.err" | sed 's/^/# target: /'
	read -r p f s <<<"$(totals "$log")"
	[ -n "$p" ] || { sed 's/^/# /' "$log" "$log.err" | tail -40; fail "no totals from the siw run (exit $rc)"; }
	diag "siw: $p as xiw, $f different, $s skipped"
	siw_table "$log"
}

# siw_table SIW_LOG: the table of differences (Documentation/
# siw-differences.rst) from this run and the xiw run before it, left in
# the VM's log directory; says whether the committed copy still matches.
siw_table() {
	local doc=$top/Documentation/siw-differences.rst tab=$XIW_TMP/siw-differences.rst
	[ -s "$XIW_TMP/xiw.log" ] || { diag "no xiw run in this tier: no table"; return 0; }
	"$PEER" table "$1" "$XIW_TMP/xiw.log" "$(uname -r)" >"$tab" || fail "xiw-peer table failed"
	if [ -n "${XIW_VM_OUT:-}" ]; then
		cp "$tab" "$XIW_VM_OUT/siw-differences.rst"
		cp "$1" "$XIW_VM_OUT/conformance-siw.ktap"
		cp "$XIW_TMP/xiw.log" "$XIW_VM_OUT/conformance-xiw.ktap"
	fi
	if cmp -s "$tab" "$doc"; then
		diag "Documentation/siw-differences.rst matches this run"
	else
		diag "Documentation/siw-differences.rst differs from this run" \
			"(the new table: siw-differences.rst in the VM log directory):"
		{ diff -u "$doc" "$tab" || true; } | head -60 | sed 's/^/# /'
	fi
}

ktap_header
ktap_plan 6
run_case "conformance scenarios against xiw" t_xiw
run_case "TERMINATE scenarios against xiw under 20% netem loss" t_xiw_netem
run_case "marker scenarios against xiw with mpa_markers=prefer" t_xiw_markers
run_case "data scenarios against xiw over IPv6" t_xiw_ipv6
run_case "P2P initiator scenarios against xiw with a Read RTR" t_xiw_initiator
run_case "the same scenarios against siw (differences listed)" t_siw
ktap_finish
