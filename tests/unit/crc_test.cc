// SPDX-License-Identifier: GPL-2.0
// CRC32c known answers: RFC 3720 appendix B.4 (iSCSI, same CRC and byte
// order as MPA) and the common "123456789" check value.
#include <gtest/gtest.h>

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

// Bit-at-a-time reference: independent of the slicing-by-8 tables.
u32 crc_bitwise(const u8 *p, size_t n)
{
	u32 c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
	}
	return ~c;
}

TEST(Crc32c, MatchesBitwiseReferenceOnRandomBuffers)
{
	std::mt19937 rng(5044);
	std::vector<u8> buf(4099);

	for (auto &b : buf)
		b = (u8)rng();
	for (size_t len = 0; len < buf.size(); len += 1 + len / 7) {
		for (size_t off = 0; off < 9; off++) {
			if (off + len > buf.size())
				break;
			EXPECT_EQ(crc_bitwise(buf.data() + off, len),
				  xiw_crc32c_value(buf.data() + off, len))
				<< "len " << len << " off " << off;
		}
	}
}

}  // namespace
