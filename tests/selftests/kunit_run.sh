#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run xiw's KUnit suites inside a debug-kernel guest: load xiw_kunit (the
# suites run at load time), collect every xiw_* suite's KTAP from debugfs,
# print it and a summary, and exit 0 (all passed), 1 (a case failed or a
# suite did not report) or 4 (no KUnit here: distro kernel).
# modprobe's exit status does not reflect test results; the debugfs
# results do.  A debugfs it mounts and an xiw_kunit it loads go again at
# the end; an xiw_kunit loaded before stays (its suites ran when it was
# loaded: their results are reported).  xiw_kunit.sh runs it.
set -uo pipefail

ktap=/sys/kernel/debug/kunit
mounted=0
if [ ! -d /sys/kernel/debug/kunit ] && ! mountpoint -q /sys/kernel/debug; then
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null && mounted=1
fi
trap '((mounted)) && umount /sys/kernel/debug' EXIT
if ! modinfo xiw_kunit >/dev/null 2>&1 || [ ! -d "$ktap" ]; then
	echo "# SKIP: no KUnit or no xiw_kunit module on $(uname -r)"
	exit 4
fi

loaded=0
if [ ! -d /sys/module/xiw_kunit ]; then
	echo "+ modprobe xiw_kunit"
	modprobe xiw_kunit || { echo "# modprobe xiw_kunit failed"; exit 1; }
	loaded=1
fi

pass=0 fail=0 skip=0 suites=0
for d in "$ktap"/xiw_*; do
	[ -r "$d/results" ] || continue
	suites=$((suites + 1))
	suite=$(basename "$d")
	cat "$d/results"
	# The results end with "# Totals: pass:P fail:F skip:S total:T",
	# counting every case and parameter; a suite of several cases also
	# has "# <suite>: pass:..." over its cases (KUnit leaves that out for
	# a single case).  A suite that reports neither failed to run.
	line=$(grep -E "^\s*# Totals: pass:[0-9]+ fail:[0-9]+ skip:[0-9]+" "$d/results" | tail -n 1)
	[ -n "$line" ] ||
		line=$(grep -E "^\s*# $suite: pass:[0-9]+ fail:[0-9]+ skip:[0-9]+" "$d/results" | tail -n 1)
	if [ -z "$line" ]; then
		echo "# $suite: no totals line: counted as failed"
		fail=$((fail + 1))
		continue
	fi
	p=$(sed 's/.*pass:\([0-9]*\).*/\1/' <<<"$line")
	f=$(sed 's/.*fail:\([0-9]*\).*/\1/' <<<"$line")
	s=$(sed 's/.*skip:\([0-9]*\).*/\1/' <<<"$line")
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
done

if ((loaded)); then
	echo "+ rmmod xiw_kunit"
	rmmod xiw_kunit || fail=$((fail + 1))
fi
if [ "$suites" -eq 0 ]; then
	echo "# no xiw_* KUnit suite reported results"
	exit 1
fi
echo "# kunit: $suites suites, pass:$pass fail:$fail skip:$skip"
[ "$fail" -eq 0 ]
