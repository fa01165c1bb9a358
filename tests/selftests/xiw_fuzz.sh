#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_fuzz.sh: random FPDU streams against live xiw QPs (xiw-peer fuzz,
# userspace/tools/xiw_peer_fuzz.cc).
#
# xiw-peer connects with real MPA (revision 1 and 2, CRC on and off,
# markers both ways, one way or not at all, P2P with each RTR type) to
# xiw-target, which accepts with registered memory and keeps receives
# posted, learns the STags and Tagged Offsets the target advertises and
# sends seeded random streams: mostly valid frames (Sends into the posted
# receives, Writes inside the regions, Read Requests within bounds, their
# Read Responses checked octet by octet), then one mutated frame (headers,
# lengths, STags, Tagged Offsets, MSNs, queue numbers, opcodes, markers,
# CRC, pad, cut and extra octets) and the target's TERMINATE, or an
# orderly end (our FIN, the target's disconnect, our TERMINATE, a reset).
# TCP write boundaries are random, down to one octet at a time.  A
# connection without its TERMINATE, or in which the target stops making
# progress, a target process that dies or cannot close, and any kernel
# splat (the VM rig fails the run on those) are findings; xiw-peer saves
# each as a scenario that `xiw-peer replay` runs again.
#
# Two devices: xfz (mpa_markers off) and xfzm (mpa_markers prefer: the
# target sends markers and, if asked, receives them).
#
# Cases:
#   scenarios: the findings saved in fuzz-scenarios/ (each the connection
#     that showed a bug, now fixed), replayed: none may show it again.
#   smoke: a short seeded run; its saved connections replay with the same
#     outcome.
#   campaign: at least XIW_FUZZ_FRAMES (1000000) frames, then every QP and
#     MR of the devices is gone, xiw unloads and kmemleak finds nothing new.
#     The frames are shared out among XIW_FUZZ_STREAMS (2) fuzzers that run
#     side by side, each with its own seed and target port: one stream
#     leaves a vCPU idle while the other side of its connection works.
# XIW_FUZZ_SEED overrides the seeds (printed either way).
. "$(dirname "$0")/lib.sh"

require_env
need_peer

SMOKE_FRAMES=${XIW_FUZZ_SMOKE_FRAMES:-6000}
SMOKE_TIME=40
CAMPAIGN_FRAMES=${XIW_FUZZ_FRAMES:-1000000}
CAMPAIGN_TIME=${XIW_FUZZ_TIME:-2100}
CAMPAIGN_STREAMS=${XIW_FUZZ_STREAMS:-2}
SCENARIOS=$(cd "$(dirname "$0")" && pwd)/fuzz-scenarios

# fuzz_devices: xfz on 192.0.2.1 (no markers), xfzm on 192.0.2.5 (markers).
fuzz_devices() {
	xiw_on_dummies xfz0 192.0.2.1 xfz xfz1 192.0.2.5 xfzm
	echo prefer >"$IBDIR/xfzm/mpa_markers"
}

# fuzz LOG ARG...: xiw-peer fuzz against both devices; its summary and any
# findings as diagnostics; findings go to the VM's result share too.
fuzz() {
	local log=$1 rc=0
	shift
	echo "# + xiw-peer fuzz $*"
	"$PEER" fuzz --target "$TARGET" --addr 192.0.2.1 --markers-addr 192.0.2.5 \
		--save-dir "$XIW_TMP/found" "$@" >"$log" 2>"$log.err" || rc=$?
	quote "$(grep -v '^# conn ' "$log")"
	[ -s "$log.err" ] && tail -n 20 "$log.err" | sed 's/^/# target: /'
	if [ -d "$XIW_TMP/found" ] && ls "$XIW_TMP/found"/*.scn >/dev/null 2>&1 &&
		[ -d /xiw-out ] && [ -w /xiw-out ]; then
		mkdir -p /xiw-out/fuzz-findings
		cp "$XIW_TMP/found"/* /xiw-out/fuzz-findings/ 2>/dev/null || true
		diag "scenarios saved in the VM log directory, fuzz-findings/"
	fi
	return $rc
}

# summary LOG: "frames connections findings" from xiw-peer's last line.
summary() {
	sed -n 's/^# frames \([0-9]*\) connections \([0-9]*\) findings \([0-9]*\) .*/\1 \2 \3/p' "$1"
}

