#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of the NVMe section of `make bench` (tests/vm/bench,
# topologies nvme, nvme9000 and nvmedummy): NVMe over Fabrics on xiw, on
# siw and NVMe/TCP, the alternative a user would pick.
#
#   BENCH_ROLE=a|b BENCH_WIRE_MAC=MAC bench-nvme-guest.sh OUT
#   BENCH_ROLE=local bench-nvme-guest.sh OUT
#
# The kernel's NVMe target and host open their RDMA CM IDs and TCP
# sockets in the initial network namespace, so within one guest the two
# talk over lo whatever netdev carries their addresses.  Across the
# two-VM wire (tests/vm/run --wire) they cannot: guest a (BENCH_ROLE=a,
# 192.0.2.1) exports a null_blk device (memory_backed=0: it stores
# nothing, so the fabric and its consumers are what is measured), guest b
# (192.0.2.2) connects to it and runs fio.  The NIC whose address is
# BENCH_WIRE_MAC is the wire, at MTU BENCH_MTU (1500); the environment is
# bench-guest.sh's for its wire topology.  BENCH_ROLE=local is both in
# one guest, on a dummy netdev with 192.0.2.1 (the TCP over lo): no
# other guest's scheduling in the way, the topology that ranks the
# transports' cost per I/O.
#
# In each of BENCH_REPS (3) repetitions each transport takes its turn on
# the same NIC: xiw (nvme-rdma, an xiw device at each end), siw
# (nvme-rdma on siw devices), tcp (nvme-tcp, no RDMA device), and with
# BENCH_XIW_B (a second build of xiw.ko, tests/vm/bench-lib.sh) xiwb,
# nvme-rdma on that build's devices; BENCH_NVME_TRANSPORTS (both guests
# the same) picks some.  fio,
# O_DIRECT, libaio, BENCH_NVME_SECONDS (8) after a 1 s ramp, on the
# namespace's block device:
#   nvme-randread-qd1   4 KiB random reads, queue depth 1: lat_p50_us,
#                       lat_p99_us (submission to completion) and iops
#   nvme-randread-qd32  4 KiB random reads, queue depth 32: iops
#   nvme-seqread        128 KiB sequential reads, queue depth 16: MBps
#   nvme-seqwrite       128 KiB sequential writes, queue depth 16: MBps
# The two guests meet over the wire before and after each transport's
# turn (wire_meet, tests/vm/wire-lib.sh).
#
# OUT gets one tab-separated line per measurement, as bench-guest.sh's:
#   <transport> <test> <size> <rep> <metric> <value>
# and "fail" lines with a reason (guest a's for its target's setup).
set -uo pipefail

role=${BENCH_ROLE:-}
mac=${BENCH_WIRE_MAC:-}
out=$1
: >"$out"
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/selftests/lib.sh"
. "$here/wire-lib.sh"
. "$here/bench-lib.sh"

reps=${BENCH_REPS:-3}
secs=${BENCH_NVME_SECONDS:-8}
A=192.0.2.1
B=192.0.2.2
NQN=nqn.2026-12.xiw.bench:wire
PORTID=621
DEV=bench_nvme

exec 3>&2
log() { echo "bench-nvme-$role: $*" >&3; }
put() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$out"; }

# serves: this guest exports the namespace; hosts: it connects and runs
# fio.
serves() { [ "$role" != b ]; }
hosts() { [ "$role" != a ]; }

case $role in
a | local) me=$A ;;
b) me=$B ;;
*) log "BENCH_ROLE must be a, b or local"; exit 2 ;;
esac

if [ "$role" = local ]; then
	modprobe dummy
	nic=bnv0
	ip link add $nic type dummy || { put - setup 0 0 fail "no dummy netdev"; exit 1; }
else
	nic=$(wire_nic "$mac")
	[ -n "$nic" ] || { log "no NIC with address $mac"; put - setup 0 0 fail "no wire NIC"; exit 1; }
	ip link set "$nic" down
	ip link set "$nic" name wire0 && nic=wire0
fi
ip addr add $me/24 dev $nic
ip link set $nic mtu "${BENCH_MTU:-1500}" up
ip link set lo up
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
modprobe rdma_cm
xiw_ab_start || log "no xiw module: its turns fail"
modprobe siw || log "no siw module: its turns fail"
if serves; then
	[ ! -d /sys/module/null_blk ] || rmmod null_blk
	modprobe null_blk nr_devices=1 gb=1 bs=4096 || { put - setup 0 0 fail "no null_blk"; exit 1; }
	modprobe nvmet_rdma && modprobe nvmet_tcp ||
		{ put - setup 0 0 fail "no nvmet_rdma or nvmet_tcp"; exit 1; }
fi
if hosts; then
	modprobe nvme_rdma && modprobe nvme_tcp ||
		{ put - setup 0 0 fail "no nvme_rdma or nvme_tcp"; exit 1; }
fi
if [ "$role" != local ]; then
	for _ in $(seq 60); do
		ping -c 1 -W 2 "$([ "$role" = a ] && echo $B || echo $A)" >/dev/null 2>&1 && break
	done
fi
log "$nic, MTU $(cat /sys/class/net/$nic/mtu)"

# meet PORT: the other guest is at the same point (or the run is over);
# in one guest there is none to wait for.
meet() {
	[ "$role" != local ] || return 0
	wire_meet "$role" $A "$1" 900 && return 0
	put "${tr:-setup}" meet "$1" 0 fail "guest $role: the other guest did not come"
	log "the other guest did not come to port $1: giving up"
	exit 1
}

