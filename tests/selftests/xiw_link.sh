#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_link.sh: `rdma link add`/`rdma link del` of xiw devices on loopback, a
# dummy and a veth netdev.  A new device must show up in `rdma link show`
# bound to its netdev, in /sys/class/infiniband, in `ibv_devices`, and answer
# `ibv_devinfo`; after `rdma link del` it must be gone from all of them.
# The name given to `rdma link add` must survive rdma-core's udev rule.
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

# rdma-core's udev rule (60-rdma-persistent-naming.rules) runs
# `rdma_rename %k NAME_FALLBACK` for every new RDMA device; a site may name
# another policy there (NAME_GUID, NAME_FIXED NAME).  rdma_rename leaves a
# device alone whose name nldev reports as the user's
# (RDMA_NLDEV_ATTR_NAME_ASSIGN_TYPE: kernels from 6.11 with
# ib_mark_name_assigned_by_user(); rdma-core from July 2024, e.g. trixie's
# 56.1; bookworm's 44 renames every device).  NAME_FALLBACK names only a
# device under a PCI function (the netdev's parent; a dummy has none), so
# here NAME_GUID and NAME_FIXED are the policies that would rename a device
# whose name is not marked.  XIW_RDMA_ROOT=DIR runs the
# rdma_rename of the root filesystem DIR (tests/vm/run-selftests gives the
# trixie build root) with that root's own loader and libraries; else the
# system's runs.
rdma_rename_cmd() {
	local root=${XIW_RDMA_ROOT:-} ld
	RENAME=()
	if [ -n "$root" ]; then
		for ld in "$root"/usr/lib/*-linux-gnu/ld-linux*.so.[0-9]; do
			[ -x "$ld" ] && [ -x "$root/usr/lib/udev/rdma_rename" ] || continue
			RENAME=("$ld" --library-path "${ld%/*}" "$root/usr/lib/udev/rdma_rename")
			return 0
		done
		return 1
	fi
	for ld in /usr/lib/udev/rdma_rename /lib/udev/rdma_rename; do
		[ -x "$ld" ] || continue
		RENAME=("$ld")
		return 0
	done
	return 1
}

# name_kept DEV POLICY [ARG]: run rdma_rename DEV POLICY [ARG]; true if DEV
# still has its name.  A renamed DEV is given its name back (rdma dev set),
# and the name rdma_rename gave it is said.
name_kept() {
	local dev=$1 new
	shift
	# Exit 1 where the policy finds no name (NAME_FALLBACK on a device
	# without a PCI parent).
	xget new "${RENAME[@]}" "$dev" "$@" || :
	ibdev_exists "$dev" && return 0
	[ -n "$new" ] && ibdev_exists "$new" || fail "$dev gone, and no device '$new'"
	echo "# rdma_rename $*: $dev renamed to $new"
	xrun rdma dev set "$new" name "$dev" || fail "cannot rename $new back to $dev"
	return 1
}

# The name survives every policy wherever siw's (marked as the user's since
# 6.11) does.  The same policies run against siw on the same kernel tell
# whether the kernel and rdma_rename honour the assign type at all: where
# they do not (6.1, bookworm's rdma-core), siw's name goes too, and the case
# is skipped, saying what became of both.
test_name_kept() {
	local policy xk sk renamed_both=
	rdma_rename_cmd || skip "no rdma_rename (rdma-core)${XIW_RDMA_ROOT:+ in $XIW_RDMA_ROOT}"
	modinfo siw >/dev/null 2>&1 || skip "no siw module to compare with"
	need_module siw || skip "cannot load siw"
	add_dummy xdum0
	add_dummy xdum1
	xiw_add xiwname0 xdum0
	xrun rdma link add siwname0 type siw netdev xdum1
	record rdma siwname0
	wait_for "$WAIT_TIMEOUT" ibdev_exists siwname0
	for policy in NAME_FALLBACK NAME_GUID "NAME_FIXED xiwfixed0"; do
		xk=1 sk=1
		name_kept xiwname0 $policy || xk=0
		name_kept siwname0 $policy || sk=0
		if ((sk && !xk)); then
			fail "rdma_rename $policy renamed xiwname0, not siwname0"
		elif ((!sk)); then
			renamed_both+=" $policy (xiw: $( ((xk)) && echo kept || echo renamed))"
		fi
	done
	[ -z "$renamed_both" ] ||
		skip "this kernel or rdma_rename renames user-named devices, siw's too:$renamed_both"
}

ktap_header
ktap_plan 7
run_case "link add/del on lo" test_lo
run_case "link add/del on a dummy netdev" test_dummy
run_case "link add/del on a veth netdev" test_veth
run_case "four devices on lo, dummy and both veth ends" test_many
run_case "device name reusable after link del" test_readd
run_case "link add/del inside a network namespace" test_netns
run_case "name given to link add survives rdma_rename (udev rule)" test_name_kept
ktap_finish
