// SPDX-License-Identifier: GPL-2.0
// MPA Request/Reply frames and negotiation: vectors decoded whole and
// prefix by prefix, encode -> exact bytes, negotiation table rows, and a
// full initiator x responder policy matrix checked for agreement.
#include <gtest/gtest.h>

#include <cstring>

#include "tests/vectors/mpa_vectors.h"
#include "xiw_test_util.h"

using namespace xiwtest;

inline void PrintTo(const xiw_vec_mpa_neg &v, std::ostream *os) { *os << v.desc; }
inline void PrintTo(const xiw_vec_mpa &v, std::ostream *os) { *os << v.desc; }

namespace {

class MpaFrameVec : public ::testing::TestWithParam<xiw_vec_mpa> {};

TEST_P(MpaFrameVec, Decode)
{
	const xiw_vec_mpa &v = GetParam();
	xiw_mpa_frame f;
	size_t used = 77;

	ASSERT_EQ(v.err, xiw_mpa_frame_parse(v.bytes, v.len, &f, &used)) << v.desc;
	if (v.err != XIW_OK) {
		xiw_term_code tc;

		EXPECT_EQ(0u, used);
		ASSERT_TRUE(xiw_proto_err_term(v.err, &tc));
		EXPECT_EQ(TERM_LAYER_LLP, tc.layer);
		EXPECT_EQ(LLP_ECODE_INVALID_REQ_RESP, tc.ecode);
		return;
	}
	EXPECT_EQ(v.consumed, used);
	EXPECT_EQ(v.reply, f.reply);
	EXPECT_EQ(v.m, f.markers);
	EXPECT_EQ(v.c, f.crc);
	EXPECT_EQ(v.r, f.reject);
	EXPECT_EQ(v.enhanced, f.enhanced);
	EXPECT_EQ(v.rev, f.rev);
	EXPECT_EQ(v.p2p, f.p2p);
	EXPECT_EQ(v.rtr, f.rtr);
	EXPECT_EQ(v.ird, f.ird);
	EXPECT_EQ(v.ord, f.ord);
	EXPECT_EQ(v.pdata_len, f.pdata_len);
	if (v.pdata_len)
		EXPECT_EQ(v.bytes + v.pdata_off, f.pdata);
	else
		EXPECT_EQ(nullptr, f.pdata);
}

class MpaFrameVecOk : public MpaFrameVec {};

// Rows whose fixed header is wrong in itself (key, revision, PD_Length).
class MpaFrameVecHdrErr : public MpaFrameVec {};

std::vector<xiw_vec_mpa> HeaderErrorRows()
{
	std::vector<xiw_vec_mpa> rows;

	for (const auto &r : Rows(xiw_vec_mpa_rows, Which::Err))
		if (r.err == XIW_ERR_MPA_KEY || r.err == XIW_ERR_MPA_REV || r.err == XIW_ERR_MPA_PD_LEN)
			rows.push_back(r);
	return rows;
}

// Rejected at its 20 octets: neither the parser nor xiw_mpa_frame_need()
// waits for the private data such a header announces.
TEST_P(MpaFrameVecHdrErr, RejectedAtTheHeader)
{
	const xiw_vec_mpa &v = GetParam();
	xiw_mpa_frame f;
	size_t used;

	ASSERT_GE(v.len, 20u);
	EXPECT_EQ(20u, xiw_mpa_frame_need(v.bytes, 20));
	EXPECT_EQ(v.err, xiw_mpa_frame_parse(v.bytes, 20, &f, &used));
}

TEST_P(MpaFrameVecOk, EveryPrefixIsTruncatedUntilComplete)
{
	const xiw_vec_mpa &v = GetParam();
	xiw_mpa_frame f;
	size_t used;

	for (size_t n = 0; n < v.len; n++) {
		EXPECT_EQ(XIW_ERR_MPA_TRUNCATED, xiw_mpa_frame_parse(v.bytes, n, &f, &used)) << n;
		EXPECT_EQ(n < 20 ? 20u : v.len, xiw_mpa_frame_need(v.bytes, n));
	}
	// trailing octets (the first FPDU) are not consumed
	Bytes more(v.bytes, v.bytes + v.len);
	more.insert(more.end(), { 0, 14, 1, 2 });
	EXPECT_EQ(XIW_OK, xiw_mpa_frame_parse(more.data(), more.size(), &f, &used));
	EXPECT_EQ(v.len, used);
}

TEST_P(MpaFrameVecOk, EncodeExactBytes)
{
	const xiw_vec_mpa &v = GetParam();
	xiw_mpa_frame f, g;
	u8 out[600];
	size_t used, n;

	ASSERT_EQ(XIW_OK, xiw_mpa_frame_parse(v.bytes, v.len, &f, &used));
	ASSERT_EQ(XIW_OK, xiw_mpa_frame_build(&f, out, sizeof(out), &n));
	bool canonical = !((v.bytes[16] & MPA_RR_FLAG_ENHANCED) && !v.enhanced);
	if (canonical) {
		EXPECT_EQ(Bytes(v.bytes, v.bytes + v.len), Bytes(out, out + n)) << v.desc;
	}
	ASSERT_EQ(XIW_OK, xiw_mpa_frame_parse(out, n, &g, &used));
	EXPECT_EQ(f.rev, g.rev);
	EXPECT_EQ(f.enhanced, g.enhanced);
	EXPECT_EQ(f.ird, g.ird);
	EXPECT_EQ(f.rtr, g.rtr);
	EXPECT_EQ(f.pdata_len, g.pdata_len);
	EXPECT_EQ(XIW_ERR_NOSPACE, xiw_mpa_frame_build(&f, out, n - 1, &n));
}

INSTANTIATE_TEST_SUITE_P(Rfc, MpaFrameVec, ::testing::ValuesIn(Rows(xiw_vec_mpa_rows, Which::All)));
INSTANTIATE_TEST_SUITE_P(Rfc, MpaFrameVecOk, ::testing::ValuesIn(Rows(xiw_vec_mpa_rows, Which::Ok)));
INSTANTIATE_TEST_SUITE_P(Rfc, MpaFrameVecHdrErr, ::testing::ValuesIn(HeaderErrorRows()));

class MpaNegVec : public ::testing::TestWithParam<xiw_vec_mpa_neg> {};

TEST_P(MpaNegVec, Verdict)
{
	const xiw_vec_mpa_neg &v = GetParam();
	xiw_mpa_frame peer;
	xiw_mpa_params a;
	size_t used;

	ASSERT_EQ(XIW_OK, xiw_mpa_frame_parse(v.peer, v.peer_len, &peer, &used));
	ASSERT_EQ(v.err, xiw_mpa_negotiate(&v.pol, &peer, &a))
		<< v.desc << ": " << xiw_proto_err_name(xiw_mpa_negotiate(&v.pol, &peer, &a));
	if (v.err != XIW_OK) {
		xiw_term_code tc;

		ASSERT_TRUE(xiw_proto_err_term(v.err, &tc));
		EXPECT_EQ(TERM_LAYER_LLP, tc.layer);
		if (!peer.reply) {
			// the responder's reject reply
			xiw_mpa_frame rep, back;
			u8 out[64];
			size_t n;

			ASSERT_EQ(XIW_OK, xiw_mpa_reply_init(&v.pol, &peer, nullptr, v.err, &rep));
			ASSERT_EQ(XIW_OK, xiw_mpa_frame_build(&rep, out, sizeof(out), &n));
			ASSERT_EQ(XIW_OK, xiw_mpa_frame_parse(out, n, &back, &used));
			EXPECT_TRUE(back.reply);
			EXPECT_TRUE(back.reject);
		}
		return;
	}
	EXPECT_EQ(v.agreed.rev, a.rev);
	EXPECT_EQ(v.agreed.crc, a.crc);
	EXPECT_EQ(v.agreed.markers_tx, a.markers_tx);
	EXPECT_EQ(v.agreed.markers_rx, a.markers_rx);
	EXPECT_EQ(v.agreed.enhanced, a.enhanced);
	EXPECT_EQ(v.agreed.p2p, a.p2p);
	EXPECT_EQ(v.agreed.rtr, a.rtr);
	EXPECT_EQ(v.agreed.ird, a.ird);
	EXPECT_EQ(v.agreed.ord, a.ord);
	EXPECT_EQ(v.agreed.peer_ird, a.peer_ird);
	EXPECT_EQ(v.agreed.peer_ord, a.peer_ord);
}

INSTANTIATE_TEST_SUITE_P(Table, MpaNegVec,
			 ::testing::ValuesIn(xiw_vec_mpa_neg_rows,
					     xiw_vec_mpa_neg_rows +
					     XIW_VEC_COUNT(xiw_vec_mpa_neg_rows)));

// Both ends run the library against each other over real frames.
struct PolPair {
	xiw_mpa_policy ini;
	xiw_mpa_policy rsp;
};

std::vector<xiw_mpa_policy> Policies()
{
	std::vector<xiw_mpa_policy> v;

	for (int crc = 0; crc < 4; crc++)
		for (int mk = 0; mk < 3; mk++)
			for (int rev = 1; rev <= 2; rev++)
				for (int p2p = 0; p2p <= (rev == 2); p2p++)
					for (u8 rtr : { (u8)XIW_MPA_RTR_WRITE, (u8)XIW_MPA_RTR_READ,
							(u8)(XIW_MPA_RTR_READ | XIW_MPA_RTR_SEND) }) {
						if (!p2p && rtr != XIW_MPA_RTR_WRITE)
							continue;
						xiw_mpa_policy p{};
						p.crc = (xiw_mpa_crc_policy)crc;
						p.markers = (xiw_mpa_marker_policy)mk;
						p.rev = (u8)rev;
						p.p2p = p2p;
						p.rtr = rtr;
						p.ird = (u16)(4 + crc);
						p.ord = (u16)(2 + mk * 3);
						v.push_back(p);
					}
	return v;
}

TEST(MpaMatrix, InitiatorAndResponderAgree)
{
	auto pols = Policies();
	size_t ok = 0, total = 0;

	for (auto &ini : pols) {
		for (auto &rsp : pols) {
			xiw_mpa_frame req, req_rx, rep, rep_rx;
			xiw_mpa_params pr, pi;
			u8 buf[600];
			size_t n, used;
			const u8 pd[3] = { 'x', 'i', 'w' };

			total++;
			ASSERT_EQ(XIW_OK, xiw_mpa_request_init(&ini, &req));
			req.pdata = pd;
			req.pdata_len = 3;
			ASSERT_EQ(XIW_OK, xiw_mpa_frame_build(&req, buf, sizeof(buf), &n));
			ASSERT_EQ(XIW_OK, xiw_mpa_frame_parse(buf, n, &req_rx, &used));
			ASSERT_EQ(3u, req_rx.pdata_len);
			xiw_proto_err vr = xiw_mpa_negotiate(&rsp, &req_rx, &pr);
			ASSERT_EQ(XIW_OK, xiw_mpa_reply_init(&rsp, &req_rx, &pr, vr, &rep));
			u8 rbuf[600];
			ASSERT_EQ(XIW_OK, xiw_mpa_frame_build(&rep, rbuf, sizeof(rbuf), &n));
			ASSERT_EQ(XIW_OK, xiw_mpa_frame_parse(rbuf, n, &rep_rx, &used));
			xiw_proto_err vi = xiw_mpa_negotiate(&ini, &rep_rx, &pi);
			if (vr != XIW_OK) {
				EXPECT_EQ(XIW_ERR_MPA_REJECTED, vi);
				continue;
			}
			if (vi != XIW_OK)
				continue;	// initiator may still refuse (policy)
			ok++;
			EXPECT_EQ(pr.rev, pi.rev);
			EXPECT_EQ(pr.crc, pi.crc);
			EXPECT_EQ(pr.markers_tx, pi.markers_rx);
			EXPECT_EQ(pr.markers_rx, pi.markers_tx);
			EXPECT_EQ(pr.p2p, pi.p2p);
			EXPECT_EQ(pr.rtr, pi.rtr);
			EXPECT_EQ(pr.enhanced, pi.enhanced);
			if (pr.enhanced) {
				EXPECT_LE(pi.ord, rsp.ird);
				EXPECT_LE(pr.ord, ini.ird);
			}
			if (pr.p2p) {
				EXPECT_TRUE(pr.rtr & ini.rtr & rsp.rtr);
				EXPECT_EQ(0, pr.rtr & (pr.rtr - 1));
			}
			if (ini.crc == XIW_MPA_CRC_STRICT || rsp.crc == XIW_MPA_CRC_STRICT) {
				EXPECT_FALSE(pr.crc);
			}
			if (ini.markers == XIW_MPA_MARKERS_OFF) {
				EXPECT_FALSE(pi.markers_tx || pi.markers_rx);
			}
		}
	}
	EXPECT_GT(ok, total / 10);
}

// A reject carries the IRD/ORD words only where the Request did: a
// revision 2 Request without the enhanced flag gets a plain 20-octet Reply.
TEST(MpaReject, EnhancedWordsOnlyWhenRequested)
{
	for (bool enhanced : { false, true }) {
		xiw_mpa_policy pol{};
		xiw_mpa_frame req{}, rep, back;
		u8 out[64];
		size_t n, used;

		pol.rev = 2;
		pol.ird = 8;
		pol.ord = 8;
		req.rev = 2;
		req.enhanced = enhanced;
		req.markers = true;
		if (enhanced) {
			req.ird = 4;
			req.ord = 4;
		}
		ASSERT_EQ(XIW_OK, xiw_mpa_reply_init(&pol, &req, nullptr,
						     XIW_ERR_MPA_MARKERS_MISMATCH, &rep));
		ASSERT_EQ(XIW_OK, xiw_mpa_frame_build(&rep, out, sizeof(out), &n));
		EXPECT_EQ(enhanced ? 24u : 20u, n);
		ASSERT_EQ(XIW_OK, xiw_mpa_frame_parse(out, n, &back, &used));
		EXPECT_TRUE(back.reply && back.reject);
		EXPECT_EQ(2, back.rev);
		EXPECT_EQ(enhanced, back.enhanced);
	}
}

TEST(MpaPolicy, InconsistentPoliciesAreRejected)
{
	xiw_mpa_policy p{};
	xiw_mpa_frame f;

	p.rev = 3;
	EXPECT_EQ(XIW_ERR_INVAL, xiw_mpa_request_init(&p, &f));
	p.rev = 1;
	p.p2p = true;
	p.rtr = XIW_MPA_RTR_WRITE;
	EXPECT_EQ(XIW_ERR_INVAL, xiw_mpa_request_init(&p, &f));
	p.rev = 2;
	p.rtr = 0;
	EXPECT_EQ(XIW_ERR_INVAL, xiw_mpa_request_init(&p, &f));
	p.rtr = 0x8;
	EXPECT_EQ(XIW_ERR_INVAL, xiw_mpa_request_init(&p, &f));
	p.rtr = XIW_MPA_RTR_READ;
	p.ird = 0x4000;
	EXPECT_EQ(XIW_ERR_MPA_IRD_ORD_RANGE, xiw_mpa_request_init(&p, &f));
	p.ird = 0x3fff;
	EXPECT_EQ(XIW_OK, xiw_mpa_request_init(&p, &f));
	p.crc = (xiw_mpa_crc_policy)9;
	EXPECT_EQ(XIW_ERR_INVAL, xiw_mpa_request_init(&p, &f));
}

TEST(MpaBuild, Limits)
{
	xiw_mpa_frame f{};
	u8 pd[513] = { 0 };
	u8 out[700];
	size_t n;

	f.rev = 2;
	f.enhanced = true;
	f.pdata = pd;
	f.pdata_len = 508;
	EXPECT_EQ(XIW_OK, xiw_mpa_frame_build(&f, out, sizeof(out), &n));
	EXPECT_EQ(532u, n);
	f.pdata_len = 509;
	EXPECT_EQ(XIW_ERR_MPA_PD_LEN, xiw_mpa_frame_build(&f, out, sizeof(out), &n));
	f.rev = 1;
	f.pdata_len = 1;
	EXPECT_EQ(XIW_ERR_INVAL, xiw_mpa_frame_build(&f, out, sizeof(out), &n));
	f.enhanced = false;
	f.pdata = nullptr;
	EXPECT_EQ(XIW_ERR_INVAL, xiw_mpa_frame_build(&f, out, sizeof(out), &n));
	f.rev = 2;
	f.enhanced = true;
	f.pdata_len = 0;
	f.ord = 0x4000;
	EXPECT_EQ(XIW_ERR_MPA_IRD_ORD_RANGE, xiw_mpa_frame_build(&f, out, sizeof(out), &n));
}

}  // namespace
