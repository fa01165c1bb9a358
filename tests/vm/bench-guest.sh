#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of `make bench` (tests/vm/bench) and of `make bench-focus`
# (tests/vm/bench-focus): xiw against siw against raw TCP, on one of four
# topologies (BENCH_TOPO):
#
#   veth (default): two network namespaces joined by one veth pair
#     ns A: bna0 192.0.2.1/24  <-- veth (MTU BENCH_MTU, 1500) -->  ns B: bnb0 192.0.2.2/24
#   veth9000: the same with jumbo frames (MTU 9000), as iWARP adapters
#     are usually deployed
#   dummy: one device on a dummy netdev, both ends on it: the TCP goes
#     over lo (MTU 64 KiB)
#     ns A: bnd0 192.0.2.1/24, server and client
#   wire: two guests (tests/vm/run --wire), the NIC whose address is
#     BENCH_WIRE_MAC (virtio-net, MTU BENCH_MTU) moved into ns A of guest
#     a (BENCH_ROLE=a: every server) or ns B of guest b (BENCH_ROLE=b:
#     every client); the two walk the same steps and meet before and
#     after each (wire_meet, tests/vm/wire-lib.sh)
#
# In each repetition xiw, then siw on the very same netdevs, runs perftest
# over RDMA CM (-R): ib_write_bw, ib_read_bw, ib_send_bw at several sizes,
# ib_write_lat, ib_read_lat, ib_send_lat at 64 B, 4 KiB and 64 KiB, and
# cmtime for the connection setup rate; then the CPU points: Write, Read
# and Send of 64 KiB through xiw-perf with both ends sleeping on
# completion events, where perftest would poll (see cpu_point), for the
# CPU time the transfer costs (cpu_s: busy time of all CPUs of the guest
# over the transfer; bytes: what it moved).  After all repetitions the
# scale points (not on the wire): BENCH_SCALE (default 1024) connections
# open at once through xiw-scale, and BENCH_SCALE_SMALL (default 32), a
# count siw takes too, each with the kernel memory they take (Slab and
# VmallocUsed from /proc/meminfo, while all are up, less before; both
# ends are in this VM, so per QP is the delta over 2N); then iperf3
# (plain and -Z) for raw TCP, with the CPU time over the steady middle of
# its run (see run_tcp).  Every point runs BENCH_REPS times (cmtime
# BENCH_CM_REPS times in each, the scale points once, the 64 B latency
# points BENCH_LAT_REPS times in all).
# Output: one tab-separated line per measurement on OUT:
#   <driver> <test> <size> <rep> <metric> <value>
# metrics: bw_MBps (MB/s, 10^6), mpps, lat_typ_us, lat_avg_us, conn_per_s,
# slab_KiB_per_qp, vmalloc_KiB_per_qp, tcp_MBps for iperf3, cpu_s and
# bytes, and per perftest run what TCP lost (tcp_retrans_segs, tcp_rtos,
# tcp_win_probes; see tcp_record).  On the wire guest b records the
# measurements and guest a its own cpu_s, its own TCP losses and the
# failures of its servers.  Failures are recorded as "fail" lines, never
# silently dropped.
#
# BENCH_POINTS ("TOOL:SIZE ...", e.g. "ib_write_lat:64 ib_write_bw:65536",
# cpu:write, cpu:read, cpu:send for a CPU point, cmtime:N for N
# connections set up and torn down by cmtime) runs only those
# points, each BENCH_REPS times with the drivers taking turns, and no
# cmtime, scale or iperf3 points.  BENCH_PROFILE=1 then runs every
# perftest point once more per driver under `perf stat -a` and once under
# `perf record -a -g` and prints what they saw (scheduler and workqueue
# events, the hottest symbols) on stderr; those runs' numbers are
# printed, not recorded (not on the wire); BENCH_PROFILE_SYMS adds the
# callers of those kernel symbols, BENCH_TRACE_FUNCS a function_graph run
# timing those functions.  BENCH_XIW_B (a second xiw.ko)
# adds driver "xiwb" to the turns (bench-lib.sh).  BENCH_PIN=1 runs
# the server of every latency point on CPU 1 and its client on CPU 0:
# the scheduler then never moves the two busy-polling processes, whose
# placement otherwise adds to the spread between repetitions.
# BENCH_MARK (a program, xiw-insns-mark) runs before and after every
# perftest and cmtime client, and each run is logged as "insns: mark N
# ..." (see bench-focus, BENCH_INSNS and BENCH_CM).
set -uo pipefail

out=$1
reps=${BENCH_REPS:-3}
topo=${BENCH_TOPO:-veth}
role=${BENCH_ROLE:-}
points=${BENCH_POINTS:-}
A=192.0.2.1
B=192.0.2.2
NSA=bench-a
NSB=bench-b
# The devices the server (ns A) and the client (ns B) use.
DEV_A=bench_a
DEV_B=bench_b
BW_SIZES=${BENCH_BW_SIZES:-"64 4096 65536 1048576 8388608"}
LAT_SIZES=${BENCH_LAT_SIZES:-"64 4096 65536"}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/wire-lib.sh"
: >"$out"
hz=$(getconf CLK_TCK)
# A server waits this long for its client; on the wire the client's
# guest may still be booting when the first one starts.
srv_timeout=120
[ -z "$role" ] || srv_timeout=900

log() { echo "bench: $*" >&2; }
record() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$out"; }

