#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_netdev.sh: an xiw device follows its netdev.  Unregistering the netdev
# removes the device; the port state follows the netdev's up/down state in
# `rdma link show` and `ibv_devinfo`; MTU changes show in active_mtu.
. "$(dirname "$0")/lib.sh"

require_env
need_module xiw || ktap_skip_all "cannot load xiw"
need_module dummy || ktap_skip_all "no dummy module"
need_module veth || ktap_skip_all "no veth module"

port_state() { ibv_attr "$1" state | awk '{ print $1 }'; }
link_state_is() { [ "$(rdma_link_attr "$1" state)" = "$2" ]; }
port_state_is() { [ "$(port_state "$1")" = "$2" ]; }
active_mtu_is() { [ "$(ibv_attr "$1" active_mtu | awk '{ print $1 }')" = "$2" ]; }

# expect_state DEV LINK_STATE PORT_STATE: e.g. ACTIVE PORT_ACTIVE.
expect_state() {
	wait_for "$WAIT_TIMEOUT" link_state_is "$1" "$2" ||
		fail "rdma link show: $1 state '$(rdma_link_attr "$1" state)', want $2"
	port_state_is "$1" "$3" ||
		fail "ibv_devinfo: $1 port state '$(port_state "$1")', want $3"
	xrun rdma link show "$1/1"
}

test_unregister_dummy() {
	add_dummy xdum0
	xiw_add xiw0 xdum0
	xrun ip link del xdum0
	wait_for "$WAIT_TIMEOUT" ibdev_gone xiw0 || fail "xiw0 outlived its netdev"
	! rdma_links | grep -qx xiw0 || fail "xiw0 still in rdma link show"
}

# Deleting one veth end unregisters both: both devices must go.
test_unregister_veth() {
	add_veth xveth0 xveth1
	xiw_add xiw0 xveth0
	xiw_add xiw1 xveth1
	xrun ip link del xveth1
	wait_for "$WAIT_TIMEOUT" ibdev_gone xiw0 || fail "xiw0 outlived its netdev"
	wait_for "$WAIT_TIMEOUT" ibdev_gone xiw1 || fail "xiw1 outlived its netdev"
}

# The name is free again once the netdev took its device with it.
test_unregister_readd() {
	add_dummy xdum0
	xiw_add xiw0 xdum0
	xrun ip link del xdum0
	wait_for "$WAIT_TIMEOUT" ibdev_gone xiw0 || fail "xiw0 outlived its netdev"
	add_dummy xdum0
	xiw_add xiw0 xdum0
	xiw_del xiw0
}

test_up_down() {
	add_dummy xdum0
	xiw_add xiw0 xdum0
	expect_state xiw0 ACTIVE PORT_ACTIVE
	xrun ip link set xdum0 down
	expect_state xiw0 DOWN PORT_DOWN
	xrun ip link set xdum0 up
	expect_state xiw0 ACTIVE PORT_ACTIVE
	xrun ip link set xdum0 down
	expect_state xiw0 DOWN PORT_DOWN
	xiw_del xiw0
}

# A device added on a netdev that is down starts DOWN and comes up with it.
test_add_while_down() {
	add_dummy xdum0
	xrun ip link set xdum0 down
	xiw_add xiw0 xdum0
	expect_state xiw0 DOWN PORT_DOWN
	xrun ip link set xdum0 up
	expect_state xiw0 ACTIVE PORT_ACTIVE
	xiw_del xiw0
}

# MTUs well inside each IB MTU band, so a driver that subtracts its header
# overhead from the netdev MTU gives the same answer.
test_mtu() {
	local mtu want
	add_dummy xdum0
	xiw_add xiw0 xdum0
	for mtu in 1500:1024 9000:4096 3000:2048 700:512 400:256 1500:1024; do
		want=${mtu#*:}
		mtu=${mtu%:*}
		xrun ip link set xdum0 mtu "$mtu"
		wait_for "$WAIT_TIMEOUT" active_mtu_is xiw0 "$want" ||
			fail "netdev mtu $mtu: active_mtu '$(ibv_attr xiw0 active_mtu)', want $want"
	done
	xiw_del xiw0
}

# Deleting a namespace destroys its netdevs, and with them their devices:
# xiw must not keep the namespace alive (a socket or reference would).
test_netns_teardown() {
	local ns
	xiw_ns_veth ns xveth0 xveth1 xiw_ns || fail "xiw_ns did not appear"
	xrun ip netns del "$ns"
	wait_for "$WAIT_TIMEOUT" ibdev_gone xiw_ns || fail "xiw_ns outlived its namespace"
	wait_for "$WAIT_TIMEOUT" eval '! netdev_exists xveth0' ||
		fail "the veth pair outlived the namespace"
}

ktap_header
ktap_plan 7
run_case "dummy unregister removes the device" test_unregister_dummy
run_case "veth unregister removes the devices on both ends" test_unregister_veth
run_case "device name free after its netdev went" test_unregister_readd
run_case "port state follows netdev down/up" test_up_down
run_case "device added on a down netdev" test_add_while_down
run_case "active_mtu follows the netdev mtu" test_mtu
run_case "namespace deletion removes the device" test_netns_teardown
ktap_finish
