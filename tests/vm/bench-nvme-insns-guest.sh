#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of `make bench-focus BENCH_NVME=N` (tests/vm/bench-focus):
# what one 4 KiB random read at queue depth 1 costs the guest kernel, in
# instructions, over NVMe over Fabrics on xiw, on siw and over NVMe/TCP,
# in one guest under xiw-insns-plugin.
#
#   BENCH_MARK=xiw-insns-mark BENCH_NVME=N bench-nvme-insns-guest.sh
#
# One dummy netdev (192.0.2.71/24) carries each transport in turn
# (BENCH_NVME_TRANSPORTS, default "xiw siw tcp"): an RDMA device on it for
# xiw and siw, none for tcp.  nvmet exports a null_blk device (it stores
# nothing: the fabric and its consumers are what is counted) and the host
# connects to it over the same address, so target and host share the
# guest, as in `make bench-storage`.  fio (libaio, O_DIRECT) reads 300
# blocks to warm up, then a short run of 500 and a long run of 500 + N,
# each between two runs of BENCH_MARK, which makes the plugin write its
# counts; the long run's counts less the short one's, over N, are one
# read without setup.  Each mark is logged, in the order of the plugin's
# files (OUT.0, OUT.1, ...), as
#   insns: mark TRANSPORT warm|short|long
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/selftests/lib.sh"

ios=${BENCH_NVME:?BENCH_NVME: the number of reads the long run adds}
mark=${BENCH_MARK:?BENCH_MARK: the xiw-insns-mark program}
ADDR=192.0.2.71
NQN=nqn.2026-12.xiw.bench:insns
PORTID=641
DEV=bench_insns

log() { echo "bench-nvme-insns: $*" >&2; }

mark_as() {	# TRANSPORT PASS
	"$mark"
	echo "insns: mark $1 $2"
}

# reads N: N 4 KiB random reads at queue depth 1 on $ns_dev.
reads() {
	fio --name=insns --filename="$ns_dev" --rw=randread --bs=4096 --iodepth=1 \
		--direct=1 --ioengine=libaio --size=1g --number_ios="$1" \
		--output-format=terse >"$XIW_TMP/fio.out" 2>&1 ||
		fail "fio: $(tail -n 1 "$XIW_TMP/fio.out")"
}

# One transport, in a subshell: lib.sh's fail and its EXIT trap, which
# takes down what the turn set up.
turn() {
	local tr=$1 trtype=rdma
	[ "$tr" = tcp ] && trtype=tcp
	trap 'nvme disconnect -n "$NQN" >/dev/null 2>&1; wait_for 30 nvme_ctrl_gone "$NQN"
		nvmet_rdma_down "$NQN" $PORTID
		[ ! -e /sys/class/infiniband/$DEV ] || rdma link del $DEV' EXIT
	if [ "$tr" != tcp ]; then
		xrun rdma link add $DEV type "$tr" netdev bnv0
		wait_for 10 test -e /sys/class/infiniband/$DEV || fail "no $tr device"
	fi
	nvmet_up $trtype "$NQN" $PORTID $ADDR 4420 /dev/nullb0 || fail "nvmet port"
	xrun nvme connect -t $trtype -a $ADDR -s 4420 -n "$NQN"
	wait_for 60 nvme_ns_dev "$NQN" || fail "no namespace block device"
	ns_dev=/dev/$(nvme_ns_dev "$NQN")
	wait_for 30 test -b "$ns_dev" || fail "$ns_dev did not appear"
	reads 300
	mark_as "$tr" warm
	reads 500
	mark_as "$tr" short
	reads $((500 + ios))
	mark_as "$tr" long
}

xrun modprobe rdma_cm
xrun modprobe xiw
modprobe siw || log "no siw module: siw's turn fails"
[ ! -d /sys/module/null_blk ] || xrun rmmod null_blk
xrun modprobe null_blk nr_devices=1 gb=1 bs=4096
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
for m in nvmet_rdma nvme_rdma nvmet_tcp nvme_tcp; do
	xrun modprobe $m
done
xrun ip link add bnv0 type dummy
xrun ip addr add $ADDR/24 dev bnv0
xrun ip link set bnv0 up
xrun ip link set lo up

rc=0
for tr in ${BENCH_NVME_TRANSPORTS:-xiw siw tcp}; do
	( turn "$tr" ) || { log "$tr: the turn failed"; rc=1; }
done
exit $rc
