#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_devinfo.sh: the attributes an xiw device reports through
# `ibv_devinfo -v`, `rdma dev show` and sysfs: an iWARP RNIC with one
# Ethernet port, GID 0 derived from the netdev's MAC, non-zero limits.
. "$(dirname "$0")/lib.sh"

require_env
need_module xiw || ktap_skip_all "cannot load xiw"
need_module dummy || ktap_skip_all "no dummy module"

MAC=00:00:5e:00:53:01		# RFC 7042 documentation address
DEV=xiw0
NETDEV=xdum0

# Every case runs against a fresh device on a dummy with a known MAC.
with_dev() {
	add_dummy "$NETDEV" "$MAC"
	xiw_add "$DEV" "$NETDEV"
	xrun ibv_devinfo -v -d "$DEV" || fail "ibv_devinfo -v -d $DEV failed"
	"$@"
}

# want NAME VALUE: `ibv_devinfo -v` field NAME starts with VALUE.
want() {
	local got
	got=$(ibv_attr "$DEV" "$1")
	[[ $got == "$2"* ]] || fail "$1: '$got', want '$2'"
}

# nonzero NAME...: the fields are present and not zero.
nonzero() {
	local name got
	for name in "$@"; do
		got=$(ibv_attr "$DEV" "$name" | awk '{ print $1 }')
		[ -n "$got" ] || fail "ibv_devinfo prints no $name"
		((got != 0)) || fail "$name is $got"
	done
}

# hex32 GID: the 32 hex digits of a sysfs GID string.
hex32() { tr -d ':' <<<"$1" | tr 'A-F' 'a-f'; }

t_node() {
	local out
	want transport iWARP
	[ "$(cat "$IBDIR/$DEV/node_type")" = "4: RNIC" ] ||
		fail "sysfs node_type '$(cat "$IBDIR/$DEV/node_type")', want '4: RNIC'"
	xget out rdma dev show "$DEV"
	grep -q 'node_type rnic' <<<"$out" || fail "rdma dev show: node_type is not rnic"
}

t_ports() {
	want phys_port_cnt 1
	[ "$(ls "$IBDIR/$DEV/ports")" = 1 ] || fail "ports: $(ls "$IBDIR/$DEV/ports")"
	want link_layer Ethernet
	want state PORT_ACTIVE
	[ "$(cat "$IBDIR/$DEV/ports/1/link_layer")" = Ethernet ] ||
		fail "sysfs link_layer '$(cat "$IBDIR/$DEV/ports/1/link_layer")'"
}

t_gid() {
	local gid mac eui
	gid=$(hex32 "$(cat "$IBDIR/$DEV/ports/1/gids/0")")
	echo "# gid0 $gid, mac $MAC"
	[ "$gid" != "$(printf '%032d' 0)" ] || fail "GID 0 is zero"
	mac=$(tr -d ':' <<<"$MAC")
	# modified EUI-64: universal/local bit flipped, ff:fe in the middle
	eui=$(printf '%02x' $((0x${mac:0:2} ^ 2)))${mac:2:4}fffe${mac:6:6}
	[[ ${gid:0:12} == "$mac" || ${gid:16:16} == "$eui" ]] ||
		fail "GID 0 $gid holds neither the MAC $mac nor its EUI-64 $eui"
}

t_guid() {
	local guid
	guid=$(ibv_attr "$DEV" node_guid)
	[ -n "$guid" ] && [ "$(tr -d ':0' <<<"$guid")" != "" ] || fail "node_guid '$guid'"
	[ "$(cat "$IBDIR/$DEV/node_guid")" = "$guid" ] ||
		fail "sysfs node_guid '$(cat "$IBDIR/$DEV/node_guid")' != ibv_devinfo '$guid'"
}

t_limits() {
	nonzero max_mr_size page_size_cap max_qp max_qp_wr max_sge max_cq max_cqe \
		max_mr max_pd max_qp_rd_atom max_qp_init_rd_atom
	nonzero max_msg_sz gid_tbl_len
}

t_mtu() {
	want max_mtu 4096
	want active_mtu 1024	# dummy's default mtu is 1500
}

# rdma_cm needs a non-zero GID to resolve addresses: on loopback, whose MAC
# is all zeros, the device has to make one up.
t_lo_gid() {
	local gid
	xiw_add xiw_lo lo
	gid=$(hex32 "$(cat "$IBDIR/xiw_lo/ports/1/gids/0")")
	echo "# xiw_lo gid0 $gid"
	[ "$gid" != "$(printf '%032d' 0)" ] || fail "GID 0 on lo is zero"
}

ktap_header
ktap_plan 7
run_case "transport iWARP, node type RNIC" with_dev t_node
run_case "one Ethernet port, active" with_dev t_ports
run_case "GID 0 derived from the netdev MAC" with_dev t_gid
run_case "node_guid set and consistent" with_dev t_guid
run_case "device limits non-zero" with_dev t_limits
run_case "max_mtu 4096, active_mtu from netdev mtu" with_dev t_mtu
run_case "non-zero GID 0 on loopback" t_lo_gid
ktap_finish
