#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xiw_cm_errors.sh: connected QPs between two xiw devices through librdmacm
# and the unmodified libsiw provider (userspace/tools/xiw-cm-test): data
# over Send, Write and Read, the SRQ limit event, and deliberate errors --
# a Send with no receive posted, an RDMA Write to a bad STag and one beyond
# the MR, more RDMA Reads at once than the ORD, a flush while a Read waits
# for its response and the next one for its ORD slot, a Read refused
# behind one waiting (completions in posting order) -- each on its own
# connection while another keeps carrying traffic; a client QP
# destroyed while its connection comes up, 40 times; and a client whose
# RDMA CM port a TCP listener holds on its address.  xiw-cm-test checks
# the completions, the affiliated async events and the QP states; this
# script checks the TERMINATE triplet each error put on the wire (xiw logs
# every TERMINATE it receives):
#
#   no receive posted   DDP (1), untagged buffer (2), no buffer (0x02)
#   unknown STag        DDP (1), tagged buffer (1), invalid STag (0x00)
#   beyond the MR       DDP (1), tagged buffer (1), base or bounds (0x01)
#
#   xce0 (dummy) 192.0.2.1     -- xiw device xea (server)
#   xce1 (dummy) 198.51.100.1  -- xiw device xeb (client)
. "$(dirname "$0")/lib.sh"

require_env
need_module xiw || ktap_skip_all "cannot load xiw"
need_module dummy || ktap_skip_all "no dummy module"
need_module rdma_ucm || ktap_skip_all "no rdma_ucm module"

need_tool CM_TEST xiw-cm-test

with_devs() {
	xiw_on_dummies xce0 192.0.2.1 xea xce1 198.51.100.1 xeb
	"$@"
}

# terms: the TERMINATEs xiw received since the mark, one triplet per line.
terms() {
	dmesg | sed -n "/$MARK/,\$p" |
		sed -n 's/.*peer sent TERMINATE \(layer [0-9]* type [0-9]* code 0x[0-9a-f]*\).*/\1/p'
}

t_cm_test() {
	local t got
	MARK="xiw_cm_errors: $(date +%s%N)"
	echo "$MARK" >/dev/kmsg
	xrun timeout 300 "$CM_TEST" -s 192.0.2.1 -c 198.51.100.1 ||
		fail "xiw-cm-test failed"
	xget got terms
	# Each error is seen by the requester (client) once: the responder
	# sent it.  Nothing else may have been terminated.
	for t in "layer 1 type 2 code 0x02" "layer 1 type 1 code 0x00" \
		 "layer 1 type 1 code 0x01"; do
		[ "$(grep -cx "$t" <<<"$got")" = 1 ] ||
			fail "expected one TERMINATE '$t' on the wire"
	done
	[ "$(grep -c . <<<"$got")" = 3 ] || fail "unexpected TERMINATEs"
	# The counters (rdma statistic) of the fresh devices agree: three DDP
	# layer TERMINATEs sent by the server's device, received by the
	# client's; FPDUs went both ways.
	local c
	for c in "xea term_sent_ddp 3" "xeb term_recv_ddp 3" \
		 "xea term_recv_ddp 0" "xeb term_sent_ddp 0" \
		 "xea term_sent_rdmap 0" "xea rx_crc_errors 0"; do
		set -- $c
		got=$(hw_counter "$1" "$2")
		diag "$1 $2 $got"
		[ "$got" = "$3" ] || fail "$1 $2 is $got, not $3"
	done
	for c in "xea rx_fpdus" "xeb rx_fpdus" "xea tx_fpdus" "xeb tx_bytes"; do
		set -- $c
		got=$(hw_counter "$1" "$2")
		diag "$1 $2 $got"
		((got > 0)) || fail "$1 $2 did not move"
	done
}

ktap_header
ktap_plan 1
run_case "xiw-cm-test: data, SRQ limit, deliberate errors with TERMINATE, QP destroyed while connecting" with_devs t_cm_test
ktap_finish
