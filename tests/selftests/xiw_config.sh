#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_config.sh: the per-device protocol settings in sysfs
# (/sys/class/infiniband/DEV/<setting>, xiw_config.c), and what each one
# changes on the wire.
#
#   ns A: xga0 192.0.2.1/24 -- xiw device xga (server)
#   ns B: xgb0 192.0.2.2/24 -- xiw device xgb (client, the one configured)
#
# Traffic is captured on xgb0 with dumpcap and listed with `xiw-peer
# decode`; TCP segments are counted with tshark.
#
# Cases:
#   settings: every setting reads its module parameter default, takes each
#     valid value, refuses bad ones with EINVAL and one log line naming
#     the setting, and leaves the other device alone.
#   mpa_rev, mpa_crc, mpa_markers: the client's MPA Request and the
#     framing of what follows show each value.
#   mpa_p2p, mpa_p2p_rtr: the Request offers P2P with the chosen RTR, and
#     the client's first FPDU is that RTR (zero-length Write, Read Request
#     or Send).
#   tx_batch, nagle: 5120 Sends of 64 octets (ib_send_bw, 128 in flight,
#     posted 32 to a call so that the transmit engine finds them queued);
#     FPDUs per TCP segment with tx_batch 32 against 1, and with Nagle on
#     against off.
#   soft_rnr_ms: xiw-peer's rnr.* scenarios against a device with
#     soft_rnr_ms 3000 (a Send waits for its receive; without one the
#     TERMINATE comes after the wait, or at once when the peer closes
#     its side behind the Send), the soft_rnr_* counters, and the
#     RFC's immediate TERMINATE with soft_rnr_ms 0.
#   mpa_timeout_ms: bounds and defaults here; its waits run in xiw_cm.sh
#     (the Request and Reply timeouts, shortened to 2 s).
. "$(dirname "$0")/lib.sh"

require_env
command -v rping >/dev/null || ktap_skip_all "rping not installed"
command -v ib_send_bw >/dev/null || ktap_skip_all "perftest not installed"
command -v dumpcap >/dev/null || ktap_skip_all "dumpcap not installed"
command -v tshark >/dev/null || ktap_skip_all "tshark not installed"
need_tool PEER xiw-peer
xiw_tool TARGET xiw-target || :
need_module xiw || ktap_skip_all "cannot load xiw"
need_module veth || ktap_skip_all "no veth module"
need_module rdma_ucm || ktap_skip_all "no rdma_ucm module"

A=192.0.2.1
B=192.0.2.2
PARAMS=/sys/module/xiw/parameters

# set_cfg DEV NAME VALUE: write a setting (logged like a command).
set_cfg() {
	xrun sh -c "echo $3 > $IBDIR/$1/$2"
}

get_cfg() { cat "$IBDIR/$1/$2"; }

# ---- settings ------------------------------------------------------------

# bad_logged NAME VALUE: VALUE, written to xgb's NAME once more, is
# refused, and the kernel log has the line naming NAME.  The driver logs
# those lines rate-limited (at most 10 in 5 s): a line dropped because a
# test wrote many bad values in a row shows once a later write is logged.
bad_logged() {
	! (echo "$2" >"$IBDIR/xgb/$1") 2>/dev/null &&
		grep -q "xiw: xgb: $1: invalid value, expected" < <(log_since)
}

# knob NAME DEFAULT "GOOD..." "BAD...": the checks of one setting on xgb.
knob() {
	local name=$1 def=$2 good=$3 bad=$4 v got before
	got=$(get_cfg xgb "$name")
	[ "$got" = "$def" ] || fail "$name reads '$got', the module default is '$def'"
	[ "$(get_cfg xgb "$name")" = "$(cat "$PARAMS/$name")" ] ||
		fail "$name differs from its module parameter"
	for v in $good; do
		set_cfg xgb "$name" "$v" || fail "$name=$v refused"
		got=$(get_cfg xgb "$name")
		[ "$got" = "$v" ] || fail "$name=$v reads back '$got'"
	done
	before=$(get_cfg xgb "$name")
	for v in $bad; do
		log_mark
		# bash, not sh: dash reports every failed write as an I/O error.
		if (echo "$v" >"$IBDIR/xgb/$name") 2>"$XIW_TMP/err"; then
			fail "$name='$v' accepted"
		fi
		grep -q "Invalid argument" "$XIW_TMP/err" ||
			fail "$name='$v': $(cat "$XIW_TMP/err"), not EINVAL"
		wait_for 12 bad_logged "$name" "$v" ||
			fail "$name='$v': no log line naming the setting"
		[ "$(get_cfg xgb "$name")" = "$before" ] || fail "$name changed by a bad write"
	done
	[ "$(get_cfg xga "$name")" = "$def" ] || fail "writing xgb's $name changed xga's"
	set_cfg xgb "$name" "$def"
}