# seed DEFAULT: XIW_FUZZ_SEED or DEFAULT.
seed() { echo "${XIW_FUZZ_SEED:-$1}"; }

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

t_smoke() {
	local log=$XIW_TMP/smoke.log rc=0 f c n keep=$XIW_TMP/keep
	fuzz_devices
	# Every 8th connection is kept, finding or not, to be replayed below.
	fuzz "$log" --seed "$(seed 20261204)" --frames "$SMOKE_FRAMES" --time "$SMOKE_TIME" \
		--keep-every 8 --keep-dir "$keep" || rc=$?
	read -r f c n <<<"$(summary "$log")"
	[ -n "$f" ] || fail "no summary from xiw-peer fuzz (exit $rc)"
	((rc == 0 && n == 0)) || fail "$n findings (exit $rc)"
	((f >= SMOKE_FRAMES / 4 && c >= 4)) || fail "only $f frames in $c connections"
	grep -q '^# TERMINATEs: [A-Z]' "$log" || fail "no TERMINATE in the whole run"
	local -a kept=("$keep"/*.scn)
	[ -e "${kept[0]}" ] || fail "no connection kept for the replay"
	# The kept connections again, from their files: no finding either.
	replay "$log.replay" "${kept[@]}" || fail "a kept connection did not replay clean"
}

# objects DEV KIND: the number of KIND (qp, mr, cm_id) rdma res lists for DEV.
objects() {
	rdma res show "$2" 2>/dev/null | grep -cE "(^| )(link|dev) $1(/| )" || true
}


t_campaign() {
	local log=$XIW_TMP/campaign.log rc=0 f c n kind d leaks check_leaks=1
	need_unload xiw
	kmemleak_mark || check_leaks=0
	fuzz_devices
	# Stream k: seed 1000003 + k, port 18700 + 10k, its share of frames.
	local -a pids=()
	local k p s0 each=$(((CAMPAIGN_FRAMES + CAMPAIGN_STREAMS - 1) / CAMPAIGN_STREAMS))
	s0=$(seed 1000003)
	for ((k = 0; k < CAMPAIGN_STREAMS; k++)); do
		bg_run p fuzz "$log.$k" --seed $((s0 + k)) --port $((18700 + 10 * k)) \
			--frames "$each" --time "$CAMPAIGN_TIME"
		pids+=("$p")
	done
	local frames=0 conns=0 found=0
	for ((k = 0; k < CAMPAIGN_STREAMS; k++)); do
		rc=0
		bg_wait "${pids[k]}" || rc=$?
		read -r f c n <<<"$(summary "$log.$k")"
		[ -n "$f" ] || fail "stream $k: no summary from xiw-peer fuzz (exit $rc)"
		((rc == 0 && n == 0)) || fail "stream $k: $n findings (exit $rc)"
		frames=$((frames + f)) conns=$((conns + c)) found=$((found + n))
	done
	diag "campaign: $frames frames in $conns connections, $found findings," \
		"$CAMPAIGN_STREAMS streams"
	((frames >= CAMPAIGN_FRAMES)) ||
		fail "only $frames of $CAMPAIGN_FRAMES frames within ${CAMPAIGN_TIME}s"
	# xiw-target has quit: nothing of its connections may be left.
	for d in xfz xfzm; do
		for kind in qp mr cm_id; do
			((n = $(objects "$d" "$kind"))) && {
				xrun rdma res show "$kind"
				fail "$n ${kind}s left on $d"
			}
		done
	done
	xiw_del xfzm
	xiw_del xfz
	xrun rmmod xiw || fail "rmmod xiw failed after the campaign"
	xrun modprobe xiw || fail "modprobe xiw failed after the campaign"
	if ((check_leaks)); then
		kmemleak_new leaks
		[ -z "$leaks" ] || fail "kmemleak after rmmod xiw: $(head -n 60 <<<"$leaks")"
		diag "kmemleak: nothing new after rmmod xiw"
	else
		diag "no kmemleak on this kernel: the leak check after rmmod is left out"
	fi
}

ktap_header
ktap_plan 3
run_case "fuzz scenarios: the saved findings replay clean" t_scenarios
run_case "fuzz smoke: seeded random FPDU streams, the kept connections replayed" t_smoke
run_case "fuzz campaign: $CAMPAIGN_FRAMES frames, then no QP or MR left, rmmod, kmemleak" t_campaign
ktap_finish
