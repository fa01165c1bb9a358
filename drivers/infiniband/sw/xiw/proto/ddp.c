// SPDX-License-Identifier: GPL-2.0
/*
 * DDP (RFC 5041) receive-side validation of a decoded segment header
 * against the receiver's queue and buffer state (RFC 5041 sec 7).
 */
#include "xiw_proto.h"

/* MSNs more than 2^31 ahead of the expected one are "behind" (wrapped). */
#define XIW_MSN_HALF	0x80000000U

/**
 * xiw_ddp_check_untagged() - validate an untagged segment
 * @h: decoded header (queue number already checked against the opcode)
 * @payload_len: payload octets of this segment
 * @q: receiver state of the queue @h->qn names
 *
 * Order: MSN range (behind the expected MSN or 2^31 or more ahead),
 * the expected MSN without a posted buffer, any other MSN beyond the
 * posted buffers (range), MO not continuing the message, message
 * longer than the buffer.
 *
 * Return: %XIW_OK or the RFC 5041 untagged buffer error.
 */
enum xiw_proto_err xiw_ddp_check_untagged(const struct xiw_rdmap_hdr *h,
					  u32 payload_len,
					  const struct xiw_ddp_queue *q)
{
	u32 ahead;
	u64 end;

	if (h->tagged)
		return XIW_ERR_INVAL;
	ahead = h->msn - q->msn;
	if (ahead >= XIW_MSN_HALF)
		return XIW_ERR_DDP_UT_MSN_RANGE;
	/*
	 * The expected MSN without a buffer is "no buffer available"; any
	 * other MSN outside the posted buffers is outside the legal range
	 * (RFC 5041 sec 7.1: from the first to the last available buffer).
	 */
	if (ahead >= q->posted)
		return ahead ? XIW_ERR_DDP_UT_MSN_RANGE : XIW_ERR_DDP_UT_MSN_NOBUF;
	if (ahead == 0 && h->mo != q->mo)
		return XIW_ERR_DDP_UT_INVALID_MO;
	if (ahead != 0 && h->mo != 0)
		return XIW_ERR_DDP_UT_INVALID_MO;
	end = (u64)h->mo + payload_len;
	if (ahead == 0 && end > q->buf_len)
		return XIW_ERR_DDP_UT_MSG_TOOLONG;
	return XIW_OK;
}

/**
 * xiw_ddp_check_tagged() - validate a tagged segment
 * @h: decoded header
 * @payload_len: payload octets of this segment
 * @r: the buffer registered under @h->stag, or NULL if none is
 *
 * Order: invalid STag, STag not associated with this stream, TO wrap,
 * base or bounds violation.
 *
 * Return: %XIW_OK or the RFC 5041 tagged buffer error.
 */
enum xiw_proto_err xiw_ddp_check_tagged(const struct xiw_rdmap_hdr *h,
					u32 payload_len,
					const struct xiw_ddp_region *r)
{
	u64 off;

	if (!h->tagged)
		return XIW_ERR_INVAL;
	if (!r || !r->valid || r->stag != h->stag)
		return XIW_ERR_DDP_T_INVALID_STAG;
	if (!r->same_stream)
		return XIW_ERR_DDP_T_STAG_NOT_ASSOC;
	if (payload_len && h->to + (payload_len - 1) < h->to)
		return XIW_ERR_DDP_T_TO_WRAP;
	if (h->to < r->base)
		return XIW_ERR_DDP_T_BASE_BOUNDS;
	/*
	 * Compared without forming @off + @payload_len: with a region from
	 * base 0, a segment ending exactly at 2^64 would wrap that sum to 0.
	 */
	off = h->to - r->base;
	if (off > r->len || payload_len > r->len - off)
		return XIW_ERR_DDP_T_BASE_BOUNDS;
	return XIW_OK;
}
