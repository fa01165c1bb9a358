#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# install-guest.sh ROOT: the guest half of tests/vm/install-test.  ROOT is
# the INSTALL_MOD_PATH `make install` wrote to on the host.
set -uo pipefail
root=${1:?usage: install-guest.sh ROOT}
kabi=$(uname -r)
mods=/lib/modules/$kabi
. "$(dirname "$0")/guest-ktap.sh"
loaded() { [ -d /sys/module/xiw ]; }

echo "KTAP version 1"
echo "1..6"
# The kernel's modules_install may compress (xiw.ko.xz on Debian).
rel=$(cd "$root$mods" && find updates -name 'xiw.ko*' | head -n 1)
check "make install put xiw.ko under updates/ (${rel:-nothing})" test -n "$rel"
check "make install ran depmod on the install root" \
	grep -q "^$rel:" "$root$mods/modules.dep"

# Into the guest's module tree (writable through the overlay), as a
# package or dkms would, and depmod there.
mkdir -p "$mods/updates"
cp -a "$root$mods/updates/." "$mods/updates/"
depmod -a "$kabi"
check "modinfo finds the installed module" \
	test "$(modinfo -n xiw)" = "$mods/$rel"
modprobe xiw
check "modprobe xiw loads it (srcversion matches the installed file)" \
	test "$(cat /sys/module/xiw/srcversion 2>/dev/null)" = "$(modinfo -F srcversion xiw)"
check "the module carries the link alias" \
	grep -qx "rdma-link-xiw" < <(modinfo -F alias xiw)
rmmod xiw
modprobe dummy
ip link add xin0 type dummy
ip link set xin0 up
if loaded; then
	not_ok "rdma link add autoloads xiw (still loaded before the test)"
elif rdma link add xinst type xiw netdev xin0 && loaded && [ -e /sys/class/infiniband/xinst ]; then
	ok "rdma link add autoloads xiw through rdma-link-xiw"
	rdma link del xinst
else
	not_ok "rdma link add autoloads xiw through rdma-link-xiw"
fi
ip link del xin0
rmmod xiw 2>/dev/null
ktap_totals
