#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run_tests.sh [TEST...]
#
# Run the xiw selftests (default: TEST_PROGS of the Makefile) one after the
# other, each under its time limit (./settings, or its own below).  Prints
# KTAP: one result line per test program with the program's own KTAP
# indented below it, then a summary line.  Exits 1 if any test failed or
# timed out, else 0.  With XIW_TIER (see tier.sh) a program none of whose
# cases belongs to the tier on this kernel is not started; the others skip
# their cases outside it.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
. ./tier.sh
if (($#)); then
	all=("$@")
else
	read -r -a all < <(make -s --no-print-directory emit_test_progs)
fi
progs=() left=()
for prog in "${all[@]}"; do
	if tier_script_runs "$prog"; then
		progs+=("$prog")
	else
		left+=("$prog")
	fi
done
# XIW_SELFTEST_TIMEOUT overrides ./settings (slow kernels: KASAN under TCG).
tmo=${XIW_SELFTEST_TIMEOUT:-$(sed -n 's/^timeout=//p' settings)}
tmo=${tmo:-300}

# The programs with a longer limit of their own (kselftest's settings
# know one limit per collection, so they are listed here).  xiw_dkms.sh
# compiles xiw in the guest: under TCG its build took 4 to 10 minutes
# (the host under load) of the program's 6 to 13.  It needs a checkout,
# so the installed tests skip it.
declare -A prog_tmo=([xiw_dkms.sh]=1800)

# prog_timeout PROG: PROG's limit, its own where it has one that is longer.
prog_timeout() {
	local t=${prog_tmo[$1]:-}
	if [[ $t =~ ^[0-9]+$ ]] && ((t > tmo)); then
		echo "$t"
	else
		echo "$tmo"
	fi
}

echo "KTAP version 1"
echo "1..${#progs[@]}"
((${#left[@]} == 0)) || echo "# not started, no case in the ${XIW_TIER:-} tier on this kernel: ${left[*]}"
n=0 pass=0 fail=0 skip=0
cases_pass=0 cases_fail=0 cases_skip=0 cases_tier=0
out=$(mktemp "${TMPDIR:-/tmp}/xiw-run-tests.XXXXXX")
trap 'rm -f "$out"' EXIT
for prog in "${progs[@]}"; do
	n=$((n + 1))
	echo "# selftests: xiw: $prog"
	start=$EPOCHSECONDS
	ptmo=$(prog_timeout "$prog")
	timeout -k 10 "$ptmo" "./$prog" 2>&1 | tee "$out" | sed 's/^/    /'
	rc=${PIPESTATUS[0]}
	secs=$((EPOCHSECONDS - start))
	c_ok=$(grep -E '^ok [0-9]+ ' "$out" | grep -vc '# SKIP' || true)
	c_skip=$(grep -E '^ok [0-9]+ ' "$out" | grep '# SKIP' | grep -vc '# SKIP \[tier\]' || true)
	c_tier=$(grep -E '^ok [0-9]+ ' "$out" | grep -c '# SKIP \[tier\]' || true)
	c_fail=$(grep -cE '^not ok [0-9]+ ' "$out" || true)
	cases_pass=$((cases_pass + c_ok))
	cases_skip=$((cases_skip + c_skip))
	cases_tier=$((cases_tier + c_tier))
	cases_fail=$((cases_fail + c_fail))
	case $rc in
	0)
		echo "ok $n selftests: xiw: $prog # ${secs}s"
		pass=$((pass + 1))
		;;
	4)
		echo "ok $n selftests: xiw: $prog # SKIP"
		skip=$((skip + 1))
		;;
	124 | 137)
		echo "not ok $n selftests: xiw: $prog # TIMEOUT ${ptmo}s"
		fail=$((fail + 1))
		;;
	*)
		echo "not ok $n selftests: xiw: $prog # exit=$rc"
		fail=$((fail + 1))
		;;
	esac
done
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
echo "# xiw selftests: $pass/$n programs passed, $fail failed, $skip skipped;" \
	"cases: $cases_pass passed, $cases_fail failed, $cases_skip skipped" \
	"(and $cases_tier outside the ${XIW_TIER:-requested} tier or kernel)"
((fail == 0))