dev_up() {	# DRIVER (xiwb: xiw's link type, with build B loaded)
	local type=$1

	case $1 in
	xiw) xiw_use a || return 1 ;;
	xiwb) xiw_use b || return 1; type=xiw ;;
	esac
	rdma link add $DEV type "$type" netdev $nic || return 1
	wait_for 10 test -e /sys/class/infiniband/$DEV
}

dev_down() {
	[ -e /sys/class/infiniband/$DEV ] || return 0
	rdma link del $DEV
	wait_for 10 test ! -e /sys/class/infiniband/$DEV
}

# fio_run TEST RW BS QD REP: one fio run on $ns_dev, its numbers recorded
# (the read or write side, whichever RW does).
fio_run() {
	local test=$1 rw=$2 bs=$3 qd=$4 rep=$5 side=read vals
	[ "$rw" = write ] && side=write
	if ! fio --name="$test" --filename="$ns_dev" --rw="$rw" --bs="$bs" --iodepth="$qd" \
		--direct=1 --ioengine=libaio --time_based --runtime="$secs" --ramp_time=1 \
		--lat_percentiles=1 --output-format=json >"$XIW_TMP/fio.json" 2>"$XIW_TMP/fio.err"; then
		put "$tr" "$test" "$bs" "$rep" fail "fio: $(tail -n 1 "$XIW_TMP/fio.err")"
		return
	fi
	# iops, bytes per second, latency p50 and p99 in us: from submission
	# to completion (lat_ns), not from io_submit()'s return (clat_ns),
	# which leaves out whatever of the I/O happens inside io_submit():
	# in one guest, where TCP delivers in the sender's own system call,
	# that can be most of it.
	vals=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["jobs"][0][sys.argv[2]]
p = d["lat_ns"].get("percentile", {})
print(d["iops"], d["bw_bytes"], p.get("50.000000", 0) / 1e3, p.get("99.000000", 0) / 1e3)' \
		"$XIW_TMP/fio.json" $side 2>&1)
	set -- $vals
	if [ $# -ne 4 ]; then
		put "$tr" "$test" "$bs" "$rep" fail "no fio result: $vals"
		return
	fi
	case $test in
	nvme-randread-qd1)
		put "$tr" "$test" "$bs" "$rep" lat_p50_us "$3"
		put "$tr" "$test" "$bs" "$rep" lat_p99_us "$4"
		put "$tr" "$test" "$bs" "$rep" iops "$1"
		;;
	nvme-randread-qd32) put "$tr" "$test" "$bs" "$rep" iops "$1" ;;
	*) put "$tr" "$test" "$bs" "$rep" MBps "$(awk -v b="$2" 'BEGIN { printf "%.1f", b / 1e6 }')" ;;
	esac
	log "$tr rep $rep: $test: $vals"
}

# host_turn REP: connect, measure, disconnect (guest b).
host_turn() {
	local rep=$1 trtype=rdma
	[ "$tr" = tcp ] && trtype=tcp
	if ! nvme connect -t $trtype -a $A -s 4420 -n $NQN >"$XIW_TMP/conn.out" 2>&1; then
		put "$tr" nvme-connect 0 "$rep" fail "nvme connect: $(tail -n 1 "$XIW_TMP/conn.out")"
		return
	fi
	if ! wait_for 60 nvme_ns_dev $NQN; then
		put "$tr" nvme-connect 0 "$rep" fail "no namespace block device"
	else
		ns_dev=/dev/$(nvme_ns_dev $NQN)
		wait_for 30 test -b "$ns_dev"
		fio_run nvme-randread-qd1 randread 4096 1 "$rep"
		fio_run nvme-randread-qd32 randread 4096 32 "$rep"
		fio_run nvme-seqread read 131072 16 "$rep"
		fio_run nvme-seqwrite write 131072 16 "$rep"
	fi
	nvme disconnect -n $NQN >/dev/null 2>&1
	wait_for 30 nvme_ctrl_gone $NQN || put "$tr" nvme-disconnect 0 "$rep" fail "the controller stayed"
}

transports=${BENCH_NVME_TRANSPORTS:-xiw${BENCH_XIW_B:+ xiwb} siw tcp}
step=0
for rep in $(seq "$reps"); do
	for tr in $transports; do
		step=$((step + 1))
		port=$((21000 + 3 * step))
		ok=1
		if [ "$tr" != tcp ] && ! dev_up "$tr"; then
			put "$tr" setup 0 "$rep" fail "guest $role: rdma link add failed"
			ok=0
		fi
		if serves && ((ok)); then
			if [ "$tr" = tcp ]; then
				nvmet_up tcp $NQN $PORTID $A 4420 /dev/nullb0 >/dev/null
			else
				nvmet_up rdma $NQN $PORTID $A 4420 /dev/nullb0 >/dev/null
			fi || { put "$tr" setup 0 "$rep" fail "nvmet port"; ok=0; }
		fi
		log "rep $rep: $tr"
		meet $((port + 1))
		hosts && ((ok)) && host_turn "$rep"
		meet $((port + 2))
		serves && nvmet_rdma_down $NQN $PORTID
		dev_down
	done
done
serves && rmmod null_blk
[ "$role" != local ] || ip link del $nic
log "done: $(grep -c . "$out") lines, $(grep -c "	fail	" "$out") failures"
exit 0