. "$here/bench-lib.sh"
modprobe rdma_ucm
xiw_ab_start || log "no xiw module: xiw points are recorded as failed"
modprobe siw || log "no siw module: siw points are recorded as failed"

# topo_veth MTU: ns A and ns B joined by one veth pair, a device on each
# end.  The neighbour entries are permanent: a learnt one goes stale
# during a run, and until it is confirmed again every packet takes the
# slow output path (neigh_resolve_output(), which builds the Ethernet
# header each time), in whichever driver's point the timer falls.
topo_veth() {
	local mac_a=02:00:c0:00:02:01 mac_b=02:00:c0:00:02:02

	modprobe veth
	ip netns add $NSA
	ip netns add $NSB
	# Distinct ifindexes for the two ends: see dev_up.
	ip link add bna0 index 30 address $mac_a netns $NSA type veth \
		peer name bnb0 index 31 address $mac_b netns $NSB
	ip -n $NSA addr add $A/24 dev bna0
	ip -n $NSB addr add $B/24 dev bnb0
	for ns in $NSA $NSB; do ip -n $ns link set lo up; done
	ip -n $NSA link set bna0 mtu "$1" up
	ip -n $NSB link set bnb0 mtu "$1" up
	ip -n $NSA neigh replace $B lladdr $mac_b dev bna0 nud permanent
	ip -n $NSB neigh replace $A lladdr $mac_a dev bnb0 nud permanent
	NETDEV_A=bna0 NETDEV_B=bnb0
}

# topo_dummy: one device on a dummy netdev in ns A, used by both ends; the
# stack delivers the TCP over lo.
topo_dummy() {
	modprobe dummy
	ip netns add $NSA
	ip -n $NSA link set lo up
	ip -n $NSA link add bnd0 type dummy
	ip -n $NSA addr add $A/24 dev bnd0
	ip -n $NSA link set bnd0 up
	NSB=$NSA DEV_B=$DEV_A NETDEV_A=bnd0 NETDEV_B=
}

# topo_wire: this guest's end of the wire in its namespace (ns A for
# guest a, ns B for guest b), a device on it.
topo_wire() {
	local nic ns=$NSA addr=$A name=bna0
	[ "$role" = b ] && ns=$NSB addr=$B name=bnb0
	nic=$(wire_nic "${BENCH_WIRE_MAC:-}")
	[ -n "$nic" ] || { log "no NIC with address ${BENCH_WIRE_MAC:-(BENCH_WIRE_MAC unset)}"; exit 1; }
	ip netns add $ns
	ip link set "$nic" down
	ip link set "$nic" netns $ns
	ip -n $ns link set "$nic" name $name
	ip -n $ns addr add $addr/24 dev $name
	ip -n $ns link set lo up
	ip -n $ns link set $name mtu "${BENCH_MTU:-1500}" up
	if [ "$role" = a ]; then
		NETDEV_A=$name NETDEV_B=
	else
		NETDEV_A= NETDEV_B=$name
	fi
}

case $topo:$role in
veth:) topo_veth "${BENCH_MTU:-1500}" ;;
veth9000:) topo_veth 9000 ;;
dummy:) topo_dummy ;;
wire:a | wire:b) topo_wire ;;
wire:*) log "BENCH_TOPO=wire wants BENCH_ROLE a or b"; exit 2 ;;
*:?*) log "BENCH_ROLE is for BENCH_TOPO=wire"; exit 2 ;;
*) log "unknown BENCH_TOPO $topo (veth, veth9000, dummy or wire)"; exit 2 ;;
esac
log "topology $topo${role:+, guest $role}"

# Whether this guest runs the servers (ns A) and the clients (ns B):
# both, but on the wire one each.
srv_here() { [ "$role" != b ]; }
cli_here() { [ "$role" != a ]; }

# Each step's ports: PORT for its server, PORT+1 and PORT+2 for the two
# guests of the wire to meet when the server listens and when the client
# is done.  Both guests count the same steps.
step=0
next_port() { step=$((step + 1)); PORT=$((20000 + 3 * step)); }

# meet PORT: on the wire, wait for the other guest there (tests/vm/wire-lib.sh);
# a guest that is not met gives up the run, its steps no longer pair.
meet() {
	local ns=$NSA
	[ -n "$role" ] || return 0
	[ "$role" = b ] && ns=$NSB
	ip netns exec $ns bash -c '. "$1"; shift; wire_meet "$@"' - "$here/wire-lib.sh" \
		"$role" $A "$1" 900 && return 0
	record "${drv:-setup}" meet "$1" 0 fail "guest $role: the other guest did not come to step $step"
	log "the other guest did not come to step $step: giving up"
	exit 1
}

# srv_end PID GRACE: the server ends with its client; it gets GRACE
# seconds for that, then it is stopped (cmtime serves until it is).
srv_end() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# srv_start TEST SIZE REP CMD...: on the guest that serves, CMD in ns A in
# the background as the step's server (its PID in srv, its output in
# /tmp/bench.srv), waiting until it listens on PORT; 1, with a fail line
# for TEST, when it does not.  Where only clients run, srv stays empty.
srv_start() {
	local test=$1 size=$2 rep=$3
	shift 3
	srv=
	srv_here || return 0
	ip netns exec $NSA timeout "$srv_timeout" "$@" >/tmp/bench.srv 2>&1 &
	srv=$!
	wait_listen "$PORT" "$srv" && return 0
	record "$drv" "$test" "$size" "$rep" fail "server did not listen: $(tail -n 1 /tmp/bench.srv)"
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	srv=
	return 1
}

