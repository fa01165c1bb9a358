/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iWARP wire format: sizes, masks, flag bits and code points of
 * MPA (RFC 5044, RFC 6581), DDP (RFC 5041), RDMAP (RFC 5040) and the
 * RDMAP extensions (RFC 7306).
 *
 * Masks and shifts only: every field is read and written byte-wise by
 * the helpers in xiw_proto.h, never through a struct overlay.
 */
#ifndef XIW_WIRE_H
#define XIW_WIRE_H

/* ---- MPA connection setup frames (RFC 5044 sec 7.1, RFC 6581 sec 7) ---- */

#define MPA_KEY_LEN			16
#define MPA_KEY_REQ			"MPA ID Req Frame"
#define MPA_KEY_REP			"MPA ID Rep Frame"
#define MPA_RR_HDR_LEN			20	/* key, flags, rev, PD_Length */
#define MPA_RR_FLAGS_OFF		16
#define MPA_RR_REV_OFF			17
#define MPA_RR_PDLEN_OFF		18
#define MPA_RR_FLAG_M			0x80	/* sender wants to receive markers */
#define MPA_RR_FLAG_C			0x40	/* sender wants CRC */
#define MPA_RR_FLAG_R			0x20	/* reject (reply only) */
/*
 * Not in the RFC text: siw and Chelsio cxgb4 set 0x10 to mark an
 * "enhanced" (RFC 6581) setup and read IRD/ORD only when it is set.
 */
#define MPA_RR_FLAG_ENHANCED		0x10
#define MPA_RR_FLAG_RSVD		0x0f
#define MPA_REV_1			1
#define MPA_REV_2			2
#define MPA_MAX_PD_LEN			512

/* RFC 6581 enhanced data: two 16-bit words at the start of private data */
#define MPA_V2_HDR_LEN			4
#define MPA_V2_IRD_P2P			0x8000	/* IRD word: peer-to-peer mode */
#define MPA_V2_IRD_RTR_SEND		0x4000	/* IRD word: zero-length Send RTR */
#define MPA_V2_ORD_RTR_WRITE		0x8000	/* ORD word: zero-length Write RTR */
#define MPA_V2_ORD_RTR_READ		0x4000	/* ORD word: zero-length Read RTR */
#define MPA_V2_IRD_ORD_MASK		0x3fff

/* ---- MPA FPDU (RFC 5044 sec 4) ---- */

#define MPA_HDR_LEN			2	/* ULPDU_Length */
#define MPA_CRC_LEN			4
#define MPA_ALIGN			4
#define MPA_MARKER_LEN			4	/* 16 bit reserved, 16 bit FPDUPTR */
#define MPA_MARKER_SPACING		512
#define MPA_MAX_ULPDU			0xffff

/* ---- DDP (RFC 5041 sec 4) ---- */

#define DDP_CTRL_OFF			0
#define DDP_FLAG_T			0x80	/* tagged buffer model */
#define DDP_FLAG_L			0x40	/* last segment of the message */
#define DDP_CTRL_RSVD			0x3c
#define DDP_DV_MASK			0x03
#define DDP_VERSION			1
#define DDP_RSVDULP_OFF			1	/* 8 bit RsvdULP: RDMAP control */
#define DDP_TAGGED_STAG_OFF		2
#define DDP_TAGGED_TO_OFF		6
#define DDP_TAGGED_HDR_LEN		14
#define DDP_UNTAGGED_RSVDULP2_OFF	2	/* 32 bit RsvdULP: Invalidate STag */
#define DDP_UNTAGGED_QN_OFF		6
#define DDP_UNTAGGED_MSN_OFF		10
#define DDP_UNTAGGED_MO_OFF		14
#define DDP_UNTAGGED_HDR_LEN		18

/* ---- RDMAP (RFC 5040 sec 4; RFC 7306 code points as in the IANA RDDP registry) ---- */

#define RDMAP_RV_MASK			0xc0
#define RDMAP_RV_SHIFT			6
#define RDMAP_VERSION			1
#define RDMAP_CTRL_RSVD			0x30
#define RDMAP_OPCODE_MASK		0x0f

#define RDMAP_OP_WRITE			0x0
#define RDMAP_OP_READ_REQ		0x1
#define RDMAP_OP_READ_RESP		0x2
#define RDMAP_OP_SEND			0x3
#define RDMAP_OP_SEND_INV		0x4
#define RDMAP_OP_SEND_SE		0x5
#define RDMAP_OP_SEND_SE_INV		0x6
#define RDMAP_OP_TERMINATE		0x7
#define RDMAP_OP_IMM_DATA		0x8	/* RFC 7306 */
#define RDMAP_OP_IMM_DATA_SE		0x9	/* RFC 7306 */
#define RDMAP_OP_ATOMIC_REQ		0xa	/* RFC 7306 */
#define RDMAP_OP_ATOMIC_RESP		0xb	/* RFC 7306 */
#define RDMAP_OP_COUNT			16

#define RDMAP_QN_SEND			0	/* Send, Immediate Data */
#define RDMAP_QN_READ_REQ		1	/* Read Request, Atomic Request */
#define RDMAP_QN_TERMINATE		2
#define RDMAP_QN_ATOMIC_RESP		3	/* RFC 7306 */
#define RDMAP_QN_NONE			0xff	/* tagged: no queue */

