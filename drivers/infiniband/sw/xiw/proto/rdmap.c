// SPDX-License-Identifier: GPL-2.0
/*
 * RDMAP (RFC 5040) and its extensions (RFC 7306): the opcode table and
 * the combined DDP + RDMAP segment header codec.
 *
 * RFC 7306 "Write with Immediate" and "Send with Immediate" are an RDMA
 * Write or a Send followed by an Immediate Data message; the opcodes below
 * are the wire messages, not the verbs.
 */
#include "xiw_proto.h"

#define OPT(op, nm, rfcno, qnum, d, pl, sgl, inv, se, rlen)		\
	[op] = {							\
		.name = nm, .opcode = op, .rfc = rfcno, .tagged = true,	\
		.qn = qnum, .dir = d, .payload = pl, .single = sgl,	\
		.inval_stag = inv, .solicited = se, .rdmap_len = rlen,	\
		.hdr_len = DDP_TAGGED_HDR_LEN + (rlen),			\
	}
#define OPU(op, nm, rfcno, qnum, d, pl, sgl, inv, se, rlen)		\
	[op] = {							\
		.name = nm, .opcode = op, .rfc = rfcno, .tagged = false,	\
		.qn = qnum, .dir = d, .payload = pl, .single = sgl,	\
		.inval_stag = inv, .solicited = se, .rdmap_len = rlen,	\
		.hdr_len = DDP_UNTAGGED_HDR_LEN + (rlen),		\
	}

#define REQ	XIW_RDMAP_DIR_REQUEST
#define RSP	XIW_RDMAP_DIR_RESPONSE
#define CTL	XIW_RDMAP_DIR_CONTROL

const struct xiw_rdmap_opinfo xiw_rdmap_ops[RDMAP_OP_COUNT] = {
	OPT(RDMAP_OP_WRITE, "RDMA Write", 5040, RDMAP_QN_NONE, REQ,
	    true, false, false, false, 0),
	OPU(RDMAP_OP_READ_REQ, "RDMA Read Request", 5040, RDMAP_QN_READ_REQ,
	    REQ, false, true, false, false, RDMAP_READ_REQ_LEN),
	OPT(RDMAP_OP_READ_RESP, "RDMA Read Response", 5040, RDMAP_QN_NONE,
	    RSP, true, false, false, false, 0),
	OPU(RDMAP_OP_SEND, "Send", 5040, RDMAP_QN_SEND, REQ,
	    true, false, false, false, 0),
	OPU(RDMAP_OP_SEND_INV, "Send with Invalidate", 5040, RDMAP_QN_SEND,
	    REQ, true, false, true, false, 0),
	OPU(RDMAP_OP_SEND_SE, "Send with Solicited Event", 5040,
	    RDMAP_QN_SEND, REQ, true, false, false, true, 0),
	OPU(RDMAP_OP_SEND_SE_INV, "Send with Solicited Event and Invalidate",
	    5040, RDMAP_QN_SEND, REQ, true, false, true, true, 0),
	OPU(RDMAP_OP_TERMINATE, "Terminate", 5040, RDMAP_QN_TERMINATE, CTL,
	    true, true, false, false, RDMAP_TERM_CTRL_LEN),
	OPU(RDMAP_OP_IMM_DATA, "Immediate Data", 7306, RDMAP_QN_SEND, REQ,
	    false, true, false, false, RDMAP_IMM_DATA_LEN),
	OPU(RDMAP_OP_IMM_DATA_SE, "Immediate Data with Solicited Event", 7306,
	    RDMAP_QN_SEND, REQ, false, true, false, true, RDMAP_IMM_DATA_LEN),
	OPU(RDMAP_OP_ATOMIC_REQ, "Atomic Request", 7306, RDMAP_QN_READ_REQ,
	    REQ, false, true, false, false, RDMAP_ATOMIC_REQ_LEN),
	OPU(RDMAP_OP_ATOMIC_RESP, "Atomic Response", 7306,
	    RDMAP_QN_ATOMIC_RESP, RSP, false, true, false, false,
	    RDMAP_ATOMIC_RESP_LEN),
};

/*
 * Add @a and @b where a set bit of @bounds ends a field: the carry out of
 * that bit is dropped instead of flowing into the next field.
 */
static u64 xiw_atomic_field_add(u64 a, u64 b, u64 bounds)
{
	u64 sum = 0, carry = 0;
	unsigned int i;

	if (!bounds)
		return a + b;
	for (i = 0; i < 64; i++) {
		u64 bit = (u64)1 << i;
		u64 t = ((a >> i) & 1) + ((b >> i) & 1) + carry;

		if (t & 1)
			sum |= bit;
		carry = (bounds & bit) ? 0 : t >> 1;
	}
	return sum;
}

