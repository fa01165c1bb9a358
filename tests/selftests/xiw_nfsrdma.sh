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
# Everything lives in places of the test's own, so the machine's NFS
# server, if it has one, is left alone: a network namespace NS with a
# dummy netdev (a TEST-NET address) carrying the xiw device both ends
# use, the nfsd instance of NS (nfsd keeps its threads, versions, lease
# and grace time, listeners and export caches per network namespace: its
# filesystem mounted from inside NS is NS's instance, and /proc/net/rpc
# is NS's for a process in NS), and the client in NS too.  The script
# runs in a mount namespace of its own (re-executed under unshare): its
# mounts are nobody else's, and in it /var/run/rpcbind.sock, where nfsd
# and the NFS client look for rpcbind when they start (nfsd clears its
# registrations there), is no socket, so the machine's rpcbind is never
# reached.  Without unshare or nsenter the test skips.
# Cases: MPA CRC off, then CRC on (the device's mpa_crc).
if [ -z "${XIW_NFS_MOUNTNS:-}" ] && command -v unshare >/dev/null &&
   unshare --mount --propagation private true 2>/dev/null; then
	XIW_NFS_MOUNTNS=1 exec unshare --mount --propagation private "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

require_env
[ -n "${XIW_NFS_MOUNTNS:-}" ] || ktap_skip_all "cannot run in a mount namespace of its own (unshare)"
command -v nsenter >/dev/null || ktap_skip_all "no nsenter (util-linux)"
need_module xiw || ktap_skip_all "cannot load xiw"
need_module dummy || ktap_skip_all "no dummy module"
need_module rdma_cm || ktap_skip_all "no rdma_cm module"
for m in nfsd rpcrdma nfsv4; do
	need_module $m || ktap_skip_all "no $m module"
done
# The NFS client asks for krb5i first for its lease (and falls back to
# AUTH_SYS); loaded here, the module goes again at exit.
! modinfo rpcsec_gss_krb5 >/dev/null 2>&1 || need_module rpcsec_gss_krb5 || :
# No rpcbind for this mount namespace (see above).
if [ -S /var/run/rpcbind.sock ]; then
	xrun mount --bind /dev/null /var/run/rpcbind.sock ||
		ktap_skip_all "cannot hide the machine's rpcbind socket from nfsd"
fi

ADDR=192.0.2.21
PORT=20049
DOM=xiw-nfs-test
NFSD=$XIW_TMP/nfsd
EXP=$XIW_TMP/export
MNT=$XIW_TMP/mnt
MIB=32
NS=
mkdir -p "$NFSD" "$EXP" "$MNT"

# in_ns CMD...: CMD in the network namespace NS (and this mount
# namespace: mounts it makes are seen here).
in_ns() { nsenter --net="/run/netns/$NS" "$@"; }

# ns_write LINE FILE: LINE into FILE as a process of NS sees it (the
# channels of /proc/net/rpc are those of its network namespace).
ns_write() { in_ns sh -c 'printf "%s\n" "$1" >"$2"' sh "$1" "$2"; }

# The export caches of NS, as mountd would fill them: the client's
# address belongs to domain $DOM; fsid 0 of $DOM (the NFSv4 pseudo root) is
# $EXP; $EXP is exported to $DOM read-write, without root squashing, from
# any port, with fsid 0 (tmpfs has no UUID to build a file handle from).
export_up() {
	local exp_t=$(($(date +%s) + 3600)) content
	local flags=$((0x2 | 0x400 | 0x2000))	# INSECURE_PORT NOSUBTREECHECK FSID
	ns_write "nfsd $ADDR $exp_t $DOM" /proc/net/rpc/auth.unix.ip/channel
	ns_write "$DOM 1 \\x00000000 $exp_t $EXP" /proc/net/rpc/nfsd.fh/channel
	ns_write "$DOM $EXP $exp_t $flags 65534 65534 0" /proc/net/rpc/nfsd.export/channel
	content=$(in_ns cat /proc/net/rpc/nfsd.export/content)
	grep -q "^$EXP" <<<"$content" || fail "the export did not enter the cache:" "$content"
}

export_flush() {
	local c
	for c in auth.unix.ip nfsd.fh nfsd.export; do
		ns_write "$(date +%s)" /proc/net/rpc/$c/flush 2>/dev/null || true
	done
}

# server_up: NS's nfsd serves $EXP over RDMA on $ADDR:$PORT.
server_up() {
	local v
	xrun in_ns mount -t nfsd nfsd "$NFSD" || fail "cannot mount NS's nfsd filesystem"
	xrun mount -t tmpfs -o size=$((MIB * 2))m xiw-nfs "$EXP"
	# Short lease and grace: a fresh server refuses OPENs during grace.
	echo 10 >"$NFSD/nfsv4leasetime"
	echo 10 >"$NFSD/nfsv4gracetime"
	for v in -2 -3 +4 +4.1 +4.2; do
		echo "$v" >"$NFSD/versions" 2>/dev/null || true
	done
	diag "nfsd versions: $(cat "$NFSD/versions")"
	grep -q -- '-3' "$NFSD/versions" || fail "cannot turn NFSv3 off"
	grep -q '+4.2' "$NFSD/versions" || fail "no NFSv4.2 in this nfsd"
	xrun sh -c "echo 'rdma $PORT' >$NFSD/portlist"
	diag "nfsd listeners: $(tr '\n' ' ' <"$NFSD/portlist")"
	xrun sh -c "echo 4 >$NFSD/threads"
	export_up
}

# server_down: NS's nfsd stops; nothing of it stays mounted.
server_down() {
	[ -e "$NFSD/threads" ] && echo 0 >"$NFSD/threads"
	export_flush
	mountpoint -q "$EXP" && umount "$EXP"
	mountpoint -q "$NFSD" && umount "$NFSD"
	return 0
}

teardown() {
	mountpoint -q "$MNT" && umount -f "$MNT"
	server_down
}

nfs_mount() {
	xrun in_ns mount -t nfs4 -i -o vers=4.2,proto=rdma,port=$PORT,addr=$ADDR,clientaddr=$ADDR,sec=sys \
		"$ADDR:/" "$MNT" || fail "the NFS/RDMA mount failed"
	grep " $MNT " /proc/mounts | sed 's/^/# /'
	grep -q " $MNT nfs4 .*proto=rdma" /proc/mounts || fail "the mount is not over RDMA"
}

# case_io CRC: write through the mount, compare with the server's file,
# remount, read back, compare; the xiw device carried it.
case_io() {
	local crc=$1 want got srv rx0 rx1 agreed
	trap teardown EXIT
	log_mark
	setup_ns NS
	ip_batch -n "$NS" -- "link add xnf0 type dummy" "addr add $ADDR/24 dev xnf0" \
		"link set xnf0 up"
	xrun ip netns exec "$NS" rdma link add xnf type xiw netdev xnf0
	record rdma xnf
	wait_for "$WAIT_TIMEOUT" ibdev_exists xnf
	if ((crc)); then
		xrun sh -c "echo prefer >$IBDIR/xnf/mpa_crc"
	fi
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
	((dyndbg == 0)) || mpa_crc_agreed "$crc" xnf
	server_down
}

dyndbg=0
dyndbg_on "module xiw file xiw_cm.c" && dyndbg=1
ktap_header
ktap_plan 2
run_case "NFS over RDMA on xiw: 32 MiB written and read back, CRC off" case_io 0
run_case "NFS over RDMA on xiw: 32 MiB written and read back, CRC on" case_io 1
ktap_finish
