# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the bench's guest scripts (bench-guest.sh, bench-nvme-guest.sh),
# sourced after they define log MESSAGE.
#
# BENCH_XIW_B names a second build of xiw.ko (a path on the host's root,
# which the guest sees read-only).  It takes turns with the staged build as
# driver "xiwb": the two builds of one comparison then run in one boot, on
# the same netdevs, repetition by repetition.  Only one xiw.ko can be
# loaded, so a turn starts by swapping the module.
#
#   xiw_cm_debug   with BENCH_CM_DEBUG=1, turns on xiw_cm.c's pr_debug()s:
#                  the connection manager says why a connection failed
#                  only there, and a failed client's report shows the
#                  kernel log.  Off by default: the messages are formatted
#                  into the kernel log whether a console shows them or
#                  not, about 98000 instructions per cmtime connection,
#                  which siw does not pay.
#   xiw_ab_start   loads build A and, with BENCH_XIW_B, logs which two
#                  builds take turns.  An earlier script of the same boot
#                  may have left build B loaded: it goes first.
#   xiw_use a|b    makes build A (modprobe) or B (insmod BENCH_XIW_B) the
#                  loaded one; rc 1 when it cannot.  No xiw device may be
#                  left when it swaps.

xiw_loaded=

xiw_cm_debug() {
	[ "${BENCH_CM_DEBUG:-0}" = 1 ] || return 0
	echo "module xiw file xiw_cm.c +p" >/proc/dynamic_debug/control 2>/dev/null || true
}

xiw_ab_start() {
	local a

	if [ -z "${BENCH_XIW_B:-}" ]; then
		modprobe xiw || return 1
		xiw_loaded=a
		xiw_cm_debug
		return 0
	fi
	xiw_loaded=unknown
	xiw_use a || return 1
	a=$(modinfo -n xiw)
	log "xiw A: $a ($(sha256sum <"$a" | cut -c1-12)), B: $BENCH_XIW_B ($(sha256sum <"$BENCH_XIW_B" | cut -c1-12))"
}

xiw_use() {
	[ "$xiw_loaded" != "$1" ] || return 0
	# The last turn's devices are gone; their unregistration may still
	# hold the module for a moment.
	for _ in $(seq 50); do
		[ -d /sys/module/xiw ] || break
		rmmod xiw 2>/dev/null && break
		sleep 0.1
	done
	[ ! -d /sys/module/xiw ] || { log "rmmod xiw failed"; return 1; }
	xiw_loaded=
	if [ "$1" = b ]; then
		insmod "$BENCH_XIW_B" || return 1
	else
		modprobe xiw || return 1
	fi
	xiw_cm_debug
	xiw_loaded=$1
}
