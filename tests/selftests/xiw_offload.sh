#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_offload.sh: offload backends (xiw_offload.h) and the hardware-iWARP
# check of rdma link add.
#
#   ns A: xfa0 192.0.2.1/24 -- xiw device xua
#   ns B: xfb0 192.0.2.2/24 -- xiw device xub       (veth, MTU 9000)
#
# Cases:
#   emulated backend: xiw_offload_test.ko registers "emulated" (its own
#     CRC32c, FPDUs of at most 2048 octets, placement by a counted copy);
#     both devices select it, CRC on.  rping -v and ib_write_bw carry data
#     through it: its counters show the connections, the CRC octets and
#     the placed octets, and the capture shows no FPDU above 2048 octets
#     (the software path, on the same MTU 9000 link, sends larger ones).
#   declined and withdrawn: a backend that declines a connection, and one
#     unloaded while a device still selects it, leave the traffic to
#     software; a name no backend has is refused with EINVAL.
#   another RDMA device on the port: with an rxe device on the netdev
#     (standing in for irdma on an X722 or E810), rdma link add warns and
#     proceeds (hw_iwarp_policy=warn) or is refused with EBUSY (refuse);
#     without another device, nothing.
. "$(dirname "$0")/lib.sh"

require_env
command -v rping >/dev/null || ktap_skip_all "rping not installed"
command -v ib_write_bw >/dev/null || ktap_skip_all "perftest not installed"
command -v dumpcap >/dev/null || ktap_skip_all "dumpcap not installed"
need_tool PEER xiw-peer
need_module xiw || ktap_skip_all "cannot load xiw"
need_module veth || ktap_skip_all "no veth module"
need_module rdma_ucm || ktap_skip_all "no rdma_ucm module"

A=192.0.2.1
B=192.0.2.2
OT=/sys/module/xiw_offload_test/parameters

# both NAME VALUE: a setting of both devices.
both() {
	xrun sh -c "echo $2 > $IBDIR/xua/$1 && echo $2 > $IBDIR/xub/$1"
}

# ot_stat NAME: one of the emulated backend's counters.
ot_stat() { tr ' ' '\n' <"$OT/stats" | grep -A1 -x "$1" | tail -n 1; }
backend_idle() { [ "$(ot_stat active)" = 0 ]; }

# rping_run COUNT SIZE: verified rping rounds from ns B to ns A.
rping_run() {
	local rc=0 bg
	bg_run bg ip netns exec "$NSA" rping -s -a $A -p 7400 -C "$1" -S "$2" -v \
		>"$XIW_TMP/rs" 2>&1
	wait_for 20 listening 7400 "$NSA"
	timeout 120 ip netns exec "$NSB" rping -c -a $A -p 7400 -C "$1" -S "$2" -v \
		>"$XIW_TMP/rc" 2>&1 || rc=$?
	bg_wait "$bg" || true
	((rc == 0)) || { tail -n 5 "$XIW_TMP/rc" | sed 's/^/# /'; fail "rping exit $rc"; }
	(($(grep -c "ping data" "$XIW_TMP/rc") == $1)) || fail "not every rping round verified"
}

# write_bw: ib_write_bw of 64 KiB messages, both sides must succeed.
write_bw() {
	local try bg
	for try in 1 2 3; do
		bg_run bg ip netns exec "$NSA" timeout 120 ib_write_bw -R -d xua -s 65536 -n 500 \
			>"$XIW_TMP/srv" 2>&1
		wait_for 20 listening 18515 "$NSA"
		timeout 120 ip netns exec "$NSB" ib_write_bw -R -d xub -s 65536 -n 500 $A \
			>"$XIW_TMP/out" 2>&1 && break
		# perftest's own race: its second connection refused (xiw_rdma.sh)
		grep -q 'RDMA_CM_EVENT_REJECTED; error: -111' "$XIW_TMP/out" ||
			{ sed 's/^/# /' "$XIW_TMP/out"; fail "ib_write_bw failed"; }
		((try < 3)) || fail "ib_write_bw refused three times"
		# The server only: largest_fpdu's capture goes on.
		stop_bg "$bg"
	done
	bg_wait "$bg" || fail "ib_write_bw server failed"
}

