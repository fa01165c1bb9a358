#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_smbdirect.sh: SMB Direct (SMB3 over RDMA, MS-SMBD) on xiw.  The
# kernel's SMB server (ksmbd, with ksmbd.mountd from ksmbd-tools) exports
# a tmpfs share; the kernel's SMB client (cifs, mount.cifs from
# cifs-utils) mounts it with `rdma`.  A small file (3000 octets, carried
# in Sends) and a 64 MiB one (RDMA Reads and Writes through registered
# memory) are written through the mount, compared with the server's copy
# and read back through a fresh mount (sha256); a directory of 10,000
# files made on the server must list identically through the mount; then
# unmount, ksmbd shut down (ksmbd.control -s) and the devices deleted.
#
# Needs a kernel with CONFIG_SMB_SERVER_SMBDIRECT and CONFIG_CIFS_SMB_DIRECT:
# Debian's 6.1, 6.12 and 7.3 kernels have neither, so on them the test
# skips (the check reads /proc/kallsyms once ksmbd and cifs are loaded:
# ksmbd_rdma_init and smbd_get_connection exist only with the options).
#
# Like NFS/RDMA, both ends run in the initial network namespace: ksmbd's
# RDMA listener and the client's RDMA CM IDs are created there
# (rdma_create_id(&init_net, ...)), ksmbd only serves netdevs of the
# initial namespace, and the client cannot be given a source address.
# Cases: one xiw device on a dummy netdev for both ends (MPA CRC off);
# two xiw devices on a veth pair (local_wire in lib.sh routes the traffic
# between their addresses across it; the server's device and the
# client's each carry their end), CRC on.
#
# The port: ksmbd listens on 5445 (the iWARP port of MS-SMBD) when an
# iWARP device exists as it starts, else on 445, where its TCP listener
# is; the xiw devices are therefore made before ksmbd.mountd starts.  The
# client tries 5445 first.  What SMB Direct asks of the device: 6 send
# and 1 receive SGE per work request for the client (xiw advertises 6),
# up to 4 for ksmbd, fast registration (512 pages on xiw), and its credits
# (255 receive credits, 255 send credits) within max_qp_wr and max_cqe;
# the case prints the device's attributes and the client's view of the
# connection (/proc/fs/cifs/DebugData: credits, sizes, MR depth).
. "$(dirname "$0")/lib.sh"

require_env
for t in ksmbd.mountd ksmbd.adduser ksmbd.control mount.cifs sha256sum; do
	command -v $t >/dev/null || ktap_skip_all "$t not installed (ksmbd-tools, cifs-utils)"
done
need_module xiw || ktap_skip_all "cannot load xiw"
need_module dummy || ktap_skip_all "no dummy module"
need_module veth || ktap_skip_all "no veth module"
need_module rdma_cm || ktap_skip_all "no rdma_cm module"
need_module ksmbd || ktap_skip_all "no ksmbd module"
need_module cifs || ktap_skip_all "no cifs module"
grep -qw ksmbd_rdma_init /proc/kallsyms ||
	ktap_skip_all "ksmbd without SMB Direct (CONFIG_SMB_SERVER_SMBDIRECT is not set in $(uname -r))"
grep -qw smbd_get_connection /proc/kallsyms ||
	ktap_skip_all "cifs without SMB Direct (CONFIG_CIFS_SMB_DIRECT is not set in $(uname -r))"

EXP=$XIW_TMP/export
MNT=$XIW_TMP/mnt
BIG_MIB=64
SMALL=3000
NFILES=10000
crc_param=/sys/module/xiw/parameters/mpa_crc
ADDR=
SRVDEV=
SRVNET=
mkdir -p "$EXP" "$MNT"


# ksmbd (lib.sh) serving a tmpfs every user may write to.
server_up() {
	xrun mount -t tmpfs -o size=$((BIG_MIB * 3))m,mode=0777 xiw-smb "$EXP"
	ksmbd_up "$1" "$EXP"
}

server_down() {
	ksmbd_down
	if mountpoint -q "$EXP"; then
		umount "$EXP"
	fi
}

smb_mount() { smb_rdma_mount "$ADDR" "$MNT"; }

teardown() {
	local rc=$?
	set +e
	trap - ERR
	if ((rc)); then
		diag "kernel log of the case (cifs, ksmbd, RDMA):" \
			"$(log_since | grep -iE 'cifs|smb|ksmbd|rdma|xiw' | tail -n 60)"
		[ -s "$XIW_TMP/mountd.log" ] && diag "ksmbd.mountd:" "$(tail -n 30 "$XIW_TMP/mountd.log")"
	fi
	mountpoint -q "$MNT" && umount -f "$MNT"
	server_down
}