/**
 * xiw_atomic_apply() - the new value of an RFC 7306 atomic's target
 * @ar: the Atomic Request (its opcode already validated)
 * @orig: the 64 bit target value before the operation
 *
 * FetchAdd adds Add Data, with the Add Mask marking the last bit of each
 * independent field.  CmpSwap compares the bits selected by Compare Mask
 * and, when they match, replaces the bits selected by Swap Mask.  The
 * caller returns @orig in the Atomic Response either way.
 *
 * Return: the value to store, @orig when a compare fails.
 */
u64 xiw_atomic_apply(const struct xiw_atomic_req *ar, u64 orig)
{
	if (ar->op == RDMAP_ATOMIC_FETCHADD)
		return xiw_atomic_field_add(orig, ar->data, ar->data_mask);
	if ((orig ^ ar->cmp) & ar->cmp_mask)
		return orig;
	return (orig & ~ar->data_mask) | (ar->data & ar->data_mask);
}

static void xiw_read_req_decode(const u8 *p, struct xiw_read_req *rr)
{
	rr->sink_stag = xiw_get_be32(p + RDMAP_RR_SINK_STAG_OFF);
	rr->sink_to = xiw_get_be64(p + RDMAP_RR_SINK_TO_OFF);
	rr->size = xiw_get_be32(p + RDMAP_RR_SIZE_OFF);
	rr->src_stag = xiw_get_be32(p + RDMAP_RR_SRC_STAG_OFF);
	rr->src_to = xiw_get_be64(p + RDMAP_RR_SRC_TO_OFF);
}

static void xiw_read_req_encode(const struct xiw_read_req *rr, u8 *p)
{
	xiw_put_be32(p + RDMAP_RR_SINK_STAG_OFF, rr->sink_stag);
	xiw_put_be64(p + RDMAP_RR_SINK_TO_OFF, rr->sink_to);
	xiw_put_be32(p + RDMAP_RR_SIZE_OFF, rr->size);
	xiw_put_be32(p + RDMAP_RR_SRC_STAG_OFF, rr->src_stag);
	xiw_put_be64(p + RDMAP_RR_SRC_TO_OFF, rr->src_to);
}

static void xiw_atomic_req_decode(const u8 *p, struct xiw_atomic_req *ar)
{
	ar->op = p[RDMAP_AR_OPCODE_OFF + 3] & RDMAP_AR_OPCODE_MASK;
	ar->req_id = xiw_get_be32(p + RDMAP_AR_REQID_OFF);
	ar->stag = xiw_get_be32(p + RDMAP_AR_STAG_OFF);
	ar->to = xiw_get_be64(p + RDMAP_AR_TO_OFF);
	ar->data = xiw_get_be64(p + RDMAP_AR_DATA_OFF);
	ar->data_mask = xiw_get_be64(p + RDMAP_AR_DATA_MASK_OFF);
	ar->cmp = xiw_get_be64(p + RDMAP_AR_CMP_OFF);
	ar->cmp_mask = xiw_get_be64(p + RDMAP_AR_CMP_MASK_OFF);
}

static void xiw_atomic_req_encode(const struct xiw_atomic_req *ar, u8 *p)
{
	xiw_put_be32(p + RDMAP_AR_OPCODE_OFF, ar->op & RDMAP_AR_OPCODE_MASK);
	xiw_put_be32(p + RDMAP_AR_REQID_OFF, ar->req_id);
	xiw_put_be32(p + RDMAP_AR_STAG_OFF, ar->stag);
	xiw_put_be64(p + RDMAP_AR_TO_OFF, ar->to);
	xiw_put_be64(p + RDMAP_AR_DATA_OFF, ar->data);
	xiw_put_be64(p + RDMAP_AR_DATA_MASK_OFF, ar->data_mask);
	xiw_put_be64(p + RDMAP_AR_CMP_OFF, ar->cmp);
	xiw_put_be64(p + RDMAP_AR_CMP_MASK_OFF, ar->cmp_mask);
}

/**
 * xiw_rdmap_hdr_decode() - decode a header whose control octets are checked
 * @p: the ULPDU (DDP control octet first, no ULPDU_Length), at least
 *	@oi->hdr_len octets
 * @oi: what xiw_ddp_ctrl_check() returned for @p's control octets
 * @h: decoded header: every field but the union, and of the union the
 *	member @p's opcode carries; the rest of the union is left as it was
 *
 * The checks of xiw_rdmap_hdr_parse() after the control octets and the
 * length: queue number, L=1 and MO=0 of single-segment messages, Atomic
 * Request operation and alignment.  For a caller that has checked the
 * control octets already (the deframer, on its way to the header's end,
 * which decodes every segment's header into the same struct).
 *
 * Return: %XIW_OK or the first error found.
 */
