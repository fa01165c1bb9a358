// SPDX-License-Identifier: GPL-2.0
// RFC 7306 atomic arithmetic of the responder (xiw_atomic_apply): a table
// of hand-computed rows, and the masked FetchAdd checked field by field
// against an independent per-field sum over random operands.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "xiw_test_util.h"

namespace {

struct AtomicRow {
	const char *desc;
	uint8_t op;
	uint64_t orig;
	uint64_t data;
	uint64_t data_mask;
	uint64_t cmp;
	uint64_t cmp_mask;
	uint64_t want;
};

void PrintTo(const AtomicRow &r, std::ostream *os) { *os << r.desc; }

constexpr uint64_t kAll = ~0ULL;

const AtomicRow kRows[] = {
	{ "fetchadd: plain add", RDMAP_ATOMIC_FETCHADD, 1000, 234, 0, 0, 0, 1234 },
	{ "fetchadd: 64 bit wrap", RDMAP_ATOMIC_FETCHADD, kAll, 2, 0, 0, 0, 1 },
	{ "fetchadd: carry crosses 32 bits without a boundary",
	  RDMAP_ATOMIC_FETCHADD, 0xffffffffULL, 1, 0, 0, 0, 0x100000000ULL },
	{ "fetchadd: two 32 bit fields, the low one wraps alone",
	  RDMAP_ATOMIC_FETCHADD, 0x00000000ffffffffULL, 0x0000000100000001ULL,
	  0x8000000080000000ULL, 0, 0, 0x0000000100000000ULL },
	{ "fetchadd: eight byte lanes", RDMAP_ATOMIC_FETCHADD,
	  0x01ff02fe03fd04fcULL, 0x0101010101010101ULL, 0x8080808080808080ULL,
	  0, 0, 0x020003ff04fe05fdULL },
	{ "fetchadd: the top field's carry leaves the word",
	  RDMAP_ATOMIC_FETCHADD, 0xffff000000000000ULL, 0x0001000000000000ULL,
	  0x8000800000000000ULL, 0, 0, 0 },
	{ "cmpswap: match swaps", RDMAP_ATOMIC_CMPSWAP, 1234, 77, kAll, 1234,
	  kAll, 77 },
	{ "cmpswap: mismatch keeps", RDMAP_ATOMIC_CMPSWAP, 77, 5, kAll, 1234,
	  kAll, 77 },
	{ "cmpswap: compare mask ignores the low half", RDMAP_ATOMIC_CMPSWAP,
	  0xaaaa5555deadbeefULL, 0x1111111111111111ULL, kAll,
	  0xaaaa555500000000ULL, 0xffffffff00000000ULL, 0x1111111111111111ULL },
	{ "cmpswap: swap mask replaces one byte", RDMAP_ATOMIC_CMPSWAP,
	  0x0123456789abcdefULL, 0xffffffffffffffffULL, 0xff00ULL, 0, 0,
	  0x0123456789abffefULL },
	{ "cmpswap: masked compare fails, nothing changes", RDMAP_ATOMIC_CMPSWAP,
	  0x0123456789abcdefULL, 0, kAll, 0x0123456789abcdeeULL, 0xf,
	  0x0123456789abcdefULL },
	{ "cmpswap: empty swap mask is a no-op even on match",
	  RDMAP_ATOMIC_CMPSWAP, 42, 7, 0, 42, kAll, 42 },
};

class AtomicVec : public ::testing::TestWithParam<AtomicRow> {};

TEST_P(AtomicVec, NewValue)
{
	const AtomicRow &r = GetParam();
	xiw_atomic_req ar = {};

	ar.op = r.op;
	ar.data = r.data;
	ar.data_mask = r.data_mask;
	ar.cmp = r.cmp;
	ar.cmp_mask = r.cmp_mask;
	EXPECT_EQ(r.want, xiw_atomic_apply(&ar, r.orig)) << std::hex << r.orig;
}

INSTANTIATE_TEST_SUITE_P(Rows, AtomicVec, ::testing::ValuesIn(kRows));

// Sum each field on its own: fields end at the set bits of @bounds (and at
// bit 63); a field's carry out is dropped.
uint64_t FieldwiseSum(uint64_t a, uint64_t b, uint64_t bounds)
{
	uint64_t out = 0;
	unsigned int lo = 0;

	for (unsigned int i = 0; i < 64; i++) {
		if (!(bounds & (1ULL << i)) && i != 63)
			continue;
		unsigned int width = i - lo + 1;
		uint64_t mask = width == 64 ? ~0ULL : ((1ULL << width) - 1);
		uint64_t s = (((a >> lo) & mask) + ((b >> lo) & mask)) & mask;

		out |= s << lo;
		lo = i + 1;
	}
	return out;
}

TEST(Atomic, MaskedFetchAddMatchesFieldwiseSum)
{
	std::mt19937_64 rng(7306);

	for (int n = 0; n < 20000; n++) {
		xiw_atomic_req ar = {};
		uint64_t orig = rng();
		uint64_t bounds = rng() & rng();	/* sparse boundaries */

		ar.op = RDMAP_ATOMIC_FETCHADD;
		ar.data = rng();
		ar.data_mask = n % 10 ? bounds : 0;
		ASSERT_EQ(FieldwiseSum(orig, ar.data, ar.data_mask),
			  xiw_atomic_apply(&ar, orig))
			<< std::hex << orig << " + " << ar.data << " bounds "
			<< ar.data_mask;
	}
}

TEST(Atomic, CompareSwapTouchesOnlySwapMaskBits)
{
	std::mt19937_64 rng(5040);

	for (int n = 0; n < 20000; n++) {
		xiw_atomic_req ar = {};
		uint64_t orig = rng();

		ar.op = RDMAP_ATOMIC_CMPSWAP;
		ar.data = rng();
		ar.data_mask = rng();
		ar.cmp_mask = rng() & rng();
		ar.cmp = n % 2 ? orig : rng();
		uint64_t got = xiw_atomic_apply(&ar, orig);
		bool match = !((orig ^ ar.cmp) & ar.cmp_mask);

		ASSERT_EQ(orig & ~ar.data_mask, got & ~ar.data_mask);
		ASSERT_EQ(match ? ar.data & ar.data_mask : orig & ar.data_mask,
			  got & ar.data_mask);
	}
}

} // namespace
