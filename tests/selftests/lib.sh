# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the xiw selftests, sourced by every xiw_*.sh.
#
# KTAP:      ktap_header, ktap_plan N, ktap_ok/ktap_not_ok DESC,
#            ktap_skip DESC REASON, ktap_skip_all REASON, ktap_finish
#            (exit 0 all passed, 1 something failed, 4 everything skipped).
# Cases:     run_case DESC FUNC [ARG...] runs FUNC in a subshell with
#            `set -e`; exit 0 = ok, `skip REASON` = skip, anything else
#            (`fail MSG`, a failing command) = not ok.  Afterwards it removes
#            what the case created, puts back the settings it changed and
#            checks that no RDMA device, netdev or namespace of the tests'
#            own names was left behind.  Cases outside the tier asked for
#            (XIW_TIER, table in ./tiers, see tier.sh) report a skip that
#            starts with "[tier]"; a case the table does not name fails.
# Commands:  xrun CMD... prints "# + CMD" and CMD's output as diagnostics;
#            xget VAR CMD... does the same and keeps the output in VAR;
#            xfail CMD... expects CMD to fail.
# Tools:     need_tool VAR NAME finds xiw's userspace tool NAME (xiw-peer,
#            xiw-target, ...) or skips; xiw_tool VAR NAME only looks.
# Waiting:   wait_for TIMEOUT CMD... polls CMD every 0.1 s for TIMEOUT s;
#            xiw_sleep SECONDS sleeps without starting a process.
# Kernel log: log_mark, then log_since prints what the kernel logged
#            since; dyndbg_on QUERY turns pr_debug()s on until the test
#            ends.  The log is never cleared: it is the machine's.
# Leaks:     kmemleak_mark remembers what kmemleak reports so far;
#            kmemleak_new VAR scans and puts what it finds new into VAR.
# Objects:   add_dummy, add_veth, setup_ns, xiw_ns_pair, xiw_ns_veth,
#            xiw_add (xiw_on_dummies), local_wire record what they create
#            (record KIND NAME for the rest: rdma, netdev, netns, dir for
#            rmdir, mount for umount); cleanup (also the EXIT trap) deletes
#            it.
#            need_module loads a module only if it is missing and unloads
#            only those (and what came with them) at exit; need_unload MOD
#            skips a case that would unload a module the test did not load
#            (may_unload MOD asks).  set_knob FILE VALUE changes a setting
#            of the machine (a module parameter, a debugfs knob) until the
#            case ends.  spare_nic VAR names a NIC the tests may take over
#            (XIW_SPARE_NIC), if there is one.
# Processes: bg_run VAR CMD... / bg_add PID... record background
#            processes; bg_wait PID waits for one; stop_bg [-SIG] [PID...]
#            stops them.  cleanup stops whatever a case left running when
#            it ends, before its objects go: scripts set no trap for it.
# Sockets:   listening PORT [NETNS], not_listening PORT [NETNS].
# Storage:   nvmet_rdma_up/down, nvmet_up (any transport), nvme_ns_dev,
#            nvme_ctrl_gone (NVMe-oF);
#            iser_target_up/down, iscsid_up, iser_login/logout/forget,
#            iser_disk, iser_session (iSER); ksmbd_up/down,
#            smb_rdma_mount (SMB Direct); connected_ids DEV IDS;
#            sysfs_attr_is GLOB ATTR VALUE.
#
# On a machine of its own (a test guest) nothing more is needed.  On a
# host that also runs other things the tests leave alone what they did not
# create: they name their netdevs and RDMA devices "x..." (or "siwp..."),
# their namespaces "xiw-...", and look at nothing else; settings they
# change go back when the case ends; they unload only modules they loaded
# themselves, unless XIW_OWN_MODULES=1 says that the loaded xiw modules
# belong to the test run (the VM rig sets it in its guests, which load the
# xiw it built); they take over a NIC only if XIW_SPARE_NIC names one.

WAIT_TIMEOUT=${WAIT_TIMEOUT:-20}	# TCG guests are slow
IBDIR=/sys/class/infiniband

# The tests' own directory: a checkout's tests/selftests, or where
# kselftest installed them.
XIW_SELFTEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$XIW_SELFTEST_DIR/tier.sh"
tier_load "${0##*/}"

# The modules loaded when the test started (may_unload).
declare -A XIW_MODS_AT_START=()
while read -r _m _; do XIW_MODS_AT_START[$_m]=1; done </proc/modules
unset _m

KTAP_N=0
KTAP_PASS=0
KTAP_FAIL=0
KTAP_SKIP=0
KTAP_PLAN=

XIW_TMP=$(mktemp -d "${TMPDIR:-/tmp}/xiw-selftest.XXXXXX")
: >"$XIW_TMP/objects"	# "kind name" lines, removed after each case
: >"$XIW_TMP/modules"	# modules we loaded, unloaded at exit
: >"$XIW_TMP/bg"	# pids of background processes, stopped by stop_bg
: >"$XIW_TMP/knobs"	# "FILE<TAB>old value" lines, written back after each case
trap 'cleanup_all' EXIT

ktap_header() { echo "KTAP version 1"; }
ktap_plan() { KTAP_PLAN=$1; echo "1..$1"; }
ktap_ok() { echo "ok $((++KTAP_N)) $*"; ((++KTAP_PASS)); }
ktap_not_ok() { echo "not ok $((++KTAP_N)) $*"; ((++KTAP_FAIL)); }
ktap_skip() { echo "ok $((++KTAP_N)) $1 # SKIP ${2:-}"; ((++KTAP_SKIP)); }

ktap_skip_all() {
	ktap_header
	echo "1..0 # SKIP $*"
	exit 4
}

ktap_finish() {
	if [ -n "$KTAP_PLAN" ] && ((KTAP_N != KTAP_PLAN)); then
		echo "# planned $KTAP_PLAN cases but ran $KTAP_N"
		((++KTAP_FAIL))
	fi
	echo "# Totals: pass:$KTAP_PASS fail:$KTAP_FAIL xfail:0 xpass:0 skip:$KTAP_SKIP error:0"
	if ((KTAP_FAIL)); then
		exit 1
	elif ((KTAP_PASS == 0 && KTAP_SKIP > 0)); then
		exit 4
	fi
	exit 0
}

# The helpers below start as few processes as they can: under TCG every
# exec costs 60-200 ms (a case's setup, cleanup and leak check used to
# spend several seconds in sed, awk, sort and sleep alone).

# quote TEXT: TEXT's lines as diagnostics ("# " before each line).
quote() {
	local _q=$1
	[ -n "$_q" ] || return 0
	_q=${_q%$'\n'}
	printf '# %s\n' "${_q//$'\n'/$'\n'# }"
}

