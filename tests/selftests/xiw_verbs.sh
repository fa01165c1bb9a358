#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_verbs.sh: the verbs objects of an xiw device through rdma-core's
# unmodified libsiw provider (userspace/tools/xiw-verbs-test), the driver
# details `rdma res show qp|cq|mr -dd` prints for them, and that xiw cannot
# be unloaded while a process has its user verbs context open.
. "$(dirname "$0")/lib.sh"

require_env
need_module xiw || ktap_skip_all "cannot load xiw"
need_module dummy || ktap_skip_all "no dummy module"

xiw_tool VERBS_TEST xiw-verbs-test || :
xiw_tool TARGET xiw-target || :
DEV=xiw0
NETDEV=xvdum0

with_dev() {
	add_dummy "$NETDEV"
	xrun ip addr add 192.0.2.1/24 dev "$NETDEV"
	xiw_add "$DEV" "$NETDEV"
	"$@"
}

t_verbs_test() {
	need_tool VERBS_TEST xiw-verbs-test
	xrun "$VERBS_TEST" -d "$DEV" || fail "xiw-verbs-test failed"
}

# A process that keeps a PD, MR, CQ and an INIT-state QP open (holder):
# the pingpong server waits for its TCP peer forever.
start_holder() {
	command -v ibv_rc_pingpong >/dev/null || skip "ibv_rc_pingpong not installed"
	bg_run holder ibv_rc_pingpong -d "$DEV" -g 0 -p 18515 >"$XIW_TMP/holder.log" 2>&1
	wait_for "$WAIT_TIMEOUT" has_res qp || fail "no QP appeared in rdma res"
}

# res_lines KIND [OPT...]: our device's lines of `rdma [OPT] res show KIND`.
res_lines() {
	local kind=$1
	shift
	rdma "$@" res show "$kind" | grep -E "^(link|dev) $DEV[/ ]"
}
has_res() { res_lines "$1" | grep -q .; }
no_res() { ! res_lines "$1" | grep -q "comm ibv_rc_pingpong"; }

# want_res KIND WORD...: `rdma res show KIND -dd` of our device has WORDs.
want_res() {
	local kind=$1 out w
	shift
	xget out res_lines "$kind" -dd
	for w in "$@"; do
		grep -q -- "$w" <<<"$out" || fail "rdma res show $kind -dd: no '$w'"
	done
}

t_restrack() {
	start_holder
	want_res qp "drv_iwarp_state IDLE" "drv_sq_size" "drv_rq_size" "drv_flushed"
	want_res cq "drv_ring_size" "drv_cq_put" "drv_overflows"
	want_res mr "drv_stag 0x" "drv_kind user" "drv_access 0x"
	kill -0 "$holder" 2>/dev/null || fail "the process holding the context died"
	stop_bg "$holder"
	wait_for "$WAIT_TIMEOUT" no_res qp || fail "QP still listed after exit"
}

# xiw implements disassociate_ucontext: rmmod does not wait for (or get
# refused by) a process holding a user context; ib_uverbs destroys the
# context's objects and the process sees EIO from then on.
t_rmmod_open() {
	grep -q '^xiw ' /proc/modules || skip "xiw is built in"
	need_unload xiw
	start_holder
	xrun rmmod xiw
	[ ! -d /sys/module/xiw ] || fail "xiw still loaded"
	ibdev_gone "$DEV" || fail "$DEV survived rmmod"
	kill -0 "$holder" 2>/dev/null || fail "the process holding the context died"
	stop_bg "$holder"
	xrun modprobe xiw
	xiw_add "$DEV" "$NETDEV" || fail "no device after reloading xiw"
	xrun ibv_devinfo -d "$DEV"
}

