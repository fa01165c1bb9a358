#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_cm.sh: the iWARP connection manager.  A raw-TCP MPA peer
# (mpa_peer.py) talks to rping servers and clients on xiw devices: valid
# rev 2 and rev 1 Requests get matching Replies, malformed ones a closed
# connection and a log line while the server lives on, refusals and
# timeouts reach the initiator quickly, a rev 2 Request that is reset is
# retried with rev 1; then rping between two xiw devices over IPv4 and
# IPv6, the first FPDU behind the MPA frame, a netdev removed under a
# connect that waits for its Reply, device removal with a listener and
# connections in every phase, and a QP named by number in a connect of
# another user's process.
#
#   xcm0 (dummy) 192.0.2.1    2001:db8:1::1  -- xiw device xa
#   xcm1 (dummy) 198.51.100.1 2001:db8:2::1  -- xiw device xb
#   (traffic between them goes over loopback)
. "$(dirname "$0")/lib.sh"

require_env
command -v rping >/dev/null || ktap_skip_all "rping not installed"
command -v python3 >/dev/null || ktap_skip_all "python3 not installed"
need_module xiw || ktap_skip_all "cannot load xiw"
need_module dummy || ktap_skip_all "no dummy module"
need_module rdma_ucm || ktap_skip_all "no rdma_ucm module"

PEER="python3 $(cd "$(dirname "$0")" && pwd)/mpa_peer.py"
A4=192.0.2.1
B4=198.51.100.1
A6=2001:db8:1::1
B6=2001:db8:2::1
PORT=7174
xiw_tool TARGET xiw-target || :
rping_servers=()

with_devs() {
	add_dummy xcm0
	add_dummy xcm1
	xrun ip addr add $A4/24 dev xcm0
	xrun ip addr add $B4/24 dev xcm1
	xrun ip addr add $A6/64 dev xcm0 nodad
	xrun ip addr add $B6/64 dev xcm1 nodad
	xiw_add xa xcm0
	xiw_add xb xcm1
	"$@"
}

# rping_server ADDR [PORT]: a persistent rping server in the background
# (in rping_servers, for server_alive).
rping_server() {
	local port=${2:-$PORT} pid
	bg_run pid rping -s -P -a "$1" -p "$port" >"$XIW_TMP/server-$port.log" 2>&1
	rping_servers+=("$pid")
	wait_for "$WAIT_TIMEOUT" listening "$port" || fail "rping server on $1:$port not listening"
}

# peer ARG...: run mpa_peer.py; it must print "as expected".
peer() {
	local out
	xget out $PEER "$@" || fail "mpa_peer.py $*"
	grep -q "as expected" <<<"$out" || fail "mpa_peer.py $*: unexpected result"
}

server_alive() {
	local p
	for p in "${rping_servers[@]}"; do
		kill -0 "$p" 2>/dev/null || fail "rping server died"
	done
}

t_valid_rev2() {
	rping_server $A4
	peer connect $A4 $PORT --send req2 --expect reply2
	server_alive
}

t_valid_rev1() {
	rping_server $A4
	peer connect $A4 $PORT --send req1 --expect reply1
	server_alive
}

t_p2p_markers() {
	rping_server $A4
	# P2P with a Read RTR is accepted as responder...
	peer connect $A4 $PORT --send p2p --expect reply2
	# ...markers are refused with an MPA reject.
	peer connect $A4 $PORT --send markers --expect reject
	server_alive
	# xa's counters saw exactly that one reject.
	local n
	n=$(hw_counter xa mpa_rejects_sent)
	diag "xa mpa_rejects_sent $n"
	[ "$n" = 1 ] || fail "xa counted $n MPA rejects sent, not 1"
}

t_malformed() {
	local kind n
	rping_server $A4
	log_mark
	for kind in badkey badhdr badrev bigpd garbage reply truncfin; do
		peer connect $A4 $PORT --send $kind --expect close --timeout 8
	done
	server_alive
	# The server still works.
	peer connect $A4 $PORT --send req2 --expect reply2
	n=$(log_since | grep -c "malformed MPA Request" || true)
	diag "$n log lines for malformed Requests"
	((n >= 1)) || fail "no log line for malformed MPA Requests"
	((n <= 10)) || fail "malformed Requests not rate limited"
}

