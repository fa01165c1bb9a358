// SPDX-License-Identifier: GPL-2.0
// TERMINATE: body vectors, encode -> exact bytes, the error -> triplet
// table against an independently typed RFC table, and header copying.
#include <gtest/gtest.h>

#include <set>

#include "tests/vectors/term_vectors.h"
#include "xiw_test_util.h"

using namespace xiwtest;

inline void PrintTo(const xiw_vec_err_term &v, std::ostream *os) { *os << xiw_proto_err_name(v.err); }
inline void PrintTo(const xiw_vec_term &v, std::ostream *os) { *os << v.desc; }

namespace {

class TermVec : public ::testing::TestWithParam<xiw_vec_term> {};

TEST_P(TermVec, ParseAndRebuild)
{
	const xiw_vec_term &v = GetParam();
	xiw_term t;
	u8 out[RDMAP_TERM_MAX_LEN];
	size_t n;

	ASSERT_EQ(v.err, xiw_term_parse(v.bytes, v.len, &t)) << v.desc;
	if (v.err != XIW_OK)
		return;
	EXPECT_EQ(v.layer, t.ctrl.code.layer);
	EXPECT_EQ(v.etype, t.ctrl.code.etype);
	EXPECT_EQ(v.ecode, t.ctrl.code.ecode);
	EXPECT_EQ(v.m, t.ctrl.m);
	EXPECT_EQ(v.d, t.ctrl.d);
	EXPECT_EQ(v.r, t.ctrl.r);
	EXPECT_EQ(v.seg_len, t.seg_len);
	EXPECT_EQ(v.ddp_hdr_len, t.ddp_hdr_len);
	ASSERT_EQ(XIW_OK, xiw_term_build(&t, out, sizeof(out), &n));
	EXPECT_EQ(Bytes(v.bytes, v.bytes + v.len), Bytes(out, out + n));
	if (n) {
		EXPECT_EQ(XIW_ERR_NOSPACE, xiw_term_build(&t, out, n - 1, &n));
	}
}

INSTANTIATE_TEST_SUITE_P(Rfc5040, TermVec,
			 ::testing::ValuesIn(xiw_vec_term_rows,
					     xiw_vec_term_rows + XIW_VEC_COUNT(xiw_vec_term_rows)));

class ErrTriplet : public ::testing::TestWithParam<xiw_vec_err_term> {};

TEST_P(ErrTriplet, MatchesRfcTable)
{
	const xiw_vec_err_term &v = GetParam();
	xiw_term_code tc;

	ASSERT_TRUE(xiw_proto_err_term(v.err, &tc)) << xiw_proto_err_name(v.err);
	EXPECT_EQ(v.layer, tc.layer) << xiw_proto_err_name(v.err);
	EXPECT_EQ(v.etype, tc.etype) << xiw_proto_err_name(v.err);
	EXPECT_EQ(v.ecode, tc.ecode) << xiw_proto_err_name(v.err);
	// the canonical error for the triplet maps back to the same triplet
	xiw_term_code back;
	ASSERT_TRUE(xiw_proto_err_term(xiw_term_code_to_err(&tc), &back));
	EXPECT_EQ(tc.layer, back.layer);
	EXPECT_EQ(tc.etype, back.etype);
	EXPECT_EQ(tc.ecode, back.ecode);
	// and survives a TERMINATE control word round trip
	xiw_term_ctrl c{ tc, true, false, true }, d;
	u8 w[4];
	xiw_term_ctrl_encode(&c, w);
	xiw_term_ctrl_decode(w, &d);
	EXPECT_EQ(tc.layer, d.code.layer);
	EXPECT_EQ(tc.etype, d.code.etype);
	EXPECT_EQ(tc.ecode, d.code.ecode);
	EXPECT_TRUE(d.m && !d.d && d.r);
}

INSTANTIATE_TEST_SUITE_P(Every, ErrTriplet,
			 ::testing::ValuesIn(xiw_vec_err_term_rows,
					     xiw_vec_err_term_rows +
					     XIW_VEC_COUNT(xiw_vec_err_term_rows)));

TEST(ErrTable, EveryErrorHasARowAName)
{
	std::set<int> seen;

	for (auto &r : xiw_vec_err_term_rows)
		seen.insert(r.err);
	for (int e = XIW_OK + 1; e < XIW_ERR_COUNT; e++) {
		EXPECT_TRUE(seen.count(e)) << "no RFC row for " << xiw_proto_err_name((xiw_proto_err)e);
		EXPECT_STRNE("XIW_ERR_?", xiw_proto_err_name((xiw_proto_err)e)) << e;
	}
	xiw_term_code tc;
	EXPECT_FALSE(xiw_proto_err_term(XIW_OK, &tc));
	EXPECT_FALSE(xiw_proto_err_term(XIW_ERR_COUNT, &tc));
	EXPECT_STREQ("XIW_ERR_?", xiw_proto_err_name(XIW_ERR_COUNT));
	tc = { 3, 0, 0 };
	EXPECT_EQ(XIW_ERR_RDMAP_UNSPECIFIED, xiw_term_code_to_err(&tc));
}

TEST(TermInit, CopiesHeadersPerLayer)
{
	xiw_rdmap_hdr h = Hdr(RDMAP_OP_READ_REQ);
	h.u.read_req = { 1, 2, 3, 4, 5 };
	Bytes ul = Ulpdu(h, {});
	Bytes fpdu = { 0, (u8)ul.size() };
	fpdu.insert(fpdu.end(), ul.begin(), ul.end());
	xiw_term t;

	ASSERT_EQ(XIW_OK, xiw_term_init(&t, XIW_ERR_DDP_UT_MSN_RANGE, fpdu.data(), fpdu.size()));
	EXPECT_TRUE(t.ctrl.m && t.ctrl.d && t.ctrl.r);
	EXPECT_EQ(ul.size(), t.seg_len);
	EXPECT_EQ(18, t.ddp_hdr_len);
	EXPECT_EQ(Bytes(ul.begin(), ul.begin() + 18), Bytes(t.ddp_hdr, t.ddp_hdr + 18));
	EXPECT_EQ(Bytes(ul.begin() + 18, ul.end()), Bytes(t.rdmap_hdr, t.rdmap_hdr + 28));

	ASSERT_EQ(XIW_OK, xiw_term_init(&t, XIW_ERR_MPA_CRC, fpdu.data(), fpdu.size()));
	EXPECT_TRUE(t.ctrl.m && !t.ctrl.d && !t.ctrl.r);

	ASSERT_EQ(XIW_OK, xiw_term_init(&t, XIW_ERR_DDP_UT_MSN_RANGE, fpdu.data(), 2 + 18));
	EXPECT_TRUE(t.ctrl.m && t.ctrl.d && !t.ctrl.r);
	ASSERT_EQ(XIW_OK, xiw_term_init(&t, XIW_ERR_DDP_UT_MSN_RANGE, fpdu.data(), 2 + 17));
	EXPECT_TRUE(t.ctrl.m && !t.ctrl.d);
	ASSERT_EQ(XIW_OK, xiw_term_init(&t, XIW_ERR_MPA_REV, nullptr, 0));
	EXPECT_FALSE(t.ctrl.m || t.ctrl.d || t.ctrl.r);
	EXPECT_EQ(XIW_ERR_INVAL, xiw_term_init(&t, XIW_OK, nullptr, 0));

	// the body goes out in a TERMINATE message and comes back intact
	u8 body[RDMAP_TERM_MAX_LEN];
	size_t n;
	ASSERT_EQ(XIW_OK, xiw_term_init(&t, XIW_ERR_RDMAP_ACCESS, fpdu.data(), fpdu.size()));
	ASSERT_EQ(XIW_OK, xiw_term_build(&t, body, sizeof(body), &n));
	EXPECT_EQ((size_t)RDMAP_TERM_MAX_LEN, n);
	xiw_rdmap_hdr th = Hdr(RDMAP_OP_TERMINATE);
	th.u.term = t.ctrl;
	Bytes msg = Ulpdu(th, Bytes(body + 4, body + n));
	xiw_tx tx;
	Bytes stream;
	xiw_tx_init(&tx, true, false, 0);
	ASSERT_TRUE(Frame(&tx, msg, &stream));
	DeframeResult r = Deframe(stream, true, false, 0, OneByte());
	ASSERT_EQ(XIW_OK, r.err);
	ASSERT_EQ(1u, r.segs.size());
	Bytes full(msg.begin() + 18, msg.begin() + 22);
	full.insert(full.end(), r.segs[0].payload.begin(), r.segs[0].payload.end());
	xiw_term back;
	ASSERT_EQ(XIW_OK, xiw_term_parse(full.data(), full.size(), &back));
	EXPECT_EQ(XIW_ERR_RDMAP_ACCESS, xiw_term_code_to_err(&back.ctrl.code));
	EXPECT_EQ(Bytes(t.rdmap_hdr, t.rdmap_hdr + 28), Bytes(back.rdmap_hdr, back.rdmap_hdr + 28));
}

TEST(TermBuild, InconsistentInput)
{
	xiw_term t{};
	u8 out[64];
	size_t n;

	t.ctrl.d = true;
	t.ddp_hdr_len = 14;	// but ddp_hdr[0] has no T flag
	EXPECT_EQ(XIW_ERR_INVAL, xiw_term_build(&t, out, sizeof(out), &n));
	t.ddp_hdr[0] = DDP_FLAG_T;
	EXPECT_EQ(XIW_OK, xiw_term_build(&t, out, sizeof(out), &n));
	EXPECT_EQ(18u, n);
	t.ctrl.code.layer = 16;
	EXPECT_EQ(XIW_ERR_INVAL, xiw_term_build(&t, out, sizeof(out), &n));
}

}  // namespace
