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
# - LIO always opens a TCP listener for a portal (its iSER listener is a
#   child of it on the same address and port), and on iWARP the RDMA
#   listener is a real TCP listener on that address and port too: in one
#   namespace the second bind fails with EADDRINUSE.  The portal is
#   therefore created by a process in a scratch namespace (nsenter --net):
#   LIO's TCP socket is created in its creator's namespace (with
#   IP_FREEBIND, so the address need not exist there), while ib_isert's
#   RDMA CM listener, enabled afterwards, is in the initial namespace on
#   the xiw (or siw) device.  Discovery runs over iSER as well
#   (iscsiadm -I iser: a discovery session through ib_iser), so no TCP
#   iSCSI is involved at all.
# - LIO is configured through configfs, as targetcli does it, without
#   targetcli: one process per step instead of a Python start each, no
#   preferences file, no default portal on 0.0.0.0:3260 (targetcli's
#   auto_add_default_portal, which would take the port on every address)
#   and nothing saved to /etc.  `targetcli ls` (one-shot mode, no daemon,
#   nothing saved) then shows the configuration as an operator sees it.
# - iscsid is started by the test (foreground, no pid file, its own
#   configuration and initiator name); the node database is open-iscsi's
#   own (/etc/iscsi, the guest's tmpfs overlay), and the records the test
#   made are deleted at the end.
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

LIO=$CFG/target
IQN=iqn.2026-12.xiw.test:iser-$(mktemp -u XXXXXX | tr '[:upper:]' '[:lower:]')
PORT=3260
MIB=64		# the LUN (a LIO ramdisk, rd_mcp)
RAND_MIB=32	# 4 KiB random writes, verified
SEQ_MIB=64	# 1 MiB sequential writes, verified, and again after a new login
HBA=$LIO/core/rd_mcp_$((RANDOM % 9000 + 1000))
DEV=$HBA/xiw_iser
WWN=$LIO/iscsi/$IQN
TPG=$WWN/tpgt_1
crc_param=/sys/module/xiw/parameters/mpa_crc
crc_saved=$(cat $crc_param)
created_fabric=0
ADDR=
PORTAL=
mark=

case_log() { dmesg | awk -v m="$mark" 'f; index($0, m) { f = 1 }'; }

