// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: MPA connection setup between two policies, end to end through
 * the kernel build of the protocol core. For each row the initiator's
 * Request comes from xiw_mpa_request_init() and crosses the "wire"
 * (build, parse), the responder runs xiw_mpa_negotiate() and
 * xiw_mpa_reply_init(), the Reply crosses back, and the initiator
 * negotiates on it. The row names the responder's verdict, the
 * initiator's verdict and what each side then runs with; when both
 * accept, the two sides must also agree with each other.
 */
#include <kunit/test.h>
#include <linux/string.h>

#include "xiw_proto.h"

#define XIW_MPA_WIRE	(MPA_RR_HDR_LEN + MPA_MAX_PD_LEN)

/**
 * struct xiw_mpa_case - one initiator/responder pairing and its outcome
 * @desc: what the row shows
 * @ini: initiator policy
 * @rsp: responder policy
 * @rsp_err: the responder's verdict on the Request
 * @ini_err: the initiator's verdict on the Reply
 * @rev: revision both run (the Reply's revision)
 * @crc: CRC in use
 * @mk_i2r: markers in the initiator -> responder direction
 * @mk_r2i: markers in the responder -> initiator direction
 * @enhanced: the RFC 6581 IRD/ORD words were exchanged
 * @p2p: peer-to-peer mode
 * @rtr: the agreed RTR type
 * @ini_ird: initiator's IRD
 * @ini_ord: initiator's ORD
 * @rsp_ird: responder's IRD
 * @rsp_ord: responder's ORD
 *
 * The parameters are checked on each side that accepted.
 */
struct xiw_mpa_case {
	const char *desc;
	struct xiw_mpa_policy ini;
	struct xiw_mpa_policy rsp;
	enum xiw_proto_err rsp_err;
	enum xiw_proto_err ini_err;
	u8 rev;
	bool crc;
	bool mk_i2r;
	bool mk_r2i;
	bool enhanced;
	bool p2p;
	u8 rtr;
	u16 ini_ird;
	u16 ini_ord;
	u16 rsp_ird;
	u16 rsp_ord;
};

/* A policy: CRC, markers, revision, IRD, ORD. */
#define POL(c, m, r, i, o) {						\
	.crc = XIW_MPA_CRC_##c, .markers = XIW_MPA_MARKERS_##m,		\
	.rev = (r), .ird = (i), .ord = (o) }
/* A revision 2 P2P policy offering the RTR types in @t. */
#define P2P(t, i, o) {							\
	.crc = XIW_MPA_CRC_OFF, .markers = XIW_MPA_MARKERS_OFF,		\
	.rev = 2, .p2p = true, .rtr = (t), .ird = (i), .ord = (o) }
#define DEF2	POL(OFF, OFF, 2, 8, 8)

#define OK		XIW_OK
#define REJECTED	XIW_ERR_MPA_REJECTED
#define W		XIW_MPA_RTR_WRITE
#define R		XIW_MPA_RTR_READ
#define S		XIW_MPA_RTR_SEND

/* Outcome: rev, crc, markers i->r, r->i, enhanced, p2p, rtr, IRD/ORD. */
#define AGREE(r, c, mi, mr, e, p, t, ii, io, ri, ro)			\
	.rev = (r), .crc = (c), .mk_i2r = (mi), .mk_r2i = (mr),		\
	.enhanced = (e), .p2p = (p), .rtr = (t), .ini_ird = (ii),	\
	.ini_ord = (io), .rsp_ird = (ri), .rsp_ord = (ro)

/* Plain revision 2 with IRD = ORD = 8 on both sides. */
#define AGREE2(c, mi, mr)	AGREE(2, c, mi, mr, 1, 0, 0, 8, 8, 8, 8)

