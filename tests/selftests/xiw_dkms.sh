#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_dkms.sh: xiw as a DKMS package on the running kernel, the way
# README.md tells a user to install it: the DKMS source tree (`make
# dkms-source`), `dkms add`, `dkms build` against this kernel's headers
# (the compat probes must run in DKMS's own build directory), signed with a
# key given in DKMS's framework configuration (in the VM only), `dkms
# install` into /lib/modules/<kernel>/updates/dkms, `modprobe xiw` loading
# that very file, a verified rping between two namespaces over it, and
# `dkms remove` taking it away again.
#
# DKMS keeps its state (its tree and its copy of the source) in a directory
# of the test's own (--dkmstree, --sourcetree), removed at exit; only the
# module goes to /lib/modules (in the VM: the tmpfs overlay).  Any other
# xiw.ko of this kernel's module tree (in the VM: the one the rig stages
# in updates/) is moved aside while the test runs and put back at exit,
# with the module index as it was, and xiw is loaded again if it was
# loaded before.
#
# The kernel's headers are /lib/modules/<kernel>/build or, in the VM, the
# ones tests/vm downloads into $XIW_CACHE.  A kernel of a newer Debian
# release than this machine's is built in its build root
# (tests/vm/buildroot: the compiler and libc its kbuild needs), by this
# machine's dkms script; `dkms install` and `dkms remove` run outside it.
#
# It needs the source tree (a checkout: the DKMS package is made from it)
# and a machine whose xiw is the test's: it unloads xiw, and sets every
# other xiw.ko of the kernel aside while it runs.  Elsewhere (xiw loaded
# or installed, unless XIW_OWN_MODULES=1 says they belong to the test run,
# as in the VM rig) it skips.
. "$(dirname "$0")/lib.sh"

require_env
command -v dkms >/dev/null || ktap_skip_all "dkms not installed (apt-get install dkms)"
command -v make >/dev/null || ktap_skip_all "make not installed"
command -v rping >/dev/null || ktap_skip_all "rping not installed"
need_module veth || ktap_skip_all "no veth module"
need_module rdma_ucm || ktap_skip_all "no rdma_ucm module"

top=$(cd "$(dirname "$0")/../.." && pwd)
[ -f "$top/dkms.conf" ] ||
	ktap_skip_all "no xiw source tree around the tests (dkms.conf): it runs from a checkout"
may_unload xiw || ktap_skip_all "xiw was loaded before the test: it is not the test's to unload (XIW_OWN_MODULES=1 says it is)"
kabi=$(uname -r)
moddir=/lib/modules/$kabi
if [ "${XIW_OWN_MODULES:-0}" != 1 ] &&
   [ -n "$(find "$moddir/" -name 'xiw.ko*' -print -quit 2>/dev/null)" ]; then
	ktap_skip_all "an xiw.ko is installed for $kabi: the test would set it aside (XIW_OWN_MODULES=1 says it may)"
fi
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
[ -n "$ver" ] || ktap_skip_all "no PACKAGE_VERSION in $top/dkms.conf"
cache=${XIW_CACHE:-/var/cache/xiw}
kdir=$moddir/build
[ -f "$kdir/Makefile" ] || kdir=$cache/kernels/$kabi/root/usr/src/linux-headers-$kabi
[ -f "$kdir/Makefile" ] || ktap_skip_all "no kernel headers for $kabi"

# A pinned kernel of a newer Debian release builds in its build root.
series=$(awk -v k="$kabi" '!/^#/ && $2 == k { print $1 }' "$top/tests/vm/kernels.txt")
root=
if [ -n "$series" ]; then
	root=$("$top/tests/vm/buildroot" "$series" --path) ||
		ktap_skip_all "no build root for $series (tests/vm/buildroot)"
fi

# DKMS's state lives below the source tree: the build root sees it there.
mkdir -p "$top/build"
D=$(mktemp -d "$top/build/dkms-selftest.XXXXXX")
mkdir "$D/tree" "$D/src"
opts=(--dkmstree "$D/tree" --sourcetree "$D/src")
: >"$D/aside"	# "moved-to original-path" lines
was_loaded=0
[ -d /sys/module/xiw ] && was_loaded=1

# in_root CMD...: CMD where this kernel's modules are built.
in_root() {
	if [ -n "$root" ]; then
		"$top/tests/vm/buildroot" "$series" -- "$@"
	else
		"$@"
	fi
}

# dkms_build ARGS...: dkms where this kernel's modules are built.
dkms_build() {
	if [ -n "$root" ]; then
		[ -f "$D/dkms" ] || cp "$(command -v dkms)" "$D/dkms"
		in_root bash "$D/dkms" "$@"
	else
		dkms "$@"
	fi
}

