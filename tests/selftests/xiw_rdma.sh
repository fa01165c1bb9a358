#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_rdma.sh: the data path between two xiw devices in two network
# namespaces joined by a veth pair, so that each end has its own device and
# TCP really crosses a netdev: rping with data verification, and perftest's
# bandwidth and latency tests for Send, RDMA Write and RDMA Read (perftest
# checks that every work request completes successfully).
#
#   ns A: xra0 192.0.2.1/24 2001:db8::1/64  -- xiw device xra
#   ns B: xrb0 192.0.2.2/24 2001:db8::2/64  -- xiw device xrb
#
# rping also runs over IPv6 and over one xiw device on a namespace's loopback
# netdev.  (Debian 12's perftest 4.5 resolves -R addresses as IPv4 only.)
. "$(dirname "$0")/lib.sh"

require_env
command -v rping >/dev/null || ktap_skip_all "rping not installed"
command -v ib_write_bw >/dev/null || ktap_skip_all "perftest not installed"
need_module xiw || ktap_skip_all "cannot load xiw"
need_module veth || ktap_skip_all "no veth module"
need_module rdma_ucm || ktap_skip_all "no rdma_ucm module"

A=192.0.2.1
B=192.0.2.2
A6=2001:db8::1
B6=2001:db8::2

# pair46: two namespaces joined by veth, an xiw device on each end, with
# IPv4 and IPv6 addresses (xiw_ns_pair, then the IPv6 ones).
pair46() {
	xiw_ns_pair xra0 xrb0 $A $B xra xrb
	xrun ip -n "$NSA" addr add $A6/64 dev xra0 nodad
	xrun ip -n "$NSB" addr add $B6/64 dev xrb0 nodad
}

# Both ends must have carried traffic: each device shows a cm_id.
both_devices_used() {
	local ids
	ids=$(rdma resource show cm_id 2>/dev/null)
	grep -q 'dev xra' <<<"$ids" && grep -q 'dev xrb' <<<"$ids"
}

# rping_run NS_SERVER NS_CLIENT ADDR COUNT SIZE: rping -V (the client
# compares what came back with what it sent, every round) -v; all COUNT
# rounds must have run.  The rounds are counted, not printed (the first and
# last few are).
rping_run() {
	local nss=$1 nsc=$2 addr=$3 count=$4 size=$5 n rc=0 bg
	bg_run bg ip netns exec "$nss" rping -s -a "$addr" -p 7200 -C "$count" -S "$size" \
		>"$XIW_TMP/srv" 2>&1
	wait_for 20 listening 7200 "$nss"
	# Neighbour discovery first: rping gives address resolution 2 s,
	# which IPv6 on a fresh veth under TCG can miss.
	xrun ip netns exec "$nsc" ping -c 1 -W 10 "$addr"
	echo "# + ip netns exec $nsc rping -c -a $addr -p 7200 -C $count -S $size -V -v"
	timeout 300 ip netns exec "$nsc" rping -c -a "$addr" -p 7200 -C "$count" \
		-S "$size" -V -v >"$XIW_TMP/cli" 2>"$XIW_TMP/cli.err" || rc=$?
	# The first and last rounds, cut: a round's line is as long as its
	# data (65000 characters), and a console of 115200 baud takes
	# seconds for one.
	{ head -n 2 "$XIW_TMP/cli"; echo ...; tail -n 2 "$XIW_TMP/cli"
	  cat "$XIW_TMP/cli.err"; } | cut -c1-100 | sed 's/^/# /'
	n=$(grep -c "ping data" "$XIW_TMP/cli" || true)
	# A client that failed leaves the server waiting for it.
	((rc == 0)) || { stop_bg "$bg"; fail "rping client exit $rc"; }
	bg_wait "$bg" || true
	# rping can exit 0 after a failed connection: count verified rounds.
	((n == count)) || fail "$n of $count rping rounds verified"
}

# case_rping COUNT SIZE [4|6]: rping from ns B to ns A over the veth pair.
case_rping() {
	local addr=$A
	pair46
	[ "${3:-4}" = 6 ] && addr=$A6
	rping_run "$NSA" "$NSB" "$addr" "$1" "$2"
}

# case_rping_lo COUNT SIZE 4|6: both ends of rping on one xiw device on the
# loopback netdev of a namespace of their own.  rdma_cm binds an id that
# resolves a loopback address to the first active RDMA device and reads its
# P_Key 0 (xiw has a one-entry P_Key table for that).  6.1's rdma_cm also
# accepts a connection only on the device whose GID is the hardware address
# of the netdev that owns the local address; lo's is all zeros, which no
# GID table holds (a zero GID is an empty entry), so that lo gets a locally
# administered MAC first, from which the xiw device takes its GID.
case_rping_lo() {
	local addr=127.0.0.1
	[ "$3" = 6 ] && addr=::1
	setup_ns NSA
	xrun ip -n "$NSA" link set lo address 02:78:69:77:00:01
	xrun ip netns exec "$NSA" rdma link add xrlo type xiw netdev lo
	record rdma xrlo
	wait_for "$WAIT_TIMEOUT" ibdev_exists xrlo
	rping_run "$NSA" "$NSA" "$addr" "$1" "$2"
}