# busy: CPU time all CPUs of this guest spent outside the idle task so
# far (user, nice, system, irq, softirq, steal), in ticks of 1/hz s.
busy() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }

# perftest's server listens on the wildcard address, and RDMA CM repeats
# such a listen on every RDMA device.  siw opens each repeat in the
# namespace of whoever listens, bound to its own netdev's ifindex; were the
# two veth ends both ifindex 2 (the first link of a fresh namespace), the
# repeat on the client's siw device would collide with the server's own
# listener.  With distinct ifindexes the repeat is a harmless socket bound
# to an interface the server's namespace does not have.  xiw opens its
# listeners in its netdev's namespace and is not affected either way.
dev_up() {	# NAME TYPE NS NETDEV
	ip netns exec "$3" rdma link add "$1" type "$2" netdev "$4" || return 1
	for _ in $(seq 100); do
		[ -e "/sys/class/infiniband/$1" ] && return 0
		sleep 0.1
	done
	return 1
}

dev_down() {	# NAME
	rdma link del "$1" 2>/dev/null
	for _ in $(seq 100); do
		[ ! -e "/sys/class/infiniband/$1" ] && return 0
		sleep 0.1
	done
}

# devs_up DRIVER / devs_down: the devices of DRIVER on this guest's
# netdevs of the topology (xiwb: xiw's link type, with build B loaded).
devs_up() {
	local type=$1
	case $1 in
	xiw) xiw_use a || return 1 ;;
	xiwb) xiw_use b || return 1; type=xiw ;;
	esac
	[ -z "$NETDEV_A" ] || dev_up $DEV_A "$type" $NSA $NETDEV_A || return 1
	[ -z "$NETDEV_B" ] || dev_up $DEV_B "$type" $NSB $NETDEV_B
}

devs_down() {
	[ -z "$NETDEV_A" ] || dev_down $DEV_A
	[ -z "$NETDEV_B" ] || dev_down $DEV_B
}

drv=
# A command the client runs under (the profile's perf).
client_wrap=()

# A listener the client can reach: on the server's address, or on the
# wildcard bound to the server's netdev.  RDMA CM repeats a wildcard
# listen on every device, one after the other; siw's repeat for the
# client's device is a socket in ns A too, bound to an interface ns A
# does not have (see dev_up), and a client let go when that one appeared
# first was refused (perftest: "Failed to connect through RDMA CM",
# ECONNREFUSED).
listening() {
	ip netns exec $NSA ss -Hltn "sport = :$1" |
		awk -v a="$A:$1" -v d="${NETDEV_A:+%$NETDEV_A:$1}" \
			'$4 == a || (d != "" && index($4, d)) { f = 1 } END { exit !f }'
}

