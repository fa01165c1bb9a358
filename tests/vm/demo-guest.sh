#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make demo` (run inside the VM by tests/vm/run): two xiw
# devices on the two ends of a veth pair in two network namespaces, shown
# through rdma-core, then an rping and an ib_write_bw between them.
set -euo pipefail

show() { printf '\n$ %s\n' "$*"; "$@"; }
listening() {
	for _ in $(seq 100); do
		ip netns exec demo-a ss -Hltn "sport = :$1" | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

show modprobe xiw
ip netns add demo-a
ip netns add demo-b
ip link add xdemo0 netns demo-a type veth peer name xdemo1 netns demo-b
ip -n demo-a addr add 192.0.2.1/24 dev xdemo0
ip -n demo-b addr add 192.0.2.2/24 dev xdemo1
ip -n demo-a link set xdemo0 up
ip -n demo-b link set xdemo1 up

show ip netns exec demo-a rdma link add xiw0 type xiw netdev xdemo0
show ip netns exec demo-b rdma link add xiw1 type xiw netdev xdemo1
show rdma link show
show ibv_devices
show ibv_devinfo -d xiw0

echo
echo "# rping: xiw1 (192.0.2.2) -> xiw0 (192.0.2.1), 5 verified round trips"
ip netns exec demo-a rping -s -a 192.0.2.1 -p 7174 -C 5 >/dev/null 2>&1 &
listening 7174
show ip netns exec demo-b rping -c -a 192.0.2.1 -p 7174 -C 5 -v
wait

echo
echo "# ib_write_bw: 64 KiB RDMA Writes from xiw1 to xiw0"
ip netns exec demo-a ib_write_bw -R -d xiw0 -n 2000 -s 65536 >/dev/null 2>&1 &
listening 18515
show ip netns exec demo-b ib_write_bw -R -d xiw1 -n 2000 -s 65536 192.0.2.1
wait

show rdma link delete xiw1
show rdma link delete xiw0
ip netns del demo-a
ip netns del demo-b
