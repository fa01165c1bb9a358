// SPDX-License-Identifier: GPL-2.0
//
// The conformance scenarios of `xiw-peer run`: what they share.
//
// Each scenario is a function of a Ctx, the peer's end of one connection
// (xiw_peer_wire.h) together with xiw-target on the device under test
// (xiw_peer_target.h): the connection setup, the segments a scenario
// sends, and the assertions on what comes back, each throwing Failure
// with what was expected.  The scenarios live in one file per layer
// (xiw_peer_sc_mpa.cc: MPA, its CRC and markers, the device as P2P
// initiator; _ddp.cc: DDP and soft-RNR; _rdmap.cc: RDMAP and RFC 7306;
// _term.cc: TERMINATE; _fault.cc: transport faults; _data.cc: the data
// transfers that must work), and xiw_peer_scenarios.cc lists them all in
// one table: name, RFC section, rule, the device setting needed, the
// function.

#ifndef XIW_PEER_SCENARIO_H
#define XIW_PEER_SCENARIO_H

#include "xiw_peer_target.h"
#include "xiw_peer_wire.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace xiw::peer {

// `xiw-peer run`'s options, which the scenarios read too.
struct Options {
	std::string target, addr;
	uint16_t port = 18700;
	std::string filter;
	std::vector<std::string> skip;	// scenario names not to run
	bool markers = false;
	bool p2p_read_rtr = false;	// the device initiates with P2P and a Read RTR
	unsigned soft_rnr_ms = 0;	// the device's soft_rnr_ms, 0: not set
	bool quiet = false;
	double timeout = 10;
};

// ---------------------------------------------------------------------
// One scenario's connection and its assertions

struct Region {
	uint32_t stag = 0;
	uint64_t base = 0;
};

constexpr uint32_t kRegionLen = 65536;
constexpr uint32_t kPeerStag = 0x00c0de01;	// the peer's own "memory"
constexpr uint64_t kPeerTo = 0x100000;

struct ConnOpts {
	uint8_t rev = 2;
	bool enhanced = true;
	bool crc = false;
	bool markers = false;
	bool p2p = false;
	uint8_t rtr = 0;
	uint16_t ird = 4, ord = 4;
	Bytes pdata;
	int rcvbuf = 0, mss = 0;	// our socket's SO_RCVBUF and TCP_MAXSEG, 0: default
	// xiw-target's side
	int recvs = 4;		// receives posted at accept
	int rlen = 1024;	// their length
	int t_ird = 4, t_ord = 4;
	std::string accept;	// more accept arguments
};

// @n octets of the pattern of @seed (xiw_pattern.h) from offset @first.
Bytes pattern(size_t n, uint32_t seed, uint64_t first = 0);

xiw_term_code tc(uint8_t l, uint8_t t, uint8_t c);

class Ctx {
public:
	Ctx(const Options &o, Target &t) : o_(o), t_(t), mem_(kRegionLen) {}

	const Options &o_;
	Target &t_;
	Conn c;
	std::map<std::string, Region> reg;
	MpaIn reply;
	xiw_mpa_frame req = {};
	Bytes target_pdata;		// private data the target saw
	int recvs_left = 0;		// receives posted and not yet consumed
	Bytes mem_;			// the peer's memory, STag kPeerStag

	// ---- connection setup

	Bytes request(const ConnOpts &co);
	void tcp(const ConnOpts &co = {});
	// Accept on the target; fills reg.
	void target_accept(const ConnOpts &co);
	// The whole setup: TCP, Request, accept, Reply, RTR, established.
	void connect(const ConnOpts &co = {});
	void send_rtr(uint8_t rtr);

	// ---- sending

	void send(const SegSpec &s);
	SegSpec send_seg(const Bytes &data, uint32_t msn, uint32_t mo = 0, bool last = true,
			 uint8_t op = RDMAP_OP_SEND);
	// A whole Send message, one segment.
	void send_msg(const Bytes &data);
	SegSpec write_seg(uint32_t stag, uint64_t to, const Bytes &data, bool last = true);
	SegSpec read_req(uint32_t src_stag, uint64_t src_to, uint32_t size, uint32_t msn);