# Wait until the server process listens (perftest, iperf3 and cmtime all
# open a TCP listener: xiw/siw's iw_cm listen, or iperf3's own).
wait_listen() {
	local port=$1 pid=$2
	for _ in $(seq 300); do
		listening "$port" && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# insns_mark WHEN TOOL SIZE ITERS: with BENCH_MARK, run it and log which
# mark it was: the plugin's Nth dump holds what ran since the mark before.
marks=0
insns_mark() {
	[ -n "${BENCH_MARK:-}" ] || return 0
	"$BENCH_MARK"
	log "insns: mark $marks $1 $drv $2 $3 $4"
	marks=$((marks + 1))
}

# positive V...: every V a decimal above zero (perftest prints inf, nan
# or 0.00 when its cycle count under TCG went wrong).
positive() {
	local v
	for v; do
		[[ $v =~ ^[0-9]*\.?[0-9]+$ ]] && [[ $v =~ [1-9] ]] || return 1
	done
}

# tcp_losses: "SEGS RTOS PROBES" so far, summed over this guest's bench
# namespaces (TCP counts per namespace): segments TCP retransmitted,
# retransmission timeouts, zero-window probes.  nstat -a gives absolute
# values and -s leaves its history file alone.
tcp_losses() {
	local ns
	for ns in $(printf '%s\n' $NSA $NSB | sort -u); do
		[ -e /run/netns/$ns ] || continue
		ip netns exec $ns nstat -asz TcpRetransSegs TcpExtTCPTimeouts TcpExtTCPWinProbe
	done | awk '{ n[$1] += $2 }
		END { printf "%d %d %d\n", n["TcpRetransSegs"], n["TcpExtTCPTimeouts"],
			n["TcpExtTCPWinProbe"] }'
}

# tcp_record DRIVER TOOL SIZE REP BEFORE: what TCP lost in this guest
# since tcp_losses printed BEFORE, as metrics tcp_retrans_segs, tcp_rtos
# and tcp_win_probes of the run (each guest of the wire records its own;
# the report adds them up).  A run TCP recovered from a loss in, or
# whose window closed, is slow for that reason and not the driver's.
tcp_record() {
	local -a b a
	read -ra b <<<"$5"
	read -ra a <<<"$(tcp_losses)"
	record "$1" "$2" "$3" "$4" tcp_retrans_segs $((a[0] - b[0]))
	record "$1" "$2" "$3" "$4" tcp_rtos $((a[1] - b[1]))
	record "$1" "$2" "$3" "$4" tcp_win_probes $((a[2] - b[2]))
	((a[0] + a[1] + a[2] == b[0] + b[1] + b[2])) ||
		log "$1 $2 $3 rep $4: TCP retransmitted $((a[0] - b[0])) segments," \
			"$((a[1] - b[1])) timeouts, $((a[2] - b[2])) window probes"
}

# perf DRIVER TOOL SIZE REP ITERS: one perftest run; records its numbers.
perf() {
	local tool=$2 size=$3 rep=$4 iters=$5 cl=/tmp/bench.cl line ok=1
	next_port
	local -a common=(-R -d $DEV_A -p "$PORT" -s "$size" -n "$iters" -F)
	local -a pin_s=() pin_c=()
	if [ -n "${BENCH_PIN:-}" ] && [[ $tool == *_lat ]]; then
		pin_s=(taskset -c 1) pin_c=(taskset -c 0)
	fi
	# In one guest a connect the server refused is tried once more, on
	# a new port with a new server; the failure is logged all the same.
	local retry=0
	[ -n "$role" ] || retry=1
	srv_start "$tool" "$size" "$rep" "${pin_s[@]}" "$tool" "${common[@]}" || ok=0
	meet $((PORT + 1))
	local losses
	losses=$(tcp_losses)
	while cli_here && ((ok)); do
		common[2]=$DEV_B
		insns_mark before "$tool" "$size" "$iters"
		"${client_wrap[@]}" ip netns exec $NSB timeout 120 "${pin_c[@]}" "$tool" "${common[@]}" $A >"$cl" 2>&1 && break
		# perftest names the failed step first, its callers after.
		sed 's/^/bench:   /' "$cl" | tail -n 20 >&2
		[ -z "$srv" ] || sed 's/^/bench:   server: /' /tmp/bench.srv | tail -n 20 >&2
		dmesg | grep -E 'xiw|iw_cm' | tail -n 20 | sed 's/^/bench:   kernel: /' >&2
		[ -z "$srv" ] || { kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null; }
		if ((retry)) && grep -q 'Failed to connect' "$cl"; then
			retry=0
			log "$drv $tool $size rep $rep: connect failed, trying once more"
			next_port
			common[2]=$DEV_A common[4]=$PORT
			srv_start "$tool" "$size" "$rep" "${pin_s[@]}" "$tool" "${common[@]}" && continue
		else
			record "$drv" "$tool" "$size" "$rep" fail "client failed"
		fi
		ok=0
		srv=
	done
	cli_here && ((ok)) && insns_mark after "$tool" "$size" "$iters"
	meet $((PORT + 2))
	[ -z "$srv" ] || srv_end "$srv" 30
	((ok)) && tcp_record "$drv" "$tool" "$size" "$rep" "$losses"
	cli_here && ((ok)) || return
	# The data line: the first field is the size, the rest numbers.
	line=$(awk -v s="$size" '$1 == s && NF >= 4 { print; exit }' "$cl")
	if [ -z "$line" ]; then
		record "$drv" "$tool" "$size" "$rep" fail "no result line"
		return
	fi
	case $tool in
	*_bw)
		# bytes iterations BW_peak BW_average MsgRate
		set -- $line
		if ! positive "$4"; then
			record "$drv" "$tool" "$size" "$rep" fail "perftest reported $4 MB/s"
			sed 's/^/bench:   /' "$cl" | tail -n 12 >&2
			return
		fi
		record "$drv" "$tool" "$size" "$rep" bw_MBps "$4"
		record "$drv" "$tool" "$size" "$rep" mpps "$5"
		;;
	*_lat)
		# bytes iterations t_min t_max t_typical t_avg t_stdev p99 p99.9
		set -- $line
		if ! positive "$5" "$6"; then
			record "$drv" "$tool" "$size" "$rep" fail "perftest reported $5 us typical, $6 us average"
			sed 's/^/bench:   /' "$cl" | tail -n 12 >&2
			return
		fi
		record "$drv" "$tool" "$size" "$rep" lat_typ_us "$5"
		record "$drv" "$tool" "$size" "$rep" lat_avg_us "$6"
		;;
	esac
}

# cpu_point TEST REP: the CPU point of TEST (write, read or send):
# xiw-perf moves BENCH_CPU_ITERS (1000) messages of 64 KiB, both ends
# sleeping on completion events (-e) where perftest would poll, and each
# end reports the busy time of its guest over the transfer (-U).  In one
# guest the client's covers both ends; on the wire each guest records its
# own.  Recorded as test xiw-perf-TEST: cpu_s, bytes, bw_MBps.
cpu_point() {
	local t=$1 rep=$2 test=xiw-perf-$1 ok=1 line busy
	local tool=$top/build/userspace/tools/xiw-perf iters=${BENCH_CPU_ITERS:-1000}
	next_port
	srv_start "$test" 65536 "$rep" "$tool" -a $A -p "$PORT" -e -U -T "$srv_timeout" || ok=0
	meet $((PORT + 1))
	if cli_here && ((ok)) &&
		! ip netns exec $NSB timeout 180 "$tool" -c $A -p "$PORT" -t "$t" -s 65536 \
			-n "$iters" -e -U -D 100 >/tmp/bench.xp 2>&1; then
		record "$drv" "$test" 65536 "$rep" fail "client failed: $(tail -n 1 /tmp/bench.xp)"
		ok=0
	fi
	meet $((PORT + 2))
	[ -z "$srv" ] || srv_end "$srv" 30
	((ok)) || return
	if [ "$role" = a ]; then
		busy=$(sed -n 's/.* busy \([0-9.]*\) s$/\1/p' /tmp/bench.srv)
		[ -n "$busy" ] || { record "$drv" "$test" 65536 "$rep" fail "no server result"; return; }
		record "$drv" "$test" 65536 "$rep" cpu_s "$busy"
		return
	fi
	# xiw-perf: write bw 65536 B x 1000, window 16: 123.45 MB/s ... busy 0.812 s
	line=$(grep -m1 ' bw 65536 B x ' /tmp/bench.xp)
	busy=$(sed -n 's/.* busy \([0-9.]*\) s$/\1/p' <<<"$line")
	if [ -z "$busy" ]; then
		record "$drv" "$test" 65536 "$rep" fail "no result line"
		return
	fi
	record "$drv" "$test" 65536 "$rep" cpu_s "$busy"
	record "$drv" "$test" 65536 "$rep" bytes $((65536 * iters))
	record "$drv" "$test" 65536 "$rep" bw_MBps "$(sed -n 's/.*: \([0-9.]*\) MB\/s.*/\1/p' <<<"$line")"
}

