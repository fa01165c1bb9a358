// SPDX-License-Identifier: GPL-2.0
/*
 * MPA connection setup (RFC 5044 sec 7, RFC 6581): Request and Reply
 * frames, the enhanced IRD/ORD/RTR words, and the negotiation of CRC,
 * markers, revision, peer-to-peer mode and IRD/ORD.
 */
#include "xiw_proto.h"

static u8 xiw_mpa_pick_rtr(u8 mask)
{
	if (mask & XIW_MPA_RTR_WRITE)
		return XIW_MPA_RTR_WRITE;
	if (mask & XIW_MPA_RTR_READ)
		return XIW_MPA_RTR_READ;
	if (mask & XIW_MPA_RTR_SEND)
		return XIW_MPA_RTR_SEND;
	return 0;
}

static bool xiw_mpa_one_bit(u8 v)
{
	return v && !(v & (v - 1));
}

/*
 * What is wrong with the fixed header at @p (MPA_RR_HDR_LEN octets), in
 * the order the parser reports it: the key (RFC 5044 sec 7.1: neither
 * a Request's nor a Reply's), the revision, PD_Length.
 */
static enum xiw_proto_err xiw_mpa_hdr_check(const u8 *p)
{
	u8 rev = p[MPA_RR_REV_OFF];

	if (memcmp(p, MPA_KEY_REQ, MPA_KEY_LEN) &&
	    memcmp(p, MPA_KEY_REP, MPA_KEY_LEN))
		return XIW_ERR_MPA_KEY;
	if (rev != MPA_REV_1 && rev != MPA_REV_2)
		return XIW_ERR_MPA_REV;
	if (xiw_get_be16(p + MPA_RR_PDLEN_OFF) > MPA_MAX_PD_LEN)
		return XIW_ERR_MPA_PD_LEN;
	return XIW_OK;
}

/**
 * xiw_mpa_frame_need() - octets the frame starting at @p occupies
 * @p: received octets
 * @len: number of octets at @p
 *
 * A header that is wrong already (key, revision or PD_Length) needs no
 * private data to be rejected: the parser rejects it at 20 octets, so a
 * peer's garbage does not hold the connection until the MPA timeout.
 *
 * Return: 20 while the fixed header is incomplete or wrong, else
 * 20 + PD_Length.
 */
size_t xiw_mpa_frame_need(const u8 *p, size_t len)
{
	if (len < MPA_RR_HDR_LEN || xiw_mpa_hdr_check(p) != XIW_OK)
		return MPA_RR_HDR_LEN;
	return MPA_RR_HDR_LEN + xiw_get_be16(p + MPA_RR_PDLEN_OFF);
}

/**
 * xiw_mpa_frame_parse() - decode an MPA Request or Reply frame
 * @p: received octets, key first
 * @len: number of octets at @p
 * @f: decoded frame; @f->pdata points into @p
 * @consumed: octets of the frame (20 + PD_Length) on success
 *
 * The enhanced words are decoded for revision 2 frames with the 0x10
 * flag only; revision 1 frames keep all private data as ULP data.
 *
 * Return: %XIW_OK, %XIW_ERR_MPA_TRUNCATED (call again with more octets),
 * or %XIW_ERR_MPA_KEY, _REV, _PD_LEN, _V2_HDR.
 */
