#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Build the libFuzzer targets with clang in build/fuzz and run each one
# for SECONDS (default 60) on its corpus, with the shared dictionary.
# New inputs go to build/fuzz/new-corpus/<target>; crashes to
# build/fuzz/artifacts/. Turn every crasher into a named vector row.
#
# usage: tests/fuzz/run-fuzz.sh [SECONDS]
set -eu

secs=${1:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
bdir="$top/build/fuzz"
cc=${CC:-clang}
cxx=${CXX:-clang++}

command -v "$cxx" >/dev/null || { echo "clang++ not found" >&2; exit 4; }
echo "+ cmake -S $top/userspace -B $bdir -DXIW_FUZZ=ON -DBUILD_TESTING=ON"
CC=$cc CXX=$cxx cmake -S "$top/userspace" -B "$bdir" -DXIW_FUZZ=ON -DBUILD_TESTING=ON \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
echo "+ make -C $bdir -j2 fpdu_fuzzer mpa_fuzzer roundtrip_fuzzer"
make -C "$bdir" -j2 fpdu_fuzzer mpa_fuzzer roundtrip_fuzzer >/dev/null

mkdir -p "$bdir/artifacts"
rc=0
for t in fpdu_fuzzer mpa_fuzzer roundtrip_fuzzer; do
	new="$bdir/new-corpus/$t"
	mkdir -p "$new"
	echo "+ $t for ${secs}s"
	"$bdir/tests-fuzz/$t" -max_total_time="$secs" -dict="$top/tests/fuzz/xiw.dict" \
		-artifact_prefix="$bdir/artifacts/$t-" -print_final_stats=1 \
		"$new" "$top/tests/fuzz/corpus/$t" || rc=1
done
exit $rc
