// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite: the pieces a pages batch makes of tx_buf.
 *
 * A batch of FPDUs that TCP copies from the consumer's pages describes the
 * octets in tx_buf (headers, trailers, copied FPDUs) as page pieces with
 * xiw.ko's xiw_tx_kmem_vec(), and places the payload's pieces behind the
 * count xiw_tx_kmem_pieces() predicts before it writes them.  For tx_buf as
 * kvmalloc() makes it (slab below a page, vmalloc or slab above), at every
 * interesting offset and length: the count is the prediction, no piece
 * crosses a page, the pieces read back the octets in order, and a tx_buf
 * of XIW_TX_BUF_LEN never takes more than XIW_TX_KMEM_VECS of them.
 */
#include <kunit/test.h>
#include <linux/bvec.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "xiw.h"
#include "xiw_dp.h"

struct xiw_kmem_param {
	const char *name;
	size_t size;
	bool vmalloc;	/* vmalloc() itself: pages not contiguous */
};

static const struct xiw_kmem_param xiw_kmem_params[] = {
	{ "kmalloc 2 KiB", SZ_2K, false },
	{ "kvmalloc 64 KiB", XIW_TX_BUF_LEN, false },
	{ "vmalloc 64 KiB", XIW_TX_BUF_LEN, true },
};

static void xiw_kmem_desc(const struct xiw_kmem_param *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(xiw_kmem, xiw_kmem_params, xiw_kmem_desc);

static void xiw_kmem_free(void *buf)
{
	kvfree(buf);
}

/* Check the pieces of @len octets at @buf + @off against the octets. */
static void xiw_kmem_check(struct kunit *test, struct bio_vec *bv,
			   const u8 *buf, size_t off, size_t len)
{
	unsigned int n, i;
	size_t done = 0;

	n = xiw_tx_kmem_vec(bv, buf + off, len);
	KUNIT_EXPECT_EQ_MSG(test, n, xiw_tx_kmem_pieces(buf + off, len),
			    "offset %zu length %zu", off, len);
	KUNIT_EXPECT_LE(test, n, (unsigned int)XIW_TX_KMEM_VECS);
	for (i = 0; i < n; i++) {
		u8 *kaddr;

		KUNIT_ASSERT_LE(test, bv[i].bv_offset + bv[i].bv_len,
				(unsigned int)PAGE_SIZE);
		KUNIT_ASSERT_GT(test, bv[i].bv_len, 0U);
		KUNIT_ASSERT_LE(test, done + bv[i].bv_len, len);
		kaddr = kmap_local_page(bv[i].bv_page);
		KUNIT_EXPECT_EQ_MSG(test, 0,
				    memcmp(kaddr + bv[i].bv_offset,
					   buf + off + done, bv[i].bv_len),
				    "piece %u of offset %zu length %zu", i, off,
				    len);
		kunmap_local(kaddr);
		done += bv[i].bv_len;
	}
	KUNIT_EXPECT_EQ(test, done, len);
}

static void xiw_tx_kmem_pieces_match(struct kunit *test)
{
	const struct xiw_kmem_param *p = test->param_value;
	static const size_t lens[] = { 0, 1, 2, 40, 41, 1448 };
	struct bio_vec *bv;
	size_t off, i;
	u8 *buf;

	buf = p->vmalloc ? vmalloc(p->size) : kvmalloc(p->size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, xiw_kmem_free, buf));
	bv = kunit_kcalloc(test, XIW_TX_KMEM_VECS, sizeof(*bv), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bv);
	for (i = 0; i < p->size; i++)
		buf[i] = (u8)(i * 7 + (i >> 8));

	/* Short pieces (headers, trailers) at and near every page boundary. */
	for (off = 0; off < p->size; off++) {
		size_t in_page = off % PAGE_SIZE;

		if (in_page > 3 && in_page < PAGE_SIZE - 48 && off % 61)
			continue;
		for (i = 0; i < ARRAY_SIZE(lens); i++)
			if (off + lens[i] <= p->size)
				xiw_kmem_check(test, bv, buf, off, lens[i]);
	}
	/* Long ones across page boundaries, the whole buffer included. */
	for (off = 0; off < p->size; off += 509)
		xiw_kmem_check(test, bv, buf, off, p->size - off);
	for (i = 1; i <= p->size; i += 997)
		xiw_kmem_check(test, bv, buf, 0, i);
}

static struct kunit_case xiw_tx_kmem_cases[] = {
	KUNIT_CASE_PARAM(xiw_tx_kmem_pieces_match, xiw_kmem_gen_params),
	{}
};

static struct kunit_suite xiw_tx_kmem_suite = {
	.name = "xiw_tx_kmem",
	.test_cases = xiw_tx_kmem_cases,
};

kunit_test_suites(&xiw_tx_kmem_suite);
