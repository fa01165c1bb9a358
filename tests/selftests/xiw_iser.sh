#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_iser.sh: iSCSI Extensions for RDMA over xiw.  The LIO target
# (target_core_mod, iscsi_target_mod) exports a ramdisk LUN through an
# iSER portal (ib_isert); open-iscsi's initiator (ib_iser, iscsid,
# iscsiadm) discovers it and logs in over the iser transport; fio writes
# and verifies (crc32c) 4 KiB random and 1 MiB sequential I/O on the SCSI
# disk; after a logout and a second login the sequential data is verified
# again (it lived on the target); then logout, target teardown and
# `rdma link del` of every device, each of which must succeed.
#
# Where things live, and why:
#
# - Every RDMA CM ID of ib_isert and ib_iser is created in the initial
#   network namespace (rdma_create_id(&init_net, ...)), and iscsid can
#   only talk to the kernel there (NETLINK_ISCSI exists in init_net only),
#   so both ends run in the initial namespace.  With one xiw device on a
#   dummy netdev both ends share it (the TCP stream crosses the loopback
#   path), as in xiw_nvmeof.sh.  ib_iser cannot be told a source address
#   (its ep_connect gets the destination only), so for an initiator on a
#   device of its own the target and initiator devices sit on the two ends
#   of a veth pair in the initial namespace and local_wire (lib.sh) routes
#   the traffic between their addresses across it.
# - LIO and its iSER portal are set up by iser_target_up (lib.sh), which
#   says why the portal is made from a scratch namespace; discovery runs
#   over iSER as well (iscsiadm -I iser: a discovery session through
#   ib_iser), so no TCP iSCSI is involved at all.  LIO is configured
#   through configfs, as targetcli does it, without targetcli: one
#   process per step instead of a Python start each, no preferences
#   file, no default portal on 0.0.0.0:3260 (targetcli's
#   auto_add_default_portal, which would take the port on every address)
#   and nothing saved to /etc.  `targetcli ls` (one-shot mode, nothing
#   saved) then shows the configuration as an operator sees it.
# - iscsid is started by the test (iscsid_up: foreground, no pid file,
#   its own configuration and initiator name); the node database is
#   open-iscsi's own (/etc/iscsi, the guest's tmpfs overlay), and the
#   records the test made are deleted at the end.
#
# Cases: xiw target and initiator on one device, MPA CRC off; on two xiw
# devices across a veth pair, CRC on; across implementations when a siw
# module is at hand (tests/vm/build-siw): xiw target with a siw initiator
# and the reverse (the connected RDMA CM IDs show each device carried its
# end, the veth's counters that the data crossed it); last, ib_iser,
# ib_isert, iscsi_target_mod and xiw unload.
. "$(dirname "$0")/lib.sh"

require_env
for t in iscsiadm iscsid fio nsenter; do
	command -v $t >/dev/null || ktap_skip_all "$t not installed (open-iscsi, fio, util-linux)"
done
need_module xiw || ktap_skip_all "cannot load xiw"
need_module dummy || ktap_skip_all "no dummy module"
need_module veth || ktap_skip_all "no veth module"
need_module rdma_cm || ktap_skip_all "no rdma_cm module"
for m in target_core_mod iscsi_target_mod ib_isert ib_iser sd_mod; do
	need_module $m || ktap_skip_all "no $m module"
done
CFG=/sys/kernel/config
if [ ! -d $CFG/target ]; then
	mount -t configfs none $CFG 2>/dev/null || true
	[ -d $CFG/target ] || ktap_skip_all "no LIO configfs ($CFG/target)"
fi
[ -d /sys/class/iscsi_transport/iser ] || ktap_skip_all "ib_iser registered no iser transport"

IQN=iqn.2026-12.xiw.test:iser-$(mktemp -u XXXXXX | tr '[:upper:]' '[:lower:]')
PORT=3260
MIB=64		# the LUN (a LIO ramdisk, rd_mcp)
RAND_MIB=32	# 4 KiB random writes, verified
SEQ_MIB=64	# 1 MiB sequential writes, verified, and again after a new login
crc_param=/sys/module/xiw/parameters/mpa_crc
ADDR=
PORTAL=
DISK=


