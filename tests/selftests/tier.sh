# SPDX-License-Identifier: GPL-2.0
#
# The test tiers (./tiers), sourced by lib.sh and run_tests.sh.
#
# XIW_TIER      check or full; unset or empty: every case runs.
# XIW_KROLES    the names this kernel answers to in the table's kernels
#               column, e.g. "6.12 distro newest all" (tests/vm/run-selftests
#               sets it from kernels.txt).
#
# tier_load SCRIPT: the rows of SCRIPT into TIER_ROWS (tier, kernels and
# case pattern, tab-separated); one read of the table per program.
# tier_case DESC: decides for one case of the loaded script; returns 0 to
# run it, 1 to leave it out (TIER_WHY says why), 2 if no row names it.
# tier_script_runs SCRIPT: whether any case of SCRIPT can run in this tier on
# this kernel (run_tests.sh does not start the others).

TIER_TABLE=$(dirname "${BASH_SOURCE[0]}")/tiers
TIER_ROWS=()
TIER_WHY=

tier_load() {
	local tier kernels script pat
	TIER_ROWS=()
	while read -r tier kernels script pat; do
		[[ -z $tier || $tier == \#* ]] && continue
		[ "$script" = "$1" ] || continue
		TIER_ROWS+=("$tier"$'\t'"$kernels"$'\t'"$pat")
	done <"$TIER_TABLE"
}

# tier_kernel_matches KERNELS: KERNELS (comma-separated) names this kernel.
tier_kernel_matches() {
	local k
	for k in ${1//,/ }; do
		[[ " ${XIW_KROLES:-} " == *" $k "* ]] && return 0
	done
	return 1
}

# tier_allows TIER: a row of TIER runs in the requested tier.
tier_allows() {
	[ "$1" = check ] || [ "${XIW_TIER:-}" = full ]
}

tier_case() {
	local row tier kernels pat named=0
	TIER_WHY=
	for row in "${TIER_ROWS[@]}"; do
		IFS=$'\t' read -r tier kernels pat <<<"$row"
		[[ $1 =~ $pat ]] || continue
		named=1
		tier_kernel_matches "$kernels" || continue
		[ -n "${XIW_TIER:-}" ] || return 0
		tier_allows "$tier" && return 0
		TIER_WHY="[tier] in the $tier tier"
		return 1
	done
	((named)) || return 2
	[ -n "${XIW_TIER:-}" ] || return 0
	TIER_WHY="[tier] not on this kernel (${XIW_KROLES%% *})"
	return 1
}

tier_script_runs() {
	local row tier kernels pat
	[ -n "${XIW_TIER:-}" ] || return 0
	tier_load "$1"
	for row in "${TIER_ROWS[@]}"; do
		IFS=$'\t' read -r tier kernels pat <<<"$row"
		tier_kernel_matches "$kernels" && tier_allows "$tier" && return 0
	done
	return 1
}