# case_rping_pages ROUNDS SIZE: rping -V of SIZE bytes on lo (FPDUs of up
# to 64 KiB) after which TCP must have copied FPDUs straight from the
# consumer's pages: zero-copy ends at the stack's first copy ("auto").
case_rping_pages() {
	local pc
	case_rping_lo "$1" "$2" 4
	pc=$(hw_counter xrlo tx_page_copy_fpdus)
	diag "xrlo tx_page_copy_fpdus: $pc, tx_zcopy_fpdus: $(hw_counter xrlo tx_zcopy_fpdus)"
	[ -n "$pc" ] || fail "no tx_page_copy_fpdus counter on xrlo"
	((pc > 0)) || fail "no FPDU copied by TCP from the pages"
}

# case_rping_jumbo ROUNDS SIZE: rping -V of SIZE bytes across a veth pair
# of MTU 9000: the server's Writes go out in FPDUs of 8.9 KiB, several to
# one sendmsg() that TCP copies from the pages of the server's buffer.
case_rping_jumbo() {
	local pc zc
	xiw_ns_pair xra0 xrb0 $A $B xra xrb 9000
	rping_run "$NSA" "$NSB" "$A" "$1" "$2"
	pc=$(hw_counter xra tx_page_copy_fpdus)
	zc=$(hw_counter xra tx_zcopy_fpdus)
	diag "xra tx_page_copy_fpdus: $pc, tx_zcopy_fpdus: $zc, tx_fpdus: $(hw_counter xra tx_fpdus)"
	[ -n "$pc" ] || fail "no tx_page_copy_fpdus counter on xra"
	# Seven FPDUs of every Write are large; the first ones go zero-copy
	# until the stack's copy is reported.
	((pc > 0 && pc + zc >= 7 * $1)) ||
		fail "$pc FPDUs copied by TCP from the pages, $zc zero-copy: not 7 per Write"
}

# perf TOOL ARGS...: server in ns A, client in ns B; both must succeed.
#
# perftest makes two RDMA CM connections: one to exchange parameters, then
# the test connection, for which the server listens anew.  A client that
# is faster than that gets its SYN refused ("REJECTED; error: -111") and
# the pair is out of step.  That race is perftest's: for it, and only for
# it, both sides are started again (at most three times).  So is a clock
# calibration that gives up after a good transfer when its samples
# scatter under TCG ("Correlation coefficient r^2 ... < 0.9", "Can't
# produce a report"): that is run once more too.
perf() {
	local tool=$1 src try calib=0 bg
	shift
	pair46
	for try in 1 2 3; do
		bg_run bg ip netns exec "$NSA" timeout 120 "$tool" -R -d xra "$@" \
			>"$XIW_TMP/srv" 2>&1
		wait_for 20 listening 18515 "$NSA"
		xrun timeout 120 ip netns exec "$NSB" "$tool" -R -d xrb "$@" $A && break
		if grep -q "Can't produce a report" "$XIW_TMP/out" &&
		   grep -q 'Correlation coefficient r^2' "$XIW_TMP/out" && ((!calib++)); then
			diag "perftest could not calibrate its clock: once more"
			stop_bg "$bg"
			wait_for 20 not_listening 18515 "$NSA"
			continue
		fi
		grep -q 'RDMA_CM_EVENT_REJECTED; error: -111' "$XIW_TMP/out" ||
			fail "$tool client failed"
		((try < 3)) || fail "$tool client refused three times"
		stop_bg "$bg"
	done
	grep -qE '^ +[0-9]+ +[0-9]+ ' "$XIW_TMP/out" || fail "$tool printed no result row"
	src=0
	bg_wait "$bg" || src=$?
	sed 's/^/# server: /' "$XIW_TMP/srv"
	((src == 0)) || fail "$tool server exit $src"
}

# case_read_poster N: N Reads of 64 B (ib_read_lat) between the two
# namespaces; the responder's engine runs in the requester's system call
# for most of them (tx_poster_runs), not in its worker.
case_read_poster() {
	local n=$1 runs
	perf ib_read_lat -n "$n" -s 64
	runs=$(hw_counter xra tx_poster_runs)
	diag "xra tx_poster_runs after $n Reads: $runs (xrb: $(hw_counter xrb tx_poster_runs))"
	[ -n "$runs" ] || fail "no tx_poster_runs counter on xra"
	((runs >= n / 2)) || fail "$runs of $n Read Responses sent from the requester's call"
}

