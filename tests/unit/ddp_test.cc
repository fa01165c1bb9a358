// SPDX-License-Identifier: GPL-2.0
// DDP receive validation (RFC 5041 sec 7): untagged queue state and
// tagged buffer bounds, each row naming the exact error and triplet.
#include <gtest/gtest.h>

#include "xiw_test_util.h"

using namespace xiwtest;

namespace {

struct UtRow {
	const char *desc;
	u32 msn, mo, len;
	xiw_ddp_queue q;
	xiw_proto_err err;
	u8 ecode;
};

void PrintTo(const UtRow &r, std::ostream *os) { *os << r.desc; }

class Untagged : public ::testing::TestWithParam<UtRow> {};

TEST_P(Untagged, Check)
{
	const UtRow &r = GetParam();
	xiw_rdmap_hdr h = Hdr(RDMAP_OP_SEND);
	xiw_term_code tc;

	h.msn = r.msn;
	h.mo = r.mo;
	EXPECT_EQ(r.err, xiw_ddp_check_untagged(&h, r.len, &r.q)) << r.desc;
	if (r.err != XIW_OK) {
		ASSERT_TRUE(xiw_proto_err_term(r.err, &tc));
		EXPECT_EQ(TERM_LAYER_DDP, tc.layer);
		EXPECT_EQ(DDP_ETYPE_UNTAGGED_BUF, tc.etype);
		EXPECT_EQ(r.ecode, tc.ecode);
	}
}

// RFC 5041 sec 7.2 untagged buffer errors
INSTANTIATE_TEST_SUITE_P(Rfc5041, Untagged, ::testing::Values(
	UtRow{ "first segment", 5, 0, 100, { 5, 1, 0, 4096 }, XIW_OK, 0 },
	UtRow{ "continuation", 5, 100, 100, { 5, 1, 100, 4096 }, XIW_OK, 0 },
	UtRow{ "exactly fills buffer", 5, 96, 4000, { 5, 1, 96, 4096 }, XIW_OK, 0 },
	UtRow{ "next message, posted", 6, 0, 10, { 5, 2, 40, 4096 }, XIW_OK, 0 },
	UtRow{ "MSN wraps", 0, 0, 10, { 0xffffffff, 2, 0, 64 }, XIW_OK, 0 },
	UtRow{ "no buffer posted", 5, 0, 1, { 5, 0, 0, 0 }, XIW_ERR_DDP_UT_MSN_NOBUF, 2 },
	UtRow{ "beyond posted buffers", 7, 0, 1, { 5, 2, 0, 64 }, XIW_ERR_DDP_UT_MSN_RANGE, 3 },
	UtRow{ "ahead, nothing posted", 6, 0, 1, { 5, 0, 0, 0 }, XIW_ERR_DDP_UT_MSN_RANGE, 3 },
	UtRow{ "last posted buffer", 6, 0, 1, { 5, 2, 0, 64 }, XIW_OK, 0 },
	UtRow{ "MSN behind", 4, 0, 1, { 5, 8, 0, 64 }, XIW_ERR_DDP_UT_MSN_RANGE, 3 },
	UtRow{ "MSN 2^31 ahead", 5 + 0x80000000u, 0, 1, { 5, 0xffffffff, 0, 64 }, XIW_ERR_DDP_UT_MSN_RANGE, 3 },
	UtRow{ "MO gap", 5, 200, 1, { 5, 1, 100, 4096 }, XIW_ERR_DDP_UT_INVALID_MO, 4 },
	UtRow{ "MO rewinds", 5, 0, 1, { 5, 1, 100, 4096 }, XIW_ERR_DDP_UT_INVALID_MO, 4 },
	UtRow{ "later message starts mid-way", 6, 8, 1, { 5, 2, 0, 4096 }, XIW_ERR_DDP_UT_INVALID_MO, 4 },
	UtRow{ "one octet too long", 5, 96, 4001, { 5, 1, 96, 4096 }, XIW_ERR_DDP_UT_MSG_TOOLONG, 5 },
	UtRow{ "MO near 2^32", 5, 0xfffffff0u, 0x20, { 5, 1, 0xfffffff0u, 0xffffffffu }, XIW_ERR_DDP_UT_MSG_TOOLONG, 5 }));

struct TRow {
	const char *desc;
	u32 stag;
	u64 to;
	u32 len;
	bool have;
	xiw_ddp_region r;
	xiw_proto_err err;
	u8 ecode;
};

void PrintTo(const TRow &r, std::ostream *os) { *os << r.desc; }

class Tagged : public ::testing::TestWithParam<TRow> {};

TEST_P(Tagged, Check)
{
	const TRow &r = GetParam();
	xiw_rdmap_hdr h = Hdr(RDMAP_OP_WRITE);
	xiw_term_code tc;

	h.stag = r.stag;
	h.to = r.to;
	EXPECT_EQ(r.err, xiw_ddp_check_tagged(&h, r.len, r.have ? &r.r : nullptr)) << r.desc;
	if (r.err != XIW_OK) {
		ASSERT_TRUE(xiw_proto_err_term(r.err, &tc));
		EXPECT_EQ(TERM_LAYER_DDP, tc.layer);
		EXPECT_EQ(DDP_ETYPE_TAGGED_BUF, tc.etype);
		EXPECT_EQ(r.ecode, tc.ecode);
	}
}

// RFC 5041 sec 7.2 tagged buffer errors
INSTANTIATE_TEST_SUITE_P(Rfc5041, Tagged, ::testing::Values(
	TRow{ "inside", 7, 0x1010, 16, true, { 7, 0x1000, 0x100, true, true }, XIW_OK, 0 },
	TRow{ "whole region", 7, 0x1000, 0x100, true, { 7, 0x1000, 0x100, true, true }, XIW_OK, 0 },
	TRow{ "zero length at end", 7, 0x1100, 0, true, { 7, 0x1000, 0x100, true, true }, XIW_OK, 0 },
	TRow{ "top of address space", 7, 0xfffffffffffffff0ull, 16, true, { 7, 0xffffffffffff0000ull, 0x10000, true, true }, XIW_OK, 0 },
	TRow{ "unknown STag", 7, 0, 1, false, {}, XIW_ERR_DDP_T_INVALID_STAG, 0 },
	TRow{ "invalidated STag", 7, 0x1000, 1, true, { 7, 0x1000, 0x100, false, true }, XIW_ERR_DDP_T_INVALID_STAG, 0 },
	TRow{ "STag key differs", 8, 0x1000, 1, true, { 7, 0x1000, 0x100, true, true }, XIW_ERR_DDP_T_INVALID_STAG, 0 },
	TRow{ "other stream's STag", 7, 0x1000, 1, true, { 7, 0x1000, 0x100, true, false }, XIW_ERR_DDP_T_STAG_NOT_ASSOC, 2 },
	TRow{ "TO wraps", 7, 0xfffffffffffffff0ull, 17, true, { 7, 0, ~0ull, true, true }, XIW_ERR_DDP_T_TO_WRAP, 3 },
	TRow{ "below base", 7, 0xfff, 2, true, { 7, 0x1000, 0x100, true, true }, XIW_ERR_DDP_T_BASE_BOUNDS, 1 },
	TRow{ "one past end", 7, 0x10ff, 2, true, { 7, 0x1000, 0x100, true, true }, XIW_ERR_DDP_T_BASE_BOUNDS, 1 },
	TRow{ "start past end", 7, 0x1101, 0, true, { 7, 0x1000, 0x100, true, true }, XIW_ERR_DDP_T_BASE_BOUNDS, 1 },
	// Base 0 and a segment ending at exactly 2^64: TO + length is 0 mod 2^64.
	TRow{ "ends at 2^64, small region at 0", 7, 0xfffffffffffffff0ull, 16, true, { 7, 0, 0x100, true, true }, XIW_ERR_DDP_T_BASE_BOUNDS, 1 },
	TRow{ "ends at 2^64, empty region at 0", 7, 0xffffffffffffffffull, 1, true, { 7, 0, 0, true, true }, XIW_ERR_DDP_T_BASE_BOUNDS, 1 },
	TRow{ "ends at 2^64, region to the top", 7, 0xfffffffffffffff0ull, 16, true, { 7, 0, ~0ull, true, true }, XIW_ERR_DDP_T_BASE_BOUNDS, 1 },
	TRow{ "last octet below 2^64 - 1", 7, 0xfffffffffffffff0ull, 15, true, { 7, 0, ~0ull, true, true }, XIW_OK, 0 }));

TEST(DdpCheck, WrongModelIsMisuse)
{
	xiw_rdmap_hdr w = Hdr(RDMAP_OP_WRITE), s = Hdr(RDMAP_OP_SEND);
	xiw_ddp_queue q{ 0, 1, 0, 10 };
	xiw_ddp_region r{ 0, 0, 10, true, true };

	EXPECT_EQ(XIW_ERR_INVAL, xiw_ddp_check_untagged(&w, 1, &q));
	EXPECT_EQ(XIW_ERR_INVAL, xiw_ddp_check_tagged(&s, 1, &r));
}

}  // namespace