enum xiw_proto_err xiw_rdmap_hdr_decode(const u8 *p,
					const struct xiw_rdmap_opinfo *oi,
					struct xiw_rdmap_hdr *h)
{
	const u8 *r;

	h->tagged = oi->tagged;
	h->last = !!(p[DDP_CTRL_OFF] & DDP_FLAG_L);
	h->ddp_version = DDP_VERSION;
	h->rdmap_version = RDMAP_VERSION;
	h->opcode = p[DDP_RSVDULP_OFF] & RDMAP_OPCODE_MASK;
	if (h->tagged) {
		h->stag = xiw_get_be32(p + DDP_TAGGED_STAG_OFF);
		h->to = xiw_get_be64(p + DDP_TAGGED_TO_OFF);
		h->rsvdulp = 0;
		h->qn = 0;
		h->msn = 0;
		h->mo = 0;
		r = p + DDP_TAGGED_HDR_LEN;
	} else {
		h->stag = 0;
		h->to = 0;
		h->rsvdulp = xiw_get_be32(p + DDP_UNTAGGED_RSVDULP2_OFF);
		h->qn = xiw_get_be32(p + DDP_UNTAGGED_QN_OFF);
		h->msn = xiw_get_be32(p + DDP_UNTAGGED_MSN_OFF);
		h->mo = xiw_get_be32(p + DDP_UNTAGGED_MO_OFF);
		r = p + DDP_UNTAGGED_HDR_LEN;
		if (h->qn != oi->qn)
			return XIW_ERR_DDP_UT_INVALID_QN;
	}
	if (oi->single && (!h->last || h->mo != 0))
		return XIW_ERR_RDMAP_SEGMENTED;

	switch (h->opcode) {
	case RDMAP_OP_READ_REQ:
		xiw_read_req_decode(r, &h->u.read_req);
		break;
	case RDMAP_OP_TERMINATE:
		xiw_term_ctrl_decode(r, &h->u.term);
		break;
	case RDMAP_OP_IMM_DATA:
	case RDMAP_OP_IMM_DATA_SE:
		h->u.imm_data = xiw_get_be64(r);
		break;
	case RDMAP_OP_ATOMIC_REQ:
		xiw_atomic_req_decode(r, &h->u.atomic_req);
		if (h->u.atomic_req.op != RDMAP_ATOMIC_FETCHADD &&
		    h->u.atomic_req.op != RDMAP_ATOMIC_CMPSWAP)
			return XIW_ERR_RDMAP_ATOMIC_OPCODE;
		if (h->u.atomic_req.to & (RDMAP_ATOMIC_ALIGN - 1))
			return XIW_ERR_RDMAP_ATOMIC_ALIGN;
		break;
	case RDMAP_OP_ATOMIC_RESP:
		h->u.atomic_resp.req_id = xiw_get_be32(r + RDMAP_AS_REQID_OFF);
		h->u.atomic_resp.value = xiw_get_be64(r + RDMAP_AS_VALUE_OFF);
		break;
	default:
		break;
	}
	return XIW_OK;
}

/**
 * xiw_rdmap_hdr_parse() - decode the DDP + RDMAP header of a segment
 * @p: the ULPDU (DDP control octet first, no ULPDU_Length)
 * @len: octets available at @p (at least the header)
 * @h: decoded header
 * @hdr_len: set to the header length on success
 *
 * Validates versions, the opcode, its buffer model, its queue number
 * and, for single-segment messages, L=1 and MO=0; Atomic Requests must
 * name a known operation and an 8-byte aligned Tagged Offset.
 *
 * Return: %XIW_OK or the error (the first one found, in that order).
 */
enum xiw_proto_err xiw_rdmap_hdr_parse(const u8 *p, size_t len,
				       struct xiw_rdmap_hdr *h,
				       size_t *hdr_len)
{
	const struct xiw_rdmap_opinfo *oi;
	enum xiw_proto_err err;

	memset(h, 0, sizeof(*h));
	*hdr_len = 0;
	if (len < 2)
		return XIW_ERR_RDMAP_HDR_SHORT;
	err = xiw_ddp_ctrl_check(p[DDP_CTRL_OFF], p[DDP_RSVDULP_OFF], &oi);
	if (!err && len < oi->hdr_len)
		err = XIW_ERR_RDMAP_HDR_SHORT;
	if (err) {
		/* What the control octets say, for the TERMINATE's report. */
		h->tagged = !!(p[DDP_CTRL_OFF] & DDP_FLAG_T);
		h->last = !!(p[DDP_CTRL_OFF] & DDP_FLAG_L);
		h->ddp_version = p[DDP_CTRL_OFF] & DDP_DV_MASK;
		h->rdmap_version = (p[DDP_RSVDULP_OFF] & RDMAP_RV_MASK) >>
				   RDMAP_RV_SHIFT;
		h->opcode = p[DDP_RSVDULP_OFF] & RDMAP_OPCODE_MASK;
		return err;
	}
	err = xiw_rdmap_hdr_decode(p, oi, h);
	if (err)
		return err;
	*hdr_len = oi->hdr_len;
	return XIW_OK;
}