# mpa_wait DEV: shorten DEV's MPA Request/Reply wait from its default of
# 10 s to 2 s, so that a timeout case costs 2 s of the tier, not 10.
mpa_wait() {
	local def
	def=$(cat "$IBDIR/$1/mpa_timeout_ms")
	[ "$def" = 10000 ] || fail "$1: mpa_timeout_ms $def, not the default 10000"
	echo "# + echo 2000 > $IBDIR/$1/mpa_timeout_ms"
	echo 2000 >"$IBDIR/$1/mpa_timeout_ms" || fail "$1: mpa_timeout_ms not writable"
}

t_request_timeout() {
	local start ms
	mpa_wait xa
	rping_server $A4
	log_mark
	start=$(now_ms)
	peer connect $A4 $PORT --send trunc --expect close --timeout 45
	ms=$(($(now_ms) - start))
	diag "closed after ${ms} ms"
	# 2 s; TCG on a busy host stretches it.
	((ms >= 1900 && ms <= 15000)) || fail "MPA Request timeout took ${ms} ms"
	log_since | grep -q "xiw: xa: .*no MPA Request within 2000 ms" ||
		fail "no log line for the Request timeout"
	server_alive
}

t_closed_port() {
	local start secs out
	start=$EPOCHSECONDS
	echo "# + rping -c -a $A4 -p $((PORT + 1)) -C 1"
	out=$(timeout 20 rping -c -a $A4 -p $((PORT + 1)) -C 1 2>&1) || true
	diag "$out"
	secs=$((EPOCHSECONDS - start))
	diag "rping client gave up after ${secs}s"
	# A refused SYN ends it at once; 30 s would be the TCP connect timeout.
	((secs < 25)) || fail "connect to a closed port took ${secs}s"
	! grep -q "ping data" <<<"$out" || fail "ping data without a server"
}

t_two_listeners() {
	rping_server $A4
	rping_server $B4
	peer connect $A4 $PORT --send req2 --expect reply2
	peer connect $B4 $PORT --send req2 --expect reply2
	server_alive
}

# rping_client_vs MODE MAXSECS: an rping client against mpa_peer.py serve.
rping_client_vs() {
	local mode=$1 max=$2 start secs out pid
	bg_run pid $PEER serve $A4 $PORT --mode "$mode" --timeout 30 >"$XIW_TMP/peer.log" 2>&1
	wait_for "$WAIT_TIMEOUT" listening $PORT || fail "mpa_peer.py not listening"
	start=$EPOCHSECONDS
	echo "# + rping -c -a $A4 -I $B4 -p $PORT -C 1 -v"
	timeout 40 rping -c -a $A4 -I $B4 -p $PORT -C 1 -v >"$XIW_TMP/rping.out" 2>&1 || true
	secs=$((EPOCHSECONDS - start))
	out=$(cat "$XIW_TMP/rping.out")
	diag "$out" "rping client finished after ${secs}s"
	bg_wait "$pid" ||
		{ diag "$(cat "$XIW_TMP/peer.log")"; fail "mpa_peer.py serve --mode $mode"; }
	diag "$(cat "$XIW_TMP/peer.log")"
	((secs <= max)) || fail "rping client took ${secs}s"
	RPING_OUT=$out
}

t_rejected() {
	rping_client_vs reject 8
	grep -q "REJECTED" <<<"$RPING_OUT" || fail "rping did not see a reject"
	local n
	n=$(hw_counter xb mpa_rejects_recv)
	diag "xb mpa_rejects_recv $n"
	[ "$n" = 1 ] || fail "xb counted $n MPA rejects received, not 1"
}

t_reply_timeout() {
	mpa_wait xb
	rping_client_vs silent 15
	! grep -q "ping data" <<<"$RPING_OUT" || fail "ping data without a Reply"
}

