#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ksft-guest.sh KSFT [TEST...]: the guest half of tests/vm/ksft-test.
# KSFT is the kernel source's kselftest part the host unpacked; runs in
# the repository.
set -uo pipefail
ksft=${1:?usage: ksft-guest.sh KSFT [TEST...]}
shift
tests=("$@")
((${#tests[@]})) || tests=(xiw_cm_errors.sh xiw_verbs.sh xiw_rmmod.sh xiw_nfsrdma.sh)
repo=$PWD
kabi=$(uname -r)
# A host, not the rig's guest: nothing says the tests own the modules or
# a NIC.
unset XIW_OWN_MODULES XIW_SPARE_NIC XIW_VM_OUT XIW_TIER XIW_KROLES XIW_CASES
src=/tmp/ksft-src
inst=/tmp/ksft
. "$(dirname "$0")/guest-ktap.sh"
quote() { sed 's/^/# /' "$@"; }

# state: what the tests must leave as they found it, on a machine that is
# not theirs: namespaces and netdevs (the "container"'s left out: they
# change all the time), RDMA devices, mounts, modules, the initial
# namespace's nfsd, xiw's dynamic debug sites that print.
state() {
	ls /run/netns 2>/dev/null | grep -v '^ctr-'
	ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print "netdev " $2 }' | grep -v ' ctrdum'
	ls /sys/class/infiniband 2>/dev/null | sed 's/^/ibdev /'
	awk '$2 !~ "^/run/netns/ctr-" { print "mount " $2 " " $3 }' /proc/self/mounts
	awk '{ print "module " $1 }' /proc/modules | sort
	for f in versions nfsv4leasetime nfsv4gracetime threads portlist; do
		echo "nfsd $f: $(tr '\n' ' ' </proc/fs/nfsd/$f 2>/dev/null)"
	done
	echo "dyndbg: $(grep -c '=[a-z]*p' /sys/kernel/debug/dynamic_debug/control 2>/dev/null)"
}

# ktap_programs OUT: "ok"/"not ok"/"skip" and the name of each program in
# run_kselftest.sh's output OUT.
programs() {
	sed -n 's/^ok [0-9]* selftests: xiw: \([^ ]*\) # SKIP.*/skip \1/p
		s/^ok [0-9]* selftests: xiw: \([^ ]*\)$/ok \1/p
		s/^not ok [0-9]* selftests: xiw: \([^ ]*\).*/not_ok \1/p' "$1"
}

echo "KTAP version 1"
echo "1..$((${#tests[@]} + 9))"

# Install, as a kernel CI would: this directory as a collection of the
# kernel's kselftest, kselftest's install, the tools from cmake --install.
t0=$EPOCHSECONDS
rm -rf "$src" "$inst"
cp -a "$ksft" "$src"
cp -a "$repo/tests/selftests" "$src/tools/testing/selftests/xiw"
make -C "$src/tools/testing/selftests" TARGETS=xiw install KSFT_INSTALL_PATH="$inst" \
	XIW_TOOLS_BUILD="$repo/build/userspace" >/tmp/ksft-install.log 2>&1
rc=$?
grep -E '^(rsync|cmake|-- Install|Emit)|rror' /tmp/ksft-install.log | quote
check "make -C tools/testing/selftests TARGETS=xiw install (exit $rc, $((EPOCHSECONDS - t0))s)" \
	test "$rc" = 0 -a -x "$inst/run_kselftest.sh"
check "kselftest-list.txt lists the collection's programs" \
	grep -qx 'xiw:xiw_nfsrdma.sh' "$inst/kselftest-list.txt"
check "the helper tools are installed beside the tests" \
	test -x "$inst/xiw/bin/xiw-peer" -a -x "$inst/xiw/bin/xiw-cm-test" -a -x "$inst/xiw/bin/xiw-verbs-test"

# xiw installed, not loaded (the rig's staging tree: its modules in
# updates/, depmod'ed like a package's).
rmmod xiw
check "xiw is installed ($(modinfo -n xiw 2>/dev/null)) and not loaded" \
	test ! -d /sys/module/xiw -a -n "$(modinfo -n xiw 2>/dev/null)"

# The machine's own state that is none of the tests' business: its nfsd
# (mounted and set up, no threads), a namespace and a netdev of its own,
# and a "container" that keeps adding and deleting a namespace and a
# netdev while the tests run.
modprobe nfsd
mount -t nfsd nfsd /proc/fs/nfsd
echo 45 >/proc/fs/nfsd/nfsv4leasetime
echo 45 >/proc/fs/nfsd/nfsv4gracetime
ip netns add host-ns
modprobe dummy
ip link add hostdum0 type dummy
(
	i=0
	while :; do
		i=$((i + 1))
		ip netns add "ctr-$i" && ip link add "ctrdum$i" type dummy
		sleep 0.7
		ip link del "ctrdum$i"
		ip netns del "ctr-$i"
	done
) >/dev/null 2>&1 &
churn=$!
state >/tmp/state.before

args=()
for t in "${tests[@]}"; do args+=(-t "xiw:$t"); done
echo "# + cd $inst && ./run_kselftest.sh ${args[*]}"
t0=$EPOCHSECONDS
# Appending: the runner writes the tests' output through /dev/stdout,
# opened again, which would overwrite a file not opened for appending.
: >/tmp/ksft.out
(cd "$inst" && ./run_kselftest.sh "${args[@]}") >>/tmp/ksft.out 2>&1
rc=$?
secs=$((EPOCHSECONDS - t0))
cat /tmp/ksft.out
kill "$churn"
wait "$churn" 2>/dev/null
ip netns list | awk '/^ctr-/ { print $1 }' | xargs -r -n 1 ip netns del
ip -o link show | awk -F': ' '$2 ~ /^ctrdum/ { sub(/@.*/, "", $2); print $2 }' |
	xargs -r -n 1 ip link del
echo "# run_kselftest.sh: exit $rc, ${secs}s"
programs /tmp/ksft.out >/tmp/ksft.res
for t in "${tests[@]}"; do
	check "$t: ok under run_kselftest.sh" grep -qx "ok $t" /tmp/ksft.res
done
cases=$(grep -cE '^# (not )?ok [0-9]+ ' /tmp/ksft.out)
bad=$(grep -cE '^# not ok [0-9]+ ' /tmp/ksft.out)
skips=$(grep -E '^# ok [0-9]+ .*# SKIP' /tmp/ksft.out)
[ -z "$skips" ] || echo "$skips"
check "every case of them passed or skipped ($cases cases, $bad failed, $(grep -c . <<<"$skips") skipped)" \
	test "$bad" = 0 -a "$cases" -gt 0
state >/tmp/state.after
diff /tmp/state.before /tmp/state.after | quote
check "the machine is as before: namespaces, netdevs, RDMA devices, mounts, modules, its nfsd, dynamic debug" \
	cmp -s /tmp/state.before /tmp/state.after

# xiw loaded and in use by the machine: xiw_rmmod.sh leaves out what
# would unload it, passes, and leaves the module and the device alone.
modprobe xiw
rdma link add hostrdma type xiw netdev hostdum0
: >/tmp/ksft2.out
(cd "$inst" && ./run_kselftest.sh -t xiw:xiw_rmmod.sh) >>/tmp/ksft2.out 2>&1
cat /tmp/ksft2.out
check "xiw_rmmod.sh with xiw in use by the machine: ok, unload cases skipped" \
	grep -qx 'ok [0-9]* selftests: xiw: xiw_rmmod.sh' /tmp/ksft2.out
check "... 4 cases skipped as not the test's to unload" \
	test "$(grep -c 'not the test.s to unload' /tmp/ksft2.out)" = 4
check "... xiw still loaded, the machine's device hostrdma still there" \
	test -d /sys/module/xiw -a -e /sys/class/infiniband/hostrdma

rdma link del hostrdma
ip link del hostdum0
ip netns del host-ns
umount /proc/fs/nfsd
ktap_totals
