# SPDX-License-Identifier: GPL-2.0
#
# guest-ktap.sh: KTAP lines for the guest halves of the VM rig's checks
# (install-guest.sh, ksft-guest.sh), sourced.  ok/not_ok DESCRIPTION
# print a numbered result and count it; check DESCRIPTION CMD... runs CMD
# and prints ok or not ok by its status; ktap_totals prints kselftest's
# totals line and returns 0 only if nothing failed.
n=0 pass=0 fail=0

ok() { echo "ok $((++n)) $*"; ((++pass)); }
not_ok() { echo "not ok $((++n)) $*"; ((++fail)); }
check() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}
ktap_totals() {
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
	((fail == 0))
}