t_settings() {
	xiw_ns_pair xga0 xgb0 $A $B xga xgb
	knob mpa_rev 2 "1 2" "0 3 two -1"
	knob mpa_crc off "prefer require strict off" "on 1 preferred"
	knob mpa_markers off "prefer require off" "strict yes"
	knob mpa_p2p 0 "1 0" "2 maybe"
	knob mpa_p2p_rtr write "read send write" "none 0"
	knob tx_batch 32 "1 64 8 32" "0 65 -1 x"
	knob nagle 0 "1 0" "2 x"
	knob soft_rnr_ms 0 "1 10000 3000 0" "10001 -5 x"
	knob tx_zcopy auto "on off auto" "1 yes copy"
	knob mpa_timeout_ms 10000 "100 300000 2500 10000" "99 300001 0 x"
	# A bad module parameter is refused the same way.
	if (echo 0 >$PARAMS/tx_batch) 2>/dev/null; then
		fail "module parameter tx_batch=0 accepted"
	fi
	[ "$(cat $PARAMS/tx_batch)" = 32 ] || fail "bad module parameter changed tx_batch"
	# A new device starts from the module parameters.
	set_knob $PARAMS/tx_batch 8
	xrun ip -n "$NSA" link add xgc0 type dummy
	xrun ip netns exec "$NSA" rdma link add xgc type xiw netdev xgc0
	record rdma xgc
	wait_for "$WAIT_TIMEOUT" ibdev_exists xgc
	restore_knobs
	[ "$(get_cfg xgc tx_batch)" = 8 ] || fail "new device ignored tx_batch=8"
	[ "$(get_cfg xgb tx_batch)" = 32 ] || fail "module parameter changed an existing device"
}

# ---- the wire --------------------------------------------------------------

# capture: dumpcap on xgb0 (ns B) into $XIW_TMP/wire.pcap.
capture() { capture_start "$NSB" xgb0 "$XIW_TMP/wire.pcap"; }

# decode: end the capture, decode it into $XIW_TMP/decode.txt.
decode() {
	capture_stop
	"$PEER" decode "$XIW_TMP/wire.pcap" >"$XIW_TMP/decode.txt" 2>&1 ||
		{ tail -n 20 "$XIW_TMP/decode.txt" | sed 's/^/# /'; fail "xiw-peer decode failed"; }
}

# client_dir: the client's direction of the decode (its first block that
# starts with B's address).
client_dir() {
	awk -v b="$B:" 'index($0, b) == 1 && / > / { on = 1; print; next }
		/^$/ { if (on) exit } on' "$XIW_TMP/decode.txt"
}

# rping_once: one verified rping round from ns B (xgb) to ns A (xga).
rping_once() {
	local rc=0 bg
	bg_run bg ip netns exec "$NSA" rping -s -a $A -p 7300 -C 1 -S 200 -v >"$XIW_TMP/rs" 2>&1
	wait_for 20 listening 7300 "$NSA"
	timeout 60 ip netns exec "$NSB" rping -c -a $A -p 7300 -C 1 -S 200 -v \
		>"$XIW_TMP/rc" 2>&1 || rc=$?
	bg_wait "$bg" || true
	((rc == 0)) || { sed 's/^/# /' "$XIW_TMP/rc"; fail "rping exit $rc"; }
	grep -q "ping data" "$XIW_TMP/rc" || fail "rping verified no round"
}

