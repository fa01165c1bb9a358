#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make demo` (run inside the VM by tests/vm/run).
set -euo pipefail

show() { printf '\n$ %s\n' "$*"; "$@"; }

show modprobe xiw
ip link add xdemo0 type dummy
ip addr add 192.0.2.1/24 dev xdemo0
ip link set xdemo0 up
ip link add xveth0 type veth peer name xveth1
ip addr add 198.51.100.1/24 dev xveth0
ip addr add 198.51.100.2/24 dev xveth1
ip link set xveth0 up
ip link set xveth1 up

show rdma link add xiw0 type xiw netdev xdemo0
show rdma link add xiw1 type xiw netdev xveth0
show rdma link show
show ibv_devices
show ibv_devinfo -d xiw0
show ibv_devinfo -v -d xiw1
show rdma link delete xiw1
show rdma link delete xiw0
show rdma link show
