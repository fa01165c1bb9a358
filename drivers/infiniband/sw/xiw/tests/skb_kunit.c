// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite: FPDU streams over real skb chains.
 *
 * The transmit side segments a message at the MULPDU of an EMSS (with and
 * without markers and CRC) into FPDUs; the stream is laid out in skbs of
 * many shapes (all linear, page fragments of odd sizes, frag_list chains
 * whose members have no linear part, boundaries inside every header) and
 * handed to xiw.ko's xiw_skb_walk(), the walker of the receive engine, in
 * one call, in two calls split at every interesting offset (as
 * tcp_read_sock() delivers a partly consumed skb), and stopped after its
 * first piece and resumed.  Every delivery must deframe to the same
 * segments and rebuild the message octet for octet.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include "xiw_proto.h"
#include "xiw.h"
#include "xiw_dp.h"

#define XIW_SKB_MSG_LEN		5000
#define XIW_SKB_STAG		0x5a5a01
#define XIW_SKB_TO		0x1000

struct xiw_skb_stream {
	u8 *bytes;
	size_t len;
	u8 *msg;
	u32 nfpdu;
	bool crc;
	bool markers;
};

/* Segment one tagged Write of msg at MULPDU(@emss), then a 3-octet Send. */
static void xiw_skb_make_stream(struct kunit *test, struct xiw_skb_stream *s,
				u32 emss, bool crc, bool markers)
{
	u32 mulpdu = xiw_mpa_mulpdu(emss, markers, crc);
	size_t cap = 2 * XIW_SKB_MSG_LEN + 4096, off = 0;
	struct xiw_rdmap_hdr h;
	struct xiw_tx tx;
	u8 hdr[XIW_RDMAP_HDR_MAX];
	size_t hl, n;
	u32 i;

	KUNIT_ASSERT_GT(test, mulpdu, (u32)DDP_TAGGED_HDR_LEN);
	s->bytes = kunit_kzalloc(test, cap, GFP_KERNEL);
	s->msg = kunit_kzalloc(test, XIW_SKB_MSG_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s->bytes);
	KUNIT_ASSERT_NOT_NULL(test, s->msg);
	for (i = 0; i < XIW_SKB_MSG_LEN; i++)
		s->msg[i] = (u8)(i * 13 + i / 251);
	s->len = 0;
	s->nfpdu = 0;
	s->crc = crc;
	s->markers = markers;
	xiw_tx_init(&tx, crc, markers, 0);

	while (off < XIW_SKB_MSG_LEN) {
		size_t chunk = min_t(size_t, mulpdu - DDP_TAGGED_HDR_LEN,
				     XIW_SKB_MSG_LEN - off);
		struct xiw_slice sl[2];
		u32 pos = tx.stream_pos;

		memset(&h, 0, sizeof(h));
		h.tagged = true;
		h.ddp_version = DDP_VERSION;
		h.rdmap_version = RDMAP_VERSION;
		h.opcode = RDMAP_OP_WRITE;
		h.stag = XIW_SKB_STAG;
		h.to = XIW_SKB_TO + off;
		h.last = off + chunk == XIW_SKB_MSG_LEN;
		KUNIT_ASSERT_EQ(test, XIW_OK, xiw_rdmap_hdr_build(&h, hdr, sizeof(hdr), &hl));
		sl[0].p = hdr;
		sl[0].len = hl;
		sl[1].p = s->msg + off;
		sl[1].len = chunk;
		KUNIT_ASSERT_EQ(test, XIW_OK, xiw_fpdu_build(&tx, sl, 2, s->bytes + s->len,
							     cap - s->len, &n));
		/* MULPDU's promise: every FPDU, markers included, fits the EMSS. */
		KUNIT_EXPECT_LE(test, n, (size_t)emss);
		KUNIT_EXPECT_EQ(test, n, (size_t)xiw_mpa_fpdu_len(pos, markers,
								  (u32)(hl + chunk)));
		s->len += n;
		s->nfpdu++;
		off += chunk;
	}

	memset(&h, 0, sizeof(h));
	h.ddp_version = DDP_VERSION;
	h.rdmap_version = RDMAP_VERSION;
	h.opcode = RDMAP_OP_SEND;
	h.qn = RDMAP_QN_SEND;
	h.msn = 1;
	h.last = true;
	KUNIT_ASSERT_EQ(test, XIW_OK, xiw_rdmap_hdr_build(&h, hdr, sizeof(hdr), &hl));
	{
		struct xiw_slice sl[2] = { { hdr, hl }, { (const u8 *)"abc", 3 } };

		KUNIT_ASSERT_EQ(test, XIW_OK, xiw_fpdu_build(&tx, sl, 2, s->bytes + s->len,
							     cap - s->len, &n));
	}
	s->len += n;
	s->nfpdu++;
}