# Target: ramdisk backstore, demo-mode TPG (any initiator, no CHAP), LUN 0,
# the portal's TCP listener made in the scratch namespace $NSP, its iSER
# listener here.
target_up() {
	local np=$TPG/np/$ADDR:$PORT
	if [ ! -d $LIO/iscsi ]; then
		xrun mkdir $LIO/iscsi
		created_fabric=1
	fi
	xrun mkdir -p "$DEV"
	echo "rd_pages=$((MIB * 256))" >"$DEV/control"
	echo 1 >"$DEV/enable"
	xrun mkdir -p "$TPG/lun/lun_0"
	xrun ln -s "$DEV" "$TPG/lun/lun_0/xiw_iser"
	echo 0 >"$TPG/attrib/authentication"
	echo 1 >"$TPG/attrib/generate_node_acls"
	echo 1 >"$TPG/attrib/cache_dynamic_acls"
	echo 0 >"$TPG/attrib/demo_mode_write_protect"
	xrun nsenter --net="/run/netns/$NSP" mkdir "$np"
	xrun sh -c "echo 1 >'$np/iser'"
	[ "$(cat "$np/iser")" = 1 ] || fail "the portal has no iSER listener"
	echo 1 >"$TPG/enable"
	diag "target $IQN: portal $ADDR:$PORT, iser=$(cat "$np/iser")"
	# What an operator sees: targetcli must show the portal as iSER.
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

target_down() {
	local np
	[ -d "$TPG" ] && echo 0 >"$TPG/enable"
	for np in "$TPG"/np/*; do
		[ -d "$np" ] || continue
		[ -e "$np/iser" ] && echo 0 >"$np/iser"
		rmdir "$np"
	done
	[ -L "$TPG/lun/lun_0/xiw_iser" ] && rm -f "$TPG/lun/lun_0/xiw_iser"
	[ -d "$TPG/lun/lun_0" ] && rmdir "$TPG/lun/lun_0"
	[ -d "$TPG" ] && rmdir "$TPG"
	[ -d "$WWN" ] && rmdir "$WWN"
	[ -d "$DEV" ] && rmdir "$DEV"
	[ -d "$HBA" ] && rmdir "$HBA"
	if ((created_fabric)) && [ -d $LIO/iscsi ]; then
		rmdir $LIO/iscsi && created_fabric=0
	fi
}

# iscsid in the foreground, with its own initiator name and configuration.
iscsid_up() {
	printf 'InitiatorName=iqn.2026-12.xiw.test:initiator-%s\n' "${IQN##*-}" \
		>"$XIW_TMP/initiatorname.iscsi"
	printf 'node.startup = manual\n' >"$XIW_TMP/iscsid.conf"
	# iscsid and iscsiadm lock in /run/lock/iscsi and make only its last
	# component; the guests' /run is a fresh tmpfs.
	mkdir -p /run/lock
	# In a session of its own: iscsid's SIGTERM handler (foreground or
	# not) sends SIGTERM to its whole process group, which would else be
	# the test's.  setsid execs iscsid (no fork: bg_run's child is no
	# group leader), so the recorded pid is iscsid's.
	bg_run ISCSID_PID setsid iscsid -f -n -c "$XIW_TMP/iscsid.conf" -i "$XIW_TMP/initiatorname.iscsi" \
		>"$XIW_TMP/iscsid.log" 2>&1
	# iscsiadm reaches iscsid on an abstract UNIX socket.
	wait_for 30 grep -q ISCSIADM_ABSTRACT_NAMESPACE /proc/net/unix ||
		fail "iscsid did not start: $(cat "$XIW_TMP/iscsid.log")"
}

# The SCSI disk of our session, once the scan has found LUN 0.
iser_disk() {
	local s b t
	for s in /sys/class/iscsi_session/session*; do
		read -r t 2>/dev/null <"$s/targetname" || continue
		[ "$t" = "$IQN" ] || continue
		for b in "$s"/device/target*/*:*:*:*/block/*; do
			[ -e "$b" ] || continue
			echo "${b##*/}"
			return 0
		done
	done
	return 1
}

iser_session() {
	local s t
	for s in /sys/class/iscsi_session/session*; do
		read -r t 2>/dev/null <"$s/targetname" || continue
		[ "$t" = "$IQN" ] && return 0
	done
	return 1
}
no_session() { ! iser_session; }