/* RDMA Read Request header, after the untagged DDP header */
#define RDMAP_READ_REQ_LEN		28
#define RDMAP_RR_SINK_STAG_OFF		0
#define RDMAP_RR_SINK_TO_OFF		4
#define RDMAP_RR_SIZE_OFF		12
#define RDMAP_RR_SRC_STAG_OFF		16
#define RDMAP_RR_SRC_TO_OFF		20

/* RFC 7306 Atomic Request header, after the untagged DDP header */
#define RDMAP_ATOMIC_REQ_LEN		52
#define RDMAP_AR_OPCODE_OFF		0	/* 32 bit word, low 4 bits */
#define RDMAP_AR_OPCODE_MASK		0x0f
#define RDMAP_AR_REQID_OFF		4
#define RDMAP_AR_STAG_OFF		8
#define RDMAP_AR_TO_OFF			12
#define RDMAP_AR_DATA_OFF		20	/* Add or Swap Data */
#define RDMAP_AR_DATA_MASK_OFF		28	/* Add or Swap Mask */
#define RDMAP_AR_CMP_OFF		36	/* Compare Data */
#define RDMAP_AR_CMP_MASK_OFF		44	/* Compare Mask */
#define RDMAP_ATOMIC_FETCHADD		0x0
#define RDMAP_ATOMIC_CMPSWAP		0x2
#define RDMAP_ATOMIC_ALIGN		8

/* RFC 7306 Atomic Response header */
#define RDMAP_ATOMIC_RESP_LEN		12
#define RDMAP_AS_REQID_OFF		0
#define RDMAP_AS_VALUE_OFF		4

/* RFC 7306 Immediate Data header */
#define RDMAP_IMM_DATA_LEN		8

/* ---- TERMINATE (RFC 5040 sec 4.8) ---- */

#define RDMAP_TERM_CTRL_LEN		4
#define RDMAP_TERM_LAYER_SHIFT		4
#define RDMAP_TERM_ETYPE_MASK		0x0f
#define RDMAP_TERM_HDRCT_M		0x80	/* byte 2: DDP Segment Length valid */
#define RDMAP_TERM_HDRCT_D		0x40	/* byte 2: DDP header included */
#define RDMAP_TERM_HDRCT_R		0x20	/* byte 2: RDMAP header included */
#define RDMAP_TERM_HDRCT_RSVD		0x1f
#define RDMAP_TERM_SEGLEN_LEN		2
#define RDMAP_TERM_MAX_LEN		(RDMAP_TERM_CTRL_LEN + RDMAP_TERM_SEGLEN_LEN + \
					 DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN)

#define TERM_LAYER_RDMAP		0x0
#define TERM_LAYER_DDP			0x1
#define TERM_LAYER_LLP			0x2

/* RDMAP layer error types and codes (RFC 5040 sec 7) */
#define RDMAP_ETYPE_CATASTROPHIC	0x0
#define RDMAP_ETYPE_REMOTE_PROTECTION	0x1
#define RDMAP_ETYPE_REMOTE_OPERATION	0x2
#define RDMAP_ECODE_INVALID_STAG	0x00
#define RDMAP_ECODE_BASE_BOUNDS		0x01
#define RDMAP_ECODE_ACCESS_RIGHTS	0x02
#define RDMAP_ECODE_STAG_NOT_ASSOC	0x03
#define RDMAP_ECODE_TO_WRAP		0x04
#define RDMAP_ECODE_VERSION		0x05
#define RDMAP_ECODE_OPCODE		0x06
#define RDMAP_ECODE_CATASTROPHIC_STREAM	0x07
#define RDMAP_ECODE_CATASTROPHIC_GLOBAL	0x08
#define RDMAP_ECODE_CANNOT_INVALIDATE	0x09
#define RDMAP_ECODE_UNSPECIFIED		0xff

/* DDP layer error types and codes (RFC 5041 sec 7) */
#define DDP_ETYPE_CATASTROPHIC		0x0
#define DDP_ETYPE_TAGGED_BUF		0x1
#define DDP_ETYPE_UNTAGGED_BUF		0x2
#define DDP_ETYPE_RSVD			0x3
#define DDP_ECODE_T_INVALID_STAG	0x00
#define DDP_ECODE_T_BASE_BOUNDS		0x01
#define DDP_ECODE_T_STAG_NOT_ASSOC	0x02
#define DDP_ECODE_T_TO_WRAP		0x03
#define DDP_ECODE_T_VERSION		0x04
#define DDP_ECODE_UT_INVALID_QN		0x01
#define DDP_ECODE_UT_INVALID_MSN_NOBUF	0x02
#define DDP_ECODE_UT_INVALID_MSN_RANGE	0x03
#define DDP_ECODE_UT_INVALID_MO		0x04
#define DDP_ECODE_UT_MSG_TOOLONG	0x05
#define DDP_ECODE_UT_VERSION		0x06

/* LLP (MPA) layer error type and codes (RFC 5044 sec 8, RFC 6581 sec 9) */
#define LLP_ETYPE_MPA			0x0
#define LLP_ECODE_TCP_LOST		0x01
#define LLP_ECODE_CRC			0x02
#define LLP_ECODE_FPDU_START		0x03	/* marker and ULPDU_Length disagree */
#define LLP_ECODE_INVALID_REQ_RESP	0x04
#define LLP_ECODE_LOCAL_CATASTROPHIC	0x05
#define LLP_ECODE_INSUFFICIENT_IRD	0x06
#define LLP_ECODE_NO_MATCHING_RTR	0x07

#endif /* XIW_WIRE_H */