/**
 * xiw_rdmap_hdr_build() - encode the DDP + RDMAP header of a segment
 * @h: header; @h->opcode selects the layout, @h->tagged is taken from the
 *	opcode table, versions are always written as 1, reserved bits as 0
 * @out: output buffer
 * @cap: size of @out
 * @hdr_len: octets written
 *
 * Return: %XIW_OK, %XIW_ERR_RDMAP_OPCODE for a reserved opcode, or
 * %XIW_ERR_NOSPACE.
 */
enum xiw_proto_err xiw_rdmap_hdr_build(const struct xiw_rdmap_hdr *h,
				       u8 *out, size_t cap, size_t *hdr_len)
{
	const struct xiw_rdmap_opinfo *oi = xiw_rdmap_op_lookup(h->opcode);
	u8 *r;

	*hdr_len = 0;
	if (!oi)
		return XIW_ERR_RDMAP_OPCODE;
	if (cap < oi->hdr_len)
		return XIW_ERR_NOSPACE;
	/* Every layout below writes all of its octets, reserved ones as 0. */
	out[DDP_CTRL_OFF] = (u8)((oi->tagged ? DDP_FLAG_T : 0) |
				 (h->last ? DDP_FLAG_L : 0) | DDP_VERSION);
	out[DDP_RSVDULP_OFF] = (u8)(RDMAP_VERSION << RDMAP_RV_SHIFT |
				    (h->opcode & RDMAP_OPCODE_MASK));
	if (oi->tagged) {
		xiw_put_be32(out + DDP_TAGGED_STAG_OFF, h->stag);
		xiw_put_be64(out + DDP_TAGGED_TO_OFF, h->to);
		r = out + DDP_TAGGED_HDR_LEN;
	} else {
		xiw_put_be32(out + DDP_UNTAGGED_RSVDULP2_OFF, h->rsvdulp);
		xiw_put_be32(out + DDP_UNTAGGED_QN_OFF, h->qn);
		xiw_put_be32(out + DDP_UNTAGGED_MSN_OFF, h->msn);
		xiw_put_be32(out + DDP_UNTAGGED_MO_OFF, h->mo);
		r = out + DDP_UNTAGGED_HDR_LEN;
	}
	switch (h->opcode) {
	case RDMAP_OP_READ_REQ:
		xiw_read_req_encode(&h->u.read_req, r);
		break;
	case RDMAP_OP_TERMINATE:
		xiw_term_ctrl_encode(&h->u.term, r);
		break;
	case RDMAP_OP_IMM_DATA:
	case RDMAP_OP_IMM_DATA_SE:
		xiw_put_be64(r, h->u.imm_data);
		break;
	case RDMAP_OP_ATOMIC_REQ:
		xiw_atomic_req_encode(&h->u.atomic_req, r);
		break;
	case RDMAP_OP_ATOMIC_RESP:
		xiw_put_be32(r + RDMAP_AS_REQID_OFF, h->u.atomic_resp.req_id);
		xiw_put_be64(r + RDMAP_AS_VALUE_OFF, h->u.atomic_resp.value);
		break;
	default:
		break;
	}
	*hdr_len = oi->hdr_len;
	return XIW_OK;
}

/**
 * xiw_rdmap_seg_check() - check a decoded header against its ULPDU length
 * @h: header decoded by xiw_rdmap_hdr_parse()
 * @ulpdu_len: the segment's ULPDU_Length
 *
 * Return: %XIW_OK, %XIW_ERR_RDMAP_OPCODE for a reserved opcode,
 * %XIW_ERR_RDMAP_HDR_SHORT if the segment cannot hold its headers, or
 * %XIW_ERR_RDMAP_PAYLOAD if a header-only message carries payload.
 */
enum xiw_proto_err xiw_rdmap_seg_check(const struct xiw_rdmap_hdr *h,
				       u32 ulpdu_len)
{
	const struct xiw_rdmap_opinfo *oi = xiw_rdmap_op_lookup(h->opcode);

	if (!oi)
		return XIW_ERR_RDMAP_OPCODE;
	return xiw_rdmap_seg_fits(oi, ulpdu_len);
}
