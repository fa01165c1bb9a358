// SPDX-License-Identifier: GPL-2.0
// DDP/RDMAP header vectors: decode -> fields, encode -> exact bytes,
// the same verdict from the deframer under every delivery, and the
// TERMINATE triplet of each error row. Plus the opcode table.
#include <gtest/gtest.h>

#include "tests/vectors/rdmap_vectors.h"
#include "xiw_test_util.h"

using namespace xiwtest;

inline void PrintTo(const xiw_vec_hdr &v, std::ostream *os) { *os << v.desc; }

namespace {

class HdrVec : public ::testing::TestWithParam<xiw_vec_hdr> {};

void ExpectFields(const xiw_vec_hdr &v, const xiw_rdmap_hdr &h)
{
	EXPECT_EQ(v.opcode, h.opcode);
	EXPECT_EQ(v.tagged, h.tagged);
	EXPECT_EQ(v.last, h.last);
	if (v.tagged) {
		EXPECT_EQ(v.stag, h.stag);
		EXPECT_EQ(v.to, h.to);
	} else {
		EXPECT_EQ(v.rsvdulp, h.rsvdulp);
		EXPECT_EQ(v.qn, h.qn);
		EXPECT_EQ(v.msn, h.msn);
		EXPECT_EQ(v.mo, h.mo);
	}
	switch (v.opcode) {
	case RDMAP_OP_READ_REQ:
		EXPECT_EQ(v.f[0], h.u.read_req.sink_stag);
		EXPECT_EQ(v.f[1], h.u.read_req.sink_to);
		EXPECT_EQ(v.f[2], h.u.read_req.size);
		EXPECT_EQ(v.f[3], h.u.read_req.src_stag);
		EXPECT_EQ(v.f[4], h.u.read_req.src_to);
		break;
	case RDMAP_OP_ATOMIC_REQ:
		EXPECT_EQ(v.f[0], h.u.atomic_req.op);
		EXPECT_EQ(v.f[1], h.u.atomic_req.req_id);
		EXPECT_EQ(v.f[2], h.u.atomic_req.stag);
		EXPECT_EQ(v.f[3], h.u.atomic_req.to);
		EXPECT_EQ(v.f[4], h.u.atomic_req.data);
		EXPECT_EQ(v.f[5], h.u.atomic_req.data_mask);
		EXPECT_EQ(v.f[6], h.u.atomic_req.cmp);
		EXPECT_EQ(v.f[7], h.u.atomic_req.cmp_mask);
		break;
	case RDMAP_OP_ATOMIC_RESP:
		EXPECT_EQ(v.f[0], h.u.atomic_resp.req_id);
		EXPECT_EQ(v.f[1], h.u.atomic_resp.value);
		break;
	case RDMAP_OP_IMM_DATA:
	case RDMAP_OP_IMM_DATA_SE:
		EXPECT_EQ(v.f[0], h.u.imm_data);
		break;
	case RDMAP_OP_TERMINATE:
		EXPECT_EQ(v.f[0], h.u.term.code.layer);
		EXPECT_EQ(v.f[1], h.u.term.code.etype);
		EXPECT_EQ(v.f[2], h.u.term.code.ecode);
		EXPECT_EQ(v.f[3], h.u.term.m);
		EXPECT_EQ(v.f[4], h.u.term.d);
		EXPECT_EQ(v.f[5], h.u.term.r);
		break;
	default:
		break;
	}
}

TEST_P(HdrVec, Decode)
{
	const xiw_vec_hdr &v = GetParam();
	xiw_rdmap_hdr h;
	size_t hl = 99;

	ASSERT_EQ(v.err, xiw_rdmap_hdr_parse(v.bytes, v.len, &h, &hl))
		<< v.desc << ": " << xiw_proto_err_name(xiw_rdmap_hdr_parse(v.bytes, v.len, &h, &hl));
	if (v.err != XIW_OK) {
		xiw_term_code tc;

		EXPECT_EQ(0u, hl);
		EXPECT_TRUE(xiw_proto_err_term(v.err, &tc));
		return;
	}
	EXPECT_EQ(v.hdr_len, hl);
	ExpectFields(v, h);
}

class HdrVecOk : public HdrVec {};

TEST_P(HdrVecOk, EncodeExactBytesAndDecodeAgain)
{
	const xiw_vec_hdr &v = GetParam();
	xiw_rdmap_hdr h, h2;
	u8 out[XIW_RDMAP_HDR_MAX];
	size_t hl, n, hl2;

	ASSERT_EQ(XIW_OK, xiw_rdmap_hdr_parse(v.bytes, v.len, &h, &hl));
	// Not zeroed first: the build writes every octet, reserved ones too.
	memset(out, 0xa5, sizeof(out));
	ASSERT_EQ(XIW_OK, xiw_rdmap_hdr_build(&h, out, sizeof(out), &n));
	ASSERT_EQ(hl, n);
	bool rsvd_set = (v.bytes[0] & DDP_CTRL_RSVD) || (v.bytes[1] & RDMAP_CTRL_RSVD);
	if (!rsvd_set) {
		EXPECT_EQ(Bytes(v.bytes, v.bytes + n), Bytes(out, out + n)) << v.desc;
	}
	ASSERT_EQ(XIW_OK, xiw_rdmap_hdr_parse(out, n, &h2, &hl2));
	ExpectFields(v, h2);
	EXPECT_EQ(XIW_ERR_NOSPACE, xiw_rdmap_hdr_build(&h, out, n - 1, &n));
}

TEST_P(HdrVec, DeframerAgreesUnderEveryDelivery)
{
	const xiw_vec_hdr &v = GetParam();

	for (int crc = 0; crc < 2; crc++) {
		for (int mk = 0; mk < 2; mk++) {
			xiw_tx tx;
			Bytes stream;

			xiw_tx_init(&tx, crc, mk, 0);
			ASSERT_TRUE(Frame(&tx, Bytes(v.bytes, v.bytes + v.len), &stream));
			for (auto plan : { Whole(), OneByte(), RandomCuts(v.len) }) {
				DeframeResult r = Deframe(stream, crc, mk, 0, plan);

				ASSERT_EQ(v.err, r.err) << v.desc << " got "
							<< xiw_proto_err_name(r.err);
				ASSERT_EQ("", r.trace_error);
				if (v.err == XIW_OK) {
					ASSERT_EQ(1u, r.segs.size());
					EXPECT_TRUE(r.segs[0].ended);
					ExpectFields(v, r.segs[0].hdr);
				} else {
					// the TERMINATE a receiver would send for it
					xiw_term t;
					xiw_term_code tc;

					ASSERT_EQ(XIW_OK, xiw_term_init(&t, r.err, stream.data() + (mk ? 4 : 0),
									 stream.size() - (mk ? 4 : 0)));
					ASSERT_TRUE(xiw_proto_err_term(r.err, &tc));
					EXPECT_EQ(tc.layer, t.ctrl.code.layer);
					EXPECT_EQ(tc.etype, t.ctrl.code.etype);
					EXPECT_EQ(tc.ecode, t.ctrl.code.ecode);
					EXPECT_TRUE(t.ctrl.m);
					EXPECT_EQ(v.len, t.seg_len);
				}
			}
		}
	}
}

INSTANTIATE_TEST_SUITE_P(Rfc, HdrVec, ::testing::ValuesIn(Rows(xiw_vec_hdr_rows, Which::All)));
INSTANTIATE_TEST_SUITE_P(Rfc, HdrVecOk, ::testing::ValuesIn(Rows(xiw_vec_hdr_rows, Which::Ok)));

TEST(OpcodeTable, MatchesRfc)
{
	struct {
		u8 op;
		bool tagged;
		u8 qn;
		u8 hdr;
		bool payload;
		xiw_rdmap_dir dir;
	} want[] = {
		{ 0, true, RDMAP_QN_NONE, 14, true, XIW_RDMAP_DIR_REQUEST },
		{ 1, false, 1, 46, false, XIW_RDMAP_DIR_REQUEST },
		{ 2, true, RDMAP_QN_NONE, 14, true, XIW_RDMAP_DIR_RESPONSE },
		{ 3, false, 0, 18, true, XIW_RDMAP_DIR_REQUEST },
		{ 4, false, 0, 18, true, XIW_RDMAP_DIR_REQUEST },
		{ 5, false, 0, 18, true, XIW_RDMAP_DIR_REQUEST },
		{ 6, false, 0, 18, true, XIW_RDMAP_DIR_REQUEST },
		{ 7, false, 2, 22, true, XIW_RDMAP_DIR_CONTROL },
		{ 8, false, 0, 26, false, XIW_RDMAP_DIR_REQUEST },
		{ 9, false, 0, 26, false, XIW_RDMAP_DIR_REQUEST },
		{ 10, false, 1, 70, false, XIW_RDMAP_DIR_REQUEST },
		{ 11, false, 3, 30, false, XIW_RDMAP_DIR_RESPONSE },
	};
	for (auto &w : want) {
		const struct xiw_rdmap_opinfo *oi = xiw_rdmap_op_lookup(w.op);

		ASSERT_NE(nullptr, oi) << (int)w.op;
		EXPECT_EQ(w.op, oi->opcode);
		EXPECT_EQ(w.tagged, oi->tagged);
		EXPECT_EQ(w.qn, oi->qn);
		EXPECT_EQ(w.hdr, oi->hdr_len);
		EXPECT_EQ(w.payload, oi->payload);
		EXPECT_EQ(w.dir, oi->dir);
		EXPECT_NE(nullptr, oi->name);
		EXPECT_EQ(w.op >= 8 ? 7306 : 5040, oi->rfc);
	}
	EXPECT_TRUE(xiw_rdmap_op_lookup(4)->inval_stag);
	EXPECT_TRUE(xiw_rdmap_op_lookup(6)->inval_stag);
	EXPECT_TRUE(xiw_rdmap_op_lookup(5)->solicited);
	EXPECT_TRUE(xiw_rdmap_op_lookup(9)->solicited);
	EXPECT_FALSE(xiw_rdmap_op_lookup(3)->solicited);
	for (unsigned op = 12; op < 256; op++)
		EXPECT_EQ(nullptr, xiw_rdmap_op_lookup((u8)op)) << op;
	xiw_rdmap_hdr bad{};
	bad.opcode = 12;
	EXPECT_EQ(XIW_ERR_RDMAP_OPCODE, xiw_rdmap_seg_check(&bad, 100));
}

TEST(SegCheck, PayloadRules)
{
	xiw_rdmap_hdr h = Hdr(RDMAP_OP_READ_REQ);

	EXPECT_EQ(XIW_OK, xiw_rdmap_seg_check(&h, 46));
	EXPECT_EQ(XIW_ERR_RDMAP_PAYLOAD, xiw_rdmap_seg_check(&h, 47));
	EXPECT_EQ(XIW_ERR_RDMAP_HDR_SHORT, xiw_rdmap_seg_check(&h, 45));
	h = Hdr(RDMAP_OP_SEND);
	EXPECT_EQ(XIW_OK, xiw_rdmap_seg_check(&h, 18));
	EXPECT_EQ(XIW_OK, xiw_rdmap_seg_check(&h, 65535));
	h = Hdr(RDMAP_OP_TERMINATE);
	EXPECT_EQ(XIW_OK, xiw_rdmap_seg_check(&h, 18 + RDMAP_TERM_MAX_LEN));
	EXPECT_EQ(XIW_ERR_RDMAP_TERM_MALFORMED, xiw_rdmap_seg_check(&h, 19 + RDMAP_TERM_MAX_LEN));
	h = Hdr(RDMAP_OP_ATOMIC_RESP);
	EXPECT_EQ(XIW_ERR_RDMAP_PAYLOAD, xiw_rdmap_seg_check(&h, 31));
}

}  // namespace
