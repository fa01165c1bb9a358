#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_nfsrdma.sh: NFS over RDMA on xiw.  The kernel's NFS server (nfsd
# with svcrdma) exports a tmpfs through an RDMA listener on port 20049 of
# an xiw device; the kernel's NFS client (xprtrdma) mounts it with
# proto=rdma.  32 MiB of random data written through the mount must land
# in the exported tmpfs unchanged, and read back through a fresh mount
# unchanged (checksums); the device's counters must show the traffic.
#
# No NFS userspace takes part.  nfsd is set up through its own filesystem
# (versions, lease and grace time, an "rdma 20049" listener, threads), the
# export goes straight into the kernel's export caches (the auth.unix.ip,
# nfsd.fh and nfsd.export channels that rpc.mountd would answer), and the
# client mounts with the kernel's own option parser (mount -i).  NFSv4.1
# and 4.2 only: they need no rpcbind, lockd or MOUNT protocol.
#
# Like nvmet and nvme-rdma, both ends live in the initial namespace: one
# dummy netdev with a TEST-NET address carries the xiw device both use.
# Cases: MPA CRC off, then CRC on.
. "$(dirname "$0")/lib.sh"

require_env
need_module xiw || ktap_skip_all "cannot load xiw"
need_module dummy || ktap_skip_all "no dummy module"
need_module rdma_cm || ktap_skip_all "no rdma_cm module"
for m in nfsd rpcrdma nfsv4; do
	need_module $m || ktap_skip_all "no $m module"
done

ADDR=192.0.2.21
PORT=20049
DOM=xiw-nfs-test
NFSD=/proc/fs/nfsd
EXP=$XIW_TMP/export
MNT=$XIW_TMP/mnt
MIB=32
crc_param=/sys/module/xiw/parameters/mpa_crc
crc_saved=$(cat $crc_param)
mounted_nfsd=0
mkdir -p "$EXP" "$MNT"

# The export caches, as mountd would fill them: the client's address
# belongs to domain $DOM; fsid 0 of $DOM (the NFSv4 pseudo root) is $EXP;
# $EXP is exported to $DOM read-write, without root squashing, from any
# port, with fsid 0 (tmpfs has no UUID to build a file handle from).
export_up() {
	local exp_t=$(($(date +%s) + 3600))
	local flags=$((0x2 | 0x400 | 0x2000))	# INSECURE_PORT NOSUBTREECHECK FSID
	echo "nfsd $ADDR $exp_t $DOM" >/proc/net/rpc/auth.unix.ip/channel
	echo "$DOM 1 \\x00000000 $exp_t $EXP" >/proc/net/rpc/nfsd.fh/channel
	echo "$DOM $EXP $exp_t $flags 65534 65534 0" >/proc/net/rpc/nfsd.export/channel
	grep -q "^$EXP" /proc/net/rpc/nfsd.export/content ||
		fail "the export did not enter the cache:" "$(cat /proc/net/rpc/nfsd.export/content)"
}

export_flush() {
	local c
	for c in auth.unix.ip nfsd.fh nfsd.export; do
		date +%s >/proc/net/rpc/$c/flush 2>/dev/null || true
	done
}

server_up() {
	local v
	if ! mountpoint -q $NFSD; then
		xrun mount -t nfsd nfsd $NFSD
		mounted_nfsd=1
	fi
	xrun mount -t tmpfs -o size=$((MIB * 2))m xiw-nfs "$EXP"
	# Short lease and grace: a fresh server refuses OPENs during grace.
	echo 10 >$NFSD/nfsv4leasetime
	echo 10 >$NFSD/nfsv4gracetime
	for v in -2 -3 +4 +4.1 +4.2; do
		echo "$v" >$NFSD/versions 2>/dev/null || true
	done
	diag "nfsd versions: $(cat $NFSD/versions)"
	grep -q -- '-3' $NFSD/versions || fail "cannot turn NFSv3 off"
	grep -q '+4.2' $NFSD/versions || fail "no NFSv4.2 in this nfsd"
	xrun sh -c "echo 'rdma $PORT' >$NFSD/portlist"
	diag "nfsd listeners: $(tr '\n' ' ' <$NFSD/portlist)"
	xrun sh -c "echo 4 >$NFSD/threads"
	export_up
}