static const struct xiw_mpa_case xiw_mpa_cases[] = {
	/* revisions */
	{ "rev 2 both, defaults", DEF2, DEF2, OK, OK, AGREE2(0, 0, 0) },
	{ "rev 1 both", POL(OFF, OFF, 1, 8, 8), POL(OFF, OFF, 1, 8, 8),
	  OK, OK, AGREE(1, 0, 0, 0, 0, 0, 0, 8, 8, 8, 8) },
	{ "rev 1 fallback: rev 2 responder answers rev 1, no IRD/ORD words",
	  POL(OFF, OFF, 1, 4, 2), POL(OFF, OFF, 2, 16, 16),
	  OK, OK, AGREE(1, 0, 0, 0, 0, 0, 0, 4, 2, 16, 16) },
	{ "rev 1 fallback refused by a rev 2 strict responder",
	  POL(OFF, OFF, 1, 8, 8),
	  { .rev = 2, .rev_strict = true, .ird = 8, .ord = 8 },
	  XIW_ERR_MPA_REV_MISMATCH, REJECTED },
	{ "rev 1 responder rejects a rev 2 request",
	  DEF2, POL(OFF, OFF, 1, 8, 8), XIW_ERR_MPA_REV_MISMATCH, REJECTED },
	{ "rev 2 strict on both sides",
	  { .rev = 2, .rev_strict = true, .ird = 8, .ord = 8 },
	  { .rev = 2, .rev_strict = true, .ird = 8, .ord = 8 },
	  OK, OK, AGREE2(0, 0, 0) },
	{ "revision conflict is reported before the CRC conflict",
	  POL(PREFER, OFF, 2, 8, 8), POL(STRICT, OFF, 1, 8, 8),
	  XIW_ERR_MPA_REV_MISMATCH, REJECTED },

	/* CRC: initiator policy x responder policy */
	{ "CRC off / off", DEF2, DEF2, OK, OK, AGREE2(0, 0, 0) },
	{ "CRC off / prefer: on, the responder asks",
	  DEF2, POL(PREFER, OFF, 2, 8, 8), OK, OK, AGREE2(1, 0, 0) },
	{ "CRC off / require: on, the responder asks",
	  DEF2, POL(REQUIRE, OFF, 2, 8, 8), OK, OK, AGREE2(1, 0, 0) },
	{ "CRC off / strict", DEF2, POL(STRICT, OFF, 2, 8, 8),
	  OK, OK, AGREE2(0, 0, 0) },
	{ "CRC prefer / off: on, the initiator asks",
	  POL(PREFER, OFF, 2, 8, 8), DEF2, OK, OK, AGREE2(1, 0, 0) },
	{ "CRC prefer / prefer", POL(PREFER, OFF, 2, 8, 8),
	  POL(PREFER, OFF, 2, 8, 8), OK, OK, AGREE2(1, 0, 0) },
	{ "CRC prefer / require", POL(PREFER, OFF, 2, 8, 8),
	  POL(REQUIRE, OFF, 2, 8, 8), OK, OK, AGREE2(1, 0, 0) },
	{ "CRC prefer / strict", POL(PREFER, OFF, 2, 8, 8),
	  POL(STRICT, OFF, 2, 8, 8), XIW_ERR_MPA_CRC_MISMATCH, REJECTED },
	{ "CRC require / off", POL(REQUIRE, OFF, 2, 8, 8), DEF2,
	  OK, OK, AGREE2(1, 0, 0) },
	{ "CRC require / prefer", POL(REQUIRE, OFF, 2, 8, 8),
	  POL(PREFER, OFF, 2, 8, 8), OK, OK, AGREE2(1, 0, 0) },
	{ "CRC require / require", POL(REQUIRE, OFF, 2, 8, 8),
	  POL(REQUIRE, OFF, 2, 8, 8), OK, OK, AGREE2(1, 0, 0) },
	{ "CRC require / strict", POL(REQUIRE, OFF, 2, 8, 8),
	  POL(STRICT, OFF, 2, 8, 8), XIW_ERR_MPA_CRC_MISMATCH, REJECTED },
	{ "CRC strict / off", POL(STRICT, OFF, 2, 8, 8), DEF2,
	  OK, OK, AGREE2(0, 0, 0) },
	{ "CRC strict / prefer: responder turns CRC on, initiator refuses",
	  POL(STRICT, OFF, 2, 8, 8), POL(PREFER, OFF, 2, 8, 8),
	  OK, XIW_ERR_MPA_CRC_MISMATCH, AGREE2(1, 0, 0) },
	{ "CRC strict / require: responder turns CRC on, initiator refuses",
	  POL(STRICT, OFF, 2, 8, 8), POL(REQUIRE, OFF, 2, 8, 8),
	  OK, XIW_ERR_MPA_CRC_MISMATCH, AGREE2(1, 0, 0) },
	{ "CRC strict / strict", POL(STRICT, OFF, 2, 8, 8),
	  POL(STRICT, OFF, 2, 8, 8), OK, OK, AGREE2(0, 0, 0) },

	/* markers: initiator policy x responder policy */
	{ "markers off / off", DEF2, DEF2, OK, OK, AGREE2(0, 0, 0) },
	{ "markers off / prefer: responder wants them, initiator refuses",
	  DEF2, POL(OFF, PREFER, 2, 8, 8),
	  OK, XIW_ERR_MPA_MARKERS_MISMATCH, AGREE2(0, 1, 0) },
	{ "markers off / require", DEF2, POL(OFF, REQUIRE, 2, 8, 8),
	  XIW_ERR_MPA_MARKERS_MISMATCH, REJECTED },
	{ "markers prefer / off", POL(OFF, PREFER, 2, 8, 8), DEF2,
	  XIW_ERR_MPA_MARKERS_MISMATCH, REJECTED },
	{ "markers prefer / prefer: both directions",
	  POL(OFF, PREFER, 2, 8, 8), POL(OFF, PREFER, 2, 8, 8),
	  OK, OK, AGREE2(0, 1, 1) },
	{ "markers prefer / require: both directions",
	  POL(OFF, PREFER, 2, 8, 8), POL(OFF, REQUIRE, 2, 8, 8),
	  OK, OK, AGREE2(0, 1, 1) },
	{ "markers require / off", POL(OFF, REQUIRE, 2, 8, 8), DEF2,
	  XIW_ERR_MPA_MARKERS_MISMATCH, REJECTED },
	{ "markers require / prefer: both directions",
	  POL(OFF, REQUIRE, 2, 8, 8), POL(OFF, PREFER, 2, 8, 8),
	  OK, OK, AGREE2(0, 1, 1) },
	{ "markers require / require: both directions",
	  POL(OFF, REQUIRE, 2, 8, 8), POL(OFF, REQUIRE, 2, 8, 8),
	  OK, OK, AGREE2(0, 1, 1) },

	/* peer-to-peer mode and the RTR type */
	{ "P2P write / all: write", P2P(W, 8, 8), P2P(W | R | S, 8, 8),
	  OK, OK, AGREE(2, 0, 0, 0, 1, 1, W, 8, 8, 8, 8) },
	{ "P2P read / all: read", P2P(R, 8, 8), P2P(W | R | S, 8, 8),
	  OK, OK, AGREE(2, 0, 0, 0, 1, 1, R, 8, 8, 8, 8) },
	{ "P2P send / all: send", P2P(S, 8, 8), P2P(W | R | S, 8, 8),
	  OK, OK, AGREE(2, 0, 0, 0, 1, 1, S, 8, 8, 8, 8) },
	{ "P2P all / read+send: read before send", P2P(W | R | S, 8, 8),
	  P2P(R | S, 8, 8), OK, OK, AGREE(2, 0, 0, 0, 1, 1, R, 8, 8, 8, 8) },
	{ "P2P write+send / read+send: send", P2P(W | S, 8, 8),
	  P2P(R | S, 8, 8), OK, OK, AGREE(2, 0, 0, 0, 1, 1, S, 8, 8, 8, 8) },
	{ "P2P write / read: no common RTR", P2P(W, 8, 8), P2P(R, 8, 8),
	  XIW_ERR_MPA_NO_MATCHING_RTR, REJECTED },
	{ "P2P read / responder without P2P", P2P(R, 8, 8), DEF2,
	  XIW_ERR_MPA_P2P_MISMATCH, REJECTED },
	{ "no P2P / responder offering P2P: plain connection", DEF2,
	  P2P(W | R | S, 8, 8), OK, OK, AGREE2(0, 0, 0) },
	{ "P2P write / rev 1 responder", P2P(W, 8, 8), POL(OFF, OFF, 1, 8, 8),
	  XIW_ERR_MPA_REV_MISMATCH, REJECTED },

	/* IRD/ORD */
	{ "each ORD clamped to the other side's IRD",
	  POL(OFF, OFF, 2, 4, 16), POL(OFF, OFF, 2, 8, 2),
	  OK, OK, AGREE(2, 0, 0, 0, 1, 0, 0, 4, 8, 8, 2) },
	{ "responder ORD clamped to the initiator's IRD",
	  POL(OFF, OFF, 2, 2, 2), POL(OFF, OFF, 2, 16, 32),
	  OK, OK, AGREE(2, 0, 0, 0, 1, 0, 0, 2, 2, 16, 2) },
	{ "initiator ORD above IRD of an ird_strict responder",
	  POL(OFF, OFF, 2, 8, 64),
	  { .rev = 2, .ird = 8, .ord = 8, .ird_strict = true },
	  XIW_ERR_MPA_INSUFFICIENT_IRD, REJECTED },
	{ "initiator ORD equal to the IRD of an ird_strict responder",
	  POL(OFF, OFF, 2, 8, 8),
	  { .rev = 2, .ird = 8, .ord = 8, .ird_strict = true },
	  OK, OK, AGREE2(0, 0, 0) },
	{ "IRD 0 initiator: responder ORD 0",
	  POL(OFF, OFF, 2, 0, 0), DEF2,
	  OK, OK, AGREE(2, 0, 0, 0, 1, 0, 0, 0, 0, 8, 0) },
	{ "14 bit IRD/ORD",
	  POL(OFF, OFF, 2, 0x3fff, 0x3fff), POL(OFF, OFF, 2, 0x3fff, 0x3fff),
	  OK, OK, AGREE(2, 0, 0, 0, 1, 0, 0, 0x3fff, 0x3fff, 0x3fff, 0x3fff) },

	/* combinations */
	{ "siw-like initiator (CRC, IRD = ORD = 1)",
	  POL(PREFER, OFF, 2, 1, 1), DEF2,
	  OK, OK, AGREE(2, 1, 0, 0, 1, 0, 0, 1, 1, 8, 1) },
	{ "P2P read with CRC and markers required",
	  { .crc = XIW_MPA_CRC_REQUIRE, .markers = XIW_MPA_MARKERS_REQUIRE,
	    .rev = 2, .p2p = true, .rtr = R | S, .ird = 4, .ord = 4 },
	  { .crc = XIW_MPA_CRC_PREFER, .markers = XIW_MPA_MARKERS_PREFER,
	    .rev = 2, .p2p = true, .rtr = W | R | S, .ird = 8, .ord = 8 },
	  OK, OK, AGREE(2, 1, 1, 1, 1, 1, R, 4, 4, 8, 4) },
	{ "rev 1 with CRC and markers",
	  POL(PREFER, PREFER, 1, 8, 8), POL(OFF, PREFER, 1, 8, 8),
	  OK, OK, AGREE(1, 1, 1, 1, 0, 0, 0, 8, 8, 8, 8) },
};