enum xiw_proto_err xiw_mpa_frame_parse(const u8 *p, size_t len,
				       struct xiw_mpa_frame *f,
				       size_t *consumed)
{
	enum xiw_proto_err err;
	u8 flags;
	u16 pd;

	memset(f, 0, sizeof(*f));
	*consumed = 0;
	if (len < MPA_RR_HDR_LEN)
		return XIW_ERR_MPA_TRUNCATED;
	err = xiw_mpa_hdr_check(p);
	if (err == XIW_ERR_MPA_KEY)
		return err;

	/* A wrong revision or PD_Length still reports the header. */
	f->reply = !memcmp(p, MPA_KEY_REP, MPA_KEY_LEN);
	flags = p[MPA_RR_FLAGS_OFF];
	f->markers = !!(flags & MPA_RR_FLAG_M);
	f->crc = !!(flags & MPA_RR_FLAG_C);
	f->reject = !!(flags & MPA_RR_FLAG_R);
	f->rsvd = flags & MPA_RR_FLAG_RSVD;
	f->rev = p[MPA_RR_REV_OFF];
	pd = xiw_get_be16(p + MPA_RR_PDLEN_OFF);
	f->pd_len = pd;
	if (err != XIW_OK)
		return err;
	if (len < (size_t)MPA_RR_HDR_LEN + pd)
		return XIW_ERR_MPA_TRUNCATED;

	p += MPA_RR_HDR_LEN;
	if (f->rev == MPA_REV_2 && (flags & MPA_RR_FLAG_ENHANCED)) {
		u16 ird, ord;

		if (pd < MPA_V2_HDR_LEN)
			return XIW_ERR_MPA_V2_HDR;
		ird = xiw_get_be16(p);
		ord = xiw_get_be16(p + 2);
		f->enhanced = true;
		f->p2p = !!(ird & MPA_V2_IRD_P2P);
		f->rtr = (u8)(((ord & MPA_V2_ORD_RTR_WRITE) ? XIW_MPA_RTR_WRITE : 0) |
			      ((ord & MPA_V2_ORD_RTR_READ) ? XIW_MPA_RTR_READ : 0) |
			      ((ird & MPA_V2_IRD_RTR_SEND) ? XIW_MPA_RTR_SEND : 0));
		f->ird = ird & MPA_V2_IRD_ORD_MASK;
		f->ord = ord & MPA_V2_IRD_ORD_MASK;
		p += MPA_V2_HDR_LEN;
		pd -= MPA_V2_HDR_LEN;
	}
	f->pdata = pd ? p : NULL;
	f->pdata_len = pd;
	*consumed = MPA_RR_HDR_LEN + f->pd_len;
	return XIW_OK;
}

/**
 * xiw_mpa_frame_build() - encode an MPA Request or Reply frame
 * @f: frame; @f->pd_len is ignored and recomputed
 * @out: output buffer
 * @cap: size of @out
 * @out_len: octets written
 *
 * Enhanced frames (revision 2 only) get the 0x10 flag and the IRD/ORD
 * words in front of the ULP private data.
 *
 * Return: %XIW_OK, %XIW_ERR_INVAL (bad revision, enhanced on revision 1,
 * RTR bits without P2P), %XIW_ERR_MPA_IRD_ORD_RANGE, %XIW_ERR_MPA_PD_LEN
 * or %XIW_ERR_NOSPACE.
 */
enum xiw_proto_err xiw_mpa_frame_build(const struct xiw_mpa_frame *f,
				       u8 *out, size_t cap, size_t *out_len)
{
	size_t pd = f->pdata_len;
	u8 *p;

	*out_len = 0;
	if (f->rev != MPA_REV_1 && f->rev != MPA_REV_2)
		return XIW_ERR_INVAL;
	if (f->enhanced && f->rev != MPA_REV_2)
		return XIW_ERR_INVAL;
	if (f->pdata_len && !f->pdata)
		return XIW_ERR_INVAL;
	if (f->enhanced) {
		if (f->ird > MPA_V2_IRD_ORD_MASK || f->ord > MPA_V2_IRD_ORD_MASK)
			return XIW_ERR_MPA_IRD_ORD_RANGE;
		if (f->rtr & ~XIW_MPA_RTR_ALL)
			return XIW_ERR_INVAL;
		pd += MPA_V2_HDR_LEN;
	}
	if (pd > MPA_MAX_PD_LEN)
		return XIW_ERR_MPA_PD_LEN;
	if (cap < MPA_RR_HDR_LEN + pd)
		return XIW_ERR_NOSPACE;

	memcpy(out, f->reply ? MPA_KEY_REP : MPA_KEY_REQ, MPA_KEY_LEN);
	out[MPA_RR_FLAGS_OFF] = (u8)((f->markers ? MPA_RR_FLAG_M : 0) |
				     (f->crc ? MPA_RR_FLAG_C : 0) |
				     (f->reject ? MPA_RR_FLAG_R : 0) |
				     (f->enhanced ? MPA_RR_FLAG_ENHANCED : 0) |
				     (f->rsvd & MPA_RR_FLAG_RSVD));
	out[MPA_RR_REV_OFF] = f->rev;
	xiw_put_be16(out + MPA_RR_PDLEN_OFF, (u16)pd);
	p = out + MPA_RR_HDR_LEN;
	if (f->enhanced) {
		u16 ird = f->ird, ord = f->ord;

		if (f->p2p)
			ird |= MPA_V2_IRD_P2P;
		if (f->rtr & XIW_MPA_RTR_SEND)
			ird |= MPA_V2_IRD_RTR_SEND;
		if (f->rtr & XIW_MPA_RTR_WRITE)
			ord |= MPA_V2_ORD_RTR_WRITE;
		if (f->rtr & XIW_MPA_RTR_READ)
			ord |= MPA_V2_ORD_RTR_READ;
		xiw_put_be16(p, ird);
		xiw_put_be16(p + 2, ord);
		p += MPA_V2_HDR_LEN;
	}
	if (f->pdata_len)
		memcpy(p, f->pdata, f->pdata_len);
	*out_len = MPA_RR_HDR_LEN + pd;
	return XIW_OK;
}

