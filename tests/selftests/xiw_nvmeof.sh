#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_nvmeof.sh: NVMe over Fabrics over xiw, both ends in-kernel RDMA
# consumers.  nvmet with nvmet-rdma exports a file-backed namespace on an
# xiw device; the nvme-rdma host connects to it with nvme-cli; 64 MiB of
# a pattern go to the block device with O_DIRECT, come back and are
# compared by checksum; the host disconnects and the target is torn down.
#
# nvmet-rdma and nvme-rdma create their RDMA CM IDs in the initial network
# namespace, so both ends live there: a dummy netdev with a TEST-NET
# address carries one xiw device that serves both sides (the TCP stream
# crosses the loopback path, as it does for any local RDMA CM peer).
#
# Cases: I/O with MPA CRC off; I/O with CRC on (the module default for new
# devices switched to "prefer"); the target's port removed while the host
# is connected (the host notices, the disconnect is clean).  Then across
# implementations, when a siw module is at hand (tests/vm/build-siw): the
# target on xiw and the host on siw, and the reverse.  Each side gets its
# own dummy netdev and device; the host picks its side with --host-traddr,
# and the RDMA CM IDs the test finds on both devices prove each carried
# its end.
. "$(dirname "$0")/lib.sh"

require_env
command -v nvme >/dev/null || ktap_skip_all "nvme-cli not installed"
command -v openssl >/dev/null || ktap_skip_all "openssl not installed"
need_module xiw || ktap_skip_all "cannot load xiw"
need_module dummy || ktap_skip_all "no dummy module"
need_module rdma_cm || ktap_skip_all "no rdma_cm module"
for m in nvmet nvmet_rdma nvme_rdma; do
	need_module $m || ktap_skip_all "no $m module"
done
CFG=/sys/kernel/config
# configfs goes again at exit if the test mounted it.
mounted_cfg=0
trap 'cleanup_all; ((mounted_cfg)) && umount $CFG' EXIT
if [ ! -d $CFG/nvmet ] && ! mountpoint -q $CFG; then
	mount -t configfs none $CFG 2>/dev/null && mounted_cfg=1
fi
[ -d $CFG/nvmet ] || ktap_skip_all "no nvmet configfs"

ADDR=192.0.2.11
HADDR=198.51.100.11
HOST_TRADDR=
PORT=4420
NQN=nqn.2026-11.xiw.test:$(mktemp -u XXXXXX)
# A port number no one else's nvmet port has.
PORTID=$((RANDOM % 1000 + 100))
while [ -e "$CFG/nvmet/ports/$PORTID" ]; do PORTID=$((RANDOM % 1000 + 100)); done
# On /dev/shm, a tmpfs of its own: $XIW_TMP may sit on the VM's overlay
# (a checkout under /tmp), where nvmet's writes into the file failed with
# ENOSPC.
IMG=/dev/shm/xiw-nvmeof-$$.img
MIB=64
crc_param=/sys/module/xiw/parameters/mpa_crc
crc_saved=$(cat $crc_param)

# Target: subsystem NQN, namespace 1 backed by a file, RDMA port ADDR:PORT.
target_up() {
	truncate -s $((MIB + 16))M "$IMG"
	# tmpfs has no O_DIRECT before 6.6: buffered.
	nvmet_rdma_up "$NQN" $PORTID $ADDR $PORT "$IMG" buffered
}

target_down() {
	nvmet_rdma_down "$NQN" $PORTID
	rm -f "$IMG"
}

host_dev() { nvme_ns_dev "$NQN"; }
host_connected() { nvme_ns_dev "$NQN" >/dev/null; }
host_gone() { nvme_ctrl_gone "$NQN"; }

setup() {
	add_dummy xnv0
	xrun ip addr add $ADDR/24 dev xnv0
	xiw_add xnv xnv0
	target_up
	trap 'nvme disconnect -n "$NQN" >/dev/null 2>&1; wait_for 30 host_gone; target_down; echo "$crc_saved" >$crc_param' EXIT
}

# pattern N: N MiB of a reproducible, position-dependent pattern.
pattern() { head -c $(($1 * 1048576)) /dev/zero | openssl enc -aes-128-ctr -nosalt -pass pass:xiw-$NQN 2>/dev/null; }