static void xiw_mpa_case_desc(const struct xiw_mpa_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(xiw_mpa_case, xiw_mpa_cases, xiw_mpa_case_desc);

/* Compare two enum xiw_proto_err by value, naming both on failure. */
#define XIW_CHECK_ERR(kind, test, got, want) do {			\
	enum xiw_proto_err __got = (got), __want = (want);		\
									\
	KUNIT_##kind##_EQ_MSG(test, (int)__got, (int)__want,		\
			      "got %s, want %s",			\
			      xiw_proto_err_name(__got),		\
			      xiw_proto_err_name(__want));		\
} while (0)
#define XIW_ASSERT_ERR(test, got, want)	XIW_CHECK_ERR(ASSERT, test, got, want)

/* Build @f, then parse what went on the wire into @rx. */
static void xiw_mpa_wire(struct kunit *test, const struct xiw_mpa_frame *f,
			 struct xiw_mpa_frame *rx, u8 *buf)
{
	size_t n, used;

	XIW_ASSERT_ERR(test, xiw_mpa_frame_build(f, buf, XIW_MPA_WIRE, &n),
		       XIW_OK);
	XIW_ASSERT_ERR(test, xiw_mpa_frame_parse(buf, n, rx, &used), XIW_OK);
	KUNIT_ASSERT_EQ(test, used, n);
	KUNIT_ASSERT_EQ(test, rx->pdata_len, f->pdata_len);
	KUNIT_EXPECT_MEMEQ(test, rx->pdata, f->pdata, f->pdata_len);
}