setup_one() {
	add_dummy xsm0
	xrun ip addr add 192.0.2.51/24 dev xsm0
	xiw_add xsm xsm0
	ADDR=192.0.2.51 SRVDEV=xsm SRVNET=xsm0
}

setup_pair() {
	local_wire xss0 192.0.2.52 xsc0 198.51.100.52
	xiw_add xsms xss0
	xiw_add xsmc xsc0
	ADDR=192.0.2.52 SRVDEV=xsms SRVNET=xss0
}

# sha_of FILE: its sha256.
sha_of() { sha256sum <"$1" | cut -d' ' -f1; }

# roundtrip NAME: $XIW_TMP/NAME written through the mount, compared with
# the server's copy, read back through a fresh mount.
roundtrip() {
	local f=$1 want srv got
	want=$(sha_of "$XIW_TMP/$f")
	xrun dd if="$XIW_TMP/$f" of="$MNT/$f" bs=1M conv=fsync status=none
	srv=$(sha_of "$EXP/$f")
	diag "$f written: $want" "on the server: $srv"
	[ "$srv" = "$want" ] || fail "the server's copy of $f differs"
	xrun umount "$MNT"
	smb_mount
	got=$(sha_of "$MNT/$f")
	diag "$f read back: $got"
	[ "$got" = "$want" ] || fail "$f read back differs"
}

case_smb() {
	local setup=$1 crc=$2 i t0 t1 rx0 rx1 srv cli n=""
	log_mark
	trap teardown EXIT
	# Devices made in this case default to MPA CRC when asked.
	((crc == 0)) || set_knob $crc_param prefer
	"$setup"
	diag "$SRVDEV: $(ibv_devinfo -v -d "$SRVDEV" |
		grep -E '^\s+(max_qp_wr|max_sge|max_sge_rd|max_cqe|max_qp_rd_atom|max_qp_init_rd_atom):' |
		tr -s ' \t\n' ' ')"
	server_up "$SRVNET"
	smb_mount
	diag "the client's SMB Direct connection:" \
		"$(grep -E '^(SMBDirect|Conn |Current Credits|Receive buffers|MR )' /proc/fs/cifs/DebugData)"
	rx0=$(hw_counter "$SRVDEV" rx_bytes)

	head -c $SMALL /dev/urandom >"$XIW_TMP/small"
	roundtrip small
	xrun dd if=/dev/urandom of="$XIW_TMP/big" bs=1M count=$BIG_MIB status=none
	t0=$EPOCHREALTIME
	roundtrip big
	t1=$EPOCHREALTIME
	diag "64 MiB written, checked and read back in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"

	# The listing: files made on the server, listed through the mount.
	mkdir "$EXP/many"
	for ((i = 0; i < NFILES; i++)); do
		: >"$EXP/many/f$i"
	done
	srv=$(ls -1 "$EXP/many" | sha256sum)
	xget n sh -c "ls -1 '$MNT/many' | wc -l"
	cli=$(ls -1 "$MNT/many" | sha256sum)
	diag "listing: $n names; server $srv, client $cli"
	((n == NFILES)) || fail "the client lists $n files, not $NFILES"
	[ "$srv" = "$cli" ] || fail "the client's listing differs from the server's"

	rx1=$(hw_counter "$SRVDEV" rx_bytes)
	diag "$SRVDEV rx_bytes: $rx0 -> $rx1"
	# The 64 MiB went to the server (RDMA Reads: their responses arrive on
	# the server's device) at least once.
	((rx1 - rx0 >= BIG_MIB * 1048576)) || fail "$SRVDEV did not carry the data"
	xrun umount "$MNT"
	server_down
	if [ "$setup" = setup_pair ]; then
		xiw_del xsmc || fail "rdma link del xsmc failed"
		xiw_del xsms || fail "rdma link del xsms failed"
	else
		xiw_del xsm || fail "rdma link del xsm failed"
	fi
	((crc == 0 || dyndbg == 0)) || mpa_crc_agreed 1
}

dyndbg=0
dyndbg_on "module xiw file xiw_cm.c" && dyndbg=1
ktap_header
ktap_plan 2
run_case "SMB Direct over xiw: one device, sha256 of 3000 B and 64 MiB, 10000-file listing, CRC off" \
	case_smb setup_one 0
run_case "SMB Direct over xiw: two devices on a veth pair, sha256 and listing, CRC on" \
	case_smb setup_pair 1
ktap_finish
