#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_ufuzz.sh: what a local user can do to xiw through its user verbs,
# at random (userspace/tools/xiw-verbs-fuzz, issue 32).  One xiw device on
# a dummy netdev with 192.0.2.1; connections run over loopback on it.
#
#   ring race: a thread sets VALID in every SQ and RQ slot of a user QP,
#     as fast as it can, while the QP is flushed (modify to ERROR, the
#     doorbell in ERROR, destroy, and a connected QP whose peer
#     disconnects).  Each call must return at once and complete no more
#     than a ring's worth: a flush that follows the racer kept the CPU,
#     with interrupts off, for as long as the racer ran (finding 4).
#   fuzz smoke: random verbs for 25 s with the rings written at random
#     from a second thread (seed XIW_UFUZZ_SEED, default 1).
#   fuzz campaign: XIW_UFUZZ_OPS (100000) operations, a random seed
#     unless XIW_UFUZZ_SEED; then the device is deleted and xiw unloaded,
#     and a kmemleak scan must find nothing new (on kernels with
#     kmemleak; xiw is loaded again afterwards).
#
# xiw-verbs-fuzz fails on what only a kernel bug explains (a hang, a
# completion that makes no sense, a refused destroy of an unused object,
# an mmap of a destroyed ring, ...); verbs errors are its daily bread.
# The VM harness fails the run on any KASAN, lockdep, WARN or kmemleak
# report.
. "$(dirname "$0")/lib.sh"

require_env
need_tool FUZZ xiw-verbs-fuzz
need_module xiw || ktap_skip_all "cannot load xiw"
need_module dummy || ktap_skip_all "no dummy module"
need_module rdma_ucm || ktap_skip_all "no rdma_ucm module"

DEV=xiw0
ADDR=192.0.2.1
CAMPAIGN_OPS=${XIW_UFUZZ_OPS:-100000}

with_dev() {
	xiw_on_dummies xufdum0 "$ADDR" "$DEV"
	"$@"
}

# fuzz_ok LOG: the tool's summary line, and how many operations it ran
# into OPS.
fuzz_ok() {
	local line
	line=$(grep -E '^ok - xiw-verbs-fuzz: [0-9]+ operations' "$1") || return 1
	diag "$line"
	OPS=${line#ok - xiw-verbs-fuzz: }
	OPS=${OPS%% *}
}

t_ring_race() {
	xrun "$FUZZ" --ring-race 10 -d "$DEV" -a "$ADDR" -p 7301 ||
		fail "a flush did not stay bounded while the rings were raced"
}

t_smoke() {
	local seed=${XIW_UFUZZ_SEED:-1} OPS
	xrun "$FUZZ" -d "$DEV" -a "$ADDR" -p 7302 --seed "$seed" --time 25 ||
		fail "xiw-verbs-fuzz found a kernel bug (seed $seed)"
	fuzz_ok "$XIW_TMP/out" || fail "no summary from xiw-verbs-fuzz"
}

xiw_gone() { [ ! -d /sys/module/xiw ]; }

t_campaign() {
	local seed=${XIW_UFUZZ_SEED:-$((RANDOM << 15 | RANDOM))} OPS leaks=
	local check_leaks=0
	grep -q '^xiw ' /proc/modules || skip "xiw is built in: no leak check after rmmod"
	need_unload xiw
	if kmemleak_mark; then
		check_leaks=1
	else
		diag "no kmemleak on this kernel: the leak check after rmmod is left out"
	fi
	xrun "$FUZZ" -d "$DEV" -a "$ADDR" -p 7303 --seed "$seed" --ops "$CAMPAIGN_OPS" ||
		fail "xiw-verbs-fuzz found a kernel bug (seed $seed)"
	fuzz_ok "$XIW_TMP/out" || fail "no summary from xiw-verbs-fuzz"
	((OPS >= CAMPAIGN_OPS)) || fail "ran $OPS operations, want $CAMPAIGN_OPS"
	cleanup
	xrun rmmod xiw || fail "rmmod xiw failed"
	wait_for "$WAIT_TIMEOUT" xiw_gone || fail "xiw still loaded"
	((check_leaks)) && kmemleak_new leaks
	xrun modprobe xiw || fail "xiw does not load again"
	((check_leaks)) || return 0
	[ -z "$leaks" ] || fail "kmemleak after rmmod xiw: $(head -n 40 <<<"$leaks")"
	diag "kmemleak: nothing new after rmmod xiw"
}

ktap_header
ktap_plan 3
run_case "ring race: VALID set while the QP flushes stays bounded" with_dev t_ring_race
run_case "fuzz smoke: 25 s of random verbs with the rings written" with_dev t_smoke
run_case "fuzz campaign: $CAMPAIGN_OPS operations, then rmmod and kmemleak" with_dev t_campaign
ktap_finish