# wire_with "NAME=VALUE..." PATTERN...: set xgb's settings, one rping round
# under capture; the client direction of the decode must match every
# extended regular expression PATTERN.
wire_with() {
	local kv p
	for kv in $1; do
		set_cfg xgb "${kv%%=*}" "${kv#*=}"
	done
	shift
	capture
	rping_once
	decode
	client_dir >"$XIW_TMP/client.txt"
	sed 's/^/#   /' "$XIW_TMP/client.txt" | head -n 6
	for p in "$@"; do
		grep -qE "$p" "$XIW_TMP/client.txt" ||
			{ sed 's/^/# /' "$XIW_TMP/decode.txt" | head -n 40; fail "no '$p' in the client's stream"; }
	done
}

# defaults: every setting of both devices back to the module defaults.
defaults() {
	local d n
	for d in xga xgb; do
		for n in mpa_rev mpa_crc mpa_markers mpa_p2p mpa_p2p_rtr tx_batch nagle soft_rnr_ms tx_zcopy mpa_timeout_ms; do
			cat "$PARAMS/$n" >"$IBDIR/$d/$n"
		done
	done
}

t_mpa() {
	xiw_ns_pair xga0 xgb0 $A $B xga xgb
	wire_with "" "^MPA Request rev 2 crc=0 markers=0" "framing crc=0 .* markers=0"
	wire_with "mpa_rev=1" "^MPA Request rev 1 crc=0 markers=0"
	defaults
	wire_with "mpa_crc=prefer" "^MPA Request rev 2 crc=1" "framing crc=1"
	defaults
	# A server that requires CRC takes a client that does not ask: the
	# C flag of its Reply turns CRC on in both directions.
	set_cfg xga mpa_crc require
	wire_with "" "^MPA Request rev 2 crc=0" "framing crc=1"
	defaults
	# Markers both ways need the server to accept them too.
	set_cfg xga mpa_markers prefer
	wire_with "mpa_markers=prefer" "^MPA Request rev 2 crc=0 markers=1" "framing crc=0 .* markers=1"
}

t_p2p() {
	xiw_ns_pair xga0 xgb0 $A $B xga xgb
	wire_with "mpa_p2p=0" "^MPA Request rev 2 .* enhanced p2p=0"
	wire_with "mpa_p2p=1 mpa_p2p_rtr=write" "^MPA Request rev 2 .* enhanced p2p=1" \
		"^  #1 @[0-9]+ RDMA Write .* len 0"
	wire_with "mpa_p2p=1 mpa_p2p_rtr=read" "^MPA Request rev 2 .* enhanced p2p=1" \
		"^  #1 @[0-9]+ RDMA Read Request"
	wire_with "mpa_p2p=1 mpa_p2p_rtr=send" "^MPA Request rev 2 .* enhanced p2p=1" \
		"^  #1 @[0-9]+ Send .* MO 0 L len 0"
}

