// SPDX-License-Identifier: GPL-2.0
/*
 * TERMINATE (RFC 5040 sec 4.8): the error to layer/etype/ecode mapping,
 * and building and parsing of the TERMINATE message body.
 */
#include "xiw_proto.h"

struct xiw_err_desc {
	const char *name;
	u8 layer;
	u8 etype;
	u8 ecode;
};

#define XE(e, l, t, c) \
	[e] = { #e, l, t, c }

static const struct xiw_err_desc xiw_err_table[XIW_ERR_COUNT] = {
	[XIW_OK] = { "XIW_OK", 0, 0, 0 },
	XE(XIW_ERR_INVAL, TERM_LAYER_RDMAP, RDMAP_ETYPE_CATASTROPHIC, 0),
	XE(XIW_ERR_NOSPACE, TERM_LAYER_RDMAP, RDMAP_ETYPE_CATASTROPHIC, 0),

	XE(XIW_ERR_MPA_TRUNCATED, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_INVALID_REQ_RESP),
	XE(XIW_ERR_MPA_KEY, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_INVALID_REQ_RESP),
	XE(XIW_ERR_MPA_UNEXPECTED_KEY, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_INVALID_REQ_RESP),
	XE(XIW_ERR_MPA_REV, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_INVALID_REQ_RESP),
	XE(XIW_ERR_MPA_PD_LEN, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_INVALID_REQ_RESP),
	XE(XIW_ERR_MPA_V2_HDR, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_INVALID_REQ_RESP),
	XE(XIW_ERR_MPA_IRD_ORD_RANGE, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_INVALID_REQ_RESP),
	XE(XIW_ERR_MPA_REJECTED, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_INVALID_REQ_RESP),
	XE(XIW_ERR_MPA_REV_MISMATCH, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_INVALID_REQ_RESP),
	XE(XIW_ERR_MPA_CRC_MISMATCH, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_INVALID_REQ_RESP),
	XE(XIW_ERR_MPA_MARKERS_MISMATCH, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_INVALID_REQ_RESP),
	XE(XIW_ERR_MPA_P2P_MISMATCH, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_NO_MATCHING_RTR),
	XE(XIW_ERR_MPA_LOCAL_CATASTROPHIC, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_LOCAL_CATASTROPHIC),
	XE(XIW_ERR_MPA_INSUFFICIENT_IRD, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_INSUFFICIENT_IRD),
	XE(XIW_ERR_MPA_NO_MATCHING_RTR, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_NO_MATCHING_RTR),

	XE(XIW_ERR_MPA_CRC, TERM_LAYER_LLP, LLP_ETYPE_MPA, LLP_ECODE_CRC),
	XE(XIW_ERR_MPA_MARKER, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_FPDU_START),
	XE(XIW_ERR_MPA_MARKER_RSVD, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_FPDU_START),
	XE(XIW_ERR_MPA_ULPDU_LEN, TERM_LAYER_LLP, LLP_ETYPE_MPA,
	   LLP_ECODE_FPDU_START),

	XE(XIW_ERR_DDP_T_INVALID_STAG, TERM_LAYER_DDP, DDP_ETYPE_TAGGED_BUF,
	   DDP_ECODE_T_INVALID_STAG),
	XE(XIW_ERR_DDP_T_BASE_BOUNDS, TERM_LAYER_DDP, DDP_ETYPE_TAGGED_BUF,
	   DDP_ECODE_T_BASE_BOUNDS),
	XE(XIW_ERR_DDP_T_STAG_NOT_ASSOC, TERM_LAYER_DDP, DDP_ETYPE_TAGGED_BUF,
	   DDP_ECODE_T_STAG_NOT_ASSOC),
	XE(XIW_ERR_DDP_T_TO_WRAP, TERM_LAYER_DDP, DDP_ETYPE_TAGGED_BUF,
	   DDP_ECODE_T_TO_WRAP),
	XE(XIW_ERR_DDP_T_VERSION, TERM_LAYER_DDP, DDP_ETYPE_TAGGED_BUF,
	   DDP_ECODE_T_VERSION),

	XE(XIW_ERR_DDP_UT_INVALID_QN, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED_BUF,
	   DDP_ECODE_UT_INVALID_QN),
	XE(XIW_ERR_DDP_UT_MSN_NOBUF, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED_BUF,
	   DDP_ECODE_UT_INVALID_MSN_NOBUF),
	XE(XIW_ERR_DDP_UT_MSN_RANGE, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED_BUF,
	   DDP_ECODE_UT_INVALID_MSN_RANGE),
	XE(XIW_ERR_DDP_UT_INVALID_MO, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED_BUF,
	   DDP_ECODE_UT_INVALID_MO),
	XE(XIW_ERR_DDP_UT_MSG_TOOLONG, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED_BUF,
	   DDP_ECODE_UT_MSG_TOOLONG),
	XE(XIW_ERR_DDP_UT_VERSION, TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED_BUF,
	   DDP_ECODE_UT_VERSION),
	XE(XIW_ERR_DDP_CATASTROPHIC, TERM_LAYER_DDP, DDP_ETYPE_CATASTROPHIC, 0),

	XE(XIW_ERR_RDMAP_VERSION, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_OPERATION, RDMAP_ECODE_VERSION),
	XE(XIW_ERR_RDMAP_OPCODE, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_OPERATION, RDMAP_ECODE_OPCODE),
	XE(XIW_ERR_RDMAP_OPCODE_MODEL, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_OPERATION, RDMAP_ECODE_OPCODE),
	XE(XIW_ERR_RDMAP_ATOMIC_OPCODE, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_OPERATION, RDMAP_ECODE_OPCODE),
	XE(XIW_ERR_RDMAP_HDR_SHORT, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_OPERATION, RDMAP_ECODE_UNSPECIFIED),
	XE(XIW_ERR_RDMAP_PAYLOAD, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_OPERATION, RDMAP_ECODE_UNSPECIFIED),
	XE(XIW_ERR_RDMAP_SEGMENTED, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_OPERATION, RDMAP_ECODE_UNSPECIFIED),
	XE(XIW_ERR_RDMAP_TERM_MALFORMED, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_OPERATION, RDMAP_ECODE_UNSPECIFIED),
	XE(XIW_ERR_RDMAP_UNSPECIFIED, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_OPERATION, RDMAP_ECODE_UNSPECIFIED),
	XE(XIW_ERR_RDMAP_INVALID_STAG, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_PROTECTION, RDMAP_ECODE_INVALID_STAG),
	XE(XIW_ERR_RDMAP_BASE_BOUNDS, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_PROTECTION, RDMAP_ECODE_BASE_BOUNDS),
	XE(XIW_ERR_RDMAP_ATOMIC_ALIGN, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_PROTECTION, RDMAP_ECODE_BASE_BOUNDS),
	XE(XIW_ERR_RDMAP_ACCESS, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_PROTECTION, RDMAP_ECODE_ACCESS_RIGHTS),
	XE(XIW_ERR_RDMAP_STAG_NOT_ASSOC, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_PROTECTION, RDMAP_ECODE_STAG_NOT_ASSOC),
	XE(XIW_ERR_RDMAP_TO_WRAP, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_PROTECTION, RDMAP_ECODE_TO_WRAP),
	XE(XIW_ERR_RDMAP_CANNOT_INVALIDATE, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_OPERATION, RDMAP_ECODE_CANNOT_INVALIDATE),
	XE(XIW_ERR_RDMAP_CATASTROPHIC_STREAM, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_OPERATION, RDMAP_ECODE_CATASTROPHIC_STREAM),
	XE(XIW_ERR_RDMAP_CATASTROPHIC_GLOBAL, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_REMOTE_OPERATION, RDMAP_ECODE_CATASTROPHIC_GLOBAL),
	XE(XIW_ERR_RDMAP_CATASTROPHIC, TERM_LAYER_RDMAP,
	   RDMAP_ETYPE_CATASTROPHIC, 0),
};

/**
 * xiw_proto_err_name() - symbolic name of an error
 * @err: error
 *
 * Return: the enumerator name, or "XIW_ERR_?" for an out-of-range value.
 */
const char *xiw_proto_err_name(enum xiw_proto_err err)
{
	if ((unsigned int)err >= XIW_ERR_COUNT || !xiw_err_table[err].name)
		return "XIW_ERR_?";
	return xiw_err_table[err].name;
}

/**
 * xiw_proto_err_term() - TERMINATE triplet reported for an error
 * @err: error returned by any proto function
 * @tc: filled with layer, etype and ecode
 *
 * Return: true if @err is an error with a triplet, false for %XIW_OK
 * and out-of-range values (then @tc is zeroed).
 */
bool xiw_proto_err_term(enum xiw_proto_err err, struct xiw_term_code *tc)
{
	memset(tc, 0, sizeof(*tc));
	if (err == XIW_OK || (unsigned int)err >= XIW_ERR_COUNT)
		return false;
	tc->layer = xiw_err_table[err].layer;
	tc->etype = xiw_err_table[err].etype;
	tc->ecode = xiw_err_table[err].ecode;
	return true;
}

/**
 * xiw_term_code_to_err() - canonical error for a received triplet
 * @tc: layer/etype/ecode as received in a TERMINATE
 *
 * Several errors can share a triplet; the first in enum order wins.
 *
 * Return: the error, or %XIW_ERR_RDMAP_UNSPECIFIED for an unknown triplet.
 */
enum xiw_proto_err xiw_term_code_to_err(const struct xiw_term_code *tc)
{
	unsigned int i;

	for (i = XIW_OK + 1; i < XIW_ERR_COUNT; i++) {
		const struct xiw_err_desc *d = &xiw_err_table[i];

		if (d->layer == tc->layer && d->etype == tc->etype &&
		    d->ecode == tc->ecode)
			return (enum xiw_proto_err)i;
	}
	return XIW_ERR_RDMAP_UNSPECIFIED;
}

/**
 * xiw_term_ctrl_decode() - decode the TERMINATE control word
 * @in: 4 octets
 * @tc: decoded control word (reserved bits are ignored)
 */
void xiw_term_ctrl_decode(const u8 in[RDMAP_TERM_CTRL_LEN],
			  struct xiw_term_ctrl *tc)
{
	tc->code.layer = in[0] >> RDMAP_TERM_LAYER_SHIFT;
	tc->code.etype = in[0] & RDMAP_TERM_ETYPE_MASK;
	tc->code.ecode = in[1];
	tc->m = !!(in[2] & RDMAP_TERM_HDRCT_M);
	tc->d = !!(in[2] & RDMAP_TERM_HDRCT_D);
	tc->r = !!(in[2] & RDMAP_TERM_HDRCT_R);
}

/**
 * xiw_term_ctrl_encode() - encode the TERMINATE control word
 * @tc: control word
 * @out: 4 octets (reserved bits written as zero)
 */
void xiw_term_ctrl_encode(const struct xiw_term_ctrl *tc,
			  u8 out[RDMAP_TERM_CTRL_LEN])
{
	out[0] = (u8)((tc->code.layer & 0x0f) << RDMAP_TERM_LAYER_SHIFT |
		      (tc->code.etype & RDMAP_TERM_ETYPE_MASK));
	out[1] = tc->code.ecode;
	out[2] = (u8)((tc->m ? RDMAP_TERM_HDRCT_M : 0) |
		      (tc->d ? RDMAP_TERM_HDRCT_D : 0) |
		      (tc->r ? RDMAP_TERM_HDRCT_R : 0));
	out[3] = 0;
}

/**
 * xiw_term_parse() - parse a TERMINATE message body
 * @p: octets after the untagged DDP header (control word first)
 * @len: octets available; must be exactly the body
 * @t: decoded body
 *
 * The copied DDP header is 14 or 18 octets depending on its own T flag.
 *
 * Return: %XIW_OK, or %XIW_ERR_RDMAP_TERM_MALFORMED if the header-control
 * bits and the length disagree.
 */
enum xiw_proto_err xiw_term_parse(const u8 *p, size_t len, struct xiw_term *t)
{
	size_t off = RDMAP_TERM_CTRL_LEN;

	memset(t, 0, sizeof(*t));
	if (len < RDMAP_TERM_CTRL_LEN)
		return XIW_ERR_RDMAP_TERM_MALFORMED;
	xiw_term_ctrl_decode(p, &t->ctrl);
	if (t->ctrl.m) {
		if (len - off < RDMAP_TERM_SEGLEN_LEN)
			return XIW_ERR_RDMAP_TERM_MALFORMED;
		t->seg_len = xiw_get_be16(p + off);
		off += RDMAP_TERM_SEGLEN_LEN;
	}
	if (t->ctrl.d) {
		if (len - off < 1)
			return XIW_ERR_RDMAP_TERM_MALFORMED;
		t->ddp_hdr_len = (p[off] & DDP_FLAG_T) ? DDP_TAGGED_HDR_LEN :
							 DDP_UNTAGGED_HDR_LEN;
		if (len - off < t->ddp_hdr_len)
			return XIW_ERR_RDMAP_TERM_MALFORMED;
		memcpy(t->ddp_hdr, p + off, t->ddp_hdr_len);
		off += t->ddp_hdr_len;
	}
	if (t->ctrl.r) {
		if (len - off < RDMAP_READ_REQ_LEN)
			return XIW_ERR_RDMAP_TERM_MALFORMED;
		memcpy(t->rdmap_hdr, p + off, RDMAP_READ_REQ_LEN);
		off += RDMAP_READ_REQ_LEN;
	}
	if (off != len)
		return XIW_ERR_RDMAP_TERM_MALFORMED;
	return XIW_OK;
}

/**
 * xiw_term_build() - encode a TERMINATE message body
 * @t: body; @t->ddp_hdr_len must match the T flag of @t->ddp_hdr if d is set
 * @out: output buffer
 * @cap: size of @out
 * @out_len: octets written
 *
 * Return: %XIW_OK, %XIW_ERR_INVAL for an inconsistent @t, or
 * %XIW_ERR_NOSPACE.
 */
enum xiw_proto_err xiw_term_build(const struct xiw_term *t, u8 *out,
				  size_t cap, size_t *out_len)
{
	size_t need = RDMAP_TERM_CTRL_LEN, off;

	*out_len = 0;
	if (t->ctrl.code.layer > 0x0f || t->ctrl.code.etype > 0x0f)
		return XIW_ERR_INVAL;
	if (t->ctrl.d) {
		u8 want = (t->ddp_hdr[0] & DDP_FLAG_T) ? DDP_TAGGED_HDR_LEN :
							 DDP_UNTAGGED_HDR_LEN;

		if (t->ddp_hdr_len != want)
			return XIW_ERR_INVAL;
		need += t->ddp_hdr_len;
	}
	if (t->ctrl.m)
		need += RDMAP_TERM_SEGLEN_LEN;
	if (t->ctrl.r)
		need += RDMAP_READ_REQ_LEN;
	if (cap < need)
		return XIW_ERR_NOSPACE;

	xiw_term_ctrl_encode(&t->ctrl, out);
	off = RDMAP_TERM_CTRL_LEN;
	if (t->ctrl.m) {
		xiw_put_be16(out + off, t->seg_len);
		off += RDMAP_TERM_SEGLEN_LEN;
	}
	if (t->ctrl.d) {
		memcpy(out + off, t->ddp_hdr, t->ddp_hdr_len);
		off += t->ddp_hdr_len;
	}
	if (t->ctrl.r) {
		memcpy(out + off, t->rdmap_hdr, RDMAP_READ_REQ_LEN);
		off += RDMAP_READ_REQ_LEN;
	}
	*out_len = off;
	return XIW_OK;
}

/**
 * xiw_term_init() - prepare the TERMINATE body reporting an error
 * @t: body to fill
 * @err: the error (must not be %XIW_OK)
 * @fpdu: the offending FPDU from its ULPDU_Length field on (markers
 *	removed), or NULL if there is none (e.g. connection setup)
 * @fpdu_len: octets available at @fpdu
 *
 * Copies as much of the offending headers as RFC 5040 sec 4.8 asks
 * for and as is available: the ULPDU_Length (M), the DDP header (D) and,
 * for an RDMA Read Request, its RDMAP header (R). Errors found in the
 * MPA layer before a header could be trusted (CRC, markers, length)
 * copy only the ULPDU_Length.
 *
 * Return: %XIW_OK or %XIW_ERR_INVAL.
 */
enum xiw_proto_err xiw_term_init(struct xiw_term *t, enum xiw_proto_err err,
				 const u8 *fpdu, size_t fpdu_len)
{
	struct xiw_term_code tc;
	size_t hl;

	memset(t, 0, sizeof(*t));
	if (!xiw_proto_err_term(err, &tc))
		return XIW_ERR_INVAL;
	t->ctrl.code = tc;
	if (!fpdu || fpdu_len < MPA_HDR_LEN)
		return XIW_OK;
	t->ctrl.m = true;
	t->seg_len = xiw_get_be16(fpdu);
	if (tc.layer == TERM_LAYER_LLP)
		return XIW_OK;
	fpdu += MPA_HDR_LEN;
	fpdu_len -= MPA_HDR_LEN;
	if (fpdu_len < 1)
		return XIW_OK;
	hl = (fpdu[0] & DDP_FLAG_T) ? DDP_TAGGED_HDR_LEN : DDP_UNTAGGED_HDR_LEN;
	if (fpdu_len < hl)
		return XIW_OK;
	t->ctrl.d = true;
	t->ddp_hdr_len = (u8)hl;
	memcpy(t->ddp_hdr, fpdu, hl);
	if (!(fpdu[0] & DDP_FLAG_T) &&
	    (fpdu[1] & RDMAP_OPCODE_MASK) == RDMAP_OP_READ_REQ &&
	    fpdu_len >= hl + RDMAP_READ_REQ_LEN) {
		t->ctrl.r = true;
		memcpy(t->rdmap_hdr, fpdu + hl, RDMAP_READ_REQ_LEN);
	}
	return XIW_OK;
}
