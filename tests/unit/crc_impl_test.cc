// SPDX-License-Identifier: GPL-2.0
// Every CRC32c implementation of the userspace build (portable tables,
// SSE4.2, PCLMUL and VPCLMUL folding), checked one by one against a
// bit-at-a-time reference: RFC 3720 B.4 known answers, every length from
// 0 to 2 KiB at every alignment of source and destination, seeds other
// than ~0, split points, and the fused copy (destination bytes, guard
// bytes around it untouched). Implementations the CPU cannot run skip.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "proto/xiw_proto.h"
#include "tests/vectors/crc32c_vectors.h"
#include "xiw_crc32c.h"

namespace {

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

std::vector<std::string> ImplNames()
{
	unsigned int n;
	const xiw_crc32c_impl *im = xiw_crc32c_impls(&n);
	std::vector<std::string> v;

	for (unsigned int i = 0; i < n; i++)
		v.emplace_back(im[i].name);
	return v;
}

class CrcImpl : public ::testing::TestWithParam<std::string> {
protected:
	void SetUp() override
	{
		unsigned int n;
		const xiw_crc32c_impl *im = xiw_crc32c_impls(&n);

		for (unsigned int i = 0; i < n; i++)
			if (GetParam() == im[i].name)
				impl_ = &im[i];
		ASSERT_NE(nullptr, impl_);
		if (!impl_->usable())
			GTEST_SKIP() << GetParam() << ": not supported by this CPU";
	}
	const xiw_crc32c_impl *impl_ = nullptr;
};

TEST_P(CrcImpl, KnownAnswers)
{
	for (size_t i = 0; i < XIW_VEC_COUNT(xiw_vec_crc32c_rows); i++) {
		const xiw_vec_crc32c &v = xiw_vec_crc32c_rows[i];
		std::vector<u8> dst(v.len + 1);

		EXPECT_EQ(v.value, ~impl_->crc(~0u, v.data, v.len)) << v.desc;
		EXPECT_EQ(v.value, ~impl_->copy(~0u, dst.data(), v.data, v.len)) << v.desc;
		EXPECT_EQ(0, memcmp(dst.data(), v.data, v.len)) << v.desc;
	}
}

TEST_P(CrcImpl, EveryLengthAndAlignment)
{
	auto buf = RandomBytes(2048 + 64, 3720);

	for (size_t len = 0; len <= 2048; len++) {
		size_t off = len % 64;
		u32 seed = (u32)(0x9e3779b9u * (len + 1));

		ASSERT_EQ(RefUpdate(seed, buf.data() + off, len),
			  impl_->crc(seed, buf.data() + off, len))
			<< "len " << len << " off " << off;
	}
}

TEST_P(CrcImpl, MediumLengths)
{
	auto buf = RandomBytes(40000 + 64, 5044);

	for (size_t len = 2048; len <= 40000; len += 1 + len / 29) {
		size_t off = len % 63;

		ASSERT_EQ(RefUpdate(~0u, buf.data() + off, len),
			  impl_->crc(~0u, buf.data() + off, len))
			<< "len " << len << " off " << off;
	}
}

TEST_P(CrcImpl, LargeBuffersAndSplits)
{
	auto buf = RandomBytes((1u << 20) + 77, 5040);
	const size_t lens[] = { 3007, 3008, 4095, 4096, 65535, 65536, 65537, 1u << 20 };

	for (size_t len : lens) {
		u32 want = RefUpdate(~0u, buf.data() + 3, len);

		EXPECT_EQ(want, impl_->crc(~0u, buf.data() + 3, len)) << len;
		for (size_t cut : { (size_t)1, (size_t)255, (size_t)256, len / 3, len - 1 }) {
			u32 c = impl_->crc(~0u, buf.data() + 3, cut);

			c = impl_->crc(c, buf.data() + 3 + cut, len - cut);
			EXPECT_EQ(want, c) << len << " cut " << cut;
		}
	}
}

TEST_P(CrcImpl, CopyWritesExactlyTheDestination)
{
	auto src = RandomBytes(24100, 5041);
	std::vector<u8> dst(24100 + 128);

	for (size_t len = 0; len < 24000; len += 1 + len / 5) {
		for (size_t doff : { (size_t)0, (size_t)1, (size_t)7, (size_t)33 }) {
			size_t soff = (len + doff) % 61;
			u32 seed = (u32)len * 2654435761u;

			std::fill(dst.begin(), dst.end(), 0xa5);
			u32 got = impl_->copy(seed, dst.data() + 64 + doff,
					      src.data() + soff, len);
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

INSTANTIATE_TEST_SUITE_P(All, CrcImpl, ::testing::ValuesIn(ImplNames()),
			 [](const ::testing::TestParamInfo<std::string> &i) { return i.param; });

TEST(CrcDispatch, PicksTheFastestUsable)
{
	unsigned int n;
	const xiw_crc32c_impl *im = xiw_crc32c_impls(&n);
	const char *forced = getenv("XIW_CRC32C");

	ASSERT_GT(n, 0u);
	EXPECT_STREQ("sw", im[n - 1].name);
	if (forced && *forced) {
		GTEST_SKIP() << "XIW_CRC32C=" << forced << " overrides the choice";
	}
	for (unsigned int i = 0; i < n; i++) {
		if (im[i].usable()) {
			EXPECT_STREQ(im[i].name, xiw_crc32c_active());
			break;
		}
	}
}

TEST(CrcDispatch, ProtoCopyMatchesUpdate)
{
	auto src = RandomBytes(9000, 7306);
	std::vector<u8> dst(9000);

	EXPECT_EQ(xiw_crc_update(XIW_CRC_SEED, src.data(), src.size()),
		  xiw_crc_copy(XIW_CRC_SEED, dst.data(), src.data(), src.size()));
	EXPECT_EQ(src, dst);
}

}  // namespace
