#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_fuzz.sh: random FPDU streams against live xiw QPs (xiw-peer fuzz,
# userspace/tools/xiw_peer_fuzz.cc), and the connections in which they
# showed a bug, kept in fuzz-scenarios/ and replayed with xiw-peer replay.
#
# Two devices: xfz (mpa_markers off) and xfzm (mpa_markers prefer: the
# target sends markers and, if asked, receives them); xiw-target accepts
# on each with its regions registered and keeps receives posted.
#
# Cases:
#   scenarios: the findings saved in fuzz-scenarios/ (each the connection
#     that showed a bug, now fixed), replayed: none may show it again.
. "$(dirname "$0")/lib.sh"

require_env
top=$(cd "$(dirname "$0")/../.." && pwd)
PEER=${XIW_PEER:-$top/build/userspace/tools/xiw-peer}
TARGET=${XIW_TARGET:-$top/build/userspace/tools/xiw-target}
[ -x "$PEER" ] || ktap_skip_all "$PEER not built (make userspace)"
[ -x "$TARGET" ] || ktap_skip_all "$TARGET not built (make userspace)"
need_module xiw || ktap_skip_all "cannot load xiw"
need_module dummy || ktap_skip_all "no dummy module"
need_module rdma_ucm || ktap_skip_all "no rdma_ucm module"

SCENARIOS=$(cd "$(dirname "$0")" && pwd)/fuzz-scenarios

# fuzz_devices: xfz on 192.0.2.1 (no markers), xfzm on 192.0.2.5 (markers).
fuzz_devices() {
	xiw_on_dummies xfz0 192.0.2.1 xfz xfz1 192.0.2.5 xfzm
	echo prefer >"$IBDIR/xfzm/mpa_markers"
}

# replay LOG FILE...: xiw-peer replay against both devices.
replay() {
	local log=$1 rc=0
	shift
	echo "# + xiw-peer replay ($# scenarios)"
	"$PEER" replay --target "$TARGET" --addr 192.0.2.1 --markers-addr 192.0.2.5 \
		"$@" >"$log" 2>&1 || rc=$?
	quote_file "$log"
	return $rc
}

t_scenarios() {
	local -a files=("$SCENARIOS"/*.scn)
	[ -e "${files[0]}" ] || skip "no saved scenarios in $SCENARIOS"
	fuzz_devices
	replay "$XIW_TMP/scenarios.log" "${files[@]}" || fail "a saved finding showed again"
}

ktap_header
ktap_plan 1
run_case "fuzz scenarios: the saved findings replay clean" t_scenarios
ktap_finish