/* One side's parameters against the row; @ini selects the side. */
static noinline_for_stack void
xiw_mpa_expect_side(struct kunit *test, const struct xiw_mpa_case *c,
		    const struct xiw_mpa_params *a, bool ini)
{
	const char *side = ini ? "initiator" : "responder";

	KUNIT_EXPECT_EQ_MSG(test, a->rev, c->rev, "%s", side);
	KUNIT_EXPECT_EQ_MSG(test, a->crc, c->crc, "%s", side);
	KUNIT_EXPECT_EQ_MSG(test, a->markers_tx, ini ? c->mk_i2r : c->mk_r2i,
			    "%s", side);
	KUNIT_EXPECT_EQ_MSG(test, a->markers_rx, ini ? c->mk_r2i : c->mk_i2r,
			    "%s", side);
	KUNIT_EXPECT_EQ_MSG(test, a->enhanced, c->enhanced, "%s", side);
	KUNIT_EXPECT_EQ_MSG(test, a->p2p, c->p2p, "%s", side);
	KUNIT_EXPECT_EQ_MSG(test, a->rtr, c->rtr, "%s", side);
	KUNIT_EXPECT_EQ_MSG(test, a->ird, ini ? c->ini_ird : c->rsp_ird,
			    "%s", side);
	KUNIT_EXPECT_EQ_MSG(test, a->ord, ini ? c->ini_ord : c->rsp_ord,
			    "%s", side);
}

