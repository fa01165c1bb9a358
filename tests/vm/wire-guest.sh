#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of tests/vm/wire: one end of an iWARP connection between two
# VMs, over a virtual wire (qemu's UDP socket netdev on the host's
# loopback), so that traffic leaves one kernel through a real NIC driver
# (virtio-net) and enters another.
#
#   wire-guest.sh ROLE DRIVER PEERDRIVER MAC OUT
#
# ROLE is a or b: a is 198.51.100.1 and 2001:db8:51::1, b is .2 and ::2.
# DRIVER (xiw or siw) gets an RDMA device on the NIC whose address is MAC.
# Both guests walk the same list of steps; in each one of them serves
# and the other is the client, on a port of the step's own.  The server
# opens a one-shot TCP "ready" listener once its RDMA server listens; the
# client connects to it before it starts.  A netem discipline (delay,
# loss, reordering) goes on both ends' egress for the steps that ask for
# it.  Data is verified by rping -V (every round compared).
#
# siw never serves an xiw client here.  siw's accept sends the MPA Reply
# and only then hands the socket to its QP; FPDUs that arrive in between
# wake the connection manager's data_ready, which ignores them in RDMA
# mode, and nothing reads them until more data comes (perftest's
# parameter exchange then waits forever).  xiw as initiator sends its
# first FPDU as soon as the Reply is in, as MPA allows, and with two
# guests sharing two host CPUs the window is often wider than a round
# trip.  Steps whose server would be siw facing xiw swap the roles; the
# single-VM interop test (xiw_interop_siw.sh) covers siw serving xiw.
#
# OUT gets one line per step: "STEP ok|fail DESCRIPTION[: reason]", and
# "retrans STEP N" for the TCP segments this end retransmitted in a netem
# step (the loss must show).
#
# Environment (both guests must get the same): WIRE_STEPS, a list of step
# numbers to run (all by default); WIRE_REPEAT, how many times each runs
# (1).  tests/vm/wire --steps and --repeat set them, to chase a flake.
set -uo pipefail

role=$1
drv=$2
peerdrv=$3
mac=$4
out=$5
: >"$out"

case $role in
a) me4=198.51.100.1 peer4=198.51.100.2 me6=2001:db8:51::1 peer6=2001:db8:51::2 ;;
b) me4=198.51.100.2 peer4=198.51.100.1 me6=2001:db8:51::2 peer6=2001:db8:51::1 ;;
*) echo "wire-guest: ROLE must be a or b" >&2; exit 2 ;;
esac
dev=wire_$drv
tmp=$(mktemp -d)
. "$(dirname "$0")/wire-lib.sh"

log() { echo "wire-$role: $*"; }
result() { echo "$*" >>"$out"; log "$*"; }