login() {
	local sess=
	xrun iscsiadm -m node -T "$IQN" -p "$PORTAL" -I iser --login ||
		fail "login over iser failed"
	wait_for 60 iser_disk || fail "no SCSI disk for $IQN"
	DISK=/dev/$(iser_disk)
	wait_for 30 test -b "$DISK" || fail "$DISK did not appear"
	xget sess iscsiadm -m session
	grep -q "^iser: .*$PORTAL,1 $IQN" <<<"$sess" || fail "the session is not over iser"
	diag "disk $DISK: $(cat "/sys/class/block/${DISK#/dev/}/size") sectors"
}

logout() {
	xrun iscsiadm -m node -T "$IQN" -p "$PORTAL" -I iser --logout || fail "logout failed"
	wait_for 30 no_session || fail "the session outlived the logout"
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
			"$(case_log | grep -iE 'iser|isert|iscsi|target|rdma|xiw|siw|sd ' | tail -n 60)"
		[ -s "$XIW_TMP/iscsid.log" ] && diag "iscsid:" "$(tail -n 30 "$XIW_TMP/iscsid.log")"
	fi
	if iser_session; then
		iscsiadm -m node -T "$IQN" -p "$PORTAL" -I iser --logout >/dev/null 2>&1
		wait_for 30 no_session
	fi
	iscsiadm -m node -T "$IQN" -p "$PORTAL" -I iser -o delete >/dev/null 2>&1
	iscsiadm -m discoverydb -t sendtargets -p "$PORTAL" -o delete >/dev/null 2>&1
	target_down
	echo "${crc_saved%% *}" >$crc_param
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
	xrun rdma link add xist type "$1" netdev xit0
	record rdma xist
	xrun rdma link add xisi type "$2" netdev xii0
	record rdma xisi
	wait_for "$WAIT_TIMEOUT" ibdev_exists xist
	wait_for "$WAIT_TIMEOUT" ibdev_exists xisi
	diag "target on $1 (xist, 192.0.2.42 on xit0), initiator on $2 (xisi, 198.51.100.42 on xii0)"
	ADDR=192.0.2.42
}

# Connected RDMA CM IDs on device $1 in `rdma resource show cm_id` $2.
connected_ids() {
	grep -E "(dev|link) $1[ /]" <<<"$2" | grep -c 'state CONNECT' || true
}

# case_iser SETUP [ARG...]: the whole round on the devices SETUP makes.
case_iser() {
	local setup=$1 crc=$2 ids t i tx0 tx1 found agreed
	shift 2
	mark="xiw_iser: case $((KTAP_N + 1)) start $$"
	echo "$mark" >/dev/kmsg
	trap teardown EXIT
	if ((crc)); then
		echo prefer >$crc_param
	fi
	"$setup" "$@"
	echo "${crc_saved%% *}" >$crc_param
	PORTAL=$ADDR:$PORT
	setup_ns NSP
	target_up
	iscsid_up

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
	logout
	# The data is the target's: a new session reads and verifies it.
	login
	fio_verified seq1m --rw=write --bs=1M --size=${SEQ_MIB}M --iodepth=4 --verify_only
	logout
	xrun iscsiadm -m node -T "$IQN" -p "$PORTAL" -I iser -o delete
	target_down
	# Nothing may hold the devices any more.
	if [ "$setup" = setup_pair ]; then
		xiw_del xisi || fail "rdma link del xisi failed"
		xiw_del xist || fail "rdma link del xist failed"
	else
		xiw_del xis || fail "rdma link del xis failed"
	fi
	# With dynamic debug, xiw's CM logs what every connection agreed.
	if ((crc && dyndbg)); then
		agreed=$(case_log | grep "xiw: .*: cep .*MPA rev 2, crc" || true)
		diag "$agreed"
		[ -n "$agreed" ] || fail "xiw logged no connection"
		! grep -q "crc 0," <<<"$agreed" || fail "a connection did not agree on CRC"
	fi
}

# The initiator and target modules go, and xiw after them: nothing of
# the iSER rounds holds a reference any more.
case_unload() {
	local m w targets=0
	no_session || fail "an iSCSI session is still there"
	# The fabric's configfs group holds iscsi_target_mod while it exists.
	for w in $LIO/iscsi/iqn.*; do
		[ -d "$w" ] && targets=1
	done
	if [ -d $LIO/iscsi ] && ((targets == 0)); then
		rmdir $LIO/iscsi || true
	fi
	for m in ib_iser ib_isert iscsi_target_mod xiw; do
		[ -d /sys/module/$m ] || continue
		xrun rmmod $m || fail "rmmod $m failed: $(cat /sys/module/$m/refcnt 2>/dev/null) references"
	done
	xrun modprobe xiw || fail "xiw does not load again"
}

dyndbg=0
echo 'module xiw file xiw_cm.c +p' >/sys/kernel/debug/dynamic_debug/control 2>/dev/null && dyndbg=1
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
echo 'module xiw -p' >/sys/kernel/debug/dynamic_debug/control 2>/dev/null || true
ktap_finish
