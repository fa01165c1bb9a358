#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_kconsumer.sh: xiw under an in-kernel RDMA consumer, as NVMe-oF,
# NFS/RDMA and SMB Direct use it (xiw_ktest.ko, built with xiw): a kernel
# rdma_cm connection between two xiw devices, QPs with 8 send and receive
# SGEs, the PD's DMA MR, a kernel SRQ and its limit event, a fast-reg MR
# over 256 scattered pages written and read remotely, 1 MiB of Reads
# followed by a fenced Send with Invalidate of their source (the fence
# keeps it off the wire until the last Read Response is in),
# re-registration under a new key, a Read into the MR followed by a fenced
# IB_WR_LOCAL_INV of it, a Write through the invalidated STag (a TERMINATE, DDP
# tagged buffer error, invalid STag, and an access error on both QPs) and
# ib_drain_qp() on both QPs; then 128 rounds on new connections that move
# one QP to ERROR while its Sends and receives are being taken, after
# which each of them has completed exactly once.  The client device's
# tx_zcopy is "on" for these (over lo the stack copies what it delivers,
# which "auto" answers with TCP copying straight from the pages); a third
# run with "auto" checks just that, a fourth with MPA CRC too.
#
#   xkc0 (dummy) 192.0.2.1     -- xiw device xka (server)
#   xkc1 (dummy) 198.51.100.1  -- xiw device xkb (client)
. "$(dirname "$0")/lib.sh"

require_env
need_module xiw || ktap_skip_all "cannot load xiw"
need_module dummy || ktap_skip_all "no dummy module"
modinfo xiw_ktest >/dev/null 2>&1 || ktap_skip_all "no xiw_ktest module (make modules)"

with_devs() {
	xiw_on_dummies xkc0 192.0.2.1 xka xkc1 198.51.100.1 xkb
	"$@"
}

# t_ktest [ZCOPY]: xiw_ktest with the client's tx_zcopy ZCOPY (default on).
t_ktest() {
	local mark log rc=0 zc0 zc1 cp0 cp1 pc0 pc1 mode=${1:-on}
	need_module xiw_ktest || fail "cannot load xiw_ktest"
	set_knob "$IBDIR/xkb/tx_zcopy" "$mode" || fail "cannot set tx_zcopy $mode on xkb"
	zc0=$(hw_counter xkb tx_zcopy_fpdus)
	[ -n "$zc0" ] || fail "no tx_zcopy_fpdus counter on xkb"
	cp0=$(hw_counter xkb tx_zcopy_copied)
	pc0=$(hw_counter xkb tx_page_copy_fpdus)
	[ -n "$pc0" ] || fail "no tx_page_copy_fpdus counter on xkb"
	mark="xiw_kconsumer: $(date +%s%N)"
	echo "$mark" >/dev/kmsg
	echo "# + echo '192.0.2.1 198.51.100.1' > /sys/module/xiw_ktest/parameters/run"
	echo "192.0.2.1 198.51.100.1" >/sys/module/xiw_ktest/parameters/run || rc=$?
	log=$(dmesg | sed -n "/$mark/,\$p")
	grep -E 'xiw_ktest|TERMINATE' <<<"$log" | sed 's/^/# /'
	((rc == 0)) || fail "xiw_ktest reported a failure"
	[ "$(grep -c "xiw_ktest: ok " <<<"$log")" = 15 ] || fail "not all 15 steps passed"
	grep -q 'peer sent TERMINATE layer 1 type 1 code 0x00' <<<"$log" ||
		fail "no TERMINATE for the invalidated STag"
	# The client's 1 MiB Write comes from page-allocator memory over lo
	# (64 KiB MSS): with tx_zcopy on its payload goes out zero-copy, and
	# the step above compared every page.  With auto the stack's copy of
	# the first zero-copy FPDUs delivered over lo turns it off, and TCP
	# copies the rest of the Write's FPDUs straight from those pages.
	zc1=$(hw_counter xkb tx_zcopy_fpdus)
	cp1=$(hw_counter xkb tx_zcopy_copied)
	pc1=$(hw_counter xkb tx_page_copy_fpdus)
	echo "# xkb tx_zcopy $mode: tx_zcopy_fpdus $zc0 -> $zc1, tx_zcopy_copied $cp0 -> $cp1, tx_page_copy_fpdus $pc0 -> $pc1"
	if [ "$mode" = on ]; then
		((zc1 >= zc0 + 16)) || fail "the 1 MiB Write did not go out zero-copy"
		((cp1 == cp0)) || fail "tx_zcopy on, yet a connection stopped zero-copy"
	else
		# Each connection (the main one, then each race round's) sends
		# a few zero-copy FPDUs at most before the copy is reported.
		((cp1 > cp0)) || fail "tx_zcopy auto: the stack's copies over lo did not turn zero-copy off"
		((zc1 - zc0 <= 4 * (cp1 - cp0))) ||
			fail "tx_zcopy auto: more than 4 zero-copy FPDUs per connection"
		# 1 MiB in FPDUs of less than 64 KiB: 17 at least, 4 of them
		# zero-copy at most.
		((pc1 - pc0 >= 13)) ||
			fail "tx_zcopy auto: the 1 MiB Write's FPDUs were not copied from its pages"
	fi
	! may_unload xiw_ktest || xrun rmmod xiw_ktest
}

# The same with MPA CRC required by both devices: the zero-copy FPDUs'
# CRC is summed over the consumer's pages, and the peer checks it.
with_crc() {
	local rc saved
	saved=$(cat /sys/module/xiw/parameters/mpa_crc)
	echo require >/sys/module/xiw/parameters/mpa_crc
	set +e
	(
		set -e
		"$@"
	)
	rc=$?
	set -e
	echo "$saved" >/sys/module/xiw/parameters/mpa_crc
	return "$rc"
}

ktap_header
ktap_plan 4
run_case "kernel consumer: rdma_cm, DMA MR, SRQ, fast-reg 256 pages, RFC 7306 atomics and immediate data, invalidate, drain, ERROR mid-traffic" with_devs t_ktest
run_case "kernel consumer with MPA CRC: zero-copy FPDUs pass the peer's CRC check" with_crc with_devs t_ktest
run_case "kernel consumer, tx_zcopy auto: the stack copies zero-copy FPDUs over lo, then TCP copies from the pages" with_devs t_ktest auto
run_case "kernel consumer, tx_zcopy auto with MPA CRC: FPDUs TCP copied from the pages pass the peer's CRC check" with_crc with_devs t_ktest auto
ktap_finish
