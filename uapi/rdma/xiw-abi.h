/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note OR BSD-3-Clause */
/*
 * xiw user/kernel ABI.
 *
 * xiw deliberately speaks the user ABI of the in-tree siw driver (ABI
 * version 1, driver id RDMA_DRIVER_SIW) so that rdma-core's unmodified libsiw
 * provider drives xiw devices.  Every structure below is byte-for-byte the
 * layout libsiw reads and writes; tests/unit/abi_test.cc pins that against
 * the system's <rdma/siw-abi.h>.  Only append, never reorder: a layout change
 * is an ABI break and needs a new provider.
 *
 * Valid C and C++; only fixed-width types from <linux/types.h>.
 */
#ifndef _UAPI_RDMA_XIW_ABI_H
#define _UAPI_RDMA_XIW_ABI_H

#include <linux/types.h>

#define XIW_ABI_VERSION		1
#define XIW_NODE_DESC_COMMON	"Software iWARP stack"
#define XIW_MAX_SGE_USER	6
/* Largest valid mmap key; the next value marks "no mapping" for libsiw. */
#define XIW_UOBJ_MAX_KEY	0x08FFFFULL
#define XIW_INVAL_UOBJ_KEY	(XIW_UOBJ_MAX_KEY + 1)

struct xiw_uresp_alloc_ctx {
	__u32 dev_id;
	__u32 pad;
};

struct xiw_uresp_create_cq {
	__u32 cq_id;
	__u32 num_cqe;
	__aligned_u64 cq_key;
};

struct xiw_uresp_create_qp {
	__u32 qp_id;
	__u32 num_sqe;
	__u32 num_rqe;
	__u32 pad;
	__aligned_u64 sq_key;
	__aligned_u64 rq_key;
};

struct xiw_uresp_create_srq {
	__u32 num_rqe;
	__u32 pad;
	__aligned_u64 srq_key;
};

struct xiw_ureq_reg_mr {
	__u8 stag_key;
	__u8 reserved[3];
	__u32 pad;
};

struct xiw_uresp_reg_mr {
	__u32 stag;
	__u32 pad;
};

/* Work request opcodes in shared queue elements: the order is the ABI. */
enum xiw_opcode {
	XIW_OP_WRITE,
	XIW_OP_READ,
	XIW_OP_READ_LOCAL_INV,
	XIW_OP_SEND,
	XIW_OP_SEND_WITH_IMM,
	XIW_OP_SEND_REMOTE_INV,
	XIW_OP_FETCH_AND_ADD,
	XIW_OP_COMP_AND_SWAP,
	XIW_OP_RECEIVE,
	XIW_OP_READ_RESPONSE,	/* driver internal */
	XIW_OP_INVAL_STAG,	/* kernel consumers only */
	XIW_OP_REG_MR,		/* kernel consumers only */
	XIW_NUM_OPCODES
};

/* Same layout as struct ibv_sge: libsiw copies SGE arrays wholesale. */
struct xiw_sge {
	__aligned_u64 laddr;
	__u32 length;
	__u32 lkey;
};

/* Inline payload of a user SQE lives in the space of sge[1..5]. */
#define XIW_MAX_INLINE_USER	(sizeof(struct xiw_sge) * (XIW_MAX_SGE_USER - 1))

/* Flags of SQE, RQE (16 bit) and CQE (8 bit). */
#define XIW_WQE_VALID		(1U << 0)
#define XIW_WQE_INLINE		(1U << 1)
#define XIW_WQE_SIGNALLED	(1U << 2)
#define XIW_WQE_SOLICITED	(1U << 3)
#define XIW_WQE_READ_FENCE	(1U << 4)
#define XIW_WQE_REM_INVAL	(1U << 5)
#define XIW_WQE_COMPLETED	(1U << 6)

/* Send queue element, 120 bytes. */
struct xiw_sqe {
	__aligned_u64 id;
	__u16 flags;
	__u8 num_sge;
	__u8 opcode;		/* enum xiw_opcode */
	__u32 rkey;
	union {
		__aligned_u64 raddr;
		__aligned_u64 base_mr;	/* REG_MR: kernel MR handle */
	};
	union {
		struct xiw_sge sge[XIW_MAX_SGE_USER];
		__aligned_u64 access;	/* REG_MR: access flags */
	};
};

/* Receive queue element, 112 bytes. */
struct xiw_rqe {
	__aligned_u64 id;
	__u16 flags;
	__u8 num_sge;
	__u8 opcode;		/* written by the driver only */
	__u32 unused;
	struct xiw_sge sge[XIW_MAX_SGE_USER];
};

/* Values of struct xiw_cq_ctrl.flags. */
#define XIW_NOTIFY_NOT			0U
#define XIW_NOTIFY_SOLICITED		(1U << 0)
#define XIW_NOTIFY_NEXT_COMPLETION	(1U << 1)
#define XIW_NOTIFY_MISSED_EVENTS	(1U << 2)
#define XIW_NOTIFY_ALL	(XIW_NOTIFY_SOLICITED | XIW_NOTIFY_NEXT_COMPLETION | \
			 XIW_NOTIFY_MISSED_EVENTS)

/* Completion status; maps 1:1 onto enum ibv_wc_status values 0..9. */
enum xiw_wc_status {
	XIW_WC_SUCCESS,
	XIW_WC_LOC_LEN_ERR,
	XIW_WC_LOC_PROT_ERR,
	XIW_WC_LOC_QP_OP_ERR,
	XIW_WC_WR_FLUSH_ERR,
	XIW_WC_BAD_RESP_ERR,
	XIW_WC_LOC_ACCESS_ERR,
	XIW_WC_REM_ACCESS_ERR,
	XIW_WC_REM_INV_REQ_ERR,
	XIW_WC_GENERAL_ERR,
	XIW_NUM_WC_STATUS
};

/* Completion queue element, 32 bytes. */
struct xiw_cqe {
	__aligned_u64 id;
	__u8 flags;
	__u8 opcode;		/* enum xiw_opcode */
	__u16 status;		/* enum xiw_wc_status */
	__u32 bytes;
	union {
		__aligned_u64 imm_data;
		__u32 inval_stag;
	};
	__aligned_u64 qp_id;	/* the qp_id of the create QP response */
};

/* Notification control word, directly behind the last CQE of the ring. */
struct xiw_cq_ctrl {
	__u32 flags;
	__u32 pad;
};

#endif /* _UAPI_RDMA_XIW_ABI_H */