# restore: DKMS's module and state gone, the modules moved aside back,
# xiw loaded as it was found.
restore() {
	local to from
	cleanup
	[ ! -d /sys/module/xiw ] || xrun rmmod xiw
	if [ -d "$D/tree/xiw" ]; then
		xrun dkms remove "xiw/$ver" --all "${opts[@]}"
	fi
	while read -r to from; do
		[ -n "$to" ] && xrun mv "$to" "$from"
	done <"$D/aside"
	[ ! -s "$D/sigconf" ] || rm -f "$(cat "$D/sigconf")"
	# The module index as it was (a depmod takes a minute under TCG).
	if [ -d "$D/index" ]; then
		xrun cp -a "$D/index/." "$moddir/"
	fi
	if ((was_loaded)); then
		xrun modprobe xiw
	fi
	rm -rf "$D"
}
trap 'restore; cleanup_all' EXIT

# xiw_kos: every xiw.ko (also compressed) in this kernel's module tree.
xiw_kos() { find "$moddir/" -name 'xiw.ko*' -print; }

# build_id FILE: the .note.gnu.build-id section of module FILE (also
# compressed) into $XIW_TMP/note.
build_id() {
	local ko=$XIW_TMP/id.ko
	case $1 in
	*.xz) xz -dc "$1" >"$ko" ;;
	*.zst) zstd -qdc "$1" >"$ko" ;;
	*.gz) gzip -dc "$1" >"$ko" ;;
	*) cp "$1" "$ko" ;;
	esac
	objcopy -O binary --only-section=.note.gnu.build-id "$ko" "$XIW_TMP/note"
	[ -s "$XIW_TMP/note" ]
}

# after STEP: an earlier case left STEP done, else this case skips.
after() { [ -e "$D/$1" ] || skip "no $1 module (an earlier case failed)"; }

test_add() {
	local st
	xrun make -s -C "$top" dkms-source DKMS_STAGE="$D/stage/xiw-$ver" ||
		fail "make dkms-source failed"
	[ ! -e "$D/stage/xiw-$ver/build" ] && [ ! -e "$D/stage/xiw-$ver/tests" ] ||
		fail "the DKMS source tree holds more than a module build needs"
	xrun dkms add "$D/stage/xiw-$ver" "${opts[@]}" || fail "dkms add failed"
	xget st dkms status "${opts[@]}"
	[ "$st" = "xiw/$ver: added" ] || fail "dkms status says '$st'"
	: >"$D/added"
}

test_build() {
	local t0=$EPOCHSECONDS ko vm log sigconf=
	after added
	# In the VM: a key of the test's own in DKMS's framework configuration
	# (in the build root, its copy); dkms must sign with it.
	if [ -n "${XIW_VM_OUT:-}" ] && [ -x "$kdir/scripts/sign-file" ] &&
	   command -v openssl >/dev/null; then
		openssl req -new -x509 -nodes -days 1 -subj "/CN=xiw selftest DKMS key" \
			-newkey rsa:2048 -keyout "$D/mok.key" -outform DER -out "$D/mok.pub" \
			>/dev/null 2>&1 || fail "openssl could not make a key"
		echo "# signing key: $D/mok.key (CN=xiw selftest DKMS key)"
		mkdir -p "$root/etc/dkms/framework.conf.d"
		sigconf=$root/etc/dkms/framework.conf.d/xiw-selftest.conf
		printf 'sign_file=%s\nmok_signing_key=%s\nmok_certificate=%s\n' \
			"$kdir/scripts/sign-file" "$D/mok.key" "$D/mok.pub" >"$sigconf"
		echo "$sigconf" >"$D/sigconf"
	fi
	xrun dkms_build build "xiw/$ver" -k "$kabi" --kernelsourcedir "$kdir" "${opts[@]}"
	[ -z "$sigconf" ] || rm -f "$sigconf" "$D/sigconf"
	echo "# dkms build took $((EPOCHSECONDS - t0))s"
	ko=$(compgen -G "$D/tree/xiw/$ver/$kabi/*/module/xiw.ko*" | head -n 1) ||
		fail "dkms build left no xiw.ko"
	xget vm modinfo -F vermagic "$ko"
	[ "${vm%% *}" = "$kabi" ] || fail "built for '${vm%% *}', not $kabi"
	# The probes ran against this kernel's headers in DKMS's build directory.
	log=$(compgen -G "$D/tree/xiw/$ver/$kabi/*/log/make.log" | head -n 1)
	grep -qF "gen-compat.sh $kdir $D/tree/xiw/$ver/build/" "$log" ||
		fail "the compat probes did not run in DKMS's build directory"
	echo "# make.log: the compat probes ran against $kdir in $D/tree/xiw/$ver/build"
	if [ -s "$D/mok.pub" ]; then
		xget vm modinfo -F signer "$ko"
		[ "$vm" = "xiw selftest DKMS key" ] || fail "not signed with the configured key"
	fi
	: >"$D/built"
}