static enum xiw_proto_err xiw_mpa_policy_check(const struct xiw_mpa_policy *pol)
{
	if (pol->rev != MPA_REV_1 && pol->rev != MPA_REV_2)
		return XIW_ERR_INVAL;
	if ((unsigned int)pol->crc > XIW_MPA_CRC_STRICT ||
	    (unsigned int)pol->markers > XIW_MPA_MARKERS_REQUIRE)
		return XIW_ERR_INVAL;
	if (pol->ird > MPA_V2_IRD_ORD_MASK || pol->ord > MPA_V2_IRD_ORD_MASK)
		return XIW_ERR_MPA_IRD_ORD_RANGE;
	if (pol->rtr & ~XIW_MPA_RTR_ALL)
		return XIW_ERR_INVAL;
	if (pol->p2p && (pol->rev != MPA_REV_2 || !pol->rtr))
		return XIW_ERR_INVAL;
	return XIW_OK;
}

static bool xiw_mpa_pol_crc(const struct xiw_mpa_policy *pol)
{
	return pol->crc == XIW_MPA_CRC_PREFER || pol->crc == XIW_MPA_CRC_REQUIRE;
}

/**
 * xiw_mpa_request_init() - the MPA Request a policy sends
 * @pol: local policy
 * @req: frame to fill (no private data; set @req->pdata afterwards)
 *
 * Return: %XIW_OK or %XIW_ERR_INVAL / %XIW_ERR_MPA_IRD_ORD_RANGE for an
 * inconsistent policy.
 */
enum xiw_proto_err xiw_mpa_request_init(const struct xiw_mpa_policy *pol,
					struct xiw_mpa_frame *req)
{
	enum xiw_proto_err err = xiw_mpa_policy_check(pol);

	memset(req, 0, sizeof(*req));
	if (err)
		return err;
	req->reply = false;
	req->markers = pol->markers != XIW_MPA_MARKERS_OFF;
	req->crc = xiw_mpa_pol_crc(pol);
	req->rev = pol->rev;
	if (pol->rev == MPA_REV_2) {
		req->enhanced = true;
		req->p2p = pol->p2p;
		req->rtr = pol->p2p ? pol->rtr : 0;
		req->ird = pol->ird;
		req->ord = pol->ord;
	}
	return XIW_OK;
}

/**
 * xiw_mpa_negotiate() - agree on connection parameters with a peer frame
 * @pol: local policy
 * @peer: the peer's frame: a Request makes us the responder, a Reply the
 *	initiator (whose Request is xiw_mpa_request_init(@pol))
 * @agreed: parameters to run the connection with (valid on %XIW_OK)
 *
 * Rules: the revision is the peer's if not above ours; CRC is on if
 * either side asks (RFC 5044 sec 7.1), unless the policy is STRICT and
 * the peer asks (REQUIRE asks, and that alone turns CRC on for both
 * directions, so a peer with C=0 is no reason to refuse); markers go to
 * each side that asks for
 * them; with the enhanced words our ORD is capped by the peer's IRD, a
 * responder picks the first common RTR type in the order write, read,
 * send, and an initiator that asked for P2P checks the single RTR type
 * the reply chose.
 *
 * Return: %XIW_OK or the reject reason.
 */
enum xiw_proto_err xiw_mpa_negotiate(const struct xiw_mpa_policy *pol,
				     const struct xiw_mpa_frame *peer,
				     struct xiw_mpa_params *agreed)
{
	enum xiw_proto_err err = xiw_mpa_policy_check(pol);
	bool responder = !peer->reply;

	memset(agreed, 0, sizeof(*agreed));
	if (err)
		return err;
	if (peer->rev != MPA_REV_1 && peer->rev != MPA_REV_2)
		return XIW_ERR_MPA_REV;
	if (!responder && peer->reject)
		return XIW_ERR_MPA_REJECTED;