io_roundtrip() {
	local dev want got
	xrun nvme connect -t rdma -a $ADDR -s $PORT -n "$NQN" \
		${HOST_TRADDR:+--host-traddr=$HOST_TRADDR}
	wait_for 60 host_connected || fail "no namespace block device for $NQN"
	dev=/dev/$(host_dev)
	wait_for 30 test -b "$dev" || fail "$dev did not appear"
	diag "namespace: $dev ($(cat /sys/class/block/${dev#/dev/}/size) sectors)"
	[ -z "$HOST_TRADDR" ] || cross_check
	want=$(pattern $MIB | sha256sum | cut -d' ' -f1)
	pattern $MIB | dd of="$dev" bs=1M oflag=direct iflag=fullblock status=none ||
		fail "write to $dev failed"
	got=$(dd if="$dev" bs=1M count=$MIB iflag=direct status=none | sha256sum | cut -d' ' -f1)
	diag "wrote $want" "read  $got"
	[ "$want" = "$got" ] || fail "data read back differs"
	# Through the target's file too: the bytes really crossed the fabric.
	got=$(head -c $((MIB * 1048576)) "$IMG" | sha256sum | cut -d' ' -f1)
	[ "$want" = "$got" ] || fail "target file differs from what the host wrote"
	xrun nvme disconnect -n "$NQN"
	wait_for 30 host_gone || fail "host still holds $NQN after disconnect"
}

case_io_crc_off() {
	echo off >$crc_param
	setup
	io_roundtrip
}

case_io_crc_on() {
	echo prefer >$crc_param
	setup
	io_roundtrip
}

# The target goes away under a connected host: the host's controller
# notices the broken queues and tries to reconnect; disconnect still works
# and nothing is left behind.
case_target_port_removed() {
	local dev
	setup
	xrun nvme connect -t rdma -a $ADDR -s $PORT -n "$NQN" --reconnect-delay=1 --ctrl-loss-tmo=5
	wait_for 60 host_connected || fail "no namespace block device for $NQN"
	dev=/dev/$(host_dev)
	dd if="$dev" of=/dev/null bs=1M count=4 iflag=direct status=none || fail "read failed"
	rm -f "$CFG/nvmet/ports/$PORTID/subsystems/$NQN"
	rmdir "$CFG/nvmet/ports/$PORTID"
	# I/O now fails or the controller is torn down after ctrl-loss-tmo.
	wait_for 60 bash -c "! dd if=$dev of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null" ||
		fail "I/O still succeeds with the target port gone"
	nvme disconnect -n "$NQN" >/dev/null 2>&1 || true
	wait_for 60 host_gone || fail "host still holds $NQN"
}

# Across implementations: $1 is the target's driver (xiw or siw), the
# host gets the other one.
setup_cross() {
	local tdrv=$1 hdrv=xiw
	[ "$tdrv" = xiw ] && hdrv=siw
	modinfo siw >/dev/null 2>&1 || skip "no siw module for $(uname -r) (tests/vm/build-siw)"
	need_module siw || skip "cannot load siw"
	echo off >$crc_param
	add_dummy xnv0
	xrun ip addr add $ADDR/24 dev xnv0
	add_dummy xnv1
	xrun ip addr add $HADDR/24 dev xnv1
	xiw_add xnvt xnv0 "$tdrv"
	xiw_add xnvh xnv1 "$hdrv"
	diag "target on $tdrv (xnvt, $ADDR), host on $hdrv (xnvh, $HADDR)"
	HOST_TRADDR=$HADDR
	target_up
	trap 'nvme disconnect -n "$NQN" >/dev/null 2>&1; wait_for 30 host_gone; target_down; echo "$crc_saved" >$crc_param' EXIT
}

# Connected: the host's queues run on xnvh, the target's on xnvt.
cross_check() {
	local ids h t
	ids=$(rdma resource show cm_id 2>/dev/null)
	h=$(connected_ids xnvh "$ids")
	t=$(connected_ids xnvt "$ids")
	diag "connected RDMA CM IDs: host device $h, target device $t"
	((h > 0 && t > 0)) || fail "each device must carry its end: $ids"
}

case_cross() {
	setup_cross "$1"
	io_roundtrip
}

ktap_header
ktap_plan 5
run_case "NVMe-oF over xiw: 64 MiB written and read back, CRC off" case_io_crc_off
run_case "NVMe-oF over xiw: 64 MiB written and read back, CRC on" case_io_crc_on
run_case "NVMe-oF over xiw: target port removed under a connected host" case_target_port_removed
run_case "NVMe-oF across implementations: target on xiw, host on siw, 64 MiB verified" case_cross xiw
run_case "NVMe-oF across implementations: target on siw, host on xiw, 64 MiB verified" case_cross siw
ktap_finish