# SIZE TOOL: iterations that keep one run short under TCG.  Small messages
# get many: at 1000 the 64 B rate of one run moved by 40% between
# repetitions.  From 64 KiB BENCH_BIG_ITERS (200), from 1 MiB
# BENCH_MIB_ITERS (20): ten times more did not narrow the spread between
# repetitions (performance.rst).  The latency tools run BENCH_LAT_ITERS
# round trips.
iters_for() {
	if [[ $2 == *_lat ]]; then echo "${BENCH_LAT_ITERS:-5000}"
	elif [ "$1" -ge 1048576 ]; then echo "${BENCH_MIB_ITERS:-20}"
	elif [ "$1" -ge 65536 ]; then echo "${BENCH_BIG_ITERS:-200}"
	else echo "${BENCH_SMALL_ITERS:-10000}"
	fi
}

# conn_rate DRIVER REP N: cmtime sets up and tears down N connections;
# connect rate from its "connect" step total.
conn_rate() {
	local rep=$2 n=$3 total lost ok=1
	next_port
	srv_start cmtime "$n" "$rep" cmtime -b $A -p "$PORT" -c "$n" || ok=0
	meet $((PORT + 1))
	if cli_here && ((ok)); then
		insns_mark before cmtime "$n" "$n"
		if ip netns exec $NSB timeout 180 cmtime -s $A -p "$PORT" -c "$n" >/tmp/bench.cm 2>&1; then
			insns_mark after cmtime "$n" "$n"
		else
			record "$drv" cmtime "$n" "$rep" fail "client failed"
			tail -n 5 /tmp/bench.cm | sed 's/^/bench:   /' >&2
			ok=0
		fi
	fi
	meet $((PORT + 2))
	# cmtime's server serves on until it is stopped.
	[ -z "$srv" ] || srv_end "$srv" 0
	cli_here && ((ok)) || return
	# A table of steps ("connect : <total> <max> <min> <per conn>"); its
	# header says whether the total is in ms or us.
	sed 's/^/bench:   cmtime: /' /tmp/bench.cm >&2
	total=$(awk '/total/ { unit = ($0 ~ /total *\(?us/) ? 1e-6 : 1e-3 }
		     tolower($1) == "connect" { for (i = 2; i <= NF; i++)
			if ($i ~ /^[0-9.]+$/) { print $i * (unit ? unit : 1e-3); exit } }' /tmp/bench.cm)
	if [ -z "$total" ] || [ "$(awk -v t="$total" 'BEGIN { print (t > 0) }')" != 1 ]; then
		record "$drv" cmtime "$n" "$rep" fail "no connect line"
		return
	fi
	# cmtime reports a connection it could not set up ("failure creating
	# qp", "failure connecting", ...) and goes on without it: its step
	# total then covers fewer connections than asked for.  The rate is over
	# those that got through, and the shortfall is recorded as a failure.
	lost=$(grep -c -i 'failure\|error' /tmp/bench.cm)
	if [ "$lost" -ge "$n" ]; then
		record "$drv" cmtime "$n" "$rep" fail "no connection was set up"
		return
	fi
	if [ "$lost" -gt 0 ]; then
		record "$drv" cmtime "$n" "$rep" fail "$lost of $n connections not set up ($(grep -i -m1 'failure\|error' /tmp/bench.cm)); rate over the other $((n - lost))"
	fi
	record "$drv" cmtime "$n" "$rep" conn_per_s "$(awk -v n="$((n - lost))" -v t="$total" 'BEGIN { printf "%.1f", n / t }')"
}

meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }

# scale DRIVER N: N connections at once, memory per QP.
scale() {
	# Setting up and holding N connections takes its server longer.
	local n=$2 cli srv_timeout=300
	local slab0 vm0 slab1 vm1 rate
	local tool=${XIW_SCALE:-$top/build/userspace/tools/xiw-scale}
	if [ ! -x "$tool" ]; then
		record "$drv" scale "$n" 1 fail "xiw-scale not built"
		return
	fi
	ulimit -n $((4 * n + 64))
	sync
	echo 3 >/proc/sys/vm/drop_caches
	slab0=$(meminfo Slab) vm0=$(meminfo VmallocUsed)
	next_port
	srv_start scale "$n" 1 "$tool" -a $A -p "$PORT" -n "$n" || return
	ip netns exec $NSB timeout 300 "$tool" -c $A -p "$PORT" -n "$n" -k >/tmp/bench.sc 2>&1 &
	cli=$!
	for _ in $(seq 1200); do
		grep -q '^xiw-scale: connected' /tmp/bench.sc && break
		kill -0 "$cli" 2>/dev/null || break
		sleep 0.2
	done
	sed 's/^/bench:   scale: /' /tmp/bench.sc >&2
	if ! grep -q '^xiw-scale: connected' /tmp/bench.sc; then
		record "$drv" scale "$n" 1 fail "$(tail -n 1 /tmp/bench.sc | tr '\t' ' ')"
		kill "$cli" "$srv" 2>/dev/null; wait "$cli" "$srv" 2>/dev/null
		return
	fi
	sleep 1
	slab1=$(meminfo Slab) vm1=$(meminfo VmallocUsed)
	kill -TERM "$cli"	# timeout(1) passes it on; xiw-scale takes it as SIGUSR1
	wait "$cli" || record "$drv" scale "$n" 1 fail "client failed while disconnecting"
	wait "$srv" || record "$drv" scale "$n" 1 fail "server failed"
	rate=$(sed -n 's/.*(\([0-9.]*\) connections\/s).*/\1/p' /tmp/bench.sc)
	record "$drv" scale "$n" 1 conn_per_s "$rate"
	record "$drv" scale "$n" 1 slab_KiB_per_qp \
		"$(awk -v a="$slab0" -v b="$slab1" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / (2 * n) }')"
	record "$drv" scale "$n" 1 vmalloc_KiB_per_qp \
		"$(awk -v a="$vm0" -v b="$vm1" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / (2 * n) }')"
}

# points_up DRIVER REP: the driver's devices for one repetition's points.
# False when they could not be made and there is nothing to walk; on the
# wire the other guest expects every step, so the steps are walked and
# each fails.
points_up() {
	drv=$1
	devs_up "$drv" && return 0
	log "$drv: cannot create devices"
	record "$drv" setup 0 "$2" fail "rdma link add failed"
	[ -n "$role" ] && return 0
	devs_down
	return 1
}