/* ---- skb shapes -------------------------------------------------------- */

enum xiw_part_kind {
	XIW_PART_END,
	XIW_PART_HEAD,		/* linear part of the current skb */
	XIW_PART_FRAG,		/* a page fragment of the current skb */
	XIW_PART_CHILD,		/* start a new skb on the frag_list */
	XIW_PART_REST_FRAGS,	/* everything left, as fragments */
};

struct xiw_part {
	enum xiw_part_kind kind;
	u32 len;
};

struct xiw_shape {
	const char *name;
	struct xiw_part parts[24];
};

static const struct xiw_shape xiw_shapes[] = {
	{ "linear", { { XIW_PART_HEAD, ~0U } } },
	{ "head 7, fragments 3/500/1/rest",
	  { { XIW_PART_HEAD, 7 }, { XIW_PART_FRAG, 3 }, { XIW_PART_FRAG, 500 },
	    { XIW_PART_FRAG, 1 }, { XIW_PART_REST_FRAGS } } },
	{ "no linear part, fragments only",
	  { { XIW_PART_FRAG, 2 }, { XIW_PART_FRAG, 17 }, { XIW_PART_REST_FRAGS } } },
	{ "frag_list: children with and without linear parts",
	  { { XIW_PART_HEAD, 20 }, { XIW_PART_FRAG, 100 },
	    { XIW_PART_CHILD }, { XIW_PART_HEAD, 1 }, { XIW_PART_FRAG, 1000 },
	    { XIW_PART_CHILD }, { XIW_PART_FRAG, 2000 },
	    { XIW_PART_CHILD }, { XIW_PART_FRAG, 5 }, { XIW_PART_FRAG, 6 },
	    { XIW_PART_CHILD }, { XIW_PART_HEAD, ~0U } } },
	{ "every header split: pieces of 1, 2 and 3 octets, then children",
	  { { XIW_PART_HEAD, 1 }, { XIW_PART_FRAG, 2 }, { XIW_PART_FRAG, 3 },
	    { XIW_PART_FRAG, 1 }, { XIW_PART_FRAG, 2 }, { XIW_PART_FRAG, 3 },
	    { XIW_PART_FRAG, 1 }, { XIW_PART_FRAG, 2 }, { XIW_PART_FRAG, 3 },
	    { XIW_PART_FRAG, 1 }, { XIW_PART_FRAG, 2 }, { XIW_PART_FRAG, 3 },
	    { XIW_PART_CHILD }, { XIW_PART_FRAG, 1 }, { XIW_PART_FRAG, 2 },
	    { XIW_PART_FRAG, 3 }, { XIW_PART_FRAG, 7 },
	    { XIW_PART_CHILD }, { XIW_PART_HEAD, 9 }, { XIW_PART_REST_FRAGS } } },
};

struct xiw_skb_builder {
	struct kunit *test;
	const u8 *src;
	size_t left;
	struct sk_buff *head;
	struct sk_buff *cur;
	struct sk_buff **next_child;
};

static void xiw_skb_account(struct xiw_skb_builder *b, u32 len, bool paged)
{
	if (b->cur != b->head) {
		b->head->len += len;
		b->head->data_len += len;
	}
	if (paged) {
		b->cur->len += len;
		b->cur->data_len += len;
	}
}

