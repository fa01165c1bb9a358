#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of tests/vm/bench-storage: the storage ULPs' sequential
# throughput on one RDMA device, xiw and then siw on the same netdev, in
# one VM run.
#
# One dummy netdev (192.0.2.61/24) carries the device; every ULP's target
# and initiator are in-kernel consumers whose RDMA CM IDs live in the
# initial namespace, so both ends use it (the TCP stream crosses the
# loopback path).  In each of BENCH_REPS repetitions, for xiw and then siw
# (the two cannot share a netdev: they take turns, so drift over the run
# hits both alike), and for each ULP this kernel has:
#   nvmeof  nvmet-rdma exporting /dev/nullb0, the nvme-rdma host
#   iser    LIO (ib_isert, iblock) exporting /dev/nullb1, open-iscsi
#           (ib_iser); the portal as in xiw_iser.sh
#   smb     ksmbd sharing a tmpfs over SMB Direct, the cifs client
#           mounting it with `rdma`; a 256 MiB file on it
# fio writes and then reads with 1 MiB requests, O_DIRECT, libaio, queue
# depth BENCH_QD (8), for BENCH_SECONDS (8) after a 1 s ramp.  null_blk
# (memory_backed=0) stores nothing, so the block ULPs measure the fabric
# and its consumers, not a backing store; SMB's file is on tmpfs.  The
# helpers that set the ULPs up are the selftests' (tests/selftests/lib.sh).
#
# Output, one tab-separated line per measurement on OUT:
#   <driver> <ulp> <write|read> <rep> MBps <value>     (10^6 B/s)
#   <driver> <ulp> <write|read> <rep> fail <reason>
# and a "skip" line for each ULP this kernel lacks.
set -uo pipefail

out=$1
: >"$out"
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/selftests/lib.sh"

reps=${BENCH_REPS:-3}
secs=${BENCH_SECONDS:-8}
qd=${BENCH_QD:-8}
ADDR=192.0.2.61
NQN=nqn.2026-12.xiw.bench:nullb0
PORTID=611
IQN=iqn.2026-12.xiw.bench:nullb1
PORTAL=$ADDR:3260
EXP=$XIW_TMP/export
MNT=$XIW_TMP/mnt
SMB_MIB=256
mkdir -p "$EXP" "$MNT"

# fd 3: the console, also from a point whose output goes to its log.
exec 3>&2
log() { echo "bench-storage: $*" >&3; }
put() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$out"; }

xrun modprobe rdma_cm
xrun modprobe xiw || { log "cannot load xiw"; exit 1; }
xrun modprobe siw || log "no siw module: siw points are recorded as failed"
# Its parameters count only when it loads.
[ ! -d /sys/module/null_blk ] || xrun rmmod null_blk
xrun modprobe null_blk nr_devices=2 gb=1 bs=4096 || { log "no null_blk"; exit 1; }
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config

# Which ULPs this kernel has (modules or built in).
ulps=()
if modprobe nvmet_rdma && modprobe nvme_rdma; then
	ulps+=(nvmeof)
else
	put - nvmeof - - skip "no nvmet_rdma or nvme_rdma"
fi
if modprobe ib_isert && modprobe ib_iser && modprobe sd_mod &&
	command -v iscsiadm >/dev/null; then
	ulps+=(iser)
else
	put - iser - - skip "no ib_isert, ib_iser or open-iscsi"
fi
if modprobe ksmbd && modprobe cifs && grep -qw ksmbd_rdma_init /proc/kallsyms &&
	grep -qw smbd_get_connection /proc/kallsyms && command -v ksmbd.mountd >/dev/null; then
	ulps+=(smb)
else
	put - smb - - skip "no SMB Direct in ksmbd or cifs (CONFIG_SMB_SERVER_SMBDIRECT, CONFIG_CIFS_SMB_DIRECT) or no ksmbd-tools"
fi
log "ULPs: ${ulps[*]}"