# One repetition of every point for DRIVER on fresh devices.  xiw and siw
# cannot share a netdev, so the drivers take turns within a repetition:
# drift over the run (page cache, neighbour entries) then hits both alike.
run_points() {
	local rep=$2 tool size p
	points_up "$1" "$rep" || return
	if [ -n "$points" ]; then
		for p in $points; do
			tool=${p%%:*} size=${p#*:}
			if [ "$tool" = cpu ]; then
				log "$drv rep $rep: CPU time of $size 64 KiB"
				cpu_point "$size" "$rep"
				continue
			fi
			if [ "$tool" = cmtime ]; then
				log "$drv rep $rep: cmtime $size"
				conn_rate "$drv" "$rep" "$size"
				continue
			fi
			log "$drv rep $rep: $tool $size"
			perf "$drv" "$tool" "$size" "$rep" "$(iters_for "$size" "$tool")"
		done
		devs_down
		return
	fi
	for tool in ib_write_bw ib_read_bw ib_send_bw; do
		for size in $BW_SIZES; do
			log "$drv rep $rep: $tool $size"
			perf "$drv" "$tool" "$size" "$rep" "$(iters_for "$size" "$tool")"
		done
	done
	for tool in ib_write_lat ib_read_lat ib_send_lat; do
		for size in $LAT_SIZES; do
			log "$drv rep $rep: $tool $size"
			perf "$drv" "$tool" "$size" "$rep" "$(iters_for "$size" "$tool")"
		done
	done
	for t in write read send; do
		log "$drv rep $rep: CPU time of $t 64 KiB"
		cpu_point "$t" "$rep"
	done
	log "$drv rep $rep: cmtime"
	# BENCH_CONNS_SMALL (default 32) is a count siw sets up in full; at
	# BENCH_CONNS (default 100) it fails some (see conn_rate).
	# One cmtime run is short and noisy (a 32-connection step of the
	# same build took 73 to 410 ms over runs), so each repetition runs it
	# BENCH_CM_REPS times (default 5).
	local k
	for k in $(seq "${BENCH_CM_REPS:-5}"); do
		for n in ${BENCH_CONNS_SMALL:-32} ${BENCH_CONNS:-100}; do
			conn_rate "$drv" "$(((rep - 1) * ${BENCH_CM_REPS:-5} + k))" "$n"
		done
	done
	devs_down
}

# run_lat64 DRIVER REP: one more repetition of the 64 B latency points.
run_lat64() {
	local rep=$2 tool
	points_up "$1" "$rep" || return
	for tool in ib_write_lat ib_read_lat ib_send_lat; do
		log "$drv rep $rep: $tool 64"
		perf "$drv" "$tool" 64 "$rep" "$(iters_for 64 "$tool")"
	done
	devs_down
}

# run_scale DRIVER N: the scale point on fresh devices.
run_scale() {
	drv=$1
	if ! devs_up "$drv"; then
		record "$drv" scale "$2" 1 fail "rdma link add failed"
		devs_down
		return
	fi
	log "$drv: scale, $2 connections"
	scale "$drv" "$2"
	devs_down
}

# trace_point DRIVER TOOL SIZE: one more run of the point with the
# function_graph tracer on the functions of BENCH_TRACE_FUNCS (those this
# kernel and the loaded modules have): calls and the median and 90th
# percentile of their durations, per function.
trace_point() {
	local t=/sys/kernel/tracing f funcs=
	for f in $BENCH_TRACE_FUNCS; do
		grep -Eq "^$f([[:space:]]|\$)" $t/available_filter_functions &&
			funcs+=" $f"
	done
	[ -n "$funcs" ] || return 0
	echo 0 >$t/tracing_on
	echo nop >$t/current_tracer
	echo 16384 >$t/buffer_size_kb
	echo "$funcs" >$t/set_ftrace_filter ||
		log "trace: set_ftrace_filter refused some of$funcs"
	log "trace: $(wc -l <$t/set_ftrace_filter) functions:$funcs"
	echo function_graph >$t/current_tracer
	echo 1 >$t/options/funcgraph-tail
	echo >$t/trace
	echo 1 >$t/tracing_on
	perf "$1" "$2" "$3" p "$(iters_for "$3" "$2")"
	echo 0 >$t/tracing_on
	# "  9.432 us  |  f();" for a leaf, "} /* f */" closing one with
	# traced callees.
	awk '
		/us +\|/ {
			d = ""
			for (i = 1; i <= NF; i++) if ($(i + 1) == "us") { d = $i; break }
			if (d == "") next
			# A module function reads "f [module]".
			if (match($0, /\/\* [A-Za-z0-9_.]+( \[[A-Za-z0-9_]+\])? \*\//))
				fn = substr($0, RSTART + 3, RLENGTH - 6)
			else if (match($0, /[A-Za-z0-9_.]+( \[[A-Za-z0-9_]+\])?\(\);/))
				fn = substr($0, RSTART, RLENGTH - 3)
			else
				next
			sub(/ .*/, "", fn)
			print fn, d
		}' $t/trace | sort -k1,1 -k2,2g |
		awk -v h="bench: profile: $1 $2 $3: trace:" '
		function out(  p) {
			if (!n) return
			p = int(n * 0.9)
			if (p < 1) p = 1
			printf "%s %s calls %d median %.2f us p90 %.2f us\n", h, cur, n, v[int((n + 1) / 2)], v[p]
		}
		$1 != cur { out(); cur = $1; n = 0 }
		{ v[++n] = $2 }
		END { out() }' >&2
	echo nop >$t/current_tracer
	echo >$t/set_ftrace_filter
	echo 1 >$t/tracing_on
}

# profile DRIVER: every point of BENCH_POINTS once under perf stat and once
# under perf record, both over all CPUs for the length of the client's
# run; their numbers go to the log only.
profile() {
	local keep=$out p tool size data=/tmp/bench.perf.data st=/tmp/bench.perf.stat
	local dsos="[kernel.kallsyms],[${1%b}]"
	local -a ev=(context-switches cpu-migrations sched:sched_wakeup
		     sched:sched_switch workqueue:workqueue_execute_start
		     irq:softirq_entry raw_syscalls:sys_enter net:net_dev_xmit
		     tcp:tcp_rcv_space_adjust)
	drv=$1
	if ! devs_up "$drv"; then
		log "$drv: cannot create devices"
		devs_down
		return
	fi
	out=/tmp/bench.profile.tsv
	for p in $points; do
		tool=${p%%:*} size=${p#*:}
		[ "$tool" != cpu ] && [ "$tool" != cmtime ] || continue
		: >"$out"
		client_wrap=(command perf stat -a -x, -o "$st" -e "$(IFS=,; echo "${ev[*]}")" --)
		perf "$drv" "$tool" "$size" p "$(iters_for "$size" "$tool")"
		sed "s/^/bench: profile: $drv $tool $size: /" "$out" >&2
		awk -F, -v h="bench: profile: $drv $tool $size: stat:" \
			'NF > 2 && $1 ~ /^[0-9]/ { print h, $3, $1 }' "$st" >&2
		: >"$out"
		client_wrap=(command perf record -a -g -N -B -q -o "$data" --)
		perf "$drv" "$tool" "$size" p "$(iters_for "$size" "$tool")"
		sed "s/^/bench: profile: $drv $tool $size: /" "$out" >&2
		# Where the time goes by program and library, then the kernel
		# and the driver's module: own samples per symbol, and with its
		# callees.
		command perf report -i "$data" --stdio --no-children -g none \
			--sort comm,dso --percent-limit 1 2>/dev/null |
			grep -v '^#' | grep . | head -n 20 |
			sed "s/^/bench: profile: $drv $tool $size: dso: /" >&2
		command perf report -i "$data" --stdio --no-children -g none -n \
			--dsos "$dsos" --sort sym --percent-limit 0.2 2>/dev/null |
			grep -v '^#' | grep . | head -n "${BENCH_PROFILE_LINES:-60}" |
			sed "s/^/bench: profile: $drv $tool $size: self: /" >&2
		command perf report -i "$data" --stdio --children -g none -n \
			--dsos "$dsos" --sort sym --percent-limit 0.5 2>/dev/null |
			grep -v '^#' | grep . | head -n "${BENCH_PROFILE_LINES:-60}" |
			sed "s/^/bench: profile: $drv $tool $size: children: /" >&2
		[ -z "${BENCH_TRACE_FUNCS:-}" ] ||
			trace_point "$drv" "$tool" "$size"
		# BENCH_PROFILE_SYMS: who calls these symbols (own samples).
		for sym in ${BENCH_PROFILE_SYMS:-}; do
			command perf report -i "$data" --stdio --no-children -n \
				-S "$sym" -g graph,2,callee --percent-limit 0.01 2>/dev/null |
				grep -v '^#' | grep . | head -n 80 |
				sed "s/^/bench: profile: $drv $tool $size: callers $sym: /" >&2
		done
	done
	client_wrap=()
	out=$keep
	devs_down
}

# run_tcp: iperf3 plain and with -Z (zero-copy send), BENCH_TCP_SECONDS
# (5) each, BENCH_REPS times: the rate the receiver saw, and the CPU time
# of the guest over the middle of the run (from its first second to its
# last, where the transfer is steady; on the wire each guest its own) with
# the bytes the receiver's rate moves in that time.
run_tcp() {
	local rep z cli ok c0 c1 res test secs=${BENCH_TCP_SECONDS:-5}
	local win=$((secs - 2))
	((win >= 1)) || win=1
	drv=tcp
	for rep in $(seq "$reps"); do
		for z in "" -Z; do
			test=iperf3$z cli= ok=1
			next_port
			srv_start "$test" 0 "$rep" iperf3 -s -1 -B $A -p "$PORT" || ok=0
			meet $((PORT + 1))
			if cli_here && ((ok)); then
				log "tcp rep $rep: iperf3 $z"
				ip netns exec $NSB iperf3 -c $A -p "$PORT" -t "$secs" $z -J >/tmp/bench.tcp 2>/dev/null &
				cli=$!
			fi
			sleep 1
			c0=$(busy)
			sleep "$win"
			c1=$(busy)
			if [ -n "$cli" ]; then
				wait "$cli"
				# The receiver's rate, bits per second.
				res=$(python3 -c 'import json, sys
print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"])' </tmp/bench.tcp 2>/dev/null)
				[ -n "$res" ] || { record tcp "$test" 0 "$rep" fail "no result"; ok=0; }
			fi
			meet $((PORT + 2))
			[ -z "$srv" ] || srv_end "$srv" 30
			((ok)) || continue
			record tcp "$test" 0 "$rep" cpu_s "$(awk -v t=$((c1 - c0)) -v hz="$hz" 'BEGIN { printf "%.3f", t / hz }')"
			cli_here || continue
			record tcp "$test" 0 "$rep" tcp_MBps "$(awk -v b="$res" 'BEGIN { printf "%.1f", b / 8e6 }')"
			record tcp "$test" 0 "$rep" bytes "$(awk -v b="$res" -v w="$win" 'BEGIN { printf "%.0f", b / 8 * w }')"
		done
	done
}

# The first address resolution must not pay for the neighbour entry (on
# the wire the other guest may still be booting).
if cli_here; then
	for _ in $(seq 60); do
		ip netns exec $NSB ping -c 1 -W 2 $A >/dev/null 2>&1 && break
		[ -n "$role" ] || { log "no ping from ns B to $A"; break; }
	done
fi
# The guest's root is this machine's, over 9p: whichever driver runs a
# tool first would pay for faulting its pages in (a first cmtime
# connection took 77-186 ms against 21-36 ms warm).  Read the tools and
# the verbs libraries once up front, so that both drivers start warm.
warm=()
for t in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_read_lat \
	 ib_send_lat cmtime iperf3 "$top/build/userspace/tools/xiw-scale" \
	 "$top/build/userspace/tools/xiw-perf"; do
	t=$(command -v "$t") && warm+=("$t")
done
warm+=(/usr/lib/*-linux-gnu/libibverbs.so.* /usr/lib/*-linux-gnu/librdmacm.so.* \
       /usr/lib/*-linux-gnu/libibverbs/libsiw-rdmav*.so)
cat "${warm[@]}" >/dev/null 2>&1 || true
drivers=xiw
[ -z "${BENCH_XIW_B:-}" ] || drivers+=" xiwb"
if [ -d /sys/module/siw ]; then
	drivers+=" siw"
else
	record siw setup 0 0 fail "no siw module"
fi
for rep in $(seq "$reps"); do
	for d in $drivers; do
		run_points "$d" "$rep"
	done
done
# The 64 B latency points, the ones with a target, run on to
# BENCH_LAT_REPS repetitions (default 7), the drivers still taking turns:
# a round trip's repetitions fall into two or three modes for both
# drivers (where the scheduler has each spinning end), and the median of
# three is whichever mode two of them hit.
if [ -z "$points" ] && [[ " $LAT_SIZES " == *" 64 "* ]]; then
	for rep in $(seq $((reps + 1)) "${BENCH_LAT_REPS:-7}"); do
		for d in $drivers; do
			run_lat64 "$d" "$rep"
		done
	done
fi
# netns_del: this guest's namespaces (the wire's NIC goes back to the
# initial one).
netns_del() {
	ip netns del $NSA 2>/dev/null
	[ "$NSB" = "$NSA" ] || ip netns del $NSB 2>/dev/null
}
if [ -n "$points" ]; then
	if [ "${BENCH_PROFILE:-0}" = 1 ] && [ -z "$role" ]; then
		mountpoint -q /sys/kernel/tracing ||
			mount -t tracefs nodev /sys/kernel/tracing
		for d in $drivers; do
			profile "$d"
		done
	fi
	netns_del
	log "done: $(grep -c . "$out") lines, $(grep -c "	fail	" "$out") failures"
	exit 0
fi
# siw stops short of 1024 connections in one process (see
# Documentation/performance.rst): the small point compares memory per QP.
# Memory per QP wants both ends in one guest: not on the wire.
if [ -z "$role" ]; then
	for n in ${BENCH_SCALE_SMALL:-32} ${BENCH_SCALE:-1024}; do
		for d in $drivers; do
			run_scale "$d" "$n"
		done
	done
fi
run_tcp

netns_del
log "done: $(grep -c . "$out") lines, $(grep -c "	fail	" "$out") failures"