/* Both accepted: each side sees the other's IRD/ORD and stays within it. */
static noinline_for_stack void
xiw_mpa_expect_agree(struct kunit *test, const struct xiw_mpa_params *pi,
		     const struct xiw_mpa_params *pr)
{
	KUNIT_EXPECT_EQ(test, pi->rev, pr->rev);
	KUNIT_EXPECT_EQ(test, pi->crc, pr->crc);
	KUNIT_EXPECT_EQ(test, pi->markers_tx, pr->markers_rx);
	KUNIT_EXPECT_EQ(test, pi->markers_rx, pr->markers_tx);
	KUNIT_EXPECT_EQ(test, pi->enhanced, pr->enhanced);
	KUNIT_EXPECT_EQ(test, pi->p2p, pr->p2p);
	KUNIT_EXPECT_EQ(test, pi->rtr, pr->rtr);
	if (pr->p2p)
		KUNIT_EXPECT_TRUE(test, pr->rtr == XIW_MPA_RTR_WRITE ||
				  pr->rtr == XIW_MPA_RTR_READ ||
				  pr->rtr == XIW_MPA_RTR_SEND);
	if (!pr->enhanced)
		return;
	KUNIT_EXPECT_EQ(test, pi->peer_ird, pr->ird);
	KUNIT_EXPECT_EQ(test, pi->peer_ord, pr->ord);
	KUNIT_EXPECT_EQ(test, pr->peer_ird, pi->ird);
	KUNIT_EXPECT_LE(test, pi->ord, pr->ird);
	KUNIT_EXPECT_LE(test, pr->ord, pi->ird);
}

/*
 * Request -> responder verdict and Reply -> initiator verdict, then the
 * parameters of each side that accepted and, if both did, their
 * agreement. A reject Reply carries R and the lower of the two revisions.
 */