	// ---- receiving and asserting

	Segment recv(const char *what, double timeout = 0);
	std::string lost();
	// Receive a whole Send message; checks MSN, MO and segments.
	Bytes recv_send(uint32_t msn);
	// Wait for the TERMINATE the target must send; check its triplet and
	// the copied headers.  @bad: header octets of the offending segment
	// (empty: not checked).
	xiw_term expect_term(xiw_term_code want, const Bytes &bad = {});
	// Poll the target's QP state until it is @want (a state change may
	// lag the TERMINATE a little).
	void expect_state(const std::string &want);

	struct Wc {
		uint64_t id;
		std::string status, opcode;
		uint32_t len;
	};

	std::vector<Wc> poll(int n, double timeout = 3);
	// The next completion must be @status (and @len when >= 0).
	Wc expect_wc(const std::string &status, long len = -1, const std::string &opcode = "");
	void expect_no_wc();
	void check(const std::string &region, uint64_t off, size_t len, uint32_t seed,
		   uint64_t first = 0);
	// After a TERMINATE: the QP is in error, every receive still posted
	// completes flushed (or with an error), and the TCP stream ends.
	void expect_dead();
	// The stream ends in order after @what: a FIN, not a reset, which
	// would have thrown away whatever the target's socket still held.
	void expect_fin(const char *what);
	void term_and_dead(xiw_term_code want, const Bytes &bad = {});
	// The MPA Request was refused: the connection closes and no Reply
	// (or a Reply with the R flag when @reject_ok) arrives; the target's
	// ULP never sees a connection request.
	void expect_refused(bool reject_ok);
	// A Send carrying @n octets that the target must receive intact:
	// proof that the stream is alive after an edge case.
	void alive(size_t n = 64, uint32_t seed = 9);

	// Offset in the target's rcv region of the next receive's buffer.
	uint64_t recv_buf() const { return uint64_t(next_recv) * uint64_t(rlen); }

	int rlen = 1024, next_recv = 0;
};

// ---------------------------------------------------------------------
// Helpers of the scenarios of more than one layer

xiw_term_code kDdpT(uint8_t c);
xiw_term_code kDdpU(uint8_t c);
xiw_term_code kProt(uint8_t c);
xiw_term_code kOp(uint8_t c);
xiw_term_code kMpa(uint8_t c);

// Send @s (broken on purpose) and expect the target's TERMINATE @want.
void breaks(Ctx &x, const SegSpec &s, xiw_term_code want);

void need(bool cond, const std::string &what);

// The target answers a Read Request for a whole region into a window
// it cannot fill: we announce a 1 KiB MSS (a small send buffer on the
// target, sized by the MSS) and a 4 KiB receive buffer, and read slowly.
ConnOpts small_window();

// A Read Request for all of ro; the target has started answering it.
SegSpec read_ro_started(Ctx &x);

// ---------------------------------------------------------------------
// The table

// What a scenario needs of the device beyond its defaults (a `run`
// option that says the device has it); without it the scenario is
// skipped.
enum class Need {
	None,
	Markers,	// --markers
	P2pReadRtr,	// --p2p-read-rtr
	SoftRnr,	// --soft-rnr MS
};

// A scenario's function: plays it on @x, throws Failure where the device
// does not follow the rule.
using ScenarioFn = void(Ctx &x);

struct Scenario {
	const char *name;
	const char *rfc;	// the RFC section (or setting) of the rule
	const char *rule;	// what the device must do
	Need needs;
	ScenarioFn *run;
};

// Every scenario, in the order `xiw-peer list` and `run` follow.
std::span<const Scenario> scenarios();

// ---------------------------------------------------------------------
// The scenarios, by file.  The table calls those with more parameters
// than a Ctx with their arguments bound.

