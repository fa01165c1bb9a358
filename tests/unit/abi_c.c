// SPDX-License-Identifier: GPL-2.0
/*
 * Compiled as C: the uapi header must be valid C11 without the kernel, and
 * its sizes must be the ones the C++ test sees.
 */
#include <rdma/xiw-abi.h>

_Static_assert(sizeof(struct xiw_sqe) == 120, "SQE is 120 bytes");
_Static_assert(sizeof(struct xiw_rqe) == 112, "RQE is 112 bytes");
_Static_assert(sizeof(struct xiw_cqe) == 32, "CQE is 32 bytes");

unsigned long xiw_abi_c_sizes[] = {
	sizeof(struct xiw_uresp_alloc_ctx),
	sizeof(struct xiw_uresp_create_cq),
	sizeof(struct xiw_uresp_create_qp),
	sizeof(struct xiw_uresp_create_srq),
	sizeof(struct xiw_ureq_reg_mr),
	sizeof(struct xiw_uresp_reg_mr),
	sizeof(struct xiw_sge),
	sizeof(struct xiw_sqe),
	sizeof(struct xiw_rqe),
	sizeof(struct xiw_cqe),
	sizeof(struct xiw_cq_ctrl),
};