# The target (lib.sh: a ramdisk LUN, the iSER portal), and what an
# operator sees of it: targetcli must show the portal as iSER.
target_up() {
	iser_target_up "$IQN" "$ADDR" $PORT rd:$MIB
	diag "target $IQN: portal $ADDR:$PORT, iser=$(<"$ISER_NP/iser")"
	if ! command -v targetcli >/dev/null; then
		diag "targetcli not installed: no listing"
	elif ! command -v dbus-run-session >/dev/null; then
		diag "dbus-run-session not installed: no targetcli listing"
	else
		# targetcli asks the system bus for tcmu-runner's backstores and
		# cannot start without a bus; the guest has none, so a private
		# bus stands in for it (nothing answers there: no user backstores).
		xrun env TARGETCLI_HOME="$XIW_TMP/targetcli" dbus-run-session -- \
			sh -c 'DBUS_SYSTEM_BUS_ADDRESS=$DBUS_SESSION_BUS_ADDRESS exec targetcli ls "$1"' \
			sh "/iscsi/$IQN" || fail "targetcli cannot list the target"
		grep -q "$ADDR:$PORT.*\[iser\]" "$XIW_TMP/out" ||
			fail "targetcli does not show the portal as iser"
	fi
}

login() {
	iser_login "$IQN" "$PORTAL"
	DISK=$ISER_DISK
	diag "disk $DISK: $(<"/sys/class/block/${DISK#/dev/}/size") sectors"
}

# fio_verified NAME ARGS...: one fio job on $DISK with crc32c verification,
# every mismatch fatal; its bandwidth lines as diagnostics.
fio_verified() {
	local name=$1
	shift
	xrun fio --name="$name" --filename="$DISK" --direct=1 --ioengine=libaio \
		--verify=crc32c --verify_fatal=1 --verify_state_save=0 "$@" ||
		fail "fio $name failed (or found corrupt data)"
	diag "$name: $(grep -E '(READ|WRITE): bw=' "$XIW_TMP/out" | tr -s ' \n' ' ')"
}

teardown() {
	local rc=$?
	# Best effort: what is already gone makes its command fail (iscsiadm
	# exits 21 for a record it does not find), which is no failure.
	set +e
	trap - ERR
	if ((rc)); then
		diag "kernel log of the case (iSER, iSCSI, RDMA):" \
			"$(log_since | grep -iE 'iser|isert|iscsi|target|rdma|xiw|siw|sd ' | tail -n 60)"
		[ -s "$XIW_TMP/iscsid.log" ] && diag "iscsid:" "$(tail -n 30 "$XIW_TMP/iscsid.log")"
	fi
	iser_forget "$IQN" "$PORTAL"
	iser_target_down "$IQN"
}

# setup_one: one xiw device on a dummy netdev, both ends on it.
setup_one() {
	add_dummy xis0
	xrun ip addr add 192.0.2.41/24 dev xis0
	xiw_add xis xis0
	ADDR=192.0.2.41
}

# setup_pair TDRV IDRV: the target's device (driver TDRV) on xit0, the
# initiator's (IDRV) on xii0, a local wire between them.
setup_pair() {
	local d
	for d in "$1" "$2"; do
		[ "$d" = siw ] || continue
		modinfo siw >/dev/null 2>&1 || skip "no siw module for $(uname -r) (tests/vm/build-siw)"
		need_module siw || skip "cannot load siw"
	done
	local_wire xit0 192.0.2.42 xii0 198.51.100.42
	xiw_add xist xit0 "$1"
	xiw_add xisi xii0 "$2"
	diag "target on $1 (xist, 192.0.2.42 on xit0), initiator on $2 (xisi, 198.51.100.42 on xii0)"
	ADDR=192.0.2.42
}

# case_iser SETUP [ARG...]: the whole round on the devices SETUP makes.
case_iser() {
	local setup=$1 crc=$2 ids t i tx0 tx1 found
	shift 2
	log_mark
	trap teardown EXIT
	# Devices made in this case default to MPA CRC when asked.
	((crc == 0)) || set_knob $crc_param prefer
	"$setup" "$@"
	PORTAL=$ADDR:$PORT
	target_up
	iscsid_up "iqn.2026-12.xiw.test:initiator-${IQN##*-}"

	xget found iscsiadm -m discovery -t sendtargets -p "$PORTAL" -I iser ||
		fail "SendTargets discovery over iser failed"
	grep -q "^$PORTAL,1 $IQN\$" <<<"$found" || fail "discovery did not find $IQN at $PORTAL"
	login
	if [ "$setup" = setup_pair ]; then
		ids=$(rdma resource show cm_id 2>/dev/null)
		t=$(connected_ids xist "$ids")
		i=$(connected_ids xisi "$ids")
		diag "connected RDMA CM IDs: target device $t, initiator device $i"
		((t > 0 && i > 0)) || fail "each device must carry its end: $ids"
		read -r tx0 </sys/class/net/xii0/statistics/tx_bytes
	fi
	fio_verified rand4k --rw=randwrite --bs=4k --size=${RAND_MIB}M --iodepth=16
	fio_verified seq1m --rw=write --bs=1M --size=${SEQ_MIB}M --iodepth=4
	if [ "$setup" = setup_pair ]; then
		read -r tx1 </sys/class/net/xii0/statistics/tx_bytes
		diag "xii0 tx_bytes: $tx0 -> $tx1"
		# The initiator's writes left through its end of the wire.
		((tx1 - tx0 >= (RAND_MIB + SEQ_MIB) * 1048576)) ||
			fail "the data did not cross the veth pair"
	fi
	iser_logout "$IQN" "$PORTAL"
	# The data is the target's: a new session reads and verifies it.
	login
	fio_verified seq1m --rw=write --bs=1M --size=${SEQ_MIB}M --iodepth=4 --verify_only
	iser_logout "$IQN" "$PORTAL"
	xrun iscsiadm -m node -T "$IQN" -p "$PORTAL" -I iser -o delete
	iser_target_down "$IQN"
	# Nothing may hold the devices any more.
	if [ "$setup" = setup_pair ]; then
		xiw_del xisi || fail "rdma link del xisi failed"
		xiw_del xist || fail "rdma link del xist failed"
	else
		xiw_del xis || fail "rdma link del xis failed"
	fi
	# With dynamic debug, xiw's CM logs what every connection agreed.
	((crc == 0 || dyndbg == 0)) || mpa_crc_agreed 1
}

# The initiator and target modules go, and xiw after them: nothing of
# the iSER rounds holds a reference any more.
case_unload() {
	local m w targets=0
	for m in ib_iser ib_isert iscsi_target_mod xiw; do
		need_unload $m
	done
	no_iser_session "$IQN" || fail "an iSCSI session is still there"
	# The fabric's configfs group holds iscsi_target_mod while it exists.
	for w in $CFG/target/iscsi/iqn.*; do
		[ -d "$w" ] && targets=1
	done
	if [ -d $CFG/target/iscsi ] && ((targets == 0)); then
		rmdir $CFG/target/iscsi || true
	fi
	for m in ib_iser ib_isert iscsi_target_mod xiw; do
		[ -d /sys/module/$m ] || continue
		xrun rmmod $m || fail "rmmod $m failed: $(cat /sys/module/$m/refcnt 2>/dev/null) references"
	done
	xrun modprobe xiw || fail "xiw does not load again"
}

dyndbg=0
dyndbg_on "module xiw file xiw_cm.c" && dyndbg=1
ktap_header
ktap_plan 5
run_case "iSER over xiw: one device, fio crc32c 4 KiB random and 1 MiB sequential, CRC off" \
	case_iser setup_one 0
run_case "iSER over xiw: two devices on a veth pair, fio verified, CRC on" \
	case_iser setup_pair 1 xiw xiw
run_case "iSER across implementations: target on xiw, initiator on siw, fio verified" \
	case_iser setup_pair 0 xiw siw
run_case "iSER across implementations: target on siw, initiator on xiw, fio verified" \
	case_iser setup_pair 0 siw xiw
run_case "iSER teardown: ib_iser, ib_isert, iscsi_target_mod and xiw unload" case_unload
ktap_finish
