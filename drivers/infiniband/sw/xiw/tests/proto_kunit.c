// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the kernel build of the protocol core's CRC32c gives the known
 * answers of RFC 3720 B.4 and is independent of how the bytes are split.
 */
#include <kunit/test.h>
#include <linux/random.h>

#include "xiw_proto.h"

/* RFC 3720, Appendix B.4: CRC32c of 32-byte patterns. */
struct xiw_crc_kat {
	const char *name;
	u8 fill;	/* 0x00 / 0xff fill, or 0x01 ascending, 0x02 descending */
	u32 crc;
};

static const struct xiw_crc_kat xiw_crc_kats[] = {
	{ "32 zero bytes", 0x00, 0x8a9136aa },
	{ "32 0xff bytes", 0xff, 0x62a8ab43 },
	{ "ascending 0..31", 0x01, 0x46dd794e },
	{ "descending 31..0", 0x02, 0x113fdb5c },
};

static void xiw_crc_kat_desc(const struct xiw_crc_kat *k, char *desc)
{
	strscpy(desc, k->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(xiw_crc_kat, xiw_crc_kats, xiw_crc_kat_desc);

static void xiw_crc_known_answer(struct kunit *test)
{
	const struct xiw_crc_kat *k = test->param_value;
	u8 buf[32];
	int i;

	for (i = 0; i < 32; i++) {
		if (k->fill == 0x01)
			buf[i] = i;
		else if (k->fill == 0x02)
			buf[i] = 31 - i;
		else
			buf[i] = k->fill;
	}
	KUNIT_EXPECT_EQ(test, xiw_crc32c_value(buf, sizeof(buf)), k->crc);
}

/*
 * Random lengths, offsets and split points: feeding the running CRC in two
 * pieces gives the one-shot value.
 */
static void xiw_crc_split_invariant(struct kunit *test)
{
	u8 *buf = kunit_kmalloc(test, 4096 + 8, GFP_KERNEL);
	int round;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	get_random_bytes(buf, 4096 + 8);
	for (round = 0; round < 200; round++) {
		u32 off = get_random_u32_below(8);
		u32 len = get_random_u32_below(4096);
		u32 cut = len ? get_random_u32_below(len) : 0;
		u32 want = xiw_crc32c_value(buf + off, len);
		u32 crc;

		crc = xiw_crc_update(XIW_CRC_SEED, buf + off, cut);
		crc = xiw_crc_update(crc, buf + off + cut, len - cut);
		KUNIT_EXPECT_EQ(test, ~crc, want);
	}
}

static struct kunit_case xiw_proto_crc_cases[] = {
	KUNIT_CASE_PARAM(xiw_crc_known_answer, xiw_crc_kat_gen_params),
	KUNIT_CASE(xiw_crc_split_invariant),
	{}
};

static struct kunit_suite xiw_proto_crc_suite = {
	.name = "xiw_proto_crc",
	.test_cases = xiw_proto_crc_cases,
};

kunit_test_suites(&xiw_proto_crc_suite);