static void xiw_mpa_handshake(struct kunit *test)
{
	static const u8 pd_req[3] = { 'x', 'i', 'w' };
	static const u8 pd_rep[2] = { 'o', 'k' };
	const struct xiw_mpa_case *c = test->param_value;
	struct xiw_mpa_frame *fr = kunit_kcalloc(test, 4, sizeof(*fr),
						 GFP_KERNEL);
	struct xiw_mpa_params *pa = kunit_kcalloc(test, 2, sizeof(*pa),
						  GFP_KERNEL);
	u8 *buf = kunit_kzalloc(test, XIW_MPA_WIRE, GFP_KERNEL);
	struct xiw_mpa_frame *req, *req_rx, *rep, *rep_rx;
	struct xiw_mpa_params *pr, *pi;
	enum xiw_proto_err vr, vi;

	KUNIT_ASSERT_NOT_NULL(test, fr);
	KUNIT_ASSERT_NOT_NULL(test, pa);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	req = &fr[0];
	req_rx = &fr[1];
	rep = &fr[2];
	rep_rx = &fr[3];
	pr = &pa[0];
	pi = &pa[1];

	XIW_ASSERT_ERR(test, xiw_mpa_request_init(&c->ini, req), XIW_OK);
	req->pdata = pd_req;
	req->pdata_len = sizeof(pd_req);
	xiw_mpa_wire(test, req, req_rx, buf);

	vr = xiw_mpa_negotiate(&c->rsp, req_rx, pr);
	XIW_ASSERT_ERR(test, vr, c->rsp_err);
	XIW_ASSERT_ERR(test, xiw_mpa_reply_init(&c->rsp, req_rx, pr, vr, rep),
		       XIW_OK);
	rep->pdata = pd_rep;
	rep->pdata_len = sizeof(pd_rep);
	xiw_mpa_wire(test, rep, rep_rx, buf);
	KUNIT_EXPECT_TRUE(test, rep_rx->reply);
	KUNIT_EXPECT_EQ(test, rep_rx->reject, vr != XIW_OK);
	KUNIT_EXPECT_EQ(test, rep_rx->rev, min(c->ini.rev, c->rsp.rev));

	vi = xiw_mpa_negotiate(&c->ini, rep_rx, pi);
	XIW_ASSERT_ERR(test, vi, c->ini_err);

	if (vr == XIW_OK)
		xiw_mpa_expect_side(test, c, pr, false);
	if (vi == XIW_OK)
		xiw_mpa_expect_side(test, c, pi, true);
	if (vr == XIW_OK && vi == XIW_OK)
		xiw_mpa_expect_agree(test, pi, pr);
}

/* The rows where one side refuses. */
static const void *xiw_mpa_refused_gen_params(XIW_KUNIT_GEN_ARGS)
{
	const struct xiw_mpa_case *c = prev ?
		(const struct xiw_mpa_case *)prev + 1 : &xiw_mpa_cases[0];

	for (; c < &xiw_mpa_cases[ARRAY_SIZE(xiw_mpa_cases)]; c++) {
		if (c->rsp_err == XIW_OK && c->ini_err == XIW_OK)
			continue;
		xiw_mpa_case_desc(c, desc);
		return c;
	}
	return NULL;
}

/*
 * The side that refuses names its reason in an LLP/MPA TERMINATE triplet
 * (RFC 5044 sec 8, RFC 6581 sec 9).
 */
static void xiw_mpa_refusal_triplet(struct kunit *test)
{
	const struct xiw_mpa_case *c = test->param_value;
	enum xiw_proto_err why = c->rsp_err != XIW_OK ? c->rsp_err : c->ini_err;
	struct xiw_term_code tc;

	KUNIT_ASSERT_TRUE(test, xiw_proto_err_term(why, &tc));
	KUNIT_EXPECT_EQ(test, tc.layer, (u8)TERM_LAYER_LLP);
	KUNIT_EXPECT_EQ(test, tc.etype, (u8)LLP_ETYPE_MPA);
	switch (why) {
	case XIW_ERR_MPA_INSUFFICIENT_IRD:
		KUNIT_EXPECT_EQ(test, tc.ecode, (u8)LLP_ECODE_INSUFFICIENT_IRD);
		break;
	case XIW_ERR_MPA_NO_MATCHING_RTR:
	case XIW_ERR_MPA_P2P_MISMATCH:
		KUNIT_EXPECT_EQ(test, tc.ecode, (u8)LLP_ECODE_NO_MATCHING_RTR);
		break;
	default:
		KUNIT_EXPECT_EQ(test, tc.ecode, (u8)LLP_ECODE_INVALID_REQ_RESP);
		break;
	}
}

static struct kunit_case xiw_mpa_neg_cases[] = {
	KUNIT_CASE_PARAM(xiw_mpa_handshake, xiw_mpa_case_gen_params),
	KUNIT_CASE_PARAM(xiw_mpa_refusal_triplet, xiw_mpa_refused_gen_params),
	{}
};

static struct kunit_suite xiw_mpa_neg_suite = {
	.name = "xiw_mpa_negotiation",
	.test_cases = xiw_mpa_neg_cases,
};

kunit_test_suites(&xiw_mpa_neg_suite);
