#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_pyverbs.sh: rdma-core's own pyverbs test suite (Debian's
# python3-pyverbs; the tests ship compressed in /usr/share/doc/rdma-core/tests)
# against an xiw device and, when the siw module is there, against a siw
# device on the same kind of netdev in the same VM.
#
# xiw must finish the suite without a failure or an error, and pass every
# test siw passes.  The suite runs twice on each driver:
#  - as it picks GIDs itself: an iWARP GID has the MAC in its upper half and
#    zeros below, which the suite takes for "no usable GID", so its traffic
#    tests skip on both drivers and the object tests (device, PD, MR, CQ,
#    QP, SRQ) are what runs;
#  - with --gid 0, which makes the traffic tests run: the RDMA CM ones
#    work on iWARP and must pass on xiw (three test InfiniBand behaviour
#    and fail on any iWARP device: listed below, each checked for the
#    failure iWARP gives), the ones that move QPs to RTS by hand cannot
#    run on iWARP and fail alike on both drivers.
# The counts of both drivers, the skip reasons and every test whose outcome
# differs are printed.  The RDMA CM tests need the RDMA device's bus parent
# to list its netdev, as for a hardware RNIC: the suite runs on the VM's
# virtio-net NIC (tests/vm/run); siw, which does not link its device to the
# NIC's bus device, skips them ("doesn't have net interface").
. "$(dirname "$0")/lib.sh"

require_env
need_module xiw || ktap_skip_all "cannot load xiw"
need_module dummy || ktap_skip_all "no dummy module"

PY=/usr/bin/python3
DOC=/usr/share/doc/rdma-core/tests
RUNNER=$(cd "$(dirname "$0")" && pwd)/pyverbs_run.py
NETDEV=xpvdum0
ADDR=192.0.2.1

"$PY" -c 'import pyverbs.device' 2>/dev/null ||
	ktap_skip_all "python3-pyverbs not installed"
[ -e "$DOC/run_tests.py" ] || ktap_skip_all "no pyverbs tests in $DOC"

have_siw=1
modinfo siw >/dev/null 2>&1 && need_module siw || have_siw=0

# The RDMA CM tests of the suite want the RDMA device's bus parent to list
# the netdev (DEV/device/net/), as for a hardware RNIC: use a NIC with a
# bus device that the test may take over (spare_nic: tests/vm/run gives
# every guest a virtio-net NIC on an otherwise empty hub and names it in
# XIW_SPARE_NIC), a dummy netdev otherwise (the RDMA CM tests then skip on
# both drivers).  A NIC no one named is never touched: the suite flushes
# the addresses of the NIC it runs on.
NIC=
if [ -n "${XIW_SPARE_NIC:-}" ]; then
	need_module virtio_net 2>/dev/null || :
	spare_nic NIC || :
fi
echo "# netdev for the suite: ${NIC:-a dummy (no NIC with a bus device)}"

