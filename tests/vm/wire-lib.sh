# SPDX-License-Identifier: GPL-2.0
#
# Helpers for two guests on one virtual wire (tests/vm/run --wire), sourced
# by the host scripts that start them (tests/vm/wire, tests/vm/bench) and
# by the guest scripts that walk their steps in step (wire-guest.sh,
# bench-guest.sh).
#
# Host:   wire_ports prints two free UDP ports next to each other on the
#         host's loopback, the first of which is the pair's base.
#         wire_wait_pair PA PB DIRA DIRB waits for the two guests' runs
#         of tests/vm/run (background pids PA and PB, their --keep-log
#         directories DIRA and DIRB) and sets WIRE_RC_A and WIRE_RC_B to
#         their exit codes.  A guest whose run ends badly while the other
#         still runs (a panic, its timeout) leaves that one waiting for it
#         until its own timeout: the other's VM is stopped then.
# Guests: wire_nic MAC prints the name of the NIC whose address is MAC
#         (the wire's), loading virtio_net and waiting up to 10 s for it;
#         nothing when there is none.
#         wire_meet a|b ADDR PORT [SECONDS] makes the two meet: a accepts
#         one TCP connection on ADDR:PORT, b connects to it, retrying
#         until a listens (the other guest may still be booting, or still
#         finishing the step before).  Both return 0 once they met, 1
#         when SECONDS (default 600) pass first.  Run it in the network
#         namespace the wire's NIC is in.  A side that must go on while
#         it waits to be met runs `timeout S python3 -c "$WIRE_ACCEPT_PY"
#         ADDR PORT &` (wire_meet a's listener) and kills it when done.

wire_ports() {
	python3 -c '
import socket
for p in range(20000, 60000, 2):
    try:
        s1 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s1.bind(("127.0.0.1", p))
        s2 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s2.bind(("127.0.0.1", p + 1))
    except OSError:
        continue
    print(p)
    break
'
}

WIRE_ACCEPT_PY='
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1)
c, _ = s.accept()
c.close()
'

wire_meet() {
	local t=${4:-600} end
	if [ "$1" = a ]; then
		timeout "$t" python3 -c "$WIRE_ACCEPT_PY" "$2" "$3"
		return
	fi
	end=$((SECONDS + t))
	while ((SECONDS < end)); do
		timeout 2 bash -c "exec 3<>/dev/tcp/$2/$3" 2>/dev/null && return 0
		sleep 0.5
	done
	return 1
}

wire_wait_pair() {
	local first rc=0 other dir
	wait -n -p first "$1" "$2" || rc=$?
	if [ "$first" = "$1" ]; then
		WIRE_RC_A=$rc other=$2 dir=$4
	else
		WIRE_RC_B=$rc other=$1 dir=$3
	fi
	if ((rc)) && [ -s "$dir/qemu.pid" ]; then
		echo "wire: guest ${dir##*/}'s peer ended with $rc first: stopping its VM" >&2
		kill "$(cat "$dir/qemu.pid")" 2>/dev/null || :
	fi
	rc=0
	wait "$other" || rc=$?
	if [ "$other" = "$1" ]; then
		WIRE_RC_A=$rc
	else
		WIRE_RC_B=$rc
	fi
}

wire_nic() {
	local d
	for _ in $(seq 100); do
		for d in /sys/class/net/*; do
			if [ "$(cat "$d/address" 2>/dev/null)" = "$1" ]; then
				echo "${d##*/}"
				return 0
			fi
		done
		modprobe virtio_net 2>/dev/null
		sleep 0.1
	done
}