// xiw_peer_sc_mpa.cc: MPA connection setup (RFC 5044 7.1, RFC 6581), full
// operation with CRC and markers (RFC 5044 4, 5), the device as P2P
// initiator (RFC 6581)
ScenarioFn mpa_rev2, mpa_responder_first, mpa_rev1, mpa_crc_on, mpa_crc_off, mpa_pdata_over,
	mpa_reply_pdata, mpa_ulp_reject, mpa_bad_key, mpa_reply_key, mpa_rev0, mpa_rev3,
	mpa_pd_too_long, mpa_enhanced_short, mpa_truncated, mpa_markers_refused,
	mpa_reject_plain, mpa_rsvd_flags, mpa_p2p_read, mpa_p2p_write, mpa_p2p_send,
	mpa_rtr_missing, mpa_ird_ord;
ScenarioFn llp_crc_error, llp_crc_error_write, llp_crc_field_ignored, llp_ulpdu_short,
	llp_markers_ok, llp_marker_mismatch;
ScenarioFn initiator_rtr_read_payload, initiator_reply_no_rtr;
void mpa_pdata(Ctx &x, uint8_t rev);
void initiator_rev1_reject(Ctx &x, bool pdata);

// xiw_peer_sc_ddp.cc: DDP (RFC 5041 7), soft-RNR (xiw's soft_rnr_ms)
ScenarioFn ddp_t_version, ddp_msn_nobuf, ddp_msn_nobuf_after, ddp_mo_beyond, ddp_too_long,
	ddp_too_long_multiseg, ddp_resp_bad_stag, ddp_resp_too_long, ddp_resp_wrong_to;
ScenarioFn rnr_soft_wait, rnr_soft_timeout, rnr_soft_fin;
void ddp_ut_version(Ctx &x, uint8_t dv);
void ddp_bad_qn(Ctx &x, uint32_t qn);
void ddp_msn_range(Ctx &x, uint32_t msn);
// A Write that @mk builds once connected must end in the TERMINATE DDP
// tagged @code (RDMAP protection @code when @rdmap), nothing placed.
void ddp_t_write(Ctx &x, const std::function<SegSpec(Ctx &)> &mk, uint8_t code,
		 bool rdmap = false);

// xiw_peer_sc_rdmap.cc: RDMAP (RFC 5040 7), atomics (RFC 7306), the
// verbs fence
ScenarioFn rdmap_send_tagged, rdmap_resp_unsolicited, rdmap_read_wrap, rdmap_read_beyond_ird,
	rdmap_read_segmented, rdmap_read_payload, rdmap_send_inv_bad, rdmap_imm_user,
	rdmap_atomic_rights, rdmap_atomic_bad_op, rdmap_atomic_resp_unsolicited,
	rdmap_read_source_dereg, rdmap_read_msn_ahead;
void rdmap_fence_send(Ctx &x, const char *op);
void rdmap_version(Ctx &x, bool write, uint8_t rv);
void rdmap_opcode(Ctx &x, uint8_t op);
void rdmap_read_bad(Ctx &x, const char *region, int64_t off, uint32_t size, uint8_t code,
		    uint32_t stag_xor = 0);

// xiw_peer_sc_term.cc: TERMINATE (RFC 5040 4.8, 5.4)
ScenarioFn ddp_term_msn, rdmap_peer_terminate, rdmap_terminate_midstream,
	term_closed_window, term_closed_window_bound;

// xiw_peer_sc_fault.cc: faults of the transport
ScenarioFn fault_rst_read_queued;
void fault_rst(Ctx &x, bool mid_message);

// xiw_peer_sc_data.cc: data transfers that must work, edge cases included
ScenarioFn data_send_multiseg, data_send_bytewise, data_crc_bytewise, data_send_zero,
	data_send_sequence, data_send_exact_fit, data_write_ooo, data_write_edges,
	data_write_zero_bad_stag, data_read_zero_bad_stag, data_read, data_read_whole,
	data_target_send, data_target_write, data_target_read, data_write_then_send,
	data_send_zc_fallback;

} // namespace xiw::peer

#endif