# Kernel consumers: the kernel verbs test module xiw_kverbs_test (kernel
# QPs with 8 SGEs and inline data, fast-reg MR, workqueue and direct CQs,
# drain) on the device.
t_kverbs() {
	local param=/sys/module/xiw_kverbs_test/parameters/run
	need_module xiw_kverbs_test || fail "cannot load xiw_kverbs_test (make modules)"
	[ -e "$param" ] || fail "$param missing"
	echo "# + echo $DEV > $param"
	echo "$DEV" >"$param" || fail "kernel verbs test failed (see dmesg)"
	dmesg | grep 'kernel verbs selftest' | tail -n 1 | sed 's/^/# /'
	# Unknown devices are refused.
	if echo nosuchdev >"$param" 2>/dev/null; then
		fail "the test ran on a missing device"
	fi
}

ktap_header
# A process in a memory cgroup of its own creates a CQ of 262144 entries
# (its ring 8 MiB; libsiw maps it): the ring is charged to the cgroup as
# kernel memory while the CQ lives, and uncharged when it goes.
t_ring_memcg() {
	local cg=/sys/fs/cgroup line before during after
	need_tool TARGET xiw-target
	if [ ! -e $cg/cgroup.controllers ]; then
		mount -t cgroup2 none $cg 2>/dev/null || skip "no cgroup2"
		echo "umount $cg" >>"$XIW_TMP/cg-undo"
	fi
	grep -qw memory $cg/cgroup.controllers || skip "no memory controller"
	# The root's children get the memory controller if they have not yet;
	# then they lose it again when the case ends.
	if ! grep -qw memory $cg/cgroup.subtree_control; then
		echo +memory >$cg/cgroup.subtree_control || skip "cannot enable the memory controller"
		echo "cg_memory_off $cg" >>"$XIW_TMP/cg-undo"
	fi
	mkdir $cg/xiw-ring
	echo "rmdir $cg/xiw-ring" >>"$XIW_TMP/cg-undo"
	coproc RING { echo $BASHPID >$cg/xiw-ring/cgroup.procs && exec "$TARGET" -p 7195 192.0.2.1 2>&1; }
	read -r -t 30 line <&"${RING[0]}" || fail "xiw-target did not start"
	[[ $line == ready* ]] || fail "xiw-target: $line"
	before=$(memcg_kernel $cg/xiw-ring)
	echo "idle cqe=262144" >&"${RING[1]}"
	read -r -t 30 line <&"${RING[0]}" || fail "no answer to idle"
	[[ $line == "ok qpn="* ]] || fail "idle: $line"
	during=$(memcg_kernel $cg/xiw-ring)
	echo close >&"${RING[1]}"
	read -r -t 30 line <&"${RING[0]}" || fail "no answer to close"
	after=$(memcg_kernel $cg/xiw-ring)
	echo quit >&"${RING[1]}"
	wait "$RING_PID" 2>/dev/null || true
	diag "cgroup kernel memory: $before before the CQ, $during with it, $after after it"
	((during - before >= 8 << 20)) || fail "the 8 MiB CQ ring is not charged to the cgroup"
	((during - after >= 8 << 20)) || fail "the CQ ring's charge stayed after the CQ went"
}

# The case in a subshell of its own, so that the cgroup goes whatever
# way it ends (its process has quit by then).
t_ring_memcg_undo() {
	local rc=0
	(t_ring_memcg) || rc=$?
	cg_undo
	return $rc
}

# memcg_kernel CGROUP: its "kernel" memory in octets.
memcg_kernel() { sed -n 's/^kernel \([0-9]*\)$/\1/p' "$1/memory.stat"; }

cg_memory_off() { echo -memory >"$1/cgroup.subtree_control"; }
cg_undo() { [ -e "$XIW_TMP/cg-undo" ] && tac "$XIW_TMP/cg-undo" | while read -r c; do $c 2>/dev/null; done; rm -f "$XIW_TMP/cg-undo"; }

ktap_plan 5
run_case "verbs objects through libsiw (xiw-verbs-test)" with_dev t_verbs_test
run_case "kernel verbs: QP, FRMR, CQs and ib_drain_qp" with_dev t_kverbs
run_case "rdma res show qp/cq/mr -dd driver details" with_dev t_restrack
run_case "rmmod with a user context open disassociates it" with_dev t_rmmod_open
run_case "user rings are charged to the memory cgroup" with_dev t_ring_memcg_undo
ktap_finish
