// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: every row of the shared vector tables (tests/vectors/) run
 * through the kernel build of the protocol core, the same way the
 * userspace GoogleTest suites (tests/unit/) consume them:
 *
 *   xiw_vectors_crc   CRC32c known answers, wire octets, any split
 *   xiw_vectors_mpa   MPA Request/Reply decode, prefixes, exact encode,
 *                     negotiation verdicts
 *   xiw_vectors_hdr   DDP/RDMAP header decode, exact encode, and the
 *                     deframer's verdict on the framed header
 *   xiw_vectors_term  TERMINATE bodies and the error -> triplet table
 *   xiw_vectors_fpdu  FPDU streams through xiw_rx_step() delivered whole,
 *                     one octet at a time and in pseudo-random pieces
 *
 * Error rows assert the exact enum xiw_proto_err and the TERMINATE
 * layer/etype/ecode that xiw_proto_err_term() gives for it, compared with
 * the independently generated xiw_vec_err_term_rows table.
 */
#include <kunit/test.h>
#include <linux/string.h>

#include "xiw_proto.h"
#include "vectors/crc32c_vectors.h"
#include "vectors/fpdu_vectors.h"
#include "vectors/mpa_vectors.h"
#include "vectors/rdmap_vectors.h"
#include "vectors/term_vectors.h"

/* ---------------------------------------------------------------------- */
/* Shared helpers                                                         */
/* ---------------------------------------------------------------------- */

/*
 * KUNIT_ARRAY_PARAM() over the rows of @array whose ->err is XIW_OK only
 * (encode and prefix cases make no sense for rejected input).
 */
#define XIW_OK_ROWS_PARAM(name, array)					\
	static const void *name##_gen_params(XIW_KUNIT_GEN_ARGS)	\
	{								\
		typeof(&(array)[0]) r = prev ?				\
			(typeof(&(array)[0]))prev + 1 : &(array)[0];	\
									\
		for (; r < &(array)[ARRAY_SIZE(array)]; r++) {		\
			if (r->err != XIW_OK)				\
				continue;				\
			strscpy(desc, r->desc, KUNIT_PARAM_DESC_SIZE);	\
			return r;					\
		}							\
		return NULL;						\
	}

/* The layer/etype/ecode of @err must be the one the RFC table names. */
static void xiw_expect_triplet(struct kunit *test, enum xiw_proto_err err)
{
	const struct xiw_vec_err_term *row = NULL;
	struct xiw_term_code tc;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(xiw_vec_err_term_rows); i++)
		if (xiw_vec_err_term_rows[i].err == err)
			row = &xiw_vec_err_term_rows[i];
	KUNIT_ASSERT_NOT_NULL_MSG(test, row, "no RFC triplet row for %s",
				  xiw_proto_err_name(err));
	KUNIT_ASSERT_TRUE_MSG(test, xiw_proto_err_term(err, &tc),
			      "%s has no triplet", xiw_proto_err_name(err));
	KUNIT_EXPECT_EQ_MSG(test, tc.layer, row->layer, "%s",
			    xiw_proto_err_name(err));
	KUNIT_EXPECT_EQ_MSG(test, tc.etype, row->etype, "%s",
			    xiw_proto_err_name(err));
	KUNIT_EXPECT_EQ_MSG(test, tc.ecode, row->ecode, "%s",
			    xiw_proto_err_name(err));
}

/* Compare two enum xiw_proto_err by value, naming both on failure. */
#define XIW_CHECK_ERR(kind, test, got, want) do {			\
	enum xiw_proto_err __got = (got), __want = (want);		\
									\
	KUNIT_##kind##_EQ_MSG(test, (int)__got, (int)__want,		\
			      "got %s, want %s",			\
			      xiw_proto_err_name(__got),		\
			      xiw_proto_err_name(__want));		\
} while (0)
#define XIW_EXPECT_ERR(test, got, want)	XIW_CHECK_ERR(EXPECT, test, got, want)
#define XIW_ASSERT_ERR(test, got, want)	XIW_CHECK_ERR(ASSERT, test, got, want)

/* ---------------------------------------------------------------------- */
/* CRC32c                                                                 */
/* ---------------------------------------------------------------------- */