# The steps, the same in both guests:
#   SERVER|NETEM|KIND ARGS|DESCRIPTION
# KIND rping FAMILY COUNT SIZE, or perf TOOL SIZE ITERATIONS.
LOSS="delay 10ms 2ms loss 1%"
REORDER="delay 5ms reorder 25% 50%"
steps=(
	"a|-|rping 4 50 1000|rping 50 x 1000 B, IPv4"
	"b|-|rping 6 20 65000|rping 20 x 65000 B, IPv6"
	"a|-|perf ib_write_bw 65536 200|ib_write_bw 64 KiB"
	"b|-|perf ib_read_bw 65536 200|ib_read_bw 64 KiB"
	"a|-|perf ib_send_bw 65536 200|ib_send_bw 64 KiB"
	"b|-|perf ib_write_lat 64 200|ib_write_lat 64 B"
	"a|$LOSS|rping 4 20 65000|netem $LOSS: rping 20 x 65000 B"
	"b|$LOSS|rping 4 20 65000|netem $LOSS: rping 20 x 65000 B"
	"a|$LOSS|perf ib_write_bw 65536 100|netem $LOSS: ib_write_bw 64 KiB"
	"b|$REORDER|rping 6 20 65000|netem $REORDER: rping 20 x 65000 B, IPv6"
)
picked=()
for i in ${WIRE_STEPS:-$(seq ${#steps[@]})}; do
	if ! [[ $i =~ ^[0-9]+$ ]] || ((i < 1 || i > ${#steps[@]})); then
		result "0 fail setup: no step '$i' (1-${#steps[@]})"
		exit 1
	fi
	for _ in $(seq "${WIRE_REPEAT:-1}"); do
		picked+=("${steps[i - 1]}")
	done
done
steps=("${picked[@]}")

# The wire NIC, found by its address.
nic=$(wire_nic "$mac")
if [ -z "$nic" ]; then
	result "0 fail setup: no NIC with address $mac"
	exit 1
fi
ip link set "$nic" down
ip link set "$nic" name wire0 && nic=wire0
ip addr add $me4/24 dev $nic
ip addr add $me6/64 dev $nic nodad
ip link set $nic up
ip link set lo up
modprobe rdma_ucm
modprobe sch_netem 2>/dev/null
if ! modprobe "$drv" || ! rdma link add $dev type "$drv" netdev $nic; then
	result "0 fail setup: cannot create the $drv device"
	exit 1
fi
for _ in $(seq 100); do
	[ -e /sys/class/infiniband/$dev ] && break
	sleep 0.1
done
log "$drv device $dev on $nic ($mac)"
# The connection managers' and QP state changes' debug messages, for the
# kernel log a failed step shows.
if [ -w /sys/kernel/debug/dynamic_debug/control ]; then
	echo "module $drv file ${drv}_cm.c +p" >/sys/kernel/debug/dynamic_debug/control 2>/dev/null
	echo "module $drv file ${drv}_qp.c +p" >/sys/kernel/debug/dynamic_debug/control 2>/dev/null
fi

# The peer, over the wire (it may boot later than we do).
up=0
for _ in $(seq 120); do
	if ping -c 1 -W 1 $peer4 >/dev/null 2>&1; then up=1; break; fi
done
if ((!up)); then
	result "0 fail setup: no reply from $peer4 over the wire"
	exit 1
fi
ping -6 -c 1 -W 5 $peer6 >/dev/null 2>&1 || log "no IPv6 reply from $peer6 yet"
log "peer $peer4 answers"

netem_now=-
netem() {	# SPEC|-
	[ "$1" = "$netem_now" ] && return 0
	if [ "$1" = - ]; then
		tc qdisc del dev $nic root 2>/dev/null
	else
		# shellcheck disable=SC2086
		tc qdisc replace dev $nic root netem $1 || return 1
	fi
	netem_now=$1
}

retrans() { nstat -az TcpRetransSegs 2>/dev/null | awk '$1 == "TcpRetransSegs" { print $2 }'; }

listening() { ss -Hltn "sport = :$1" | grep -q .; }

# serve N PORT KIND ARGS...: run the server side of a step.
serve() {
	local n=$1 port=$2 kind=$3 srv rc bpid
	shift 3
	case $kind in
	rping)
		local fam=$1 count=$2 size=$3 addr=$me4
		[ "$fam" = 6 ] && addr=$me6
		timeout 180 rping -s -a "$addr" -p "$port" -C "$count" -S "$size" \
			>"$tmp/srv.$n" 2>&1 &
		;;
	perf)
		local tool=$1 size=$2 iters=$3
		timeout 180 "$tool" -R -d $dev -p "$port" -s "$size" -n "$iters" -F \
			>"$tmp/srv.$n" 2>&1 &
		;;
	esac
	srv=$!
	for _ in $(seq 300); do
		listening "$port" && break
		kill -0 $srv 2>/dev/null || break
		sleep 0.1
	done
	if ! listening "$port"; then
		wait $srv
		echo "server not listening (exit $?)"
		tail -n 5 "$tmp/srv.$n"
		return 1
	fi
	timeout 200 python3 -c "$WIRE_ACCEPT_PY" $me4 $((port + 1000)) &
	bpid=$!
	rc=0
	wait $srv || rc=$?
	kill $bpid 2>/dev/null
	wait $bpid 2>/dev/null
	tail -n 4 "$tmp/srv.$n"
	((rc == 0)) || { echo "server exit $rc"; return 1; }
}

# client N PORT KIND ARGS...: the client side; verifies what it can.
client() {
	local n=$1 port=$2 kind=$3 rc=0 got
	shift 3
	wire_meet b $peer4 $((port + 1000)) 600 || { echo "the server never became ready"; return 1; }
	case $kind in
	rping)
		local fam=$1 count=$2 size=$3 addr=$peer4
		[ "$fam" = 6 ] && addr=$peer6
		timeout 180 rping -c -a "$addr" -p "$port" -C "$count" -S "$size" -v -V \
			>"$tmp/cli.$n" 2>&1 || rc=$?
		got=$(grep -c 'ping data' "$tmp/cli.$n")
		{ grep -v 'ping data' "$tmp/cli.$n" || true; } | head -n 10 | cut -c1-160
		echo "rping: exit $rc, $got of $count rounds verified"
		((rc == 0 && got == count)) || return 1
		;;
	perf)
		local tool=$1 size=$2 iters=$3
		timeout 180 "$tool" -R -d $dev -p "$port" -s "$size" -n "$iters" -F "$peer4" \
			>"$tmp/cli.$n" 2>"$tmp/cli.$n.err" || rc=$?
		tail -n 4 "$tmp/cli.$n"
		# stderr apart: stdout goes to a file fully buffered and
		# lands after perftest's error lines.
		if [ -s "$tmp/cli.$n.err" ]; then
			echo "perftest's stderr:"
			head -n 10 "$tmp/cli.$n.err" | cut -c1-200
			cat "$tmp/cli.$n.err" >>"$tmp/cli.$n"
		fi
		if ((rc != 0)) && grep -q "Can't produce a report" "$tmp/cli.$n"; then
			# perftest's clock calibration under TCG, after the
			# transfer completed.
			echo "perftest could not calibrate its clock (the transfer completed)"
			rc=0
		elif ! grep -qE '^ +[0-9]+ +[0-9]+ ' "$tmp/cli.$n"; then
			echo "no result row"
			rc=1
		elif ((rc != 0)) && [ "$drv" = siw ] && [ "$peerdrv" = xiw ]; then
			# The transfer completed and xiw serves: the step
			# passes on the server's word.  siw's client (6.1,
			# 1% loss) once failed its teardown after the report,
			# once in many runs; that is siw's or perftest's,
			# and shows in the log.
			echo "note: perftest exit $rc after its report (siw client): $(tail -n 1 "$tmp/cli.$n.err")"
			rc=0
		elif ((rc != 0)); then
			echo "perftest: exit $rc after its report: $(tail -n 1 "$tmp/cli.$n.err")"
		fi
		((rc == 0)) || return 1
		;;
	esac
}

n=0
for st in "${steps[@]}"; do
	n=$((n + 1))
	IFS='|' read -r srv spec what desc <<<"$st"
	if [ "$drv" != "$peerdrv" ]; then
		# See above: the xiw end serves.
		if [ "$drv" = xiw ]; then srv=$role; else srv=other; fi
	fi
	port=$((7400 + n))
	echo "wire-$role: step $n start" >/dev/kmsg
	if ! netem "$spec"; then
		result "$n fail $desc: cannot set netem $spec"
		continue
	fi
	r0=$(retrans)
	# shellcheck disable=SC2086
	if [ "$srv" = "$role" ]; then
		who=server
		serve $n $port $what >"$tmp/step.$n" 2>&1
	else
		who=client
		client $n $port $what >"$tmp/step.$n" 2>&1
	fi
	rc=$?
	if ((rc != 0)); then
		echo "kernel log of the step:" >>"$tmp/step.$n"
		dmesg | awk -v m="wire-$role: step $n start" 'f; index($0, m) { f = 1 }' |
			tail -n 60 >>"$tmp/step.$n"
		echo "${who}'s output:" >>"$tmp/step.$n"
		tail -n 25 "$tmp/$([ $who = server ] && echo srv || echo cli).$n" | cut -c1-200 >>"$tmp/step.$n"
		# the reason, last
		grep -E "^(rping: |no result|server |the server|perftest)" "$tmp/step.$n" | tail -n 1 >>"$tmp/step.$n"
	fi
	sed "s/^/wire-$role:   /" "$tmp/step.$n"
	if [ "$spec" != - ]; then
		echo "retrans $n $(($(retrans) - r0))" >>"$out"
	fi
	if ((rc == 0)); then
		note=$(grep -m1 '^note: ' "$tmp/step.$n")
		result "$n ok $desc ($who)${note:+; ${note#note: }}"
	else
		result "$n fail $desc ($who): $(tail -n 1 "$tmp/step.$n")"
	fi
done
netem -
rdma link del $dev
rm -rf "$tmp"
grep -q ' fail ' "$out" && exit 1
exit 0
