#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_link_errors.sh: every kind of bad `rdma link add ... type xiw` must
# fail without creating a device, and leave the module working: after each
# rejected add a good add on a fresh dummy succeeds, and no RDMA device,
# netdev or module reference is left behind.
. "$(dirname "$0")/lib.sh"

require_env
need_module xiw || ktap_skip_all "cannot load xiw"
need_module dummy || ktap_skip_all "no dummy module"
# Tunnel drivers whose netdevs are neither Ethernet nor loopback.  Loading
# them creates their fallback devices (tunl0, sit0) now, outside any case.
have_ipip=0
have_sit=0
need_module ipip && have_ipip=1
need_module sit && have_sit=1

xiw_refcnt() { cat /sys/module/xiw/refcnt; }

# still_works: the module accepts a good device and removes it again.
still_works() {
	add_dummy xgood0
	xiw_add xiw_good xgood0
	ibdev_exists xiw_good || fail "good add after an error did not work"
	xiw_del xiw_good
}

# bad_add DEV NETDEV: the add fails and creates no device.
bad_add() {
	local refs
	refs=$(xiw_refcnt)
	xfail rdma link add "$1" type xiw netdev "$2"
	record rdma "$1"
	ibdev_gone "$1" || fail "rejected add still created $IBDIR/$1"
	! rdma_links | grep -qx "$1" || fail "rejected add left $1 in rdma link show"
	[ "$(xiw_refcnt)" = "$refs" ] || fail "xiw refcnt $refs -> $(xiw_refcnt)"
}

test_no_netdev() {
	netdev_exists xnone0 && fail "xnone0 exists"
	bad_add xiw0 xnone0
	still_works
}

test_ipip() {
	((have_ipip)) || skip "no ipip module"
	xrun ip link add xipip0 type ipip local 192.0.2.1 remote 192.0.2.2
	record netdev xipip0
	xrun ip link set xipip0 up
	bad_add xiw0 xipip0
	still_works
}

test_sit() {
	((have_sit)) || skip "no sit module"
	netdev_exists sit0 || fail "sit0 missing after loading sit"
	bad_add xiw0 sit0
	still_works
}

# A name that is already taken, by an xiw device on another netdev.
test_dup_name() {
	add_dummy xdum0
	add_dummy xdum1
	xiw_add xiw0 xdum0
	xfail rdma link add xiw0 type xiw netdev xdum1
	ibdev_exists xiw0 || fail "first xiw0 disappeared"
	[ "$(rdma_link_attr xiw0 netdev)" = xdum0 ] || fail "xiw0 no longer on xdum0"
	[ "$(rdma_links | grep -cx xiw0)" = 1 ] || fail "xiw0 listed more than once"
	still_works
	xiw_del xiw0
}

# A second xiw device on a netdev that already has one.
test_same_netdev() {
	add_dummy xdum0
	xiw_add xiw0 xdum0
	bad_add xiw1 xdum0
	ibdev_exists xiw0 || fail "first device disappeared"
	[ "$(rdma_link_attr xiw0 netdev)" = xdum0 ] || fail "xiw0 no longer on xdum0"
	still_works
	xiw_del xiw0
}

# Names ib_core must refuse: a format string and one longer than
# IB_DEVICE_NAME_MAX (64).
test_bad_names() {
	add_dummy xdum0
	bad_add 'xiw%d' xdum0
	bad_add "xiw$(printf '%070d' 0)" xdum0
	still_works
}

# Every rejected add above leaves the module as it was: it still unloads
# only once its devices are gone, i.e. the reference count is back at zero.
test_refcnt() {
	[ "$(xiw_refcnt)" = 0 ] || fail "xiw refcnt is $(xiw_refcnt) with no devices"
}

ktap_header
ktap_plan 7
run_case "netdev does not exist" test_no_netdev
run_case "ipip netdev (ARPHRD_TUNNEL) refused" test_ipip
run_case "sit netdev (ARPHRD_SIT) refused" test_sit
run_case "duplicate device name refused" test_dup_name
run_case "second xiw device on one netdev refused" test_same_netdev
run_case "invalid device names refused" test_bad_names
run_case "no module reference leaked" test_refcnt
ktap_finish