# quote_file FILE...: each FILE's lines as diagnostics; large files go
# through sed.
quote_file() {
	local _qf _qt
	for _qf in "$@"; do
		[ -s "$_qf" ] || continue
		_qt=
		IFS= read -r -d '' -N 65536 _qt <"$_qf" || :
		if ((${#_qt} < 65536)); then
			quote "$_qt"
		else
			sed 's/^/# /' "$_qf"
		fi
	done
}

diag() {
	local _d
	for _d in "$@"; do
		quote "$_d"$'\n'
	done
}

# xiw_sleep SECONDS: sleep(1) without a process: a read with a timeout on
# a pipe of our own that nobody writes.
xiw_sleep() {
	if [ -z "${XIW_SLEEP_FD:-}" ] || ! { : >&"$XIW_SLEEP_FD"; } 2>/dev/null; then
		exec {XIW_SLEEP_FD}<> <(:) || { sleep "$1"; return 0; }
	fi
	read -r -t "$1" -u "$XIW_SLEEP_FD" _ || :
}

# Inside a case: stop it as failed or skipped.
fail() { diag "FAIL: $*"; exit 1; }
skip() { echo "$*" >"$XIW_TMP/skip"; exit 4; }

xrun() {
	local rc=0
	echo "# + $*"
	"$@" >"$XIW_TMP/out" 2>&1 || rc=$?
	quote_file "$XIW_TMP/out"
	((rc == 0)) || echo "# (exit $rc)"
	return "$rc"
}

# xget VAR CMD...: like xrun; VAR gets CMD's stdout.
xget() {
	local _xg_var=$1 _xg_rc=0
	shift
	echo "# + $*"
	"$@" >"$XIW_TMP/out" 2>"$XIW_TMP/err" || _xg_rc=$?
	quote_file "$XIW_TMP/out" "$XIW_TMP/err"
	((_xg_rc == 0)) || echo "# (exit $_xg_rc)"
	printf -v "$_xg_var" '%s' "$(<"$XIW_TMP/out")"
	return "$_xg_rc"
}

# xfail CMD...: CMD must fail.
xfail() {
	if xrun "$@"; then
		fail "succeeded but should have failed: $*"
	fi
	return 0
}

# wait_for TIMEOUT CMD...: poll CMD (quietly) until it succeeds.
wait_for() {
	local tmo=$1 end
	shift
	end=$((EPOCHSECONDS + tmo))
	echo "# wait_for ${tmo}s: $*"
	until "$@" >/dev/null 2>&1; do
		if ((EPOCHSECONDS >= end)); then
			echo "# wait_for: still failing after ${tmo}s: $*"
			return 1
		fi
		xiw_sleep 0.1
	done
}

# listening PORT [NETNS]: a TCP socket listens on PORT, in the network
# namespace NETNS if given, else in the caller's.
listening() {
	if [ -n "${2:-}" ]; then
		ip netns exec "$2" ss -Hltn "sport = :$1" | grep -q .
	else
		ss -Hltn "sport = :$1" | grep -q .
	fi
}

# not_listening PORT [NETNS]: no TCP socket listens there (any more).
not_listening() { ! listening "$@"; }

# The background processes of a test are recorded, one pid a line, in
# $XIW_TMP/bg: a file, not a variable, because a case runs in a subshell
# (and may start processes in subshells of its own) while cleanup, which
# stops what is left, runs in the script's shell after the case.  No EXIT
# trap stops them in the case's subshell: a shell with an EXIT trap
# catches SIGTERM, so does a child it has forked until that child execs,
# and a SIGTERM caught then is lost (bash 5.2; a few kills in a thousand
# sent right after the fork), leaving a `wait` for the child hanging.

# bg_add PID...: record processes started in the background otherwise
# (a coproc, `CMD &` where bg_run does not fit).
bg_add() { printf '%s\n' "$@" >>"$XIW_TMP/bg"; }

# bg_run VAR CMD...: CMD in the background, recorded; its pid into VAR.
# Redirections given to bg_run apply to CMD.  (Odd local names: they must
# not shadow the caller's VAR.)
bg_run() {
	local _br_var=$1
	shift
	"$@" &
	bg_add "$!"
	printf -v "$_br_var" '%s' "$!"
}

# bg_forget PID...: drop PIDs from the record.
bg_forget() {
	local _bf_p _bf_q
	local -a _bf_all _bf_keep=()
	mapfile -t _bf_all <"$XIW_TMP/bg"
	for _bf_p in "${_bf_all[@]}"; do
		for _bf_q in "$@"; do
			[ "$_bf_p" != "$_bf_q" ] || continue 2
		done
		[ -z "$_bf_p" ] || _bf_keep+=("$_bf_p")
	done
	if ((${#_bf_keep[@]})); then
		printf '%s\n' "${_bf_keep[@]}" >"$XIW_TMP/bg"
	else
		: >"$XIW_TMP/bg"
	fi
}

# bg_running PID: PID exists and is not a zombie (/proc/PID/stat's state,
# the word after the command name's closing parenthesis).
bg_running() {
	local _st
	{ read -r _st <"/proc/$1/stat"; } 2>/dev/null || return 1
	_st=${_st##*) }
	[ "${_st%% *}" != Z ]
}

# bg_wait PID: wait for PID (a child of this shell) to end by itself and
# forget it; returns its exit status.
bg_wait() {
	local _bw_rc=0
	wait "$1" || _bw_rc=$?
	bg_forget "$1"
	return "$_bw_rc"
}

# stop_bg [-SIGNAL] [PID...]: send SIGNAL (TERM if not given) to each PID,
# or to every recorded process, wait until each has ended and forget it.
# A child of this shell is reaped by `wait`, as long as it takes; any
# other (a case's, once its subshell has exited: init reaps it) is polled
# until it is gone or a zombie (its files and memory released), killed
# with SIGKILL after WAIT_TIMEOUT seconds, and given up on with a
# diagnostic after as many again.  Always succeeds: a process that has
# ended already is no error (callers that mind check with `kill -0`
# first); every command that may fail is guarded, for callers under
# `set -e`.
stop_bg() {
	local _sb_sig=TERM _sb_p _sb_end _sb_killed
	local -a _sb_pids
	if [[ ${1:-} == -* ]]; then
		_sb_sig=${1#-}
		shift
	fi
	if (($#)); then
		_sb_pids=("$@")
	else
		mapfile -t _sb_pids <"$XIW_TMP/bg" || :
	fi
	((${#_sb_pids[@]})) || return 0
	for _sb_p in "${_sb_pids[@]}"; do
		[ -z "$_sb_p" ] || kill -s "$_sb_sig" "$_sb_p" 2>/dev/null || :
	done
	for _sb_p in "${_sb_pids[@]}"; do
		[ -n "$_sb_p" ] || continue
		wait "$_sb_p" 2>/dev/null || :
		_sb_end=$((EPOCHSECONDS + WAIT_TIMEOUT)) _sb_killed=0
		while bg_running "$_sb_p"; do
			if ((EPOCHSECONDS >= _sb_end)); then
				if ((_sb_killed)); then
					echo "# stop_bg: pid $_sb_p survived SIGKILL"
					break
				fi
				echo "# stop_bg: pid $_sb_p outlived SIG$_sb_sig, killing it"
				kill -s KILL "$_sb_p" 2>/dev/null || :
				_sb_end=$((EPOCHSECONDS + WAIT_TIMEOUT)) _sb_killed=1
			fi
			xiw_sleep 0.1
		done
	done
	bg_forget "${_sb_pids[@]}"
}

record() { echo "$*" >>"$XIW_TMP/objects"; }

KMEMLEAK=/sys/kernel/debug/kmemleak

# kmemleak_keys: one line per object of a kmemleak report on stdin: its
# "unreferenced object ADDR (size N):" line and the allocation's comm,
# pid and jiffies (the age, which grows, left out).
kmemleak_keys() {
	awk '/^unreferenced object / { h = $0; getline; sub(/ *\(age [^)]*\)/, ""); print h "|" $0 }'
}

# kmemleak_mark: kmemleak_new reports only suspects that are new from now
# on: a scan, and what it reports so far is remembered.  kmemleak's own
# list stays as it is (no "clear": earlier reports are the machine's).
# Fails without kmemleak.
kmemleak_mark() {
	[ -w "$KMEMLEAK" ] || return 1
	echo "# + echo scan > $KMEMLEAK"
	echo scan >"$KMEMLEAK"
	kmemleak_keys <"$KMEMLEAK" >"$XIW_TMP/kmemleak.seen"
}

# kmemleak_new VAR: scan for leaks into VAR (empty: none), leaving out
# what was reported by kmemleak_mark's time.  kmemleak leaves objects
# younger than 5 s alone, so it scans, lets the last frees and
# allocations age, and scans again.
kmemleak_new() {
	echo "# + echo scan > $KMEMLEAK (twice, 6 s apart)"
	echo scan >"$KMEMLEAK"
	xiw_sleep 6
	echo scan >"$KMEMLEAK"
	[ -e "$XIW_TMP/kmemleak.seen" ] || : >"$XIW_TMP/kmemleak.seen"
	printf -v "$1" '%s' "$(awk '
		FILENAME == ARGV[1] { seen[$0] = 1; next }
		/^unreferenced object / {
			h = $0
			getline
			k = $0
			sub(/ *\(age [^)]*\)/, "", k)
			keep = !((h "|" k) in seen)
			if (keep) { print h; print }
			next
		}
		keep' "$XIW_TMP/kmemleak.seen" "$KMEMLEAK")"
}

# need_module MOD: load MOD unless it is loaded (or built in) already.
# MOD and what modprobe loaded with it (its dependencies) are recorded:
# cleanup_all unloads those that nothing holds at exit.
need_module() {
	local _nm_m _nm_i
	local -a _nm_new=()
	local -A _nm_had=()
	[ -d "/sys/module/$1" ] && return 0
	while read -r _nm_m _; do _nm_had[$_nm_m]=1; done </proc/modules
	xrun modprobe "$1" || return 1
	# /proc/modules lists the newest first: recorded oldest first.
	while read -r _nm_m _; do
		[ -n "${_nm_had[$_nm_m]:-}" ] || _nm_new+=("$_nm_m")
	done </proc/modules
	for ((_nm_i = ${#_nm_new[@]} - 1; _nm_i >= 0; _nm_i--)); do
		echo "${_nm_new[_nm_i]}" >>"$XIW_TMP/modules"
	done
}

# may_unload MOD: MOD is the test's to unload: it was not loaded when the
# test started, or XIW_OWN_MODULES=1 says the modules loaded before
# belong to the test run (the VM rig loads the xiw it built for the
# tests).  A module someone else loaded may be in use.
may_unload() {
	[ -z "${XIW_MODS_AT_START[$1]:-}" ] || [ "${XIW_OWN_MODULES:-0}" = 1 ]
}

# need_unload MOD: in a case that unloads MOD, skip it unless may_unload.
need_unload() {
	may_unload "$1" ||
		skip "$1 was loaded before the test: it is not the test's to unload (XIW_OWN_MODULES=1 says it is)"
}

# set_knob FILE VALUE: write VALUE to a setting of the machine (a module
# parameter, a debugfs or procfs knob), shown like xrun.  What FILE held
# before is written back when the case ends (restore_knobs, newest first),
# however it ends.
set_knob() {
	local _sk_old=
	{ IFS= read -r _sk_old || [ -n "$_sk_old" ]; } <"$1" || return 1
	echo "# + echo $2 > $1"
	echo "$2" >"$1" || return 1
	printf '%s\t%s\n' "$1" "$_sk_old" >>"$XIW_TMP/knobs"
}

# restore_knobs: put back what set_knob changed, newest first (a setting
# written twice ends with its first old value).
restore_knobs() {
	local _rk_i _rk_f _rk_v
	local -a _rk_all
	[ -s "$XIW_TMP/knobs" ] || return 0
	mapfile -t _rk_all <"$XIW_TMP/knobs"
	for ((_rk_i = ${#_rk_all[@]} - 1; _rk_i >= 0; _rk_i--)); do
		_rk_f=${_rk_all[_rk_i]%%$'\t'*} _rk_v=${_rk_all[_rk_i]#*$'\t'}
		# A module's parameters go with it (an unloaded module
		# starts from its defaults when it loads again).
		[ -e "$_rk_f" ] || continue
		{ echo "$_rk_v" >"$_rk_f"; } 2>/dev/null ||
			echo "# could not put back $_rk_f: $_rk_v"
	done
	: >"$XIW_TMP/knobs"
}

# now_ms: the wall clock in milliseconds.
now_ms() {
	local _nm_us=${EPOCHREALTIME/./}
	echo $((10#$_nm_us / 1000))
}

# log_mark: log_since prints only what the kernel logs from now on.  A
# line of the test's own in the kernel log marks the spot.
log_mark() {
	XIW_LOG_MARK="xiw selftest ${0##*/} $$ mark $((++XIW_LOG_N)) $EPOCHREALTIME"
	echo "$XIW_LOG_MARK" >/dev/kmsg
}

# log_since: the kernel log after the last log_mark; all of it when the
# mark has been pushed out of the ring buffer (then everything still in
# it came later).
log_since() {
	dmesg | awk -v m="$XIW_LOG_MARK" '{ l[n++] = $0 } index($0, m) { n = 0 }
		END { for (i = 0; i < n; i++) print l[i] }'
}

# mpa_crc_agreed CRC [DEV]: xiw's CM logged (dynamic debug on xiw_cm.c)
# at least one connection since the last log_mark, of device DEV if
# given, and every one of them agreed on MPA CRC CRC (0 or 1).
mpa_crc_agreed() {
	local _ma
	_ma=$(log_since | grep "xiw: ${2:-[^ ]*}: cep .*MPA rev 2, crc" || true)
	diag "$_ma"
	[ -n "$_ma" ] || fail "xiw logged no connection${2:+ on $2}"
	! grep -vq "crc $1," <<<"$_ma" || fail "a connection did not agree on crc $1"
}

DYNDBG=/sys/kernel/debug/dynamic_debug/control

# dyndbg_on QUERY: the pr_debug()s that QUERY selects ("module xiw",
# "module siw file siw_cm.c", ...) print until the test ends.  Then every
# call site has its p flag as found: the first dyndbg_on keeps the sites
# printing before.  Fails without dynamic debug.
dyndbg_on() {
	[ -w "$DYNDBG" ] || return 1
	if [ ! -e "$XIW_TMP/dyndbg.before" ]; then
		# "FILE:LINE [MODULE]FUNCTION =FLAGS FORMAT" lines.
		awk '$3 ~ /^=[a-z_]*p/ { i = index($1, ":"); if (i) print "file " substr($1, 1, i - 1) " line " substr($1, i + 1) " +p" }' \
			"$DYNDBG" >"$XIW_TMP/dyndbg.before" || return 1
	fi
	{ echo "$1 +p" >"$DYNDBG"; } 2>/dev/null || return 1
	echo "$1" >>"$XIW_TMP/dyndbg.on"
}

# dyndbg_restore: what dyndbg_on turned on goes off, then the call sites
# printing before print again.
dyndbg_restore() {
	local _dq
	[ -s "$XIW_TMP/dyndbg.on" ] || return 0
	while read -r _dq; do
		{ echo "$_dq -p" >"$DYNDBG"; } 2>/dev/null || :
	done <"$XIW_TMP/dyndbg.on"
	while read -r _dq; do
		{ echo "$_dq" >"$DYNDBG"; } 2>/dev/null || :
	done <"$XIW_TMP/dyndbg.before"
	: >"$XIW_TMP/dyndbg.on"
}

# spare_nic VAR: the netdev XIW_SPARE_NIC names (a name or a MAC address)
# into VAR: a NIC with a bus device the tests may take over (flush its
# addresses, put their own on it).  The VM rig's guests have one (the rig
# names it); a host's NICs are never touched unless it is set.  Fails (VAR
# empty) when there is none.
spare_nic() {
	local _sn_n _sn_a
	printf -v "$1" ''
	[ -n "${XIW_SPARE_NIC:-}" ] || return 1
	for _sn_n in /sys/class/net/*; do
		[ -e "$_sn_n/device" ] || continue
		_sn_a=
		{ read -r _sn_a <"$_sn_n/address"; } 2>/dev/null || :
		if [ "${_sn_n##*/}" = "$XIW_SPARE_NIC" ] ||
		   [ "${_sn_a,,}" = "${XIW_SPARE_NIC,,}" ]; then
			printf -v "$1" '%s' "${_sn_n##*/}"
			return 0
		fi
	done
	return 1
}

ibdev_exists() { [ -e "$IBDIR/$1" ]; }
ibdev_gone() { [ ! -e "$IBDIR/$1" ]; }
netdev_exists() { ip link show dev "$1" >/dev/null 2>&1; }

# rdma_link_attr DEV ATTR: the word after ATTR in `rdma link show DEV/1`,
# e.g. "state", "physical_state", "netdev".
rdma_link_attr() {
	rdma link show "$1/1" | awk -v a="$2" '{ for (i = 1; i < NF; i++) if ($i == a) print $(i + 1) }'
}

# rdma_links: names of all RDMA devices `rdma link show` lists.
rdma_links() { rdma link show | awk '$1 == "link" { sub("/.*", "", $2); print $2 }'; }

# ibv_attr DEV NAME: a "NAME: value" field of `ibv_devinfo -v -d DEV`.
ibv_attr() {
	ibv_devinfo -v -d "$1" | awk -v n="$2:" '$1 == n && !done { $1 = ""; sub(/^ /, ""); print; done = 1 }'
}

# xiw_add NAME NETDEV [TYPE]: `rdma link add NAME type TYPE netdev
# NETDEV` (TYPE xiw unless given: siw, rxe); on success wait for the
# device to show up in sysfs.
xiw_add() {
	xrun rdma link add "$1" type "${3:-xiw}" netdev "$2" || return 1
	record rdma "$1"
	wait_for "$WAIT_TIMEOUT" ibdev_exists "$1"
}

# xiw_del NAME: delete the device and wait until ib_core has removed it.
xiw_del() {
	xrun rdma link del "$1" || return 1
	wait_for "$WAIT_TIMEOUT" ibdev_gone "$1"
}

# hw_counter DEV NAME: one of DEV's port counters (rdma statistic).
hw_counter() {
	rdma statistic show link "$1/1" | tr ' ' '\n' | grep -A1 -x "$2" | tail -n 1
}

# add_dummy NAME [MAC]: an up dummy netdev.
add_dummy() {
	need_module dummy || return 1
	xrun ip link add "$1" ${2:+address "$2"} type dummy || return 1
	record netdev "$1"
	xrun ip link set "$1" up
}

# xiw_on_dummies NETDEV ADDR DEV [NETDEV ADDR DEV...]: for each triplet an
# up dummy netdev with the IPv4 address ADDR/24 and the xiw device DEV on it.
xiw_on_dummies() {
	while (($# >= 3)); do
		add_dummy "$1" || return 1
		xrun ip addr add "$2/24" dev "$1" || return 1
		xiw_add "$3" "$1" || return 1
		shift 3
	done
}

# add_veth NAME PEER: an up veth pair.
add_veth() {
	need_module veth || return 1
	xrun ip link add "$1" type veth peer name "$2" || return 1
	record netdev "$1"
	xrun ip link set "$1" up && xrun ip link set "$2" up
}

# setup_ns VAR...: create uniquely named namespaces, store their names in VARs.
# (Odd local names: they must not shadow the caller's VARs.)
setup_ns() {
	local _sn_var _sn_name
	for _sn_var in "$@"; do
		ns_name _sn_name "$_sn_var"
		xrun ip netns add "$_sn_name" || return 1
		record netns "$_sn_name"
		xrun ip -n "$_sn_name" link set lo up
		printf -v "$_sn_var" '%s' "$_sn_name"
	done
}

# ns_name VAR TAG: a namespace name no one uses yet into VAR.
ns_name() {
	local _nn
	while :; do
		printf -v _nn 'xiw-%s-%04x%04x' "$2" $RANDOM $RANDOM
		[ -e "/run/netns/$_nn" ] || break
	done
	printf -v "$1" '%s' "$_nn"
}

# ip_batch [IP-OPTION...] -- LINE...: one ip(8) process runs every LINE
# (ip -batch), shown and checked like xrun.
ip_batch() {
	local -a _ibo
	while (($#)) && [ "$1" != -- ]; do _ibo+=("$1"); shift; done
	shift
	printf '%s\n' "$@" >"$XIW_TMP/ip.batch"
	xrun ip "${_ibo[@]}" -batch "$XIW_TMP/ip.batch"
}

# xiw_ns_pair IFA IFB ADDRA ADDRB DEVA DEVB [MTU]: namespaces NSA and NSB
# joined by a veth pair, IFA in NSA with ADDRA/24 and IFB in NSB with
# ADDRB/24 (MTU if given), and the xiw devices DEVA on IFA and DEVB on IFB.
xiw_ns_pair() {
	ns_name NSA NSA
	ns_name NSB NSB
	record netns "$NSA"
	record netns "$NSB"
	ip_batch -- "netns add $NSA" "netns add $NSB" \
		"link add $1 netns $NSA type veth peer name $2 netns $NSB"
	ip_batch -n "$NSA" -- "link set lo up" ${7:+"link set $1 mtu $7"} \
		"addr add $3/24 dev $1" "link set $1 up"
	ip_batch -n "$NSB" -- "link set lo up" ${7:+"link set $2 mtu $7"} \
		"addr add $4/24 dev $2" "link set $2 up"
	xrun ip netns exec "$NSA" rdma link add "$5" type xiw netdev "$1"
	record rdma "$5"
	xrun ip netns exec "$NSB" rdma link add "$6" type xiw netdev "$2"
	record rdma "$6"
	wait_for "$WAIT_TIMEOUT" ibdev_exists "$5"
	wait_for "$WAIT_TIMEOUT" ibdev_exists "$6"
}

# xiw_ns_veth VAR IF PEER DEV: a new namespace (setup_ns VAR) and an up
# veth pair IF/PEER whose end PEER is moved into it and set up there; the
# xiw device DEV on PEER, added from inside the namespace.
xiw_ns_veth() {
	setup_ns "$1" || return 1
	local _nv_ns=${!1}
	add_veth "$2" "$3" || return 1
	xrun ip link set "$3" netns "$_nv_ns" || return 1
	xrun ip -n "$_nv_ns" link set "$3" up || return 1
	xrun ip netns exec "$_nv_ns" rdma link add "$4" type xiw netdev "$3" || return 1
	record rdma "$4"
	wait_for "$WAIT_TIMEOUT" ibdev_exists "$4"
}

# local_wire IFA ADDRA IFB ADDRB: a veth pair IFA/IFB in this namespace,
# IPv4 ADDRA/32 on IFA and ADDRB/32 on IFB, and policy routing that sends
# the traffic between the two addresses across the pair instead of the
# loopback path: what this namespace sends to ADDRB leaves through IFA
# with source ADDRA, and the reverse.  For the in-kernel ULPs whose RDMA
# CM IDs live in the initial namespace (iSER, SMB Direct, NVMe-oF, NFS)
# and that cannot pick a source address: with both ends in one namespace
# the route to a local address is the loopback, and RDMA CM would put
# the initiator on the target's own device.  The local table's rule moves
# from preference 0 to 1000, behind the two rules (60 and 61, only for
# locally sent packets: iif lo) and their tables (60, 61); arriving
# packets still find their address in the local table, which the two
# ends accept from a local source (accept_local, no reverse-path filter).
# Neighbours are static.  Everything is recorded: cleanup puts the local
# rule back first, then deletes the two rules and the pair.
local_wire() {
	local _lw_f _lw_ma _lw_mb
	add_veth "$1" "$3" || return 1
	read -r _lw_ma <"/sys/class/net/$1/address"
	read -r _lw_mb <"/sys/class/net/$3/address"
	for _lw_f in "$1" "$3"; do
		echo 1 >"/proc/sys/net/ipv4/conf/$_lw_f/accept_local"
		echo 0 >"/proc/sys/net/ipv4/conf/$_lw_f/rp_filter"
	done
	set_knob /proc/sys/net/ipv4/conf/all/rp_filter 0 || return 1
	ip_batch -- "addr add $2/32 dev $1" "addr add $4/32 dev $3" \
		"neigh replace $4 lladdr $_lw_mb dev $1 nud permanent" \
		"neigh replace $2 lladdr $_lw_ma dev $3 nud permanent" \
		"route add $4/32 dev $1 src $2 table 60" \
		"route add $2/32 dev $3 src $4 table 61" || return 1
	ip_batch -- "rule add pref 60 iif lo to $4/32 lookup 60" \
		"rule add pref 61 iif lo to $2/32 lookup 61" || return 1
	record rule 60
	record rule 61
	if [ -n "$(ip rule show pref 0)" ]; then
		ip_batch -- "rule add pref 1000 lookup local" "rule del pref 0 lookup local" ||
			return 1
		record localrule 1000
	fi
	xrun ip route get "$4"
	xrun ip route get "$2"
}

# connected_ids DEV IDS: how many RDMA CM IDs on device DEV are connected
# in IDS, the output of `rdma resource show cm_id`.
connected_ids() {
	grep -E "(dev|link) $1[ /]" <<<"$2" | grep -c 'state CONNECT' || true
}

# The storage ULPs, configured through configfs as nvmetcli and targetcli
# do it (one write per setting, nothing saved): nvmet-rdma and LIO's
# ib_isert serve, nvme-rdma and open-iscsi's ib_iser connect.  Every RDMA
# CM ID of theirs is made in the initial network namespace, so both ends
# live there.  A case tears down what it made in an EXIT trap of its own,
# in order (initiator, then target, then devices), before cleanup runs.
XIW_CONFIGFS=/sys/kernel/config

# nvmet_rdma_up NQN PORTID ADDR PORT PATH [buffered]: an NVMe-oF subsystem
# NQN that any host may use, namespace 1 on PATH (a block device or a
# file; "buffered": through the page cache, for a file on tmpfs, which
# has no O_DIRECT before 6.6), exported on RDMA port PORTID at ADDR:PORT.
# nvmet_up TRTYPE NQN ... does the same on a port of transport TRTYPE
# (rdma, tcp).
nvmet_rdma_up() { nvmet_up rdma "$@"; }

nvmet_up() {
	local trtype=$1
	shift
	local s=$XIW_CONFIGFS/nvmet/subsystems/$1 p=$XIW_CONFIGFS/nvmet/ports/$2
	xrun mkdir "$s" || return 1
	echo 1 >"$s/attr_allow_any_host"
	xrun mkdir "$s/namespaces/1" || return 1
	echo "$5" >"$s/namespaces/1/device_path"
	[ "${6:-}" != buffered ] || echo 1 >"$s/namespaces/1/buffered_io"
	echo 1 >"$s/namespaces/1/enable"
	xrun mkdir "$p" || return 1
	echo "$trtype" >"$p/addr_trtype"
	echo ipv4 >"$p/addr_adrfam"
	echo "$3" >"$p/addr_traddr"
	echo "$4" >"$p/addr_trsvcid"
	xrun ln -s "$s" "$p/subsystems/$1"
}

# nvmet_rdma_down NQN PORTID: remove what nvmet_rdma_up or nvmet_up made
# (what is there of it).
nvmet_rdma_down() {
	local s=$XIW_CONFIGFS/nvmet/subsystems/$1 p=$XIW_CONFIGFS/nvmet/ports/$2
	[ -L "$p/subsystems/$1" ] && rm -f "$p/subsystems/$1"
	[ -d "$p" ] && rmdir "$p"
	if [ -d "$s/namespaces/1" ]; then
		echo 0 >"$s/namespaces/1/enable"
		rmdir "$s/namespaces/1"
	fi
	[ -d "$s" ] && rmdir "$s"
	return 0
}

# nvme_ns_dev NQN: the block device (name) of NQN's namespace on this host:
# the multipath head (nvmeXnY) when NVMe multipath is built in, else the
# controller's own namespace (also nvmeXnY); never the hidden nvmeXcYnZ
# path devices.  Block device names follow scan order, not the NQN.
nvme_ns_dev() {
	local b s
	for b in /sys/block/nvme*n*; do
		[[ ${b##*/} =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
		read -r s 2>/dev/null <"$b/device/subsysnqn" || continue
		[ "$s" = "$1" ] || continue
		echo "${b##*/}"
		return 0
	done
	return 1
}

# sysfs_attr_is GLOB ATTR VALUE: a directory GLOB matches has a file ATTR
# whose first line is VALUE (a controller, a session of a given name).
sysfs_attr_is() {
	local _sa_d _sa_v
	for _sa_d in $1; do
		read -r _sa_v 2>/dev/null <"$_sa_d/$2" || continue
		[ "$_sa_v" = "$3" ] && return 0
	done
	return 1
}

# nvme_ctrl_gone NQN: no controller of this host is connected to NQN.
nvme_ctrl_gone() { ! sysfs_attr_is '/sys/class/nvme/nvme*' subsysnqn "$1"; }

# iser_target_up IQN ADDR PORT BACKING: an LIO iSCSI target IQN (TPG 1,
# demo mode: any initiator, no CHAP, writable) with LUN 0 on BACKING,
# "rd:MIB" (a LIO ramdisk of MIB MiB, rd_mcp) or a block device's path
# (iblock), and one portal ADDR:PORT that serves iSER only.  LIO always
# opens a TCP listener for a portal and makes the iSER listener a child
# of it on the same address and port; on iWARP the RDMA listener is a
# real TCP listener too, so in one namespace the second bind fails
# (EADDRINUSE).  The portal is therefore made by a process in a scratch
# namespace (recorded): LIO's TCP socket is opened in its maker's
# namespace (IP_FREEBIND: the address need not exist there), ib_isert's
# RDMA CM listener, enabled afterwards, in the initial one.  ISER_HBA,
# ISER_LUN and ISER_NP name what it made; iser_target_down IQN removes it.
iser_target_up() {
	local wwn=$XIW_CONFIGFS/target/iscsi/$1 tpg _it_ns
	tpg=$wwn/tpgt_1
	ISER_NP=$tpg/np/$2:$3
	if [ ! -d $XIW_CONFIGFS/target/iscsi ]; then
		xrun mkdir $XIW_CONFIGFS/target/iscsi || return 1
		ISER_FABRIC=1
	fi
	if [[ $4 == rd:* ]]; then
		ISER_HBA=$XIW_CONFIGFS/target/core/rd_mcp_$((RANDOM % 9000 + 1000))
		ISER_LUN=$ISER_HBA/xiw_iser
		xrun mkdir -p "$ISER_LUN" || return 1
		echo "rd_pages=$((${4#rd:} * 256))" >"$ISER_LUN/control"
	else
		ISER_HBA=$XIW_CONFIGFS/target/core/iblock_$((RANDOM % 9000 + 1000))
		ISER_LUN=$ISER_HBA/xiw_iser
		xrun mkdir -p "$ISER_LUN" || return 1
		echo "udev_path=$4" >"$ISER_LUN/control"
	fi
	echo 1 >"$ISER_LUN/enable"
	xrun mkdir -p "$tpg/lun/lun_0" || return 1
	xrun ln -s "$ISER_LUN" "$tpg/lun/lun_0/xiw_iser" || return 1
	echo 0 >"$tpg/attrib/authentication"
	echo 1 >"$tpg/attrib/generate_node_acls"
	echo 1 >"$tpg/attrib/cache_dynamic_acls"
	echo 0 >"$tpg/attrib/demo_mode_write_protect"
	setup_ns _it_ns || return 1
	xrun nsenter --net="/run/netns/$_it_ns" mkdir "$ISER_NP" || return 1
	echo 1 >"$ISER_NP/iser"
	[ "$(<"$ISER_NP/iser")" = 1 ] || fail "the portal has no iSER listener"
	echo 1 >"$tpg/enable"
}

# iser_target_down IQN: remove the target iser_target_up made (what is
# there of it), and LIO's iSCSI fabric group if it made that.
iser_target_down() {
	local wwn=$XIW_CONFIGFS/target/iscsi/$1 np
	local tpg=$wwn/tpgt_1
	[ -d "$tpg" ] && echo 0 >"$tpg/enable"
	for np in "$tpg"/np/*; do
		[ -d "$np" ] || continue
		[ -e "$np/iser" ] && echo 0 >"$np/iser"
		rmdir "$np"
	done
	[ -L "$tpg/lun/lun_0/xiw_iser" ] && rm -f "$tpg/lun/lun_0/xiw_iser"
	[ -d "$tpg/lun/lun_0" ] && rmdir "$tpg/lun/lun_0"
	[ -d "$tpg" ] && rmdir "$tpg"
	[ -d "$wwn" ] && rmdir "$wwn"
	[ -n "${ISER_LUN:-}" ] && [ -d "$ISER_LUN" ] && rmdir "$ISER_LUN"
	[ -n "${ISER_HBA:-}" ] && [ -d "$ISER_HBA" ] && rmdir "$ISER_HBA"
	if ((${ISER_FABRIC:-0})) && [ -d $XIW_CONFIGFS/target/iscsi ]; then
		rmdir $XIW_CONFIGFS/target/iscsi && ISER_FABRIC=0
	fi
	return 0
}

# iscsid_up NAME: open-iscsi's iscsid in the foreground (recorded), with
# the initiator name NAME and a configuration of its own in $XIW_TMP; the
# node database is open-iscsi's (/etc/iscsi, the guests' tmpfs overlay).
iscsid_up() {
	printf 'InitiatorName=%s\n' "$1" >"$XIW_TMP/initiatorname.iscsi"
	printf 'node.startup = manual\n' >"$XIW_TMP/iscsid.conf"
	# iscsid and iscsiadm lock in /run/lock/iscsi and make only its last
	# component; the guests' /run is a fresh tmpfs.
	mkdir -p /run/lock
	# In a session of its own: iscsid's SIGTERM handler (foreground or
	# not) sends SIGTERM to its whole process group, which would else be
	# the test's.  setsid execs iscsid (no fork: bg_run's child is no
	# group leader), so the recorded pid is iscsid's.
	bg_run ISCSID_PID setsid iscsid -f -n -c "$XIW_TMP/iscsid.conf" \
		-i "$XIW_TMP/initiatorname.iscsi" >"$XIW_TMP/iscsid.log" 2>&1
	# iscsiadm reaches iscsid on an abstract UNIX socket.
	wait_for 30 grep -q ISCSIADM_ABSTRACT_NAMESPACE /proc/net/unix ||
		fail "iscsid did not start: $(<"$XIW_TMP/iscsid.log")"
}

# iser_session IQN: a session with target IQN exists on this host.
iser_session() { sysfs_attr_is '/sys/class/iscsi_session/session*' targetname "$1"; }
no_iser_session() { ! iser_session "$1"; }

# iser_disk IQN: the SCSI disk (name) of the session with IQN, once the
# scan has found LUN 0.
iser_disk() {
	local s b t
	for s in /sys/class/iscsi_session/session*; do
		read -r t 2>/dev/null <"$s/targetname" || continue
		[ "$t" = "$1" ] || continue
		for b in "$s"/device/target*/*:*:*:*/block/*; do
			[ -e "$b" ] || continue
			echo "${b##*/}"
			return 0
		done
	done
	return 1
}

# iser_login IQN PORTAL: log in to IQN at PORTAL (ADDR:PORT, a node record
# discovery made) over the iser transport; ISER_DISK is its disk (/dev/sdX).
iser_login() {
	local _il_s
	xrun iscsiadm -m node -T "$1" -p "$2" -I iser --login || fail "login over iser failed"
	wait_for 60 iser_disk "$1" || fail "no SCSI disk for $1"
	ISER_DISK=/dev/$(iser_disk "$1")
	wait_for 30 test -b "$ISER_DISK" || fail "$ISER_DISK did not appear"
	xget _il_s iscsiadm -m session
	grep -q "^iser: .*$2,1 $1" <<<"$_il_s" || fail "the session is not over iser"
}

# iser_logout IQN PORTAL: log out and wait until the session is gone.
iser_logout() {
	xrun iscsiadm -m node -T "$1" -p "$2" -I iser --logout || fail "logout failed"
	wait_for 30 no_iser_session "$1" || fail "the session outlived the logout"
}

# iser_forget IQN PORTAL: log out if logged in and delete open-iscsi's
# records of IQN and of PORTAL's discovery (best effort, for teardown).
iser_forget() {
	if iser_session "$1"; then
		iscsiadm -m node -T "$1" -p "$2" -I iser --logout >/dev/null 2>&1
		wait_for 30 no_iser_session "$1"
	fi
	iscsiadm -m node -T "$1" -p "$2" -I iser -o delete >/dev/null 2>&1
	iscsiadm -m discoverydb -t sendtargets -p "$2" -o delete >/dev/null 2>&1
	return 0
}

# ksmbd_up NETDEV DIR: the kernel's SMB server (ksmbd, with ksmbd.mountd
# from ksmbd-tools in the foreground, recorded) serving DIR as share
# $SMB_SHARE on NETDEV only, to user $SMB_USER (an existing system
# account: ksmbd.mountd maps SMB users to one) with password $SMB_PASS;
# configuration and user database in $XIW_TMP.  ksmbd listens for SMB
# Direct on 5445 (the iWARP port of MS-SMBD) when an iWARP device exists
# as it starts, else on 445, where its TCP listener is: make the RDMA
# devices first.  Waits for that listener.  ksmbd opens DIR with the
# credentials of $SMB_USER, who must be able to walk into it: when DIR is
# below $XIW_TMP (mktemp's 0700), that directory becomes 0711.
SMB_SHARE=xiw
SMB_USER=daemon
SMB_PASS=xiw-smbdirect
ksmbd_up() {
	case $2 in
	"$XIW_TMP"/*) chmod 0711 "$XIW_TMP" ;;
	esac
	cat >"$XIW_TMP/ksmbd.conf" <<-EOC
		[global]
		netbios name = XIWTEST
		bind interfaces only = yes
		interfaces = $1
		server multi channel support = no
		server signing = disabled
		smb3 encryption = no
		[$SMB_SHARE]
		path = $2
		writeable = yes
		create mask = 0666
		directory mask = 0777
	EOC
	: >"$XIW_TMP/ksmbdpwd.db"
	xrun ksmbd.adduser -a "$SMB_USER" -p "$SMB_PASS" -i "$XIW_TMP/ksmbdpwd.db" \
		-c "$XIW_TMP/ksmbd.conf" || fail "ksmbd.adduser failed"
	bg_run MOUNTD_PID ksmbd.mountd -n -c "$XIW_TMP/ksmbd.conf" -u "$XIW_TMP/ksmbdpwd.db" \
		>"$XIW_TMP/mountd.log" 2>&1
	KSMBD_UP=1
	wait_for 60 listening 5445 ||
		fail "ksmbd does not listen on 5445: $(<"$XIW_TMP/mountd.log")"
}

# ksmbd_down: stop the kernel server (its listeners and connections) and
# ksmbd.mountd, if ksmbd_up started them.
ksmbd_down() {
	((${KSMBD_UP:-0})) || return 0
	xrun ksmbd.control -s
	KSMBD_UP=0
	[ -z "${MOUNTD_PID:-}" ] || stop_bg "$MOUNTD_PID"
	wait_for 30 not_listening 5445
}

# smb_rdma_mount ADDR MNT [OPTION,...]: mount the share of ADDR on MNT
# with SMB 3.1.1 over SMB Direct (cifs, `rdma`) and check that it is.
smb_rdma_mount() {
	xrun mount -t cifs "//$1/$SMB_SHARE" "$2" \
		-o "rdma,vers=3.1.1,username=$SMB_USER,password=$SMB_PASS,uid=0,gid=0,noperm${3:+,$3}" ||
		fail "the SMB Direct mount failed"
	grep " $2 " /proc/mounts | sed 's/^/# /'
	grep -q " $2 cifs .*rdma" /proc/mounts || fail "the mount is not over RDMA"
}

# capture_start NS IF FILE: dumpcap on IF in namespace NS into FILE
# (classic pcap, whole packets, TCP only), in the background as CAP_PID
# (recorded: stop_bg ends a capture a failed case leaves behind).
capture_start() {
	rm -f "$3"
	# A large kernel buffer: under TCG dumpcap falls behind a fast transfer.
	bg_run CAP_PID ip netns exec "$1" dumpcap -i "$2" -f tcp -P -s 0 -B 64 -w "$3" \
		>"$3.log" 2>&1
	wait_for 20 grep -q "Capturing on" "$3.log" ||
		fail "dumpcap did not start: $(cat "$3.log")"
}

# capture_stop: let the last packets in, end the capture.
capture_stop() {
	sleep 1
	stop_bg -INT "$CAP_PID"
	CAP_PID=
}

# cleanup: stop the recorded background processes (stop_bg), then remove
# the recorded objects, newest first, and forget them; then put back the
# settings the case changed (restore_knobs).
cleanup() {
	local kind name pids i
	local -a objs
	stop_bg
	if [ ! -s "$XIW_TMP/objects" ]; then
		restore_knobs
		return 0
	fi
	mapfile -t objs <"$XIW_TMP/objects"
	for ((i = ${#objs[@]} - 1; i >= 0; i--)); do
		kind=${objs[i]%% *} name=${objs[i]#* }
		case $kind in
		rdma)
			if ibdev_exists "$name"; then
				xrun rdma link del "$name"
				wait_for "$WAIT_TIMEOUT" ibdev_gone "$name"
			fi
			;;
		netdev)
			netdev_exists "$name" && xrun ip link del "$name"
			;;
		localrule)
			# local_wire moved the local table's rule to $name.
			[ -n "$(ip rule show pref 0)" ] || xrun ip rule add pref 0 lookup local
			xrun ip rule del pref "$name" lookup local
			;;
		rule)
			xrun ip rule del pref "$name"
			;;
		netns)
			pids=$(ip netns pids "$name" 2>/dev/null)
			[ -z "$pids" ] || kill $pids 2>/dev/null
			xrun ip netns del "$name"
			;;
		dir)
			[ ! -d "$name" ] || xrun rmdir "$name"
			;;
		mount)
			! mountpoint -q "$name" || xrun umount "$name"
			;;
		esac
	done
	: >"$XIW_TMP/objects"
	restore_knobs
}

cleanup_all() {
	local i ref
	local -a mods
	cleanup
	dyndbg_restore
	mapfile -t mods <"$XIW_TMP/modules"
	for ((i = ${#mods[@]} - 1; i >= 0; i--)); do
		[ -d "/sys/module/${mods[i]}" ] || continue
		ref=
		{ read -r ref <"/sys/module/${mods[i]}/refcnt"; } 2>/dev/null
		if [ "$ref" = 0 ]; then
			xrun rmmod "${mods[i]}"
		else
			echo "# ${mods[i]} is in use: left loaded"
		fi
	done
	rm -rf "$XIW_TMP"
}

# The names of what the tests create: netdevs and RDMA devices "x..." (and
# the interop tests' siw devices "siwp..."), namespaces "xiw-..." (ns_name).
# The leak check looks at those only: the machine's other netdevs,
# devices and namespaces (containers, VMs, the host's own) come and go as
# they like while a case runs.
XIW_OWN_NAMES='^(x|siwp)'

# world: a snapshot of what a case could leak, one "KIND NAME" line each
# (RDMA devices, the netdevs of this namespace, named namespaces, each of
# the tests' own names), always in the same order.
world() {
	local _wo
	world_into _wo
	printf '%s' "$_wo"
}

# world_into VAR: the snapshot into VAR, without a subshell.
world_into() {
	local _wi_out _w
	_wi_out=
	for _w in "$IBDIR"/*; do
		[[ ${_w##*/} =~ $XIW_OWN_NAMES ]] && [ -e "$_w" ] && _wi_out+="ibdev ${_w##*/}"$'\n'
	done
	for _w in /sys/class/net/*; do
		[[ ${_w##*/} =~ $XIW_OWN_NAMES ]] && [ -e "$_w" ] && _wi_out+="netdev ${_w##*/}"$'\n'
	done
	for _w in /run/netns/xiw-*; do [ -e "$_w" ] && _wi_out+="netns ${_w##*/}"$'\n'; done
	printf -v "$1" '%s' "$_wi_out"
}

# run_case DESC FUNC [ARG...]
#
# CASE_RETRY_IF, when set, names a command run after a failed attempt: if
# it succeeds (it recognised a known defect of another component in the
# case's logs and said which), the case runs once more from the start and
# the second attempt's result is the case's.
run_case() {
	local desc=$1 rc=0 attempt=1
	shift
	# XIW_CASES=REGEX runs only the cases whose description matches.
	if [ -n "${XIW_CASES:-}" ] && ! [[ $desc =~ $XIW_CASES ]]; then
		ktap_skip "$desc" "not selected by XIW_CASES"
		return 0
	fi
	tier_case "$desc" || case $? in
	1)
		ktap_skip "$desc" "$TIER_WHY"
		return 0
		;;
	*)
		echo "# no row of tests/selftests/tiers names this case"
		ktap_not_ok "$desc"
		return 0
		;;
	esac
	echo "# ---- $desc"
	local t0=$EPOCHSECONDS
	world_into XIW_WORLD_BEFORE
	while :; do
		rm -f "$XIW_TMP/skip"
		# Not `( ... ) || rc=$?`: bash ignores set -e in anything left of ||.
		(
			set -eE -o pipefail
			XIW_IN_CASE=1
			trap 'echo "# FAIL: exit $? from: $BASH_COMMAND"' ERR
			"$@"
		)
		rc=$?
		cleanup
		if ! wait_for "$WAIT_TIMEOUT" world_unchanged; then
			diag "leaked objects:" "$(comm -13 <(sort <<<"$XIW_WORLD_BEFORE") <(world | sort))"
			((rc == 0 || rc == 4)) && rc=1
		fi
		((rc != 0 && rc != 4 && attempt == 1)) && [ -n "${CASE_RETRY_IF:-}" ] &&
			$CASE_RETRY_IF || break
		echo "# ---- $desc, attempt 2"
		attempt=2
	done
	echo "# case took $((EPOCHSECONDS - t0))s"
	case $rc in
	0) ktap_ok "$desc" ;;
	4) ktap_skip "$desc" "$(cat "$XIW_TMP/skip" 2>/dev/null)" ;;
	*) ktap_not_ok "$desc" ;;
	esac
}

world_unchanged() {
	local _now
	world_into _now
	[ "$_now" = "$XIW_WORLD_BEFORE" ]
}

# require_env: skip the whole test unless we are root with the tools and a
# loadable xiw module.
require_env() {
	local tool
	[ "$(id -u)" = 0 ] || ktap_skip_all "must be root"
	for tool in rdma ip ibv_devices ibv_devinfo modprobe modinfo; do
		command -v "$tool" >/dev/null || ktap_skip_all "$tool not installed"
	done
	modinfo xiw >/dev/null 2>&1 || ktap_skip_all "no xiw module for $(uname -r)"
}

# xiw_tool VAR NAME: the path of xiw's userspace tool NAME (xiw-peer,
# xiw-target, xiw-perf, ...) into VAR, from the first of: the directory
# XIW_TOOLS, bin/ beside the tests (where the selftests' `make install`
# puts the tools, see ./Makefile), the checkout's build/userspace/tools
# (make userspace), PATH (the tools installed with cmake --install).
# Fails with VAR empty.
xiw_tool() {
	local _xt_d _xt_p
	for _xt_d in ${XIW_TOOLS:+"$XIW_TOOLS"} "$XIW_SELFTEST_DIR/bin" \
		"$XIW_SELFTEST_DIR/../../build/userspace/tools"; do
		if [ -f "$_xt_d/$2" ] && [ -x "$_xt_d/$2" ]; then
			printf -v "$1" '%s' "$_xt_d/$2"
			return 0
		fi
	done
	_xt_p=$(type -P "$2") || _xt_p=
	printf -v "$1" '%s' "$_xt_p"
	[ -n "$_xt_p" ]
}

# need_tool VAR NAME: xiw_tool VAR NAME, or skip (the case inside one,
# else the whole test) saying where it looked.
need_tool() {
	local why
	xiw_tool "$@" && return 0
	why="$2 not found in ${XIW_TOOLS:+$XIW_TOOLS, }$XIW_SELFTEST_DIR/bin,"
	why+=" the checkout's build/userspace/tools or PATH (make userspace, or"
	why+=" install the selftests with their tools: tests/selftests/Makefile)"
	if [ -n "${XIW_IN_CASE:-}" ]; then
		skip "$why"
	fi
	ktap_skip_all "$why"
}

# need_peer: PEER and TARGET name the conformance peer and its target;
# skip the whole test unless both are found and xiw, dummy and rdma_ucm
# load.
need_peer() {
	need_tool PEER xiw-peer
	need_tool TARGET xiw-target
	need_module xiw || ktap_skip_all "cannot load xiw"
	need_module dummy || ktap_skip_all "no dummy module"
	need_module rdma_ucm || ktap_skip_all "no rdma_ucm module"
}
