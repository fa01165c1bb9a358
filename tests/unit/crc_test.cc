// SPDX-License-Identifier: GPL-2.0
// CRC32c known answers: RFC 3720 appendix B.4 (iSCSI, same CRC and byte
// order as MPA) and the common "123456789" check value; then the
// userspace crc32c() (isa-l's crc32_iscsi(), which picks its code from
// the CPU) against a bit-at-a-time reference: every length up to 2 KiB
// at every alignment, seeds other than ~0, long buffers cut anywhere,
// and the copy-and-CRC of the FPDU builder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "proto/xiw_proto.h"
#include "tests/vectors/crc32c_vectors.h"

inline void PrintTo(const xiw_vec_crc32c &v, std::ostream *os) { *os << v.desc; }

namespace {

class Crc32cKat : public ::testing::TestWithParam<xiw_vec_crc32c> {};

TEST_P(Crc32cKat, WireBytes)
{
	const xiw_vec_crc32c &v = GetParam();
	u8 field[MPA_CRC_LEN];

	xiw_crc_put(xiw_crc_update(XIW_CRC_SEED, v.data, v.len), field);
	EXPECT_EQ(0, memcmp(field, v.wire, MPA_CRC_LEN)) << v.desc;
	EXPECT_EQ(v.value, xiw_crc32c_value(v.data, v.len)) << v.desc;
	EXPECT_EQ(xiw_crc_get(v.wire), xiw_crc_update(XIW_CRC_SEED, v.data, v.len));
}

TEST_P(Crc32cKat, AnySplitGivesSameCrc)
{
	const xiw_vec_crc32c &v = GetParam();

	for (size_t cut = 0; cut <= v.len; cut++) {
		u32 c = xiw_crc_update(XIW_CRC_SEED, v.data, cut);

		c = xiw_crc_update(c, v.data + cut, v.len - cut);
		EXPECT_EQ(v.value, ~c) << v.desc << " cut " << cut;
	}
}

INSTANTIATE_TEST_SUITE_P(Rfc3720, Crc32cKat,
			 ::testing::ValuesIn(xiw_vec_crc32c_rows,
					     xiw_vec_crc32c_rows +
					     XIW_VEC_COUNT(xiw_vec_crc32c_rows)));

// Bit-at-a-time reference, written from the polynomial alone.
u32 RefUpdate(u32 c, const u8 *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
	}
	return c;
}

std::vector<u8> RandomBytes(size_t n, unsigned int seed)
{
	std::mt19937 rng(seed);
	std::vector<u8> v(n);

	for (auto &b : v)
		b = (u8)rng();
	return v;
}

TEST(Crc32c, MatchesBitwiseReferenceOnRandomBuffers)
{
	auto buf = RandomBytes(4099, 5044);

	for (size_t len = 0; len < buf.size(); len += 1 + len / 7) {
		for (size_t off = 0; off < 9; off++) {
			if (off + len > buf.size())
				break;
			EXPECT_EQ(~RefUpdate(~0u, buf.data() + off, len),
				  xiw_crc32c_value(buf.data() + off, len))
				<< "len " << len << " off " << off;
		}
	}
}

TEST(Crc32c, EveryLengthAndAlignmentWithAnySeed)
{
	auto buf = RandomBytes(2048 + 64, 3720);

	for (size_t len = 0; len <= 2048; len++) {
		size_t off = len % 64;
		u32 seed = (u32)(0x9e3779b9u * (len + 1));

		ASSERT_EQ(RefUpdate(seed, buf.data() + off, len),
			  xiw_crc_update(seed, buf.data() + off, len))
			<< "len " << len << " off " << off;
	}
}

TEST(Crc32c, LargeBuffersAndSplits)
{
	auto buf = RandomBytes((1u << 20) + 77, 5040);
	const size_t lens[] = { 3007, 3008, 4095, 4096, 65535, 65536, 65537, 1u << 20 };

	for (size_t len : lens) {
		u32 want = RefUpdate(~0u, buf.data() + 3, len);

		EXPECT_EQ(want, xiw_crc_update(~0u, buf.data() + 3, len)) << len;
		for (size_t cut : { (size_t)1, (size_t)255, (size_t)256, len / 3, len - 1 }) {
			u32 c = xiw_crc_update(~0u, buf.data() + 3, cut);

			c = xiw_crc_update(c, buf.data() + 3 + cut, len - cut);
			EXPECT_EQ(want, c) << len << " cut " << cut;
		}
	}
}

// xiw_crc_copy(): the CRC of the source, the destination a copy of it,
// nothing written around it.
TEST(Crc32c, CopyWritesExactlyTheDestination)
{
	auto src = RandomBytes(24100, 5041);
	std::vector<u8> dst(24100 + 128);

	for (size_t len = 0; len < 24000; len += 1 + len / 5) {
		for (size_t doff : { (size_t)0, (size_t)1, (size_t)7, (size_t)33 }) {
			size_t soff = (len + doff) % 61;
			u32 seed = (u32)len * 2654435761u;

			std::fill(dst.begin(), dst.end(), 0xa5);
			u32 got = xiw_crc_copy(seed, dst.data() + 64 + doff, src.data() + soff, len);
			ASSERT_EQ(RefUpdate(seed, src.data() + soff, len), got)
				<< "len " << len << " doff " << doff;
			ASSERT_EQ(0, memcmp(dst.data() + 64 + doff, src.data() + soff, len));
			for (size_t i = 0; i < 64 + doff; i++)
				ASSERT_EQ(0xa5, dst[i]) << "underrun at " << i;
			for (size_t i = 64 + doff + len; i < dst.size(); i++)
				ASSERT_EQ(0xa5, dst[i]) << "overrun at " << i;
		}
	}
}

}  // namespace