	if (peer->rev > pol->rev || (pol->rev_strict && peer->rev != pol->rev))
		return XIW_ERR_MPA_REV_MISMATCH;
	agreed->rev = peer->rev;

	if (pol->crc == XIW_MPA_CRC_STRICT && peer->crc)
		return XIW_ERR_MPA_CRC_MISMATCH;
	agreed->crc = xiw_mpa_pol_crc(pol) || peer->crc;

	if (pol->markers == XIW_MPA_MARKERS_OFF && peer->markers)
		return XIW_ERR_MPA_MARKERS_MISMATCH;
	if (pol->markers == XIW_MPA_MARKERS_REQUIRE && !peer->markers)
		return XIW_ERR_MPA_MARKERS_MISMATCH;
	agreed->markers_tx = peer->markers;
	agreed->markers_rx = pol->markers != XIW_MPA_MARKERS_OFF;

	agreed->ird = pol->ird;
	agreed->ord = pol->ord;
	if (agreed->rev != MPA_REV_2 || !peer->enhanced) {
		/* no IRD/ORD exchange: P2P cannot have been agreed */
		if (!responder && pol->p2p)
			return XIW_ERR_MPA_P2P_MISMATCH;
		return XIW_OK;
	}

	agreed->enhanced = true;
	agreed->peer_ird = peer->ird;
	agreed->peer_ord = peer->ord;
	if (agreed->ord > peer->ird)
		agreed->ord = peer->ird;
	if (pol->ird_strict && peer->ord > pol->ird)
		return XIW_ERR_MPA_INSUFFICIENT_IRD;

	if (responder) {
		u8 common;

		if (!peer->p2p)
			return XIW_OK;
		if (!pol->p2p)
			return XIW_ERR_MPA_P2P_MISMATCH;
		common = peer->rtr & pol->rtr;
		if (!common)
			return XIW_ERR_MPA_NO_MATCHING_RTR;
		agreed->p2p = true;
		agreed->rtr = xiw_mpa_pick_rtr(common);
		return XIW_OK;
	}

	if (peer->p2p != pol->p2p)
		return XIW_ERR_MPA_P2P_MISMATCH;
	if (!pol->p2p)
		return XIW_OK;
	if (!xiw_mpa_one_bit(peer->rtr) || !(peer->rtr & pol->rtr))
		return XIW_ERR_MPA_NO_MATCHING_RTR;
	agreed->p2p = true;
	agreed->rtr = peer->rtr;
	return XIW_OK;
}

/**
 * xiw_mpa_reply_init() - the MPA Reply a responder sends
 * @pol: local policy
 * @req: the peer's Request
 * @agreed: parameters from xiw_mpa_negotiate() (ignored when rejecting)
 * @verdict: %XIW_OK to accept, else the reject reason (sets the R flag)
 * @rep: frame to fill (no private data; set @rep->pdata afterwards)
 *
 * Return: %XIW_OK or %XIW_ERR_INVAL for an inconsistent policy.
 */
enum xiw_proto_err xiw_mpa_reply_init(const struct xiw_mpa_policy *pol,
				      const struct xiw_mpa_frame *req,
				      const struct xiw_mpa_params *agreed,
				      enum xiw_proto_err verdict,
				      struct xiw_mpa_frame *rep)
{
	enum xiw_proto_err err = xiw_mpa_policy_check(pol);

	memset(rep, 0, sizeof(*rep));
	if (err)
		return err;
	rep->reply = true;
	if (verdict != XIW_OK) {
		rep->reject = true;
		rep->rev = (req->rev == MPA_REV_1 || req->rev == MPA_REV_2) &&
			   req->rev <= pol->rev ? req->rev : pol->rev;
		rep->markers = pol->markers != XIW_MPA_MARKERS_OFF;
		rep->crc = xiw_mpa_pol_crc(pol);
		/* IRD/ORD words only where the Request has them. */
		if (rep->rev == MPA_REV_2 && req->enhanced) {
			rep->enhanced = true;
			rep->ird = pol->ird;
			rep->ord = pol->ord;
		}
		return XIW_OK;
	}
	rep->rev = agreed->rev;
	rep->markers = agreed->markers_rx;
	rep->crc = agreed->crc;
	if (agreed->enhanced) {
		rep->enhanced = true;
		rep->p2p = agreed->p2p;
		rep->rtr = agreed->rtr;
		rep->ird = agreed->ird;
		rep->ord = agreed->ord;
	}
	return XIW_OK;
}