static void xiw_skb_add_frag(struct xiw_skb_builder *b, u32 len)
{
	struct skb_shared_info *sh = skb_shinfo(b->cur);
	struct page *page;
	u32 poff;

	len = min_t(u32, len, b->left);
	if (!len)
		return;
	KUNIT_ASSERT_LT(b->test, (int)sh->nr_frags, (int)MAX_SKB_FRAGS);
	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(b->test, page);
	/* Odd offsets inside the page, as GRO and page pools leave them. */
	poff = (len + 37 <= PAGE_SIZE) ? 37 : 0;
	memcpy(page_address(page) + poff, b->src, len);
	skb_fill_page_desc(b->cur, sh->nr_frags, page, poff, len);
	b->cur->truesize += PAGE_SIZE;
	xiw_skb_account(b, len, true);
	b->src += len;
	b->left -= len;
}

static void xiw_skb_add_child(struct xiw_skb_builder *b)
{
	struct sk_buff *c = alloc_skb(b->left, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(b->test, c);
	*b->next_child = c;
	b->next_child = &c->next;
	b->cur = c;
}

static struct sk_buff *xiw_skb_build(struct kunit *test, const struct xiw_shape *sh,
				     const u8 *src, size_t len)
{
	struct xiw_skb_builder b = { .test = test, .src = src, .left = len };
	const struct xiw_part *p;

	b.head = alloc_skb(len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b.head);
	b.cur = b.head;
	b.next_child = &skb_shinfo(b.head)->frag_list;

	for (p = sh->parts; p->kind != XIW_PART_END && b.left; p++) {
		switch (p->kind) {
		case XIW_PART_HEAD: {
			u32 n = min_t(u32, p->len, b.left);

			KUNIT_ASSERT_EQ(test, 0U, b.cur->data_len);
			skb_put_data(b.cur, b.src, n);
			xiw_skb_account(&b, n, false);
			b.src += n;
			b.left -= n;
			break;
		}
		case XIW_PART_FRAG:
			xiw_skb_add_frag(&b, p->len);
			break;
		case XIW_PART_REST_FRAGS:
			while (b.left) {
				if (skb_shinfo(b.cur)->nr_frags == MAX_SKB_FRAGS)
					xiw_skb_add_child(&b);
				xiw_skb_add_frag(&b, PAGE_SIZE - 37);
			}
			break;
		case XIW_PART_CHILD:
			xiw_skb_add_child(&b);
			break;
		default:
			break;
		}
	}
	/* Whatever a shape left over goes linear into a last child. */
	if (b.left) {
		xiw_skb_add_child(&b);
		skb_put_data(b.cur, b.src, b.left);
		xiw_skb_account(&b, b.left, false);
		b.left = 0;
	}
	KUNIT_ASSERT_EQ(test, (size_t)b.head->len, len);
	return b.head;
}

static void xiw_skb_free(void *skb)
{
	kfree_skb(skb);
}

/* ---- deframing what the walker hands out ------------------------------- */

struct xiw_skb_sink {
	struct kunit *test;
	struct xiw_rx rx;
	u8 *placed;		/* the Write's target buffer */
	u32 writes;
	u32 sends;
	u32 send_octets;
	u32 pieces;
	u32 stop_after;		/* stop the walk after this many pieces */
	enum xiw_proto_err err;
};

static bool xiw_skb_sink_piece(void *priv, const u8 *p, unsigned int n)
{
	struct xiw_skb_sink *k = priv;

	k->pieces++;
	while (n && k->err == XIW_OK) {
		struct xiw_rx_event ev;
		size_t used;

		k->err = xiw_rx_step(&k->rx, p, n, &used, &ev);
		p += used;
		n -= used;
		if (k->err)
			break;
		if (ev.type == XIW_RX_EV_DATA) {
			if (k->rx.hdr.opcode == RDMAP_OP_WRITE) {
				u64 at = k->rx.hdr.to - XIW_SKB_TO + ev.offset;

				if (at + ev.len <= XIW_SKB_MSG_LEN)
					memcpy(k->placed + at, ev.data, ev.len);
				else
					k->err = XIW_ERR_DDP_T_BASE_BOUNDS;
			} else {
				k->send_octets += ev.len;
			}
		} else if (ev.type == XIW_RX_EV_END) {
			if (k->rx.hdr.opcode == RDMAP_OP_WRITE)
				k->writes++;
			else
				k->sends++;
		}
	}
	return k->stop_after == 0 || k->pieces < k->stop_after;
}

static struct xiw_skb_sink *xiw_skb_sink_new(struct kunit *test,
					     const struct xiw_skb_stream *s)
{
	struct xiw_skb_sink *k = kunit_kzalloc(test, sizeof(*k), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, k);
	k->test = test;
	k->placed = kunit_kzalloc(test, XIW_SKB_MSG_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, k->placed);
	xiw_rx_init(&k->rx, s->crc, s->markers, 0, 0);
	return k;
}

static void xiw_skb_expect_all(struct kunit *test, const struct xiw_skb_stream *s,
			       const struct xiw_skb_sink *k, const char *how)
{
	KUNIT_EXPECT_EQ_MSG(test, (int)k->err, XIW_OK, "%s: %s", how,
			    xiw_proto_err_name(k->err));
	KUNIT_EXPECT_EQ_MSG(test, k->writes + k->sends, s->nfpdu, "%s", how);
	KUNIT_EXPECT_EQ_MSG(test, k->sends, 1U, "%s", how);
	KUNIT_EXPECT_EQ_MSG(test, k->send_octets, 3U, "%s", how);
	KUNIT_EXPECT_EQ_MSG(test, (int)k->rx.state, (int)XIW_RX_HDR, "%s", how);
	KUNIT_EXPECT_TRUE_MSG(test, !memcmp(k->placed, s->msg, XIW_SKB_MSG_LEN),
			      "%s: placed octets differ", how);
}

struct xiw_skb_param {
	u32 emss;
	bool crc;
	bool markers;
	const struct xiw_shape *shape;
};

static struct xiw_skb_param xiw_skb_params[ARRAY_SIZE(xiw_shapes) * 4];

static const void *xiw_skb_gen(XIW_KUNIT_GEN_ARGS)
{
	static const struct { u32 emss; bool crc, markers; } modes[] = {
		{ 1448, true, false }, { 1448, true, true },
		{ 536, false, true }, { 9000, true, false },
	};
	const struct xiw_skb_param *p = prev;
	size_t i = p ? (size_t)(p - xiw_skb_params) + 1 : 0;

	if (i >= ARRAY_SIZE(xiw_skb_params))
		return NULL;
	xiw_skb_params[i].shape = &xiw_shapes[i / ARRAY_SIZE(modes)];
	xiw_skb_params[i].emss = modes[i % ARRAY_SIZE(modes)].emss;
	xiw_skb_params[i].crc = modes[i % ARRAY_SIZE(modes)].crc;
	xiw_skb_params[i].markers = modes[i % ARRAY_SIZE(modes)].markers;
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s, EMSS %u%s%s",
		 xiw_skb_params[i].shape->name, xiw_skb_params[i].emss,
		 xiw_skb_params[i].crc ? ", CRC" : "",
		 xiw_skb_params[i].markers ? ", markers" : "");
	return &xiw_skb_params[i];
}