static void xiw_vec_crc_desc(const struct xiw_vec_crc32c *v, char *desc)
{
	strscpy(desc, v->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(xiw_vec_crc, xiw_vec_crc32c_rows, xiw_vec_crc_desc);

/* The CRC field goes on the wire as the row's four octets. */
static void xiw_vec_crc_wire(struct kunit *test)
{
	const struct xiw_vec_crc32c *v = test->param_value;
	u32 crc = xiw_crc_update(XIW_CRC_SEED, v->data, v->len);
	u8 field[MPA_CRC_LEN];

	xiw_crc_put(crc, field);
	KUNIT_EXPECT_MEMEQ(test, field, v->wire, MPA_CRC_LEN);
	KUNIT_EXPECT_EQ(test, xiw_crc32c_value(v->data, v->len), (u32)v->value);
	KUNIT_EXPECT_EQ(test, xiw_crc_get(v->wire), crc);
}

/* Feeding the running CRC in two pieces, cut anywhere, gives the value. */
static void xiw_vec_crc_any_split(struct kunit *test)
{
	const struct xiw_vec_crc32c *v = test->param_value;
	unsigned int cut;

	for (cut = 0; cut <= v->len; cut++) {
		u32 c = xiw_crc_update(XIW_CRC_SEED, v->data, cut);

		c = xiw_crc_update(c, v->data + cut, v->len - cut);
		KUNIT_EXPECT_EQ_MSG(test, ~c, (u32)v->value, "cut at %u", cut);
	}
}

static struct kunit_case xiw_vec_crc_cases[] = {
	KUNIT_CASE_PARAM(xiw_vec_crc_wire, xiw_vec_crc_gen_params),
	KUNIT_CASE_PARAM(xiw_vec_crc_any_split, xiw_vec_crc_gen_params),
	{}
};

static struct kunit_suite xiw_vec_crc_suite = {
	.name = "xiw_vectors_crc",
	.test_cases = xiw_vec_crc_cases,
};

/* ---------------------------------------------------------------------- */
/* MPA Request/Reply frames                                               */
/* ---------------------------------------------------------------------- */

#define XIW_MPA_BUF	(MPA_RR_HDR_LEN + MPA_MAX_PD_LEN + 8)

static void xiw_vec_mpa_desc(const struct xiw_vec_mpa *v, char *desc)
{
	strscpy(desc, v->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(xiw_vec_mpa, xiw_vec_mpa_rows, xiw_vec_mpa_desc);
XIW_OK_ROWS_PARAM(xiw_vec_mpa_ok, xiw_vec_mpa_rows);

static noinline_for_stack void
xiw_vec_mpa_expect_fields(struct kunit *test, const struct xiw_vec_mpa *v,
			  const struct xiw_mpa_frame *f)
{
	KUNIT_EXPECT_EQ(test, f->reply, !!v->reply);
	KUNIT_EXPECT_EQ(test, f->markers, !!v->m);
	KUNIT_EXPECT_EQ(test, f->crc, !!v->c);
	KUNIT_EXPECT_EQ(test, f->reject, !!v->r);
	KUNIT_EXPECT_EQ(test, f->enhanced, !!v->enhanced);
	KUNIT_EXPECT_EQ(test, f->rev, v->rev);
	KUNIT_EXPECT_EQ(test, f->p2p, !!v->p2p);
	KUNIT_EXPECT_EQ(test, f->rtr, v->rtr);
	KUNIT_EXPECT_EQ(test, f->ird, v->ird);
	KUNIT_EXPECT_EQ(test, f->ord, v->ord);
	KUNIT_EXPECT_EQ(test, (unsigned int)f->pdata_len, v->pdata_len);
	if (v->pdata_len)
		KUNIT_EXPECT_PTR_EQ(test, f->pdata, v->bytes + v->pdata_off);
	else
		KUNIT_EXPECT_NULL(test, f->pdata);
}

/* Decode: the fields, or the exact error with nothing consumed. */
static void xiw_vec_mpa_decode(struct kunit *test)
{
	const struct xiw_vec_mpa *v = test->param_value;
	struct xiw_mpa_frame f;
	enum xiw_proto_err err;
	size_t used = 77;

	err = xiw_mpa_frame_parse(v->bytes, v->len, &f, &used);
	XIW_ASSERT_ERR(test, err, v->err);
	if (v->err != XIW_OK) {
		KUNIT_EXPECT_EQ(test, used, (size_t)0);
		xiw_expect_triplet(test, v->err);
		return;
	}
	KUNIT_EXPECT_EQ(test, used, (size_t)v->consumed);
	xiw_vec_mpa_expect_fields(test, v, &f);
}

/*
 * Every proper prefix of an accepted frame is "truncated" and
 * xiw_mpa_frame_need() says how much is missing; octets after the frame
 * (the first FPDU) are not consumed.
 */
static void xiw_vec_mpa_prefixes(struct kunit *test)
{
	const struct xiw_vec_mpa *v = test->param_value;
	u8 *more = kunit_kzalloc(test, v->len + 4, GFP_KERNEL);
	struct xiw_mpa_frame f;
	enum xiw_proto_err err;
	size_t used, n, need;

	KUNIT_ASSERT_NOT_NULL(test, more);
	for (n = 0; n < v->len; n++) {
		err = xiw_mpa_frame_parse(v->bytes, n, &f, &used);
		need = xiw_mpa_frame_need(v->bytes, n);
		if (err != XIW_ERR_MPA_TRUNCATED ||
		    need != (n < MPA_RR_HDR_LEN ? MPA_RR_HDR_LEN : v->len)) {
			KUNIT_FAIL(test, "prefix of %zu octets: %s, need %zu",
				   n, xiw_proto_err_name(err), need);
			break;
		}
	}
	memcpy(more, v->bytes, v->len);
	more[v->len + 1] = 14;	/* the next FPDU: ULPDU_Length 14 ... */
	more[v->len + 2] = 1;
	more[v->len + 3] = 2;
	err = xiw_mpa_frame_parse(more, v->len + 4, &f, &used);
	XIW_EXPECT_ERR(test, err, XIW_OK);
	KUNIT_EXPECT_EQ(test, used, (size_t)v->len);
}

/*
 * Encode the decoded frame: the exact input octets. The one frame that is
 * not canonical (0x10 flag on revision 1, where it means nothing) comes
 * back with that flag cleared and nothing else changed.
 */
static void xiw_vec_mpa_encode(struct kunit *test)
{
	const struct xiw_vec_mpa *v = test->param_value;
	u8 *out = kunit_kzalloc(test, XIW_MPA_BUF, GFP_KERNEL);
	u8 *want = kunit_kzalloc(test, XIW_MPA_BUF, GFP_KERNEL);
	struct xiw_mpa_frame f, g;
	size_t used, n;

	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_ASSERT_NOT_NULL(test, want);
	KUNIT_ASSERT_LE(test, (size_t)v->len, (size_t)XIW_MPA_BUF);
	memcpy(want, v->bytes, v->len);
	if (!v->enhanced)
		want[MPA_RR_FLAGS_OFF] &= ~MPA_RR_FLAG_ENHANCED;

	XIW_ASSERT_ERR(test, xiw_mpa_frame_parse(v->bytes, v->len, &f, &used),
		       XIW_OK);
	XIW_ASSERT_ERR(test, xiw_mpa_frame_build(&f, out, XIW_MPA_BUF, &n),
		       XIW_OK);
	KUNIT_ASSERT_EQ(test, n, (size_t)v->len);
	KUNIT_EXPECT_MEMEQ(test, out, want, v->len);

	XIW_ASSERT_ERR(test, xiw_mpa_frame_parse(out, n, &g, &used), XIW_OK);
	KUNIT_EXPECT_EQ(test, used, n);
	KUNIT_EXPECT_EQ(test, g.rev, f.rev);
	KUNIT_EXPECT_EQ(test, g.enhanced, f.enhanced);
	KUNIT_EXPECT_EQ(test, g.ird, f.ird);
	KUNIT_EXPECT_EQ(test, g.ord, f.ord);
	KUNIT_EXPECT_EQ(test, g.rtr, f.rtr);
	KUNIT_EXPECT_EQ(test, g.pdata_len, f.pdata_len);
	XIW_EXPECT_ERR(test, xiw_mpa_frame_build(&f, out, n - 1, &n),
		       XIW_ERR_NOSPACE);
}

static void xiw_vec_neg_desc(const struct xiw_vec_mpa_neg *v, char *desc)
{
	strscpy(desc, v->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(xiw_vec_neg, xiw_vec_mpa_neg_rows, xiw_vec_neg_desc);

static noinline_for_stack void
xiw_vec_neg_expect_params(struct kunit *test, const struct xiw_mpa_params *w,
			  const struct xiw_mpa_params *a)
{
	KUNIT_EXPECT_EQ(test, a->rev, w->rev);
	KUNIT_EXPECT_EQ(test, a->crc, w->crc);
	KUNIT_EXPECT_EQ(test, a->markers_tx, w->markers_tx);
	KUNIT_EXPECT_EQ(test, a->markers_rx, w->markers_rx);
	KUNIT_EXPECT_EQ(test, a->enhanced, w->enhanced);
	KUNIT_EXPECT_EQ(test, a->p2p, w->p2p);
	KUNIT_EXPECT_EQ(test, a->rtr, w->rtr);
	KUNIT_EXPECT_EQ(test, a->ird, w->ird);
	KUNIT_EXPECT_EQ(test, a->ord, w->ord);
	KUNIT_EXPECT_EQ(test, a->peer_ird, w->peer_ird);
	KUNIT_EXPECT_EQ(test, a->peer_ord, w->peer_ord);
}

/*
 * Negotiate with the row's peer frame: the agreed parameters or the exact
 * reject reason; a responder's reject goes out as a Reply with R set.
 */
static void xiw_vec_neg_verdict(struct kunit *test)
{
	const struct xiw_vec_mpa_neg *v = test->param_value;
	u8 *out = kunit_kzalloc(test, XIW_MPA_BUF, GFP_KERNEL);
	struct xiw_mpa_frame peer, rep, back;
	struct xiw_mpa_params a;
	size_t used, n;

	KUNIT_ASSERT_NOT_NULL(test, out);
	XIW_ASSERT_ERR(test, xiw_mpa_frame_parse(v->peer, v->peer_len, &peer,
						 &used), XIW_OK);
	XIW_ASSERT_ERR(test, xiw_mpa_negotiate(&v->pol, &peer, &a), v->err);
	if (v->err == XIW_OK) {
		xiw_vec_neg_expect_params(test, &v->agreed, &a);
		return;
	}
	xiw_expect_triplet(test, v->err);
	if (peer.reply)
		return;
	XIW_ASSERT_ERR(test, xiw_mpa_reply_init(&v->pol, &peer, NULL, v->err,
						&rep), XIW_OK);
	XIW_ASSERT_ERR(test, xiw_mpa_frame_build(&rep, out, XIW_MPA_BUF, &n),
		       XIW_OK);
	XIW_ASSERT_ERR(test, xiw_mpa_frame_parse(out, n, &back, &used), XIW_OK);
	KUNIT_EXPECT_TRUE(test, back.reply);
	KUNIT_EXPECT_TRUE(test, back.reject);
}

static struct kunit_case xiw_vec_mpa_cases[] = {
	KUNIT_CASE_PARAM(xiw_vec_mpa_decode, xiw_vec_mpa_gen_params),
	KUNIT_CASE_PARAM(xiw_vec_mpa_prefixes, xiw_vec_mpa_ok_gen_params),
	KUNIT_CASE_PARAM(xiw_vec_mpa_encode, xiw_vec_mpa_ok_gen_params),
	KUNIT_CASE_PARAM(xiw_vec_neg_verdict, xiw_vec_neg_gen_params),
	{}
};

static struct kunit_suite xiw_vec_mpa_suite = {
	.name = "xiw_vectors_mpa",
	.test_cases = xiw_vec_mpa_cases,
};

/* ---------------------------------------------------------------------- */
/* FPDU deframing under a delivery plan                                   */
/* ---------------------------------------------------------------------- */

/* How a stream is cut into the pieces handed to xiw_rx_step(). */
enum xiw_plan_kind {
	XIW_PLAN_WHOLE,
	XIW_PLAN_BYTE,
	XIW_PLAN_RANDOM,
};

struct xiw_plan {
	enum xiw_plan_kind kind;
	u32 state;	/* xorshift32 state, never 0 */
	u32 max;	/* XIW_PLAN_RANDOM: pieces of 1..max octets */
};

static u32 xiw_xorshift32(u32 *s)
{
	u32 x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*s = x;
	return x;
}

static size_t xiw_plan_next(struct xiw_plan *pl, size_t left)
{
	size_t piece = left;

	if (pl->kind == XIW_PLAN_BYTE)
		piece = 1;
	else if (pl->kind == XIW_PLAN_RANDOM)
		piece = 1 + xiw_xorshift32(&pl->state) % pl->max;
	return piece < left ? piece : left;
}

#define XIW_DF_SEGS	4

/*
 * What a deframer run produced: the error, the events, every payload
 * octet in order and the raw header octets of the first segments.
 */
struct xiw_deframe {
	enum xiw_proto_err err;
	unsigned int hdrs;
	unsigned int ends;
	size_t consumed;
	size_t payload_len;
	u8 *payload;		/* capacity: the stream length */
	struct xiw_rdmap_hdr hdr[XIW_DF_SEGS];
	u8 raw[XIW_DF_SEGS][XIW_RX_HDR_BUF];
	u8 raw_len[XIW_DF_SEGS];
	const char *bad;	/* first event invariant broken, or NULL */
};

static struct xiw_deframe *xiw_deframe(struct kunit *test, const u8 *s,
				       size_t len, bool crc, bool markers,
				       u32 pos, u32 max_ulpdu,
				       struct xiw_plan *pl)
{
	struct xiw_deframe *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct xiw_rx *rx = kunit_kzalloc(test, sizeof(*rx), GFP_KERNEL);
	size_t off = 0, seg_payload = 0;

	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_NOT_NULL(test, rx);
	r->payload = kunit_kzalloc(test, len + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->payload);

	xiw_rx_init(rx, crc, markers, pos, max_ulpdu);
	while (off < len) {
		size_t left = xiw_plan_next(pl, len - off);
		const u8 *p = s + off;

		off += left;
		while (left) {
			struct xiw_rx_event ev;
			size_t used = 0;
			enum xiw_proto_err e;

			e = xiw_rx_step(rx, p, left, &used, &ev);
			if (used > left) {
				r->bad = "consumed more than offered";
				return r;
			}
			r->consumed += used;
			if (e != XIW_OK) {
				r->err = e;
				return r;
			}
			if (used == 0) {
				r->bad = "no progress";
				return r;
			}
			switch (ev.type) {
			case XIW_RX_EV_HDR:
				if (r->hdrs != r->ends && !r->bad)
					r->bad = "header inside a segment";
				if (r->hdrs < XIW_DF_SEGS) {
					r->hdr[r->hdrs] = rx->hdr;
					memcpy(r->raw[r->hdrs], rx->raw,
					       rx->raw_got);
					r->raw_len[r->hdrs] = rx->raw_got;
				}
				r->hdrs++;
				seg_payload = 0;
				break;
			case XIW_RX_EV_DATA:
				if (r->hdrs == r->ends)
					r->bad = r->bad ?: "data outside a segment";
				else if (ev.offset != seg_payload)
					r->bad = r->bad ?: "data offset gap";
				else if (ev.data < p || ev.data + ev.len > p + used)
					r->bad = r->bad ?: "data outside input";
				else if (r->payload_len + ev.len > len)
					r->bad = r->bad ?: "more payload than stream";
				else
					memcpy(r->payload + r->payload_len,
					       ev.data, ev.len);
				r->payload_len += ev.len;
				seg_payload += ev.len;
				break;
			case XIW_RX_EV_END:
				if (r->hdrs == r->ends)
					r->bad = r->bad ?: "end without header";
				else
					r->ends++;
				break;
			default:
				if (used != left)
					r->bad = r->bad ?: "no event before input end";
				break;
			}
			p += used;
			left -= used;
		}
	}
	return r;
}

/* Two runs over the same stream produced the same segments and payload. */
static noinline_for_stack void
xiw_expect_same_deframe(struct kunit *test, const struct xiw_deframe *a,
			const struct xiw_deframe *b)
{
	unsigned int i;

	XIW_EXPECT_ERR(test, b->err, a->err);
	KUNIT_EXPECT_EQ(test, b->hdrs, a->hdrs);
	KUNIT_EXPECT_EQ(test, b->ends, a->ends);
	KUNIT_ASSERT_EQ(test, b->payload_len, a->payload_len);
	KUNIT_EXPECT_MEMEQ(test, b->payload, a->payload, a->payload_len);
	for (i = 0; i < a->hdrs && i < b->hdrs && i < XIW_DF_SEGS; i++) {
		KUNIT_EXPECT_EQ(test, b->raw_len[i], a->raw_len[i]);
		KUNIT_EXPECT_MEMEQ(test, b->raw[i], a->raw[i], a->raw_len[i]);
	}
}

/* ---------------------------------------------------------------------- */
/* DDP/RDMAP headers                                                      */
/* ---------------------------------------------------------------------- */

static void xiw_vec_hdr_desc(const struct xiw_vec_hdr *v, char *desc)
{
	strscpy(desc, v->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(xiw_vec_hdr, xiw_vec_hdr_rows, xiw_vec_hdr_desc);
XIW_OK_ROWS_PARAM(xiw_vec_hdr_ok, xiw_vec_hdr_rows);

static noinline_for_stack void
xiw_vec_hdr_expect_op(struct kunit *test, const struct xiw_vec_hdr *v,
		      const struct xiw_rdmap_hdr *h)
{
	const unsigned long long *f = v->f;

	switch (v->opcode) {
	case RDMAP_OP_READ_REQ:
		KUNIT_EXPECT_EQ(test, (u64)h->u.read_req.sink_stag, f[0]);
		KUNIT_EXPECT_EQ(test, (u64)h->u.read_req.sink_to, f[1]);
		KUNIT_EXPECT_EQ(test, (u64)h->u.read_req.size, f[2]);
		KUNIT_EXPECT_EQ(test, (u64)h->u.read_req.src_stag, f[3]);
		KUNIT_EXPECT_EQ(test, (u64)h->u.read_req.src_to, f[4]);
		break;
	case RDMAP_OP_ATOMIC_REQ:
		KUNIT_EXPECT_EQ(test, (u64)h->u.atomic_req.op, f[0]);
		KUNIT_EXPECT_EQ(test, (u64)h->u.atomic_req.req_id, f[1]);
		KUNIT_EXPECT_EQ(test, (u64)h->u.atomic_req.stag, f[2]);
		KUNIT_EXPECT_EQ(test, (u64)h->u.atomic_req.to, f[3]);
		KUNIT_EXPECT_EQ(test, (u64)h->u.atomic_req.data, f[4]);
		KUNIT_EXPECT_EQ(test, (u64)h->u.atomic_req.data_mask, f[5]);
		KUNIT_EXPECT_EQ(test, (u64)h->u.atomic_req.cmp, f[6]);
		KUNIT_EXPECT_EQ(test, (u64)h->u.atomic_req.cmp_mask, f[7]);
		break;
	case RDMAP_OP_ATOMIC_RESP:
		KUNIT_EXPECT_EQ(test, (u64)h->u.atomic_resp.req_id, f[0]);
		KUNIT_EXPECT_EQ(test, (u64)h->u.atomic_resp.value, f[1]);
		break;
	case RDMAP_OP_IMM_DATA:
	case RDMAP_OP_IMM_DATA_SE:
		KUNIT_EXPECT_EQ(test, (u64)h->u.imm_data, f[0]);
		break;
	case RDMAP_OP_TERMINATE:
		KUNIT_EXPECT_EQ(test, (u64)h->u.term.code.layer, f[0]);
		KUNIT_EXPECT_EQ(test, (u64)h->u.term.code.etype, f[1]);
		KUNIT_EXPECT_EQ(test, (u64)h->u.term.code.ecode, f[2]);
		KUNIT_EXPECT_EQ(test, (u64)h->u.term.m, f[3]);
		KUNIT_EXPECT_EQ(test, (u64)h->u.term.d, f[4]);
		KUNIT_EXPECT_EQ(test, (u64)h->u.term.r, f[5]);
		break;
	default:
		break;
	}
}

static noinline_for_stack void
xiw_vec_hdr_expect_fields(struct kunit *test, const struct xiw_vec_hdr *v,
			  const struct xiw_rdmap_hdr *h)
{
	KUNIT_EXPECT_EQ(test, h->opcode, v->opcode);
	KUNIT_EXPECT_EQ(test, h->tagged, !!v->tagged);
	KUNIT_EXPECT_EQ(test, h->last, !!v->last);
	if (v->tagged) {
		KUNIT_EXPECT_EQ(test, h->stag, v->stag);
		KUNIT_EXPECT_EQ(test, (u64)h->to, (u64)v->to);
	} else {
		KUNIT_EXPECT_EQ(test, h->rsvdulp, v->rsvdulp);
		KUNIT_EXPECT_EQ(test, h->qn, v->qn);
		KUNIT_EXPECT_EQ(test, h->msn, v->msn);
		KUNIT_EXPECT_EQ(test, h->mo, v->mo);
	}
	xiw_vec_hdr_expect_op(test, v, h);
}

/* Decode: header length and every field, or the exact error. */
static void xiw_vec_hdr_decode(struct kunit *test)
{
	const struct xiw_vec_hdr *v = test->param_value;
	struct xiw_rdmap_hdr *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	enum xiw_proto_err err;
	size_t hl = 99;

	KUNIT_ASSERT_NOT_NULL(test, h);
	err = xiw_rdmap_hdr_parse(v->bytes, v->len, h, &hl);
	XIW_ASSERT_ERR(test, err, v->err);
	if (v->err != XIW_OK) {
		KUNIT_EXPECT_EQ(test, hl, (size_t)0);
		xiw_expect_triplet(test, v->err);
		return;
	}
	KUNIT_EXPECT_EQ(test, hl, (size_t)v->hdr_len);
	xiw_vec_hdr_expect_fields(test, v, h);
}

/*
 * Encode the decoded header: the exact input octets (reserved bits, which
 * a receiver ignores, are sent as zero), decoding again gives the fields,
 * and one octet less of room is refused.
 */
static void xiw_vec_hdr_encode(struct kunit *test)
{
	const struct xiw_vec_hdr *v = test->param_value;
	struct xiw_rdmap_hdr *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	struct xiw_rdmap_hdr *h2 = kunit_kzalloc(test, sizeof(*h2), GFP_KERNEL);
	u8 out[XIW_RDMAP_HDR_MAX], want[XIW_RDMAP_HDR_MAX];
	size_t hl, n, hl2;

	KUNIT_ASSERT_NOT_NULL(test, h);
	KUNIT_ASSERT_NOT_NULL(test, h2);
	XIW_ASSERT_ERR(test, xiw_rdmap_hdr_parse(v->bytes, v->len, h, &hl),
		       XIW_OK);
	XIW_ASSERT_ERR(test, xiw_rdmap_hdr_build(h, out, sizeof(out), &n),
		       XIW_OK);
	KUNIT_ASSERT_EQ(test, n, hl);
	KUNIT_ASSERT_LE(test, n, sizeof(want));
	memcpy(want, v->bytes, n);
	want[DDP_CTRL_OFF] &= ~DDP_CTRL_RSVD;
	want[DDP_RSVDULP_OFF] &= ~RDMAP_CTRL_RSVD;
	KUNIT_EXPECT_MEMEQ(test, out, want, n);

	XIW_ASSERT_ERR(test, xiw_rdmap_hdr_parse(out, n, h2, &hl2), XIW_OK);
	KUNIT_EXPECT_EQ(test, hl2, n);
	xiw_vec_hdr_expect_fields(test, v, h2);
	XIW_EXPECT_ERR(test, xiw_rdmap_hdr_build(h, out, n - 1, &n),
		       XIW_ERR_NOSPACE);
}

/*
 * The row's octets framed as one FPDU (CRC and markers on and off) and
 * deframed whole, octet by octet and in pseudo-random pieces: the same
 * verdict as xiw_rdmap_hdr_parse(); a rejected header yields the
 * TERMINATE a receiver would send, with the segment length copied.
 */
static void xiw_vec_hdr_deframe(struct kunit *test)
{
	const struct xiw_vec_hdr *v = test->param_value;
	unsigned int mode;

	for (mode = 0; mode < 4; mode++) {
		bool crc = mode & 1, mk = mode & 2;
		size_t cap = xiw_mpa_fpdu_len(0, mk, v->len) + MPA_MARKER_LEN;
		u8 *s = kunit_kzalloc(test, cap, GFP_KERNEL);
		struct xiw_slice sl = { .p = v->bytes, .len = v->len };
		struct xiw_tx tx;
		unsigned int k;
		size_t n;

		KUNIT_ASSERT_NOT_NULL(test, s);
		xiw_tx_init(&tx, crc, mk, 0);
		XIW_ASSERT_ERR(test, xiw_fpdu_build(&tx, &sl, 1, s, cap, &n),
			       XIW_OK);
		KUNIT_ASSERT_EQ(test, n, (size_t)xiw_mpa_fpdu_len(0, mk, v->len));

		for (k = 0; k < 3; k++) {
			struct xiw_plan pl = {
				.kind = k, .state = 0x9e3779b9u ^ v->len, .max = 7,
			};
			struct xiw_deframe *r;
			size_t skip = mk ? MPA_MARKER_LEN : 0;
			struct xiw_term_code tc;
			struct xiw_term t;

			r = xiw_deframe(test, s, n, crc, mk, 0, 0, &pl);
			KUNIT_ASSERT_NULL_MSG(test, r->bad, "crc %d markers %d plan %u: %s",
					      crc, mk, k, r->bad);
			XIW_ASSERT_ERR(test, r->err, v->err);
			if (v->err == XIW_OK) {
				KUNIT_EXPECT_EQ(test, r->hdrs, 1U);
				KUNIT_EXPECT_EQ(test, r->ends, 1U);
				KUNIT_EXPECT_EQ(test, r->consumed, n);
				KUNIT_EXPECT_EQ(test, r->payload_len,
						(size_t)(v->len - v->hdr_len));
				xiw_vec_hdr_expect_fields(test, v, &r->hdr[0]);
				continue;
			}
			KUNIT_EXPECT_EQ(test, r->ends, 0U);
			xiw_expect_triplet(test, r->err);
			XIW_ASSERT_ERR(test, xiw_term_init(&t, r->err, s + skip,
							   n - skip), XIW_OK);
			KUNIT_ASSERT_TRUE(test, xiw_proto_err_term(r->err, &tc));
			KUNIT_EXPECT_EQ(test, t.ctrl.code.layer, tc.layer);
			KUNIT_EXPECT_EQ(test, t.ctrl.code.etype, tc.etype);
			KUNIT_EXPECT_EQ(test, t.ctrl.code.ecode, tc.ecode);
			KUNIT_EXPECT_TRUE(test, t.ctrl.m);
			KUNIT_EXPECT_EQ(test, (unsigned int)t.seg_len, v->len);
		}
	}
}

static struct kunit_case xiw_vec_hdr_cases[] = {
	KUNIT_CASE_PARAM(xiw_vec_hdr_decode, xiw_vec_hdr_gen_params),
	KUNIT_CASE_PARAM(xiw_vec_hdr_encode, xiw_vec_hdr_ok_gen_params),
	KUNIT_CASE_PARAM(xiw_vec_hdr_deframe, xiw_vec_hdr_gen_params),
	{}
};

static struct kunit_suite xiw_vec_hdr_suite = {
	.name = "xiw_vectors_hdr",
	.test_cases = xiw_vec_hdr_cases,
};

/* ---------------------------------------------------------------------- */
/* TERMINATE                                                              */
/* ---------------------------------------------------------------------- */

static void xiw_vec_term_desc(const struct xiw_vec_term *v, char *desc)
{
	strscpy(desc, v->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(xiw_vec_term, xiw_vec_term_rows, xiw_vec_term_desc);

/*
 * Parse a TERMINATE body: the control word, segment length and copied
 * header length, and rebuilding gives the exact octets; a malformed body
 * is refused with its own error.
 */
static void xiw_vec_term_parse_build(struct kunit *test)
{
	const struct xiw_vec_term *v = test->param_value;
	struct xiw_term *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	u8 *out = kunit_kzalloc(test, RDMAP_TERM_MAX_LEN, GFP_KERNEL);
	size_t n;

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_NOT_NULL(test, out);
	XIW_ASSERT_ERR(test, xiw_term_parse(v->bytes, v->len, t), v->err);
	if (v->err != XIW_OK) {
		xiw_expect_triplet(test, v->err);
		return;
	}
	KUNIT_EXPECT_EQ(test, t->ctrl.code.layer, v->layer);
	KUNIT_EXPECT_EQ(test, t->ctrl.code.etype, v->etype);
	KUNIT_EXPECT_EQ(test, t->ctrl.code.ecode, v->ecode);
	KUNIT_EXPECT_EQ(test, t->ctrl.m, !!v->m);
	KUNIT_EXPECT_EQ(test, t->ctrl.d, !!v->d);
	KUNIT_EXPECT_EQ(test, t->ctrl.r, !!v->r);
	KUNIT_EXPECT_EQ(test, t->seg_len, v->seg_len);
	KUNIT_EXPECT_EQ(test, t->ddp_hdr_len, v->ddp_hdr_len);
	XIW_ASSERT_ERR(test, xiw_term_build(t, out, RDMAP_TERM_MAX_LEN, &n),
		       XIW_OK);
	KUNIT_ASSERT_EQ(test, n, (size_t)v->len);
	KUNIT_EXPECT_MEMEQ(test, out, v->bytes, v->len);
	XIW_EXPECT_ERR(test, xiw_term_build(t, out, n - 1, &n), XIW_ERR_NOSPACE);
}

static void xiw_vec_err_desc(const struct xiw_vec_err_term *v, char *desc)
{
	strscpy(desc, xiw_proto_err_name(v->err), KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(xiw_vec_err, xiw_vec_err_term_rows, xiw_vec_err_desc);

/*
 * Each error maps to the RFC triplet of the table; the canonical error of
 * that triplet maps back to it; it survives a control word round trip.
 */
static void xiw_vec_err_triplet(struct kunit *test)
{
	const struct xiw_vec_err_term *v = test->param_value;
	struct xiw_term_code tc, back;
	struct xiw_term_ctrl c, d;
	u8 w[RDMAP_TERM_CTRL_LEN];

	KUNIT_ASSERT_TRUE(test, xiw_proto_err_term(v->err, &tc));
	KUNIT_EXPECT_EQ(test, tc.layer, v->layer);
	KUNIT_EXPECT_EQ(test, tc.etype, v->etype);
	KUNIT_EXPECT_EQ(test, tc.ecode, v->ecode);
	KUNIT_EXPECT_STRNEQ(test, xiw_proto_err_name(v->err), "XIW_ERR_?");

	KUNIT_ASSERT_TRUE(test, xiw_proto_err_term(xiw_term_code_to_err(&tc),
						   &back));
	KUNIT_EXPECT_EQ(test, back.layer, tc.layer);
	KUNIT_EXPECT_EQ(test, back.etype, tc.etype);
	KUNIT_EXPECT_EQ(test, back.ecode, tc.ecode);

	c.code = tc;
	c.m = true;
	c.d = false;
	c.r = true;
	xiw_term_ctrl_encode(&c, w);
	xiw_term_ctrl_decode(w, &d);
	KUNIT_EXPECT_EQ(test, d.code.layer, tc.layer);
	KUNIT_EXPECT_EQ(test, d.code.etype, tc.etype);
	KUNIT_EXPECT_EQ(test, d.code.ecode, tc.ecode);
	KUNIT_EXPECT_TRUE(test, d.m && !d.d && d.r);
}

/* The table has a row for every error the core can return, and no more. */
static void xiw_vec_err_table_complete(struct kunit *test)
{
	struct xiw_term_code tc;
	unsigned int e, i, rows;

	for (e = XIW_OK + 1; e < XIW_ERR_COUNT; e++) {
		rows = 0;
		for (i = 0; i < ARRAY_SIZE(xiw_vec_err_term_rows); i++)
			rows += xiw_vec_err_term_rows[i].err == e;
		KUNIT_EXPECT_EQ_MSG(test, rows, 1U, "%s",
				    xiw_proto_err_name((enum xiw_proto_err)e));
	}
	KUNIT_EXPECT_EQ(test, ARRAY_SIZE(xiw_vec_err_term_rows),
			(size_t)(XIW_ERR_COUNT - 1));
	KUNIT_EXPECT_FALSE(test, xiw_proto_err_term(XIW_OK, &tc));
	KUNIT_EXPECT_FALSE(test, xiw_proto_err_term(XIW_ERR_COUNT, &tc));
}

static struct kunit_case xiw_vec_term_cases[] = {
	KUNIT_CASE_PARAM(xiw_vec_term_parse_build, xiw_vec_term_gen_params),
	KUNIT_CASE_PARAM(xiw_vec_err_triplet, xiw_vec_err_gen_params),
	KUNIT_CASE(xiw_vec_err_table_complete),
	{}
};

static struct kunit_suite xiw_vec_term_suite = {
	.name = "xiw_vectors_term",
	.test_cases = xiw_vec_term_cases,
};

/* ---------------------------------------------------------------------- */
/* FPDU streams                                                           */
/* ---------------------------------------------------------------------- */

static void xiw_vec_fpdu_desc(const struct xiw_vec_fpdu *v, char *desc)
{
	strscpy(desc, v->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(xiw_vec_fpdu, xiw_vec_fpdu_rows, xiw_vec_fpdu_desc);

static struct xiw_deframe *xiw_vec_fpdu_run(struct kunit *test,
					    const struct xiw_vec_fpdu *v,
					    struct xiw_plan *pl)
{
	return xiw_deframe(test, v->bytes, v->len, v->crc, v->markers, v->pos,
			   v->max_ulpdu, pl);
}

/*
 * A run gives the row's error, complete segments and payload octets, the
 * payload exact for rejected streams too (nothing past the point of
 * failure is handed out), under every delivery.
 */
static noinline_for_stack void
xiw_vec_fpdu_expect_row(struct kunit *test, const struct xiw_vec_fpdu *v,
			const struct xiw_deframe *r, const char *plan)
{
	KUNIT_ASSERT_NULL_MSG(test, r->bad, "%s: %s", plan, r->bad);
	KUNIT_ASSERT_EQ_MSG(test, (int)r->err, (int)v->err, "%s: got %s, want %s",
			    plan, xiw_proto_err_name(r->err),
			    xiw_proto_err_name(v->err));
	KUNIT_EXPECT_EQ_MSG(test, r->ends, v->nseg, "%s", plan);
	KUNIT_EXPECT_EQ_MSG(test, r->payload_len, (size_t)v->payload, "%s", plan);
	if (v->err == XIW_OK) {
		KUNIT_EXPECT_EQ_MSG(test, r->hdrs, v->nseg, "%s", plan);
		KUNIT_EXPECT_EQ_MSG(test, r->consumed, (size_t)v->len, "%s", plan);
	} else {
		KUNIT_EXPECT_LE_MSG(test, r->consumed, (size_t)v->len, "%s", plan);
		xiw_expect_triplet(test, r->err);
	}
}

static void xiw_vec_fpdu_whole(struct kunit *test)
{
	const struct xiw_vec_fpdu *v = test->param_value;
	struct xiw_plan pl = { .kind = XIW_PLAN_WHOLE };

	xiw_vec_fpdu_expect_row(test, v, xiw_vec_fpdu_run(test, v, &pl),
				"whole");
}

static void xiw_vec_fpdu_bytewise(struct kunit *test)
{
	const struct xiw_vec_fpdu *v = test->param_value;
	struct xiw_plan whole = { .kind = XIW_PLAN_WHOLE };
	struct xiw_plan bytes = { .kind = XIW_PLAN_BYTE };
	struct xiw_deframe *ref = xiw_vec_fpdu_run(test, v, &whole);
	struct xiw_deframe *r = xiw_vec_fpdu_run(test, v, &bytes);

	xiw_vec_fpdu_expect_row(test, v, r, "one octet at a time");
	xiw_expect_same_deframe(test, ref, r);
}

/* Eight fixed seeds, pieces of up to 1, 14, 27, ... 92 octets. */
static void xiw_vec_fpdu_random(struct kunit *test)
{
	const struct xiw_vec_fpdu *v = test->param_value;
	struct xiw_plan whole = { .kind = XIW_PLAN_WHOLE };
	struct xiw_deframe *ref = xiw_vec_fpdu_run(test, v, &whole);
	unsigned int seed;

	for (seed = 0; seed < 8; seed++) {
		struct xiw_plan pl = {
			.kind = XIW_PLAN_RANDOM,
			.state = (seed * 7919 + v->len) | 1,
			.max = 1 + seed * 13,
		};
		struct xiw_deframe *r = xiw_vec_fpdu_run(test, v, &pl);
		char name[32];

		snprintf(name, sizeof(name), "random seed %u", seed);
		xiw_vec_fpdu_expect_row(test, v, r, name);
		xiw_expect_same_deframe(test, ref, r);
	}
}

static struct kunit_case xiw_vec_fpdu_cases[] = {
	KUNIT_CASE_PARAM(xiw_vec_fpdu_whole, xiw_vec_fpdu_gen_params),
	KUNIT_CASE_PARAM(xiw_vec_fpdu_bytewise, xiw_vec_fpdu_gen_params),
	KUNIT_CASE_PARAM(xiw_vec_fpdu_random, xiw_vec_fpdu_gen_params),
	{}
};

static struct kunit_suite xiw_vec_fpdu_suite = {
	.name = "xiw_vectors_fpdu",
	.test_cases = xiw_vec_fpdu_cases,
};

kunit_test_suites(&xiw_vec_crc_suite, &xiw_vec_mpa_suite, &xiw_vec_hdr_suite,
		  &xiw_vec_term_suite, &xiw_vec_fpdu_suite);