# with_params "NAME=VALUE..." FUNC ARGS...: run FUNC with xiw's MPA module
# parameters (defaults of devices created afterwards) set, then restore them.
with_params() {
	local kv saved=()
	for kv in $1; do
		saved+=("${kv%%=*}=$(cat "/sys/module/xiw/parameters/mpa_${kv%%=*}")")
		xrun sh -c "echo ${kv#*=} > /sys/module/xiw/parameters/mpa_${kv%%=*}" || return 1
	done
	shift
	# A subshell: FUNC may fail (exit), and the defaults are restored
	# whatever happens, or the next cases would inherit them.  (Not
	# `( ... ) || rc=$?`: bash ignores set -e left of ||.)
	local rc
	set +e
	(
		set -e
		"$@"
	)
	rc=$?
	set -e
	for kv in "${saved[@]}"; do
		echo "${kv#*=}" >"/sys/module/xiw/parameters/mpa_${kv%%=*}"
	done
	return $rc
}

# The agreed MPA parameters, as the CM logs them with dynamic debug on.
mpa_logged() { log_since | grep -q "MPA rev $1, crc $2"; }

# check_wire REV CRC FUNC ARGS...: FUNC, then the CM must have logged the
# expected revision and CRC setting for a connection since we started.
check_wire() {
	local rev=$1 crc=$2
	shift 2
	log_mark
	"$@" || return 1
	if [ ! -w /sys/kernel/debug/dynamic_debug/control ]; then
		# Kernels without dynamic debug do not log the negotiation.
		diag "no dynamic debug: negotiated MPA parameters not checked"
		return 0
	fi
	mpa_logged "$rev" "$crc" || fail "no connection with MPA rev $rev, crc $crc"
}

ktap_header
dyndbg_on "module xiw" || :
ktap_plan 28
run_case "rping -C 1000 -v, IPv4, CRC off" case_rping 1000 64
run_case "rping -C 1000 -v, IPv6, CRC on" \
	with_params "crc=prefer" check_wire 2 1 case_rping 1000 64 6
run_case "rping -C 1000 -v on lo, IPv4, CRC on" \
	with_params "crc=prefer" check_wire 2 1 case_rping_lo 1000 64 4
run_case "rping -C 1000 -v on lo, IPv6, CRC off" case_rping_lo 1000 64 6
run_case "rping 50 x 65000 bytes on lo, CRC on: FPDUs TCP copies from the pages" \
	with_params "crc=prefer" check_wire 2 1 case_rping_pages 50 65000
run_case "rping 200 rounds of 64 bytes across namespaces" case_rping 200 64
run_case "rping 50 x 65000 bytes over veth MTU 9000, CRC on: pages batches" \
	with_params "crc=prefer" check_wire 2 1 case_rping_jumbo 50 65000
run_case "rping 50 rounds of 65000 bytes (multi-FPDU messages)" case_rping 50 65000
run_case "ib_send_bw 64 KiB" perf ib_send_bw -n 500 -s 65536
run_case "ib_write_bw 64 KiB" perf ib_write_bw -n 500 -s 65536
run_case "ib_read_bw 64 KiB" perf ib_read_bw -n 500 -s 65536
run_case "ib_send_lat 64 B" perf ib_send_lat -n 500 -s 64
run_case "ib_write_lat 64 B" perf ib_write_lat -n 500 -s 64
run_case "ib_read_lat 64 B" perf ib_read_lat -n 500 -s 64
run_case "ib_read_lat 64 B: Read Responses sent in the requester's call" \
	case_read_poster 500
run_case "ib_write_bw all sizes 2 B..8 MiB" perf ib_write_bw -a -n 20
run_case "ib_read_bw all sizes 2 B..8 MiB" perf ib_read_bw -a -n 20
run_case "ib_send_bw all sizes 2 B..8 MiB" perf ib_send_bw -a -n 20
run_case "CRC on: rping 100 x 65000 bytes" \
	with_params "crc=prefer" check_wire 2 1 case_rping 100 65000
run_case "CRC on: ib_read_bw 64 KiB" with_params "crc=prefer" perf ib_read_bw -n 300 -s 65536
run_case "markers on: rping 100 x 65000 bytes" \
	with_params "markers=prefer" case_rping 100 65000
run_case "CRC and markers: ib_write_bw all sizes" \
	with_params "crc=prefer markers=prefer" perf ib_write_bw -a -n 10
run_case "CRC and markers: rping 20 x 65000 bytes" \
	with_params "crc=prefer markers=prefer" check_wire 2 1 case_rping 20 65000
run_case "MPA rev 1: rping 20 rounds" with_params "rev=1" check_wire 1 0 case_rping 20 1000
run_case "P2P with zero-length Read RTR: rping 20 rounds" \
	with_params "p2p=1 p2p_rtr=read" case_rping 20 1000
run_case "MPA rev 1: rping 50 rounds" with_params "rev=1" check_wire 1 0 case_rping 50 1000
run_case "P2P with zero-length Read RTR: rping 50 rounds" \
	with_params "p2p=1 p2p_rtr=read" case_rping 50 1000
run_case "P2P with zero-length Write RTR, CRC: ib_send_bw" \
	with_params "p2p=1 p2p_rtr=write crc=prefer" perf ib_send_bw -n 300 -s 65536
ktap_finish