# The suite, unpacked once.
SUITE=$XIW_TMP/pyverbs
mkdir -p "$SUITE"
cp -r "$DOC" "$SUITE/"
gunzip -f "$SUITE"/tests/*.gz

# setup_dev DRIVER: a device of DRIVER (named DRIVERpv0) on the NIC or on a
# fresh dummy netdev.
setup_dev() {
	local dev=${1}pv0
	if [ -n "$NIC" ]; then
		NETDEV=$NIC
		xrun ip addr flush dev "$NETDEV"
		xrun ip link set "$NETDEV" up
		trap 'ip addr flush dev "$NIC"' EXIT
	else
		add_dummy "$NETDEV"
	fi
	xrun ip addr add $ADDR/24 dev "$NETDEV"
	if [ "$1" = xiw ]; then
		xiw_add "$dev" "$NETDEV"
	else
		xrun rdma link add "$dev" type siw netdev "$NETDEV"
		record rdma "$dev"
		wait_for "$WAIT_TIMEOUT" ibdev_exists "$dev"
	fi
}

# run_suite DEV OUT [ARG...]: the suite (or the tests named in ARGs)
# against DEV; outcomes in OUT, the output in OUT.log.
run_suite() {
	local dev=$1 out=$2 rc=0
	shift 2
	(cd "$SUITE" && timeout -k 10 600 "$PY" "$RUNNER" "$SUITE" "$dev" \
		"$out" "$@") >"$out.log" 2>&1 || rc=$?
	((rc == 0)) || { tail -n 20 "$out.log" | sed 's/^/# /'; return 1; }
}

# suite DRIVER TAG [ARG...]: the whole suite on a new DRIVER device;
# outcomes in $XIW_TMP/TAG.res, output in TAG.res.log.
suite() {
	local drv=$1 tag=$2
	shift 2
	setup_dev "$drv"
	echo "# + pyverbs_run.py ${drv}pv0 --seed 0 $*"
	run_suite "${drv}pv0" "$XIW_TMP/$tag.res" --seed 0 "$@" ||
		fail "the suite did not complete on ${drv}pv0"
	tail -n 3 "$XIW_TMP/$tag.res.log" | sed 's/^/# /'
	[ -s "$XIW_TMP/$tag.res" ] || fail "no results from ${drv}pv0"
	summary "$tag"
}

# summary TAG: counts per outcome and per skip reason.
summary() {
	diag "$1: $(awk '{ n[$1]++ } END { for (s in n) printf "%s %d, ", s, n[s] }' \
		"$XIW_TMP/$1.res" | sed 's/, $//')"
	awk '$1 == "skip" { $1 = $2 = ""; sub(/^ +/, ""); print }' "$XIW_TMP/$1.res" |
		sort | uniq -c | sort -rn | sed "s/^/# $1 skipped: /"
	awk '$1 == "fail" || $1 == "error" { print $1, $2 }' "$XIW_TMP/$1.res" |
		sed "s/^/# $1 /"
}

# broken TAG: the tests that failed or errored.
broken() { awk '$1 == "fail" || $1 == "error"' "$XIW_TMP/$1.res"; }

t_xiw() {
	suite xiw "$1" "${@:2}"
	if broken "$1" | grep -q .; then
		diag "failed on xiw:" "$(broken "$1")"
		grep -A25 -E '^(FAIL|ERROR):' "$XIW_TMP/$1.res.log" | head -n 150 | sed 's/^/# /'
		fail "pyverbs tests failed on xiw"
	fi
}

# RDMA CM tests of the suite that test InfiniBand behaviour, which no
# iWARP device can show, and the message each fails with on iWARP:
#  - async_udp_traffic: UD QPs (iWARP has only RC): the QP cannot be created;
#  - async_traffic_external_qp: expects RDMA_CM_EVENT_CONNECT_RESPONSE,
#    which rdma_cm generates for IB only (iWARP reports ESTABLISHED);
#  - async_traffic: asserts that RDMA_OPTION_ID_ACK_TIMEOUT reaches the QP
#    (IBV_QP_TIMEOUT); rdma_init_qp_attr() never passes a timeout to an
#    iWARP QP, whose retransmission is TCP's (a bare AssertionError).
#    The same connection and traffic without the option is async_read/
#    async_write/sync_traffic, which must pass.
IB_ONLY=(
	"test_rdmacm_async_udp_traffic|Failed to Create QP\. Errno: 95,"
	"test_rdmacm_async_traffic_external_qp|Expected this event: 5, got this event: RDMA_CM_EVENT_ESTABLISHED$"
	"test_rdmacm_async_traffic|$"
)

# test_output TAG NAME: what the suite printed while it ran test NAME.
test_output() {
	awk -v n="$2" '$1 == n && $2 ~ /^\(tests\./ { on = 1 }
		on { print }
		on && /^(ok|ERROR|FAIL|skipped .*)$/ { exit }' "$XIW_TMP/$1.res.log"
}

t_xiw_gid() {
	local t bad= entry name re
	suite xiw "$1" "${@:2}"
	[ -n "$NIC" ] || skip "no NIC with a bus device: the RDMA CM tests skip"
	# Every RDMA CM test passes, except the IB-only ones, which must fail
	# the way IB-only tests fail on iWARP.
	for t in $(broken "$1" | awk '$2 ~ /\.test_rdmacm\./ { print $2 }'); do
		name=${t##*.}
		re=
		for entry in "${IB_ONLY[@]}"; do
			[ "${entry%%|*}" = "$name" ] && re=${entry#*|}
		done
		if [ -n "$re" ] &&
		   test_output "$1" "$name" | grep -qE "^(.* \.\.\. )?Player (active|passive) got: $re"; then
			diag "$name: InfiniBand-only, fails on iWARP as expected"
			continue
		fi
		bad+="$t "
	done
	if [ -n "$bad" ]; then
		grep -A25 -E '^(FAIL|ERROR): .*test_rdmacm' "$XIW_TMP/$1.res.log" | head -n 120 |
			sed 's/^/# /'
		grep 'Player .* got:' "$XIW_TMP/$1.res.log" | sed 's/^/# /'
		fail "pyverbs RDMA CM tests failed on xiw: $bad"
	fi
	# And every RDMA CM test that is not IB-only ran and passed.
	[ "$(grep -c '^ok tests\.test_rdmacm\.' "$XIW_TMP/$1.res")" -ge 4 ] ||
		fail "fewer than 4 RDMA CM tests passed"
}

t_siw() {
	((have_siw)) || skip "no siw module for $(uname -r) (tests/vm/build-siw builds one)"
	suite siw "$1" "${@:2}"
}

# t_compare XIW_TAG SIW_TAG [ARG...]: every test siw passes, xiw passes.
# The suite draws random queue sizes and create masks, and some draws
# lead to "not supported" skips in libsiw (create_qp_ex with a mask beyond
# the PD): a test siw passed and xiw skipped is run again on its own on
# xiw with other seeds, and counts as passed when one of those runs does.
t_compare() {
	local xres=$XIW_TMP/$1.res sres=$XIW_TMP/$2.res worse t seed again
	shift 2
	((have_siw)) || skip "no siw results"
	[ -s "$xres" ] && [ -s "$sres" ] || fail "a run is missing"
	diag "outcomes that differ (test siw xiw):" \
		"$(join <(awk '{ print $2, $1 }' "$sres" | sort) \
			<(awk '{ print $2, $1 }' "$xres" | sort) | awk '$2 != $3')"
	# Tests siw ran that xiw did not run at all.
	worse=$(comm -23 <(awk '{ print $2 }' "$sres" | sort) \
			 <(awk '{ print $2 }' "$xres" | sort))
	[ -z "$worse" ] || fail "not run on xiw: $worse"
	worse=$(join <(awk '$1 == "ok" { print $2 }' "$sres" | sort) \
		     <(awk '{ print $2, $1 }' "$xres" | sort) |
		awk '$2 != "ok" { print $1, $2 }')
	[ -n "$worse" ] || return 0
	setup_dev xiw
	again=
	while read -r t st; do
		if [ "$st" = skip ]; then
			for seed in 1 2 3 4 5 6 7 8; do
				run_suite xiwpv0 "$XIW_TMP/again.res" --seed $seed "$@" "$t" || break
				if grep -q "^ok $t\$" "$XIW_TMP/again.res"; then
					diag "$t: skipped with seed 0, passed with seed $seed"
					continue 2
				fi
			done
		fi
		again+="$t ($st) "
	done <<<"$worse"
	[ -z "$again" ] || fail "passed on siw, not on xiw: $again"
}

ktap_header
ktap_plan 6
run_case "pyverbs suite on xiw: nothing fails" t_xiw xiw
run_case "pyverbs suite on siw (reference)" t_siw siw
run_case "xiw passes every pyverbs test siw passes" t_compare xiw siw
run_case "pyverbs suite with --gid 0 on xiw: RDMA CM tests pass" t_xiw_gid xiwgid --gid 0
run_case "pyverbs suite with --gid 0 on siw (reference)" t_siw siwgid --gid 0
run_case "with --gid 0, xiw passes every test siw passes" t_compare xiwgid siwgid --gid 0
ktap_finish