static struct sk_buff *xiw_skb_setup(struct kunit *test, struct xiw_skb_stream *s)
{
	const struct xiw_skb_param *p = test->param_value;
	struct sk_buff *skb;

	xiw_skb_make_stream(test, s, p->emss, p->crc, p->markers);
	skb = xiw_skb_build(test, p->shape, s->bytes, s->len);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, xiw_skb_free, skb));
	return skb;
}

static void xiw_skb_walk_whole(struct kunit *test)
{
	struct xiw_skb_stream s;
	struct sk_buff *skb = xiw_skb_setup(test, &s);
	struct xiw_skb_sink *k = xiw_skb_sink_new(test, &s);

	KUNIT_EXPECT_EQ(test, s.len, xiw_skb_walk(skb, 0, s.len, xiw_skb_sink_piece, k));
	xiw_skb_expect_all(test, &s, k, "one walk");
}

static void xiw_skb_walk_two_deliveries(struct kunit *test)
{
	struct xiw_skb_stream s;
	struct sk_buff *skb = xiw_skb_setup(test, &s);
	size_t cuts[] = { 1, 2, 3, 4, 5, 17, 18, 19, 511, 512, 513, 1447, 1448,
			  2049, 4095, 4096, 4097, 0, 0, 0 };
	size_t i;

	cuts[ARRAY_SIZE(cuts) - 3] = s.len / 2;
	cuts[ARRAY_SIZE(cuts) - 2] = s.len - 5;
	cuts[ARRAY_SIZE(cuts) - 1] = s.len - 1;
	for (i = 0; i < ARRAY_SIZE(cuts); i++) {
		struct xiw_skb_sink *k = xiw_skb_sink_new(test, &s);
		size_t cut = cuts[i];
		char how[96];

		if (cut >= s.len)
			continue;
		snprintf(how, sizeof(how), "delivered as [0,%zu) + [%zu,%zu)", cut, cut, s.len);
		/* As tcp_read_sock() does: the same skb, a later offset. */
		KUNIT_EXPECT_EQ(test, cut, xiw_skb_walk(skb, 0, cut, xiw_skb_sink_piece, k));
		KUNIT_EXPECT_EQ(test, s.len - cut,
				xiw_skb_walk(skb, cut, s.len - cut, xiw_skb_sink_piece, k));
		xiw_skb_expect_all(test, &s, k, how);
	}
}

