#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_kunit.sh: run xiw's KUnit suites (xiw_kunit.ko) and report one case
# per suite.  Only the self-built debug kernel has KUnit; elsewhere the test
# skips.
. "$(dirname "$0")/lib.sh"

require_env
modinfo xiw_kunit >/dev/null 2>&1 || ktap_skip_all "no xiw_kunit module for $(uname -r)"
[ -d /sys/kernel/debug/kunit ] || ktap_skip_all "kernel without KUnit debugfs"
trap cleanup_all EXIT

out=$XIW_TMP/kunit.out
"$XIW_SELFTEST_DIR/kunit_run.sh" >"$out" 2>&1
rc=$?
sed 's/^/# /' "$out"

ktap_header
# kunit_run.sh unloads the xiw_kunit it loads, which removes the debugfs
# results: count from the captured output instead.
mapfile -t lines < <(grep -E '^(not )?ok [0-9]+ xiw_' "$out")
ktap_plan "$(( ${#lines[@]} > 0 ? ${#lines[@]} : 1 ))"
if ((${#lines[@]} == 0)); then
	ktap_not_ok "xiw KUnit suites reported results (run.sh rc $rc)"
fi
for l in "${lines[@]}"; do
	name=${l#*ok }
	name=${name#* }
	case $l in
	ok*) ktap_ok "kunit $name" ;;
	*) ktap_not_ok "kunit $name" ;;
	esac
done
((rc == 0)) || [ "$KTAP_FAIL" -gt 0 ] || ktap_not_ok "kunit_run.sh exit status $rc"
ktap_finish