# fio_bw DRIVER ULP REP FILE [FIO-OPTION...]: a sequential write, then a
# sequential read of FILE, each recorded.  fio's terse format (version 3)
# has the read bandwidth in field 7 and the write bandwidth in field 48,
# in KiB/s.
fio_bw() {
	local drv=$1 ulp=$2 rep=$3 file=$4 rw field kib
	shift 4
	for rw in write read; do
		field=7
		[ $rw = write ] && field=48
		if ! fio --name="$ulp-$rw" --filename="$file" --rw=$rw --bs=1M --iodepth="$qd" \
			--direct=1 --ioengine=libaio --time_based --runtime="$secs" --ramp_time=1 \
			--output-format=terse --terse-version=3 "$@" >"$XIW_TMP/fio.out" 2>&1; then
			put "$drv" "$ulp" $rw "$rep" fail "fio: $(tail -n 1 "$XIW_TMP/fio.out")"
			continue
		fi
		kib=$(awk -F';' -v f=$field 'NF > 100 { print $f; exit }' "$XIW_TMP/fio.out")
		if [ -z "$kib" ]; then
			put "$drv" "$ulp" $rw "$rep" fail "no fio result"
			continue
		fi
		put "$drv" "$ulp" $rw "$rep" MBps "$(awk -v k="$kib" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }')"
		log "$drv $ulp $rw rep $rep: $((kib * 1024 / 1000000)) MB/s"
	done
}

# One ULP on the device, in a subshell (the selftests' fail and set -e);
# its EXIT trap takes down what it set up, in order.
point_nvmeof() {
	local dev
	trap 'nvme disconnect -n "$NQN" >/dev/null 2>&1; wait_for 30 nvme_ctrl_gone "$NQN"
		nvmet_rdma_down "$NQN" $PORTID' EXIT
	nvmet_rdma_up "$NQN" $PORTID $ADDR 4420 /dev/nullb0
	xrun nvme connect -t rdma -a $ADDR -s 4420 -n "$NQN"
	wait_for 60 nvme_ns_dev "$NQN" || fail "no namespace block device"
	dev=/dev/$(nvme_ns_dev "$NQN")
	wait_for 30 test -b "$dev" || fail "$dev did not appear"
	fio_bw "$1" nvmeof "$2" "$dev"
}

point_iser() {
	trap 'set +e; trap - ERR; iser_forget "$IQN" "$PORTAL"; iser_target_down "$IQN"' EXIT
	iser_target_up "$IQN" $ADDR 3260 /dev/nullb1
	iscsid_up iqn.2026-12.xiw.bench:initiator
	xrun iscsiadm -m discovery -t sendtargets -p "$PORTAL" -I iser ||
		fail "discovery over iser failed"
	iser_login "$IQN" "$PORTAL"
	fio_bw "$1" iser "$2" "$ISER_DISK"
}

point_smb() {
	trap 'set +e; trap - ERR; mountpoint -q "$MNT" && umount -f "$MNT"; ksmbd_down
		mountpoint -q "$EXP" && umount "$EXP"' EXIT
	xrun mount -t tmpfs -o size=$((SMB_MIB + 64))m,mode=0777 xiw-bench-smb "$EXP"
	ksmbd_up xbs0 "$EXP"
	smb_rdma_mount $ADDR "$MNT"
	fio_bw "$1" smb "$2" "$MNT/bench" --size=${SMB_MIB}M
}

for ((rep = 1; rep <= reps; rep++)); do
	for drv in xiw siw; do
		[ -d /sys/module/$drv ] || {
			put "$drv" - - "$rep" fail "no $drv module"
			continue
		}
		for ulp in "${ulps[@]}"; do
			log "rep $rep: $ulp on $drv"
			# The device is made before the ULP starts: ksmbd picks its
			# SMB Direct port by the devices it finds.
			add_dummy xbs0 >/dev/null
			xrun ip addr add $ADDR/24 dev xbs0 >/dev/null
			xrun rdma link add xbs type $drv netdev xbs0 >/dev/null
			record rdma xbs
			wait_for "$WAIT_TIMEOUT" ibdev_exists xbs >/dev/null
			# Not `( ... ) || ...`: bash ignores set -e in anything left
			# of ||.
			(
				set -eE -o pipefail
				"point_$ulp" "$drv" "$rep"
			) >"$XIW_TMP/point.log" 2>&1
			rc=$?
			if ((rc)); then
				put "$drv" "$ulp" - "$rep" fail "exit $rc (log above)"
				sed 's/^/bench-storage:   /' "$XIW_TMP/point.log" | tail -n 25 >&2
			fi
			cleanup >/dev/null
		done
	done
done
xrun rmmod null_blk