static void xiw_skb_walk_stop_and_resume(struct kunit *test)
{
	struct xiw_skb_stream s;
	struct sk_buff *skb = xiw_skb_setup(test, &s);
	struct xiw_skb_sink *k = xiw_skb_sink_new(test, &s);
	size_t done = 0, got;
	int rounds = 0;

	/* Stop after every single piece; resume where the walk stopped. */
	while (done < s.len && rounds++ < 10000) {
		k->pieces = 0;
		k->stop_after = 1;
		got = xiw_skb_walk(skb, done, s.len - done, xiw_skb_sink_piece, k);
		KUNIT_ASSERT_GT(test, got, (size_t)0);
		KUNIT_ASSERT_EQ(test, 1U, k->pieces);
		done += got;
	}
	KUNIT_EXPECT_EQ(test, s.len, done);
	xiw_skb_expect_all(test, &s, k, "stopped after every piece");
}

static void xiw_skb_walk_corrupt_crc(struct kunit *test)
{
	const struct xiw_skb_param *p = test->param_value;
	struct xiw_skb_stream s;
	struct xiw_skb_sink *k;
	struct sk_buff *skb;

	if (!p->crc)
		kunit_skip(test, "no CRC in this mode");
	xiw_skb_make_stream(test, &s, p->emss, p->crc, p->markers);
	/* Flip a payload bit of the first Write FPDU (past a leading marker). */
	s.bytes[40] ^= 0x20;
	skb = xiw_skb_build(test, p->shape, s.bytes, s.len);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, xiw_skb_free, skb));
	k = xiw_skb_sink_new(test, &s);
	xiw_skb_walk(skb, 0, s.len, xiw_skb_sink_piece, k);
	KUNIT_EXPECT_EQ(test, (int)XIW_ERR_MPA_CRC, (int)k->err);
	KUNIT_EXPECT_EQ(test, 0U, k->sends);
}

static struct kunit_case xiw_skb_cases[] = {
	KUNIT_CASE_PARAM(xiw_skb_walk_whole, xiw_skb_gen),
	KUNIT_CASE_PARAM(xiw_skb_walk_two_deliveries, xiw_skb_gen),
	KUNIT_CASE_PARAM(xiw_skb_walk_stop_and_resume, xiw_skb_gen),
	KUNIT_CASE_PARAM(xiw_skb_walk_corrupt_crc, xiw_skb_gen),
	{}
};

static struct kunit_suite xiw_skb_suite = {
	.name = "xiw_skb_fpdu",
	.test_cases = xiw_skb_cases,
};

kunit_test_suites(&xiw_skb_suite);
