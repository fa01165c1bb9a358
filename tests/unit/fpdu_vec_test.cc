// SPDX-License-Identifier: GPL-2.0
// FPDU stream vectors through the deframer: whole, one byte at a time and
// random splits must give the same segments, payload and error; error
// rows also check the TERMINATE triplet.
#include <gtest/gtest.h>

#include "tests/vectors/fpdu_vectors.h"
#include "xiw_test_util.h"

using namespace xiwtest;

inline void PrintTo(const xiw_vec_fpdu &v, std::ostream *os) { *os << v.desc; }

namespace {

class FpduVec : public ::testing::TestWithParam<xiw_vec_fpdu> {};

TEST_P(FpduVec, AllDeliveries)
{
	const xiw_vec_fpdu &v = GetParam();
	Bytes s(v.bytes, v.bytes + v.len);
	std::vector<std::vector<size_t>> plans = { Whole(), OneByte() };

	for (u32 seed = 0; seed < 8; seed++)
		plans.push_back(RandomCuts(seed * 7919 + v.len, 1 + seed * 13));
	for (auto &plan : plans) {
		DeframeResult r = Deframe(s, v.crc, v.markers, v.pos, plan, v.max_ulpdu);
		// The same with each segment's end joined to its last chunk.
		DeframeResult rj = Deframe(s, v.crc, v.markers, v.pos, plan, v.max_ulpdu, true);
		size_t complete = 0, payload = 0, complete_j = 0, payload_j = 0;

		ASSERT_EQ(v.err, r.err) << v.desc << " got " << xiw_proto_err_name(r.err);
		ASSERT_EQ(v.err, rj.err) << v.desc << " joined got " << xiw_proto_err_name(rj.err);
		ASSERT_EQ("", r.trace_error);
		ASSERT_EQ("", rj.trace_error);
		for (auto &sg : r.segs) {
			complete += sg.ended;
			payload += sg.payload.size();
		}
		for (auto &sg : rj.segs) {
			complete_j += sg.ended;
			payload_j += sg.payload.size();
		}
		EXPECT_EQ(v.nseg, complete) << v.desc;
		EXPECT_EQ(v.nseg, complete_j) << v.desc;
		// Payload handed out before an error is exact too: the
		// deframer never hands out octets past the point of failure.
		EXPECT_EQ(v.payload, payload) << v.desc;
		// Joined, a chunk whose CRC fails is not handed out at all.
		if (v.err == XIW_ERR_MPA_CRC)
			EXPECT_GE(v.payload, payload_j) << v.desc;
		else
			EXPECT_EQ(v.payload, payload_j) << v.desc;
		EXPECT_EQ(r.consumed, rj.consumed) << v.desc;
		if (v.err == XIW_OK) {
			EXPECT_EQ(s.size(), r.consumed);
		} else {
			xiw_term_code tc;

			EXPECT_LE(r.consumed, s.size());
			EXPECT_TRUE(xiw_proto_err_term(r.err, &tc));
		}
	}
}

INSTANTIATE_TEST_SUITE_P(Rfc5044, FpduVec,
			 ::testing::ValuesIn(xiw_vec_fpdu_rows,
					     xiw_vec_fpdu_rows + XIW_VEC_COUNT(xiw_vec_fpdu_rows)));

}  // namespace