server_down() {
	[ -e $NFSD/threads ] && echo 0 >$NFSD/threads
	export_flush
	mountpoint -q "$EXP" && umount "$EXP"
	if ((mounted_nfsd)) && mountpoint -q $NFSD; then
		umount $NFSD
		mounted_nfsd=0
	fi
}

teardown() {
	mountpoint -q "$MNT" && umount -f "$MNT"
	server_down
	echo "${crc_saved%% *}" >$crc_param
}

nfs_mount() {
	xrun mount -t nfs4 -i -o vers=4.2,proto=rdma,port=$PORT,addr=$ADDR,clientaddr=$ADDR,sec=sys \
		"$ADDR:/" "$MNT" || fail "the NFS/RDMA mount failed"
	grep " $MNT " /proc/mounts | sed 's/^/# /'
	grep -q " $MNT nfs4 .*proto=rdma" /proc/mounts || fail "the mount is not over RDMA"
}

# case_io CRC: write through the mount, compare with the server's file,
# remount, read back, compare; the xiw device carried it.
case_io() {
	local crc=$1 want got srv rx0 rx1 agreed mark
	trap teardown EXIT
	mark="xiw_nfsrdma: case crc=$crc start $$"
	echo "$mark" >/dev/kmsg
	if ((crc)); then
		echo prefer >$crc_param
	fi
	add_dummy xnf0
	xrun ip addr add $ADDR/24 dev xnf0
	xiw_add xnf xnf0
	echo "${crc_saved%% *}" >$crc_param
	server_up
	nfs_mount
	rx0=$(hw_counter xnf rx_bytes)
	xrun dd if=/dev/urandom of="$XIW_TMP/src" bs=1M count=$MIB status=none
	want=$(sha256sum <"$XIW_TMP/src" | cut -d' ' -f1)
	xrun dd if="$XIW_TMP/src" of="$MNT/data" bs=1M conv=fsync status=none
	srv=$(sha256sum <"$EXP/data" | cut -d' ' -f1)
	diag "written: $want" "on the server: $srv"
	[ "$srv" = "$want" ] || fail "the server's copy differs"
	xrun umount "$MNT"
	nfs_mount
	got=$(sha256sum <"$MNT/data" | cut -d' ' -f1)
	diag "read back: $got"
	[ "$got" = "$want" ] || fail "what was read back differs"
	xrun umount "$MNT"
	rx1=$(hw_counter xnf rx_bytes)
	diag "xnf rx_bytes: $rx0 -> $rx1"
	# Both ends are on xnf: the 32 MiB crossed it at least twice.
	((rx1 - rx0 >= 2 * MIB * 1048576)) || fail "xnf did not carry the data"
	# With dynamic debug, xiw's CM logs what every connection agreed.
	if ((dyndbg)); then
		agreed=$(dmesg | awk -v m="$mark" 'f; index($0, m) { f = 1 }' |
			grep "xiw: xnf: cep .*MPA rev 2, crc" || true)
		diag "$agreed"
		[ -n "$agreed" ] || fail "xiw logged no connection on xnf"
		! grep -vq "crc $crc," <<<"$agreed" || fail "a connection did not agree on crc $crc"
	fi
	server_down
}

dyndbg=0
echo 'module xiw file xiw_cm.c +p' >/sys/kernel/debug/dynamic_debug/control 2>/dev/null && dyndbg=1
ktap_header
ktap_plan 2
run_case "NFS over RDMA on xiw: 32 MiB written and read back, CRC off" case_io 0
run_case "NFS over RDMA on xiw: 32 MiB written and read back, CRC on" case_io 1
echo 'module xiw -p' >/sys/kernel/debug/dynamic_debug/control 2>/dev/null || true
ktap_finish