# fpdus_per_seg: RATIO = 100 x the FPDUs the client sent per TCP segment
# with data.
fpdus_per_seg() {
	local fpdus segs
	fpdus=$(awk -v b="$B:" 'index($0, b) == 1 && / > / { on = 1; next }
		/^$/ { on = 0 }
		on && / segments, .* octets, / { n += $1 } END { print n + 0 }' "$XIW_TMP/decode.txt")
	segs=$(tshark -r "$XIW_TMP/wire.pcap" -Y "ip.src == $B && tcp.len > 0" 2>/dev/null | wc -l)
	((segs > 0)) || fail "no TCP data segments from the client"
	diag "client: $fpdus FPDUs in $segs TCP segments"
	RATIO=$((100 * fpdus / segs))
}

# sends_with "NAME=VALUE...": 5120 Sends of 64 octets under capture;
# sets RATIO (fpdus_per_seg).
sends_with() {
	local kv try bg
	for kv in $1; do
		set_cfg xgb "${kv%%=*}" "${kv#*=}"
	done
	capture
	for try in 1 2 3; do
		bg_run bg ip netns exec "$NSA" timeout 120 \
			ib_send_bw -R -d xga -s 64 -n 5120 -t 128 -l 32 >"$XIW_TMP/srv" 2>&1
		wait_for 20 listening 18515 "$NSA" ||
			{ sed 's/^/# server: /' "$XIW_TMP/srv"; fail "ib_send_bw server not listening"; }
		timeout 120 ip netns exec "$NSB" ib_send_bw -R -d xgb -s 64 -n 5120 -t 128 -l 32 $A \
			>"$XIW_TMP/out" 2>&1 && break
		# perftest's own race (see xiw_rdma.sh): its second connection
		# can be refused; start both sides again.
		grep -q 'RDMA_CM_EVENT_REJECTED; error: -111' "$XIW_TMP/out" ||
			{ sed 's/^/# /' "$XIW_TMP/out"; fail "ib_send_bw failed"; }
		((try < 3)) || fail "ib_send_bw refused three times"
		# Both the server and the capture, which starts anew.
		stop_bg
		capture
	done
	bg_wait "$bg" || true
	decode
	fpdus_per_seg
}

t_batch_nagle() {
	local b32 b1 n1
	xiw_ns_pair xga0 xgb0 $A $B xga xgb
	sends_with "tx_batch=32 nagle=0"
	b32=$RATIO
	sends_with "tx_batch=1 nagle=0"
	b1=$RATIO
	sends_with "tx_batch=1 nagle=1"
	n1=$RATIO
	diag "FPDUs per TCP segment x100: tx_batch 32: $b32, tx_batch 1: $b1, tx_batch 1 with Nagle: $n1"
	((b32 >= 2 * b1)) || fail "tx_batch 32 ($b32) does not gather twice as many FPDUs per segment as tx_batch 1 ($b1)"
	((n1 >= 2 * b1)) || fail "Nagle on ($n1) does not gather twice as many FPDUs per segment as off ($b1)"
}

# ---- soft-RNR --------------------------------------------------------------

peer_run() {
	local log=$1 rc=0
	shift
	echo "# + xiw-peer run $*"
	timeout 600 "$PEER" run --target "$TARGET" --quiet "$@" >"$log" 2>"$log.err" || rc=$?
	sed 's/^/# /' "$log"
	return $rc
}

t_soft_rnr() {
	local s0 t0 d0 s1 t1 d1
	need_tool TARGET xiw-target
	xiw_on_dummies xgd0 192.0.2.9 xgr
	set_cfg xgr soft_rnr_ms 3000
	s0=$(hw_counter xgr soft_rnr_stalls) t0=$(hw_counter xgr soft_rnr_timeouts)
	d0=$(hw_counter xgr term_sent_ddp)
	peer_run "$XIW_TMP/rnr.log" --addr 192.0.2.9 --soft-rnr 3000 --filter rnr. ||
		fail "soft-RNR scenarios failed"
	grep -q "^# Totals: pass:3 fail:0" "$XIW_TMP/rnr.log" || fail "not all three rnr scenarios ran"
	s1=$(hw_counter xgr soft_rnr_stalls) t1=$(hw_counter xgr soft_rnr_timeouts)
	d1=$(hw_counter xgr term_sent_ddp)
	diag "soft_rnr_stalls $s0 -> $s1, soft_rnr_timeouts $t0 -> $t1, term_sent_ddp $d0 -> $d1"
	# Three stalls; the timeout and the FIN end theirs in a TERMINATE.
	((s1 - s0 == 3)) || fail "soft_rnr_stalls moved by $((s1 - s0)), expected 3"
	((t1 - t0 == 2)) || fail "soft_rnr_timeouts moved by $((t1 - t0)), expected 2"
	((d1 - d0 == 2)) || fail "term_sent_ddp moved by $((d1 - d0)), expected 2"
	# Off again: the RFC's TERMINATE at once, and no stall counted.
	set_cfg xgr soft_rnr_ms 0
	peer_run "$XIW_TMP/nobuf.log" --addr 192.0.2.9 --filter ddp.msn_no_buffer ||
		fail "no-buffer scenarios failed with soft_rnr_ms 0"
	[ "$(hw_counter xgr soft_rnr_stalls)" = "$s1" ] || fail "a stall counted with soft_rnr_ms 0"
}

ktap_header
ktap_plan 5
run_case "settings: defaults, valid values, EINVAL and a log line for bad ones" t_settings
run_case "mpa_rev, mpa_crc, mpa_markers change the MPA Request and the framing" t_mpa
run_case "mpa_p2p, mpa_p2p_rtr: P2P offered, the chosen RTR sent first" t_p2p
run_case "tx_batch and nagle change FPDUs per TCP segment" t_batch_nagle
run_case "soft_rnr_ms: a Send waits for its receive; counters; off again" t_soft_rnr
ktap_finish
