#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of tests/vm/capture-siw: record rping traffic of the in-tree
# siw driver as pcap files for the protocol vectors.
#   siw-siw.pcap      siw client and siw server (siw never asks for CRC,
#                     so the CRC fields are zero)
#   xiw-siw-crc.pcap  xiw client asking for CRC, siw server answering in
#                     kind: the siw-sent direction carries siw's CRC32c
# Two namespaces joined by a veth pair, TEST-NET-1 addresses, port 7174.
set -euo pipefail
out=$1
mkdir -p "$out"

modprobe siw
modprobe xiw
# New xiw devices ask for CRC (the rig may have loaded xiw already).
echo prefer > /sys/module/xiw/parameters/mpa_crc

run_one() {	# NAME CLIENT_TYPE
	local name=$1 ctype=$2 tpid spid
	ip netns add cs
	ip netns add cc
	ip link add s0 netns cs type veth peer name c0 netns cc
	ip -n cs addr add 192.0.2.1/24 dev s0
	ip -n cc addr add 192.0.2.2/24 dev c0
	ip -n cs link set s0 up
	ip -n cc link set c0 up
	ip -n cs link set lo up
	ip -n cc link set lo up
	ip netns exec cs rdma link add cap_s type siw netdev s0
	ip netns exec cc rdma link add cap_c type "$ctype" netdev c0

	ip netns exec cs tcpdump -i s0 -s 0 -U -w "$out/$name.pcap" 'tcp port 7174' \
		>/dev/null 2>"$out/$name.tcpdump" &
	tpid=$!
	for _ in $(seq 100); do
		grep -q "listening on" "$out/$name.tcpdump" && break
		sleep 0.1
	done
	ip netns exec cs rping -s -a 192.0.2.1 -p 7174 -C 3 -S 100 -V &
	spid=$!
	sleep 1
	ip netns exec cc rping -c -a 192.0.2.1 -p 7174 -C 3 -S 100 -V
	wait "$spid"
	sleep 1
	kill -INT "$tpid"
	wait "$tpid" || true

	rdma link del cap_c
	rdma link del cap_s
	ip netns del cc
	ip netns del cs
	echo "captured $name: $(stat -c %s "$out/$name.pcap") bytes"
}

run_one siw-siw siw
run_one xiw-siw-crc xiw
