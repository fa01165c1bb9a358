#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_rmmod.sh: unloading xiw with live devices removes them all; the module
# loads again and works, also when `rdma link add ... type xiw` loads it
# through its rdma-link-xiw alias.  xiw is left loaded or unloaded as found.
# The cases that unload xiw run only where it is the test's to unload
# (need_unload: not loaded when the test started, or XIW_OWN_MODULES=1).
. "$(dirname "$0")/lib.sh"

require_env
need_module dummy || ktap_skip_all "no dummy module"
need_module veth || ktap_skip_all "no veth module"

was_loaded=0
[ -d /sys/module/xiw ] && was_loaded=1

# Nothing to restore at exit if the test leaves xiw in the state it found.
restore_xiw() {
	if ((was_loaded)) && [ ! -d /sys/module/xiw ]; then
		xrun modprobe xiw
	elif ((!was_loaded)) && [ -d /sys/module/xiw ]; then
		cleanup
		xrun rmmod xiw
	fi
}
trap 'restore_xiw; cleanup_all' EXIT

module_gone() { [ ! -d /sys/module/xiw ]; }
no_xiw_devices() { ! ls "$IBDIR" 2>/dev/null | grep -q '^xiw'; }

# unload: rmmod xiw must succeed and take every xiw device with it.
unload() {
	xrun rmmod xiw || fail "rmmod xiw failed"
	wait_for "$WAIT_TIMEOUT" module_gone || fail "xiw still in /sys/module"
	wait_for "$WAIT_TIMEOUT" no_xiw_devices ||
		fail "devices left after rmmod: $(ls "$IBDIR")"
	! rdma link show | grep -q 'link xiw' || fail "rdma link show still lists xiw devices"
}

# works DEV NETDEV: a device can be added, queried and deleted.
works() {
	xiw_add "$1" "$2"
	xrun ibv_devinfo -d "$1" || fail "ibv_devinfo -d $1 failed"
	xiw_del "$1"
}

test_alias() {
	local out
	xget out modinfo -F alias xiw || fail "modinfo xiw failed"
	grep -qx rdma-link-xiw <<<"$out" || fail "xiw has no rdma-link-xiw alias"
	xget out modprobe -R rdma-link-xiw || fail "modprobe cannot resolve rdma-link-xiw"
	[ "$out" = xiw ] || fail "rdma-link-xiw resolves to '$out'"
}

test_rmmod_live() {
	need_unload xiw
	[ -d /sys/module/xiw ] || xrun modprobe xiw
	add_dummy xdum0
	add_veth xveth0 xveth1
	xiw_add xiw_lo lo
	xiw_add xiw0 xdum0
	xiw_add xiw1 xveth0
	unload
	# Their netdevs survived.
	netdev_exists xdum0 && netdev_exists xveth0 || fail "netdevs went with the module"
}

test_reload() {
	need_unload xiw
	[ -d /sys/module/xiw ] || xrun modprobe xiw
	unload
	xrun modprobe xiw || fail "modprobe xiw failed after rmmod"
	add_dummy xdum0
	works xiw0 xdum0
	works xiw_lo lo
}

test_autoload() {
	need_unload xiw
	[ -d /sys/module/xiw ] || xrun modprobe xiw
	unload
	add_dummy xdum0
	xiw_add xiw0 xdum0 || fail "rdma link add did not load xiw"
	[ -d /sys/module/xiw ] || fail "xiw not loaded but xiw0 exists"
	xiw_del xiw0
}

# Load and unload with devices a few times in a row.
test_cycles() {
	local i
	need_unload xiw
	add_dummy xdum0
	for i in 1 2 3; do
		[ -d /sys/module/xiw ] || xrun modprobe xiw
		xiw_add xiw0 xdum0
		xiw_add xiw_lo lo
		unload
	done
	xrun modprobe xiw
	works xiw0 xdum0
}

ktap_header
ktap_plan 5
run_case "module alias rdma-link-xiw" test_alias
run_case "rmmod with live devices removes them" test_rmmod_live
run_case "module reloads and works" test_reload
run_case "rdma link add autoloads xiw" test_autoload
run_case "three load/unload cycles with devices" test_cycles
ktap_finish