test_install() {
	local f n=0 path
	after built
	[ ! -d /sys/module/xiw ] || xrun rmmod xiw || fail "cannot unload xiw"
	# Only DKMS's xiw.ko may be there for modprobe to find.  The module
	# index is kept for the restore at exit.
	mkdir -p "$D/aside.d" "$D/index.tmp"
	cp -a "$moddir"/modules.* "$D/index.tmp/"
	mv "$D/index.tmp" "$D/index"
	while read -r f; do
		xrun mv "$f" "$D/aside.d/$((++n))-${f##*/}"
		echo "$D/aside.d/$n-${f##*/} $f" >>"$D/aside"
	done < <(xiw_kos)
	xrun dkms install "xiw/$ver" -k "$kabi" --kernelsourcedir "$kdir" "${opts[@]}" ||
		fail "dkms install failed"
	xget path modinfo -n xiw || fail "modinfo finds no xiw"
	[[ $path == "$moddir/updates/dkms/xiw.ko"* ]] || fail "modinfo finds $path"
	: >"$D/installed"
}

test_modprobe() {
	local path other
	after installed
	xrun modprobe xiw || fail "modprobe xiw failed"
	[ -d /sys/module/xiw ] || fail "xiw not loaded"
	path=$(modinfo -n xiw)
	build_id "$path" || fail "no build ID in $path"
	# The note as the kernel keeps it for the loaded module.
	cmp "$XIW_TMP/note" /sys/module/xiw/notes/.note.gnu.build-id ||
		fail "the loaded xiw is not $path"
	echo "# the loaded xiw has the build ID of $path"
	# ... and not that of a module set aside (the VM rig's).
	cp "$XIW_TMP/note" "$XIW_TMP/note.dkms"
	while read -r other _; do
		build_id "$other" || continue
		! cmp -s "$XIW_TMP/note" "$XIW_TMP/note.dkms" ||
			fail "$other has the same build ID"
	done <"$D/aside"
	: >"$D/loaded"
}

# A verified rping between two xiw devices in two namespaces (veth).
test_rping() {
	local n rc=0 bg count=20 dev
	after loaded
	xiw_ns_pair xka0 xkb0 192.0.2.1 192.0.2.2 xka xkb
	bg_run bg ip netns exec "$NSA" rping -s -a 192.0.2.1 -p 7200 -C $count -S 65000 \
		>"$XIW_TMP/srv" 2>&1
	wait_for 20 listening 7200 "$NSA"
	xrun ip netns exec "$NSB" ping -c 1 -W 10 192.0.2.1
	echo "# + ip netns exec $NSB rping -c -a 192.0.2.1 -p 7200 -C $count -S 65000 -v"
	timeout 300 ip netns exec "$NSB" rping -c -a 192.0.2.1 -p 7200 -C $count -S 65000 \
		-v >"$XIW_TMP/cli" 2>"$XIW_TMP/cli.err" || rc=$?
	{ head -n 2 "$XIW_TMP/cli"; echo ...; tail -n 2 "$XIW_TMP/cli"
	  cat "$XIW_TMP/cli.err"; } | cut -c1-100 | sed 's/^/# /'
	n=$(grep -c "ping data" "$XIW_TMP/cli" || true)
	((rc == 0)) || { stop_bg "$bg"; fail "rping client exit $rc"; }
	bg_wait "$bg" || true
	((n == count)) || fail "$n of $count rping rounds verified"
	# Both devices carried it: each received more than its peer's data.
	for dev in xka xkb; do
		n=$(hw_counter $dev rx_bytes)
		echo "# $dev rx_bytes $n"
		((n >= count * 65000)) || fail "$dev received only $n bytes"
	done
}

test_remove() {
	local st
	after installed
	[ ! -d /sys/module/xiw ] || xrun rmmod xiw || fail "cannot unload xiw"
	xrun dkms remove "xiw/$ver" --all "${opts[@]}" || fail "dkms remove failed"
	[ -z "$(compgen -G "$moddir/updates/dkms/xiw.ko*")" ] ||
		fail "xiw.ko still in $moddir/updates/dkms"
	xget st dkms status "${opts[@]}"
	[ -z "$st" ] || fail "dkms status still says '$st'"
	[ ! -e "$D/tree/xiw" ] || fail "xiw still in DKMS's tree"
	# depmod ran: modprobe knows no xiw now (the others are set aside).
	xfail modinfo -n xiw
}

ktap_header
ktap_plan 6
run_case "make dkms-source and dkms add" test_add
run_case "dkms build for the running kernel" test_build
run_case "dkms install into updates/dkms" test_install
run_case "modprobe xiw loads the DKMS-built module" test_modprobe
run_case "rping 20 rounds of 65000 bytes verified over the DKMS-built xiw" test_rping
run_case "dkms remove takes the module away" test_remove
ktap_finish
