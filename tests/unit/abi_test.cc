// SPDX-License-Identifier: GPL-2.0
//
// The xiw user ABI must be byte-identical to siw's, because rdma-core's
// unmodified libsiw provider drives xiw devices.  Every field of every
// structure is compared against the system's <rdma/siw-abi.h> by size and
// offset; constants and enum values are compared too.
#include <cstddef>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include <rdma/siw-abi.h>
#include <rdma/xiw-abi.h>

extern "C" unsigned long xiw_abi_c_sizes[];

namespace {

struct FieldCase {
	const char *name;
	size_t xiw_off, siw_off;
	size_t xiw_size, siw_size;
};

#define FIELD(xs, ss, f)                                                   \
	FieldCase{#xs "." #f, offsetof(struct xs, f), offsetof(struct ss, f), \
		  sizeof(((struct xs *)nullptr)->f),                          \
		  sizeof(((struct ss *)nullptr)->f)}

const FieldCase kFields[] = {
	FIELD(xiw_uresp_alloc_ctx, siw_uresp_alloc_ctx, dev_id),
	FIELD(xiw_uresp_alloc_ctx, siw_uresp_alloc_ctx, pad),
	FIELD(xiw_uresp_create_cq, siw_uresp_create_cq, cq_id),
	FIELD(xiw_uresp_create_cq, siw_uresp_create_cq, num_cqe),
	FIELD(xiw_uresp_create_cq, siw_uresp_create_cq, cq_key),
	FIELD(xiw_uresp_create_qp, siw_uresp_create_qp, qp_id),
	FIELD(xiw_uresp_create_qp, siw_uresp_create_qp, num_sqe),
	FIELD(xiw_uresp_create_qp, siw_uresp_create_qp, num_rqe),
	FIELD(xiw_uresp_create_qp, siw_uresp_create_qp, pad),
	FIELD(xiw_uresp_create_qp, siw_uresp_create_qp, sq_key),
	FIELD(xiw_uresp_create_qp, siw_uresp_create_qp, rq_key),
	FIELD(xiw_uresp_create_srq, siw_uresp_create_srq, num_rqe),
	FIELD(xiw_uresp_create_srq, siw_uresp_create_srq, pad),
	FIELD(xiw_uresp_create_srq, siw_uresp_create_srq, srq_key),
	FIELD(xiw_ureq_reg_mr, siw_ureq_reg_mr, stag_key),
	FIELD(xiw_ureq_reg_mr, siw_ureq_reg_mr, reserved),
	FIELD(xiw_ureq_reg_mr, siw_ureq_reg_mr, pad),
	FIELD(xiw_uresp_reg_mr, siw_uresp_reg_mr, stag),
	FIELD(xiw_uresp_reg_mr, siw_uresp_reg_mr, pad),
	FIELD(xiw_sge, siw_sge, laddr),
	FIELD(xiw_sge, siw_sge, length),
	FIELD(xiw_sge, siw_sge, lkey),
	FIELD(xiw_sqe, siw_sqe, id),
	FIELD(xiw_sqe, siw_sqe, flags),
	FIELD(xiw_sqe, siw_sqe, num_sge),
	FIELD(xiw_sqe, siw_sqe, opcode),
	FIELD(xiw_sqe, siw_sqe, rkey),
	FIELD(xiw_sqe, siw_sqe, raddr),
	FIELD(xiw_sqe, siw_sqe, base_mr),
	FIELD(xiw_sqe, siw_sqe, sge),
	FIELD(xiw_sqe, siw_sqe, access),
	FIELD(xiw_rqe, siw_rqe, id),
	FIELD(xiw_rqe, siw_rqe, flags),
	FIELD(xiw_rqe, siw_rqe, num_sge),
	FIELD(xiw_rqe, siw_rqe, opcode),
	FIELD(xiw_rqe, siw_rqe, unused),
	FIELD(xiw_rqe, siw_rqe, sge),
	FIELD(xiw_cqe, siw_cqe, id),
	FIELD(xiw_cqe, siw_cqe, flags),
	FIELD(xiw_cqe, siw_cqe, opcode),
	FIELD(xiw_cqe, siw_cqe, status),
	FIELD(xiw_cqe, siw_cqe, bytes),
	FIELD(xiw_cqe, siw_cqe, imm_data),
	FIELD(xiw_cqe, siw_cqe, inval_stag),
	FIELD(xiw_cqe, siw_cqe, qp_id),
	FIELD(xiw_cq_ctrl, siw_cq_ctrl, flags),
	FIELD(xiw_cq_ctrl, siw_cq_ctrl, pad),
};

class AbiField : public ::testing::TestWithParam<FieldCase> {};

TEST_P(AbiField, SameOffsetAndSize)
{
	const FieldCase &c = GetParam();
	EXPECT_EQ(c.xiw_off, c.siw_off) << c.name;
	EXPECT_EQ(c.xiw_size, c.siw_size) << c.name;
}

INSTANTIATE_TEST_SUITE_P(SiwAbi, AbiField, ::testing::ValuesIn(kFields),
			 [](const auto &info) {
				 std::string n = info.param.name;
				 for (char &ch : n)
					 if (ch == '.')
						 ch = '_';
				 return n;
			 });

struct SizeCase {
	const char *name;
	size_t xiw, siw, xiw_c;
};

#define SIZE(idx, xs, ss) SizeCase{#xs, sizeof(struct xs), sizeof(struct ss), idx}

class AbiSize : public ::testing::TestWithParam<SizeCase> {};

TEST_P(AbiSize, SameSizeInCAndCxx)
{
	const SizeCase &c = GetParam();
	EXPECT_EQ(c.xiw, c.siw) << c.name;
	EXPECT_EQ(xiw_abi_c_sizes[c.xiw_c], c.xiw) << c.name << " differs between C and C++";
}

const SizeCase kSizes[] = {
	SIZE(0, xiw_uresp_alloc_ctx, siw_uresp_alloc_ctx),
	SIZE(1, xiw_uresp_create_cq, siw_uresp_create_cq),
	SIZE(2, xiw_uresp_create_qp, siw_uresp_create_qp),
	SIZE(3, xiw_uresp_create_srq, siw_uresp_create_srq),
	SIZE(4, xiw_ureq_reg_mr, siw_ureq_reg_mr),
	SIZE(5, xiw_uresp_reg_mr, siw_uresp_reg_mr),
	SIZE(6, xiw_sge, siw_sge),
	SIZE(7, xiw_sqe, siw_sqe),
	SIZE(8, xiw_rqe, siw_rqe),
	SIZE(9, xiw_cqe, siw_cqe),
	SIZE(10, xiw_cq_ctrl, siw_cq_ctrl),
};

INSTANTIATE_TEST_SUITE_P(SiwAbi, AbiSize, ::testing::ValuesIn(kSizes),
			 [](const auto &info) { return std::string(info.param.name); });

TEST(SiwAbiConstants, Match)
{
	EXPECT_EQ(XIW_ABI_VERSION, SIW_ABI_VERSION);
	EXPECT_EQ(XIW_MAX_SGE_USER, SIW_MAX_SGE);
	EXPECT_EQ(XIW_UOBJ_MAX_KEY, (unsigned long long)SIW_UOBJ_MAX_KEY);
	EXPECT_EQ(XIW_INVAL_UOBJ_KEY, (unsigned long long)SIW_INVAL_UOBJ_KEY);
	EXPECT_EQ(XIW_MAX_INLINE_USER, SIW_MAX_INLINE);
	EXPECT_STREQ(XIW_NODE_DESC_COMMON, SIW_NODE_DESC_COMMON);
}

TEST(SiwAbiConstants, WqeFlags)
{
	EXPECT_EQ(XIW_WQE_VALID, (unsigned)SIW_WQE_VALID);
	EXPECT_EQ(XIW_WQE_INLINE, (unsigned)SIW_WQE_INLINE);
	EXPECT_EQ(XIW_WQE_SIGNALLED, (unsigned)SIW_WQE_SIGNALLED);
	EXPECT_EQ(XIW_WQE_SOLICITED, (unsigned)SIW_WQE_SOLICITED);
	EXPECT_EQ(XIW_WQE_READ_FENCE, (unsigned)SIW_WQE_READ_FENCE);
	EXPECT_EQ(XIW_WQE_REM_INVAL, (unsigned)SIW_WQE_REM_INVAL);
	EXPECT_EQ(XIW_WQE_COMPLETED, (unsigned)SIW_WQE_COMPLETED);
}

TEST(SiwAbiConstants, NotifyFlags)
{
	EXPECT_EQ(XIW_NOTIFY_NOT, (unsigned)SIW_NOTIFY_NOT);
	EXPECT_EQ(XIW_NOTIFY_SOLICITED, (unsigned)SIW_NOTIFY_SOLICITED);
	EXPECT_EQ(XIW_NOTIFY_NEXT_COMPLETION, (unsigned)SIW_NOTIFY_NEXT_COMPLETION);
	EXPECT_EQ(XIW_NOTIFY_MISSED_EVENTS, (unsigned)SIW_NOTIFY_MISSED_EVENTS);
	EXPECT_EQ(XIW_NOTIFY_ALL, (unsigned)SIW_NOTIFY_ALL);
}

TEST(SiwAbiConstants, Opcodes)
{
	EXPECT_EQ(XIW_OP_WRITE, (int)SIW_OP_WRITE);
	EXPECT_EQ(XIW_OP_READ, (int)SIW_OP_READ);
	EXPECT_EQ(XIW_OP_READ_LOCAL_INV, (int)SIW_OP_READ_LOCAL_INV);
	EXPECT_EQ(XIW_OP_SEND, (int)SIW_OP_SEND);
	EXPECT_EQ(XIW_OP_SEND_WITH_IMM, (int)SIW_OP_SEND_WITH_IMM);
	EXPECT_EQ(XIW_OP_SEND_REMOTE_INV, (int)SIW_OP_SEND_REMOTE_INV);
	EXPECT_EQ(XIW_OP_FETCH_AND_ADD, (int)SIW_OP_FETCH_AND_ADD);
	EXPECT_EQ(XIW_OP_COMP_AND_SWAP, (int)SIW_OP_COMP_AND_SWAP);
	EXPECT_EQ(XIW_OP_RECEIVE, (int)SIW_OP_RECEIVE);
	EXPECT_EQ(XIW_OP_READ_RESPONSE, (int)SIW_OP_READ_RESPONSE);
	EXPECT_EQ(XIW_OP_INVAL_STAG, (int)SIW_OP_INVAL_STAG);
	EXPECT_EQ(XIW_OP_REG_MR, (int)SIW_OP_REG_MR);
	EXPECT_EQ(XIW_NUM_OPCODES, (int)SIW_NUM_OPCODES);
}

TEST(SiwAbiConstants, WcStatus)
{
	EXPECT_EQ(XIW_WC_SUCCESS, (int)SIW_WC_SUCCESS);
	EXPECT_EQ(XIW_WC_LOC_LEN_ERR, (int)SIW_WC_LOC_LEN_ERR);
	EXPECT_EQ(XIW_WC_LOC_PROT_ERR, (int)SIW_WC_LOC_PROT_ERR);
	EXPECT_EQ(XIW_WC_LOC_QP_OP_ERR, (int)SIW_WC_LOC_QP_OP_ERR);
	EXPECT_EQ(XIW_WC_WR_FLUSH_ERR, (int)SIW_WC_WR_FLUSH_ERR);
	EXPECT_EQ(XIW_WC_BAD_RESP_ERR, (int)SIW_WC_BAD_RESP_ERR);
	EXPECT_EQ(XIW_WC_LOC_ACCESS_ERR, (int)SIW_WC_LOC_ACCESS_ERR);
	EXPECT_EQ(XIW_WC_REM_ACCESS_ERR, (int)SIW_WC_REM_ACCESS_ERR);
	EXPECT_EQ(XIW_WC_REM_INV_REQ_ERR, (int)SIW_WC_REM_INV_REQ_ERR);
	EXPECT_EQ(XIW_WC_GENERAL_ERR, (int)SIW_WC_GENERAL_ERR);
	EXPECT_EQ(XIW_NUM_WC_STATUS, (int)SIW_NUM_WC_STATUS);
}

} // namespace