# largest_fpdu FUNC ARGS: FUNC under capture on xfb0; LARGEST = the
# largest DDP segment payload the client sent (xiw-peer decode).
largest_fpdu() {
	local errs
	capture_start "$NSB" xfb0 "$XIW_TMP/wire.pcap"
	"$@"
	capture_stop
	# Its exit status counts capture gaps too: the lines below judge.
	"$PEER" decode --crc "$XIW_TMP/wire.pcap" >"$XIW_TMP/decode.txt" 2>&1 || true
	grep -qE "^capture: " "$XIW_TMP/decode.txt" ||
		{ tail -n 20 "$XIW_TMP/decode.txt" | sed 's/^/# /'; fail "decode failed"; }
	# Packets the capture missed (a gap) end a direction's decode; any
	# other error (CRC, framing) is xiw's.
	errs=$(grep -E "^ +! " "$XIW_TMP/decode.txt" | grep -v "! gap: " || true)
	[ -z "$errs" ] || { head <<<"$errs" | sed 's/^/# /'; fail "the decoder found errors (CRC?)"; }
	LARGEST=$(awk -v b="$B:" 'index($0, b) == 1 && / > / { on = 1; next } /^$/ { on = 0 }
		on && /^  #/ { for (i = 1; i < NF; i++) if ($i == "len" && $(i + 1) + 0 > m) m = $(i + 1) + 0 }
		END { print m + 0 }' "$XIW_TMP/decode.txt")
}

t_emulated() {
	local big small s0 p0 c0
	need_module xiw_offload_test || skip "no xiw_offload_test module"
	xiw_ns_pair xfa0 xfb0 $A $B xua xub 9000
	both mpa_crc prefer
	largest_fpdu write_bw
	big=$LARGEST
	diag "software: largest FPDU payload $big octets"
	((big > 2048)) || fail "software FPDUs on MTU 9000 no larger than 2048 ($big)"
	both offload emulated
	[ "$(cat $IBDIR/xua/offload)" = emulated ] || fail "offload reads '$(cat $IBDIR/xua/offload)'"
	s0=$(ot_stat started) p0=$(ot_stat placed_octets) c0=$(ot_stat crc_octets)
	rping_run 50 65000
	largest_fpdu write_bw
	small=$LARGEST
	diag "emulated: largest FPDU payload $small octets; $(cat $OT/stats)"
	((small > 0 && small <= 2048)) || fail "emulated segmentation: FPDU of $small octets"
	(($(ot_stat started) - s0 >= 4)) || fail "the backend took $(($(ot_stat started) - s0)) connections"
	(($(ot_stat placed_octets) - p0 >= 50 * 65000 + 500 * 65536)) ||
		fail "the backend placed $(($(ot_stat placed_octets) - p0)) octets"
	(($(ot_stat crc_octets) - c0 >= 2 * (50 * 65000 + 500 * 65536))) ||
		fail "the backend's CRC saw $(($(ot_stat crc_octets) - c0)) octets"
	wait_for 20 backend_idle || fail "connections still active in the backend"
}

t_fallback() {
	local s0 d0
	need_module xiw_offload_test || skip "no xiw_offload_test module"
	need_unload xiw_offload_test
	xiw_ns_pair xfa0 xfb0 $A $B xua xub 9000
	both mpa_crc prefer
	if (echo nosuch >$IBDIR/xua/offload) 2>"$XIW_TMP/err"; then
		fail "offload=nosuch accepted"
	fi
	grep -q "Invalid argument" "$XIW_TMP/err" || fail "offload=nosuch: $(cat "$XIW_TMP/err")"
	both offload emulated
	echo 1 >$OT/decline
	s0=$(ot_stat started) d0=$(ot_stat declined)
	log_mark
	rping_run 10 10000
	echo 0 >$OT/decline
	(($(ot_stat started) == s0)) || fail "a declining backend took a connection"
	(($(ot_stat declined) - d0 >= 2)) || fail "the backend was not asked"
	grep -q "offload backend emulated declined" < <(log_since) || fail "no log line for the decline"
	# Withdrawn: the devices keep their selection, connections use software.
	xrun rmmod xiw_offload_test
	[ "$(cat $IBDIR/xua/offload)" = emulated ] || fail "selection lost on unload"
	log_mark
	rping_run 10 10000
	grep -q "offload backend emulated is not registered: software" < <(log_since) ||
		fail "no log line for the missing backend"
	xrun modprobe xiw_offload_test
}

# An RDMA device of another driver on the netdev (rxe here, standing in
# for irdma on an X722 or E810), then xiw on it.
t_hw_check() {
	local rc pol=/sys/module/xiw/parameters/hw_iwarp_policy
	need_module rdma_rxe || skip "no rdma_rxe module"
	add_veth xhw0 xhw1
	record netdev xhw1
	# No other device: nothing to say.
	log_mark
	xiw_add xhwa xhw1
	grep -q "is served by" < <(log_since) && fail "a warning without another device"
	xiw_del xhwa
	xrun rdma link add xhwr type rxe netdev xhw1
	record rdma xhwr
	wait_for "$WAIT_TIMEOUT" ibdev_exists xhwr
	set_knob $pol warn
	log_mark
	xiw_add xhwa xhw1 || fail "policy warn refused the device"
	grep -q "netdev xhw1 is served by RDMA device xhwr .*xiw shares the port" < <(log_since) ||
		fail "no warning naming the device"
	xiw_del xhwa
	set_knob $pol refuse
	log_mark
	rc=0
	rdma link add xhwa type xiw netdev xhw1 2>"$XIW_TMP/err" || rc=$?
	restore_knobs
	if ((rc == 0)); then
		record rdma xhwa
		fail "policy refuse let the device be added"
	fi
	grep -q "Device or resource busy" "$XIW_TMP/err" || fail "refused with: $(cat "$XIW_TMP/err")"
	grep -q "netdev xhw1 is served by RDMA device xhwr .*refused" < <(log_since) ||
		fail "no log line for the refusal"
	ibdev_gone xhwa || fail "xhwa exists after the refusal"
	# Bad policy values are refused.
	if (echo sometimes >$pol) 2>/dev/null; then
		fail "hw_iwarp_policy=sometimes accepted"
	fi
}

ktap_header
ktap_plan 3
run_case "emulated backend: CRC, segmentation and placement carry rping and ib_write_bw" t_emulated
run_case "a declining or withdrawn backend leaves connections to software" t_fallback
run_case "another RDMA device on the port: warn or refuse (rxe for irdma)" t_hw_check
ktap_finish