t_rev1_retry() {
	rping_client_vs v1only 30
	grep -q "rev 1 retry connected" "$XIW_TMP/peer.log" || fail "no rev 1 retry"
}

# foreign_connect USER QPN PORT: xiw-target as USER (setpriv; "" for
# root), listening on A4:PORT, connects a cm_id of its own that has no QP
# to A4:PORT+100 (xa, the QP's device; nothing listens there) and names
# QP QPN; prints xiw-target's answer to the connect.
foreign_connect() {
	local user=$1 qpn=$2 port=$3 out as=()
	[ -z "$user" ] || as=(setpriv --reuid="$user" --regid="$user" --clear-groups)
	out=$(printf 'connect %s %s qpn=%s\nquit\n' $A4 $((port + 100)) "$qpn" |
	      timeout 60 "${as[@]}" "$TARGET" -p "$port" $A4 2>&1) || true
	grep -q '^ready' <<<"$out" || fail "xiw-target as ${user:-root} did not start: $out"
	sed -n 2p <<<"$out"
}

# Another user's process names the QP number of an idle QP it does not
# own in its rdma_connect() (rdma_ucm passes the number on unchecked, and
# iw_cm looks it up by number): xiw refuses, iw_cm fails the connect with
# EINVAL.  A process of the QP's own user may (the QP is its user's), and
# does connect it: the same lookup is not refusing everything.
t_foreign_qp() {
	local line qpn got
	need_tool TARGET xiw-target
	id -u nobody >/dev/null 2>&1 || skip "no user nobody"
	coproc VICTIM { exec "$TARGET" -p 7190 $A4 2>&1; }
	bg_add $!
	read -r -t 30 line <&"${VICTIM[0]}" || fail "the QP owner's xiw-target did not start"
	[[ $line == ready* ]] || fail "xiw-target: $line"
	echo idle >&"${VICTIM[1]}"
	read -r -t 30 line <&"${VICTIM[0]}" || fail "no answer to idle"
	[[ $line == "ok qpn="* ]] || fail "idle: $line"
	qpn=${line#ok qpn=}
	diag "QP $qpn created by root, idle"
	got=$(foreign_connect "$(id -u nobody)" "$qpn" 7191)
	diag "nobody naming QP $qpn: $got"
	[[ $got == "err connect: Invalid argument" ]] || fail "another user's connect with QP $qpn: $got"
	got=$(foreign_connect "" "$qpn" 7192)
	diag "root naming QP $qpn: $got"
	[[ $got == ok* ]] || fail "its own user's connect with QP $qpn: $got"
	echo quit >&"${VICTIM[1]}"
}

# rping_pair SERVER_ADDR CLIENT_ADDR: 10 pings between xa and xb.
rping_pair() {
	local out n
	rping_server "$1"
	xget out timeout 60 rping -c -a "$1" -I "$2" -p $PORT -v -C 10 || true
	n=$(grep -c "ping data" <<<"$out" || true)
	((n == 10)) || fail "$n of 10 pings"
	server_alive
}

t_rping_v4() { rping_pair $A4 $B4; }
t_rping_v6() { rping_pair $A6 $B6; }

t_first_fpdu_initiator() {
	rping_server $A4
	peer connect $A4 $PORT --send req2 --expect reply2 --rping-send
}

t_first_fpdu_responder() {
	rping_client_vs badfpdu 30
	grep -q "TERMINATE as expected" "$XIW_TMP/peer.log" || fail "no TERMINATE for the FPDU behind the Reply"
}

# The client's netdev is deleted while its connect waits for the MPA
# Reply (mpa_peer.py serve silent, the default MPA wait of 10 s): the
# connect fails at once with CONNECT_ERROR -ENODEV, and `ip link del`,
# which returns when the kernel has dropped every reference on the netdev,
# does not wait for the MPA timeout (ib_core's unregistration of xb would
# wait for the connect otherwise).
t_netdev_del_connecting() {
	local peer_pid rping_pid start ms
	bg_run peer_pid $PEER serve $A4 $PORT --mode silent --timeout 30 >"$XIW_TMP/peer.log" 2>&1
	wait_for "$WAIT_TIMEOUT" listening $PORT || fail "mpa_peer.py not listening"
	echo "# + rping -c -a $A4 -I $B4 -p $PORT -C 1 -v &"
	bg_run rping_pid timeout 60 rping -c -a $A4 -I $B4 -p $PORT -C 1 -v \
		>"$XIW_TMP/rping.out" 2>&1
	wait_for "$WAIT_TIMEOUT" grep -q "Request:" "$XIW_TMP/peer.log" ||
		fail "no MPA Request reached mpa_peer.py"
	start=$(now_ms)
	xrun ip link del xcm1
	ms=$(($(now_ms) - start))
	diag "ip link del xcm1 took ${ms} ms"
	wait_for "$WAIT_TIMEOUT" ibdev_gone xb || fail "xb not removed with its netdev"
	bg_wait "$rping_pid" || :
	diag "$(cat "$XIW_TMP/rping.out")"
	grep -q "RDMA_CM_EVENT_CONNECT_ERROR, error -19" "$XIW_TMP/rping.out" ||
		fail "rping did not see CONNECT_ERROR -ENODEV"
	# Without the cut the MPA wait's 10 s; TCG on a busy host stretches
	# the rest.
	((ms < 6000)) || fail "the netdev's removal waited ${ms} ms"
	stop_bg "$peer_pid"
	diag "$(cat "$XIW_TMP/peer.log")"
}

# Device removal with a listener, a connection waiting for its MPA
# Request, one waiting for accept and one established.
t_link_del_busy() {
	local p pid
	rping_server $A4
	bg_run pid $PEER connect $A4 $PORT --send trunc --expect close --timeout 20 >/dev/null 2>&1
	bg_run pid rping -c -a $A4 -I $B4 -p $PORT -C 1000000 -S 64 >/dev/null 2>&1
	wait_for "$WAIT_TIMEOUT" sh -c "rdma res show cm_id | grep -q 'state CONNECT\|state ESTABLISHED'" || true
	xrun rdma res show cm_id || true
	rdma link del xa &
	p=$!
	# rping may not handle DEVICE_REMOVAL: give it time, then stop it.
	if ! wait_for 10 ibdev_gone xa; then
		stop_bg
	fi
	wait_for "$WAIT_TIMEOUT" ibdev_gone xa || fail "xa not removed"
	wait "$p" || true
	stop_bg
	xiw_del xb
}

ktap_header
ktap_plan 17
run_case "rev 2 Request gets a rev 2 Reply with IRD/ORD" with_devs t_valid_rev2
run_case "rev 1 Request gets a rev 1 Reply" with_devs t_valid_rev1
run_case "P2P accepted, markers rejected" with_devs t_p2p_markers
run_case "malformed Requests: closed, logged, server lives" with_devs t_malformed
run_case "truncated Request closed after the MPA timeout" with_devs t_request_timeout
run_case "connect to a closed port fails fast" with_devs t_closed_port
run_case "two devices listen on the same port" with_devs t_two_listeners
run_case "MPA reject reaches the rping client" with_devs t_rejected
run_case "missing MPA Reply times out" with_devs t_reply_timeout
run_case "reset rev 2 Request is retried with rev 1" with_devs t_rev1_retry
run_case "rping between two xiw devices, IPv4" with_devs t_rping_v4
run_case "rping between two xiw devices, IPv6" with_devs t_rping_v6
run_case "first FPDU after MPA (peer initiator)" with_devs t_first_fpdu_initiator
run_case "FPDU in the Reply's segment (peer responder)" with_devs t_first_fpdu_responder
run_case "netdev removal fails a connect awaiting its MPA Reply" with_devs t_netdev_del_connecting
run_case "rdma link del with listener and connections" with_devs t_link_del_busy
run_case "another user cannot connect an idle QP by its number" with_devs t_foreign_qp
ktap_finish
