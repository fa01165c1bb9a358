#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_link.sh: `rdma link add`/`rdma link del` of xiw devices on loopback, a
# dummy and a veth netdev.  A new device must show up in `rdma link show`
# bound to its netdev, in /sys/class/infiniband, in `ibv_devices`, and answer
# `ibv_devinfo`; after `rdma link del` it must be gone from all of them.
. "$(dirname "$0")/lib.sh"

require_env
need_module xiw || ktap_skip_all "cannot load xiw"
need_module dummy || ktap_skip_all "no dummy module"
need_module veth || ktap_skip_all "no veth module"

# in_ibv_devices DEV: DEV is listed by ibv_devices (libibverbs + provider).
in_ibv_devices() { ibv_devices | awk 'NR > 2 { print $1 }' | grep -qx "$1"; }

# check_present DEV NETDEV: DEV is a working xiw device on NETDEV.
check_present() {
	local dev=$1 netdev=$2 out
	ibdev_exists "$dev" || fail "$IBDIR/$dev missing"
	xget out rdma link show "$dev/1" || fail "rdma link show $dev/1 failed"
	[ "$(rdma_link_attr "$dev" netdev)" = "$netdev" ] ||
		fail "rdma link show: $dev not bound to $netdev"
	rdma_links | grep -qx "$dev" || fail "$dev not in rdma link show"
	xrun ibv_devices || fail "ibv_devices failed"
	in_ibv_devices "$dev" || fail "$dev not listed by ibv_devices"
	xget out ibv_devinfo -d "$dev" || fail "ibv_devinfo -d $dev failed"
	grep -q "hca_id:[[:space:]]*$dev\$" <<<"$out" || fail "ibv_devinfo: no hca_id $dev"
	grep -q 'transport:[[:space:]]*iWARP' <<<"$out" || fail "ibv_devinfo: transport is not iWARP"
}

# check_absent DEV: no trace of DEV left.
check_absent() {
	local dev=$1
	ibdev_gone "$dev" || fail "$IBDIR/$dev still present"
	! rdma_links | grep -qx "$dev" || fail "$dev still in rdma link show"
	! in_ibv_devices "$dev" || fail "$dev still listed by ibv_devices"
	! ibv_devinfo -d "$dev" >/dev/null 2>&1 || fail "ibv_devinfo -d $dev still works"
}

# add_del DEV NETDEV
add_del() {
	xiw_add "$1" "$2"
	check_present "$1" "$2"
	xiw_del "$1"
	check_absent "$1"
}

test_lo() {
	add_del xiw_lo lo
}

test_dummy() {
	add_dummy xdum0
	xrun ip addr add 192.0.2.1/24 dev xdum0
	add_del xiw0 xdum0
}

test_veth() {
	add_veth xveth0 xveth1
	xrun ip addr add 198.51.100.1/24 dev xveth0
	add_del xiw0 xveth0
}

# Several devices at once, each on its own netdev, deleted in another order.
test_many() {
	add_dummy xdum0
	add_veth xveth0 xveth1
	xiw_add xiw_lo lo
	xiw_add xiw0 xdum0
	xiw_add xiw1 xveth0
	xiw_add xiw2 xveth1
	check_present xiw_lo lo
	check_present xiw0 xdum0
	check_present xiw1 xveth0
	check_present xiw2 xveth1
	xiw_del xiw1
	check_absent xiw1
	check_present xiw2 xveth1
	xiw_del xiw_lo
	xiw_del xiw2
	xiw_del xiw0
	check_absent xiw_lo
	check_absent xiw0
	check_absent xiw2
}

# The same name can be used again once the device is gone.
test_readd() {
	add_dummy xdum0
	add_del xiw0 xdum0
	add_del xiw0 xdum0
	add_del xiw0 lo
}

# `rdma link add` run inside a network namespace finds the netdev there.
test_netns() {
	local ns out
	xiw_ns_veth ns xveth0 xveth1 xiw_ns || fail "xiw_ns did not appear"
	# The netdev is only named to callers in its own namespace.
	xget out ip netns exec "$ns" rdma link show xiw_ns/1
	grep -q ' netdev xveth1 ' <<<"$out " || fail "xiw_ns not bound to xveth1 in $ns"
	xrun ip netns exec "$ns" ibv_devinfo -d xiw_ns || fail "ibv_devinfo in $ns failed"
	xrun ip netns exec "$ns" rdma link del xiw_ns
	wait_for "$WAIT_TIMEOUT" ibdev_gone xiw_ns || fail "xiw_ns not removed"
}

ktap_header
ktap_plan 6
run_case "link add/del on lo" test_lo
run_case "link add/del on a dummy netdev" test_dummy
run_case "link add/del on a veth netdev" test_veth
run_case "four devices on lo, dummy and both veth ends" test_many
run_case "device name reusable after link del" test_readd
run_case "link add/del inside a network namespace" test_netns
ktap_finish
