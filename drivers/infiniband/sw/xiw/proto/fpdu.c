// SPDX-License-Identifier: GPL-2.0
/*
 * MPA FPDU transmit framing and the resumable receive deframer
 * (RFC 5044 sec 4 to 6).
 *
 * The CRC covers every octet of an FPDU from its first octet (which is a
 * marker when the FPDU starts on a 512 boundary) up to the CRC field,
 * markers included; a marker due exactly where the CRC field starts
 * precedes it and is covered too. Only with a misaligned stream start
 * could a marker fall inside the CRC field; it is then not covered.
 */
#include "xiw_proto.h"

/* ---- transmit --------------------------------------------------------- */

/**
 * xiw_tx_init() - set up the transmit framing state
 * @tx: state
 * @crc: generate CRC32c
 * @markers: insert markers (the peer asked for them)
 * @stream_pos: stream position of the next FPDU (0 after the MPA Reply)
 */
void xiw_tx_init(struct xiw_tx *tx, bool crc, bool markers, u32 stream_pos)
{
	tx->crc = crc;
	tx->markers = markers;
	tx->stream_pos = stream_pos;
	tx->crc_fn = NULL;
	tx->crc_ctx = NULL;
}

struct xiw_txw {
	struct xiw_tx *tx;
	u8 *out;
	size_t off;
	u32 crc;
	u32 hdr_pos;
	bool started;
};

static void xiw_txw_marker(struct xiw_txw *w, bool covered)
{
	struct xiw_tx *tx = w->tx;
	u16 ptr = w->started ? (u16)(tx->stream_pos - w->hdr_pos) : 0;

	xiw_mpa_marker_build(w->out + w->off, ptr);
	if (tx->crc && covered)
		w->crc = xiw_crc_run(tx->crc_fn, tx->crc_ctx, w->crc,
				     w->out + w->off, MPA_MARKER_LEN);
	w->off += MPA_MARKER_LEN;
	tx->stream_pos += MPA_MARKER_LEN;
}

static void xiw_txw_put(struct xiw_txw *w, const u8 *p, size_t n, bool covered)
{
	struct xiw_tx *tx = w->tx;

	while (n) {
		size_t take = n;

		if (tx->markers) {
			u32 d = xiw_mpa_marker_distance(tx->stream_pos);

			if (d == 0) {
				xiw_txw_marker(w, covered);
				continue;
			}
			if (take > d)
				take = d;
		}
		if (!w->started) {
			w->started = true;
			w->hdr_pos = tx->stream_pos;
		}
		if (tx->crc && covered && !tx->crc_fn) {
			w->crc = xiw_crc_copy(w->crc, w->out + w->off, p, take);
		} else {
			memcpy(w->out + w->off, p, take);
			if (tx->crc && covered)
				w->crc = tx->crc_fn(tx->crc_ctx, w->crc,
						    w->out + w->off, take);
		}
		w->off += take;
		tx->stream_pos += (u32)take;
		p += take;
		n -= take;
	}
}

/**
 * xiw_fpdu_build() - frame one ULPDU into a complete FPDU
 * @tx: transmit state; its stream position advances
 * @ulpdu: the ULPDU (DDP/RDMAP header and payload) as slices
 * @nslices: number of slices
 * @out: output buffer
 * @cap: size of @out; xiw_mpa_fpdu_len() tells how much is needed
 * @out_len: octets written
 *
 * Writes ULPDU_Length, the ULPDU, zero pad and the CRC field, with
 * markers inserted where the stream position requires them.
 *
 * Return: %XIW_OK, %XIW_ERR_INVAL (ULPDU over 65535 octets, NULL slice)
 * or %XIW_ERR_NOSPACE; on error @tx is unchanged.
 */
enum xiw_proto_err xiw_fpdu_build(struct xiw_tx *tx,
				  const struct xiw_slice *ulpdu,
				  unsigned int nslices, u8 *out, size_t cap,
				  size_t *out_len)
{
	static const u8 zero[MPA_ALIGN];
	struct xiw_txw w = { .tx = tx, .out = out, .crc = XIW_CRC_SEED };
	u8 lenf[MPA_HDR_LEN], crcf[MPA_CRC_LEN] = { 0 };
	size_t total = 0;
	unsigned int i;

	*out_len = 0;
	for (i = 0; i < nslices; i++) {
		if (ulpdu[i].len && !ulpdu[i].p)
			return XIW_ERR_INVAL;
		total += ulpdu[i].len;
		if (total > MPA_MAX_ULPDU)
			return XIW_ERR_INVAL;
	}
	if (cap < xiw_mpa_fpdu_len(tx->stream_pos, tx->markers, (u32)total))
		return XIW_ERR_NOSPACE;
	if (!tx->markers && !tx->crc) {
		/*
		 * Nothing to insert, nothing to sum: the FPDU is the slices
		 * between ULPDU_Length and the zero pad and CRC field.  The
		 * octets are the same as below, in fewer steps; every small
		 * message of a connection without CRC comes this way.
		 */
		u32 tail = xiw_mpa_pad_len((u32)total) + MPA_CRC_LEN;
		u8 *o = out;

		xiw_put_be16(o, (u16)total);
		o += MPA_HDR_LEN;
		for (i = 0; i < nslices; i++) {
			if (ulpdu[i].len)
				memcpy(o, ulpdu[i].p, ulpdu[i].len);
			o += ulpdu[i].len;
		}
		memset(o, 0, tail);
		o += tail;
		*out_len = (size_t)(o - out);
		tx->stream_pos += (u32)*out_len;
		return XIW_OK;
	}

	xiw_put_be16(lenf, (u16)total);
	xiw_txw_put(&w, lenf, MPA_HDR_LEN, true);
	for (i = 0; i < nslices; i++)
		xiw_txw_put(&w, ulpdu[i].p, ulpdu[i].len, true);
	xiw_txw_put(&w, zero, xiw_mpa_pad_len((u32)total), true);
	if (tx->markers && xiw_mpa_marker_distance(tx->stream_pos) == 0)
		xiw_txw_marker(&w, true);
	if (tx->crc)
		xiw_crc_put(w.crc, crcf);
	xiw_txw_put(&w, crcf, MPA_CRC_LEN, false);
	*out_len = w.off;
	return XIW_OK;
}

/* ---- receive ---------------------------------------------------------- */

/**
 * xiw_rx_init() - set up (or reset) the receive deframer
 * @rx: state
 * @crc: verify CRC32c
 * @markers: the peer inserts markers
 * @stream_pos: stream position of the next octet (0 after the MPA Reply)
 * @max_ulpdu: largest ULPDU_Length accepted, 0 for 65535
 */
void xiw_rx_init(struct xiw_rx *rx, bool crc, bool markers, u32 stream_pos,
		 u32 max_ulpdu)
{
	memset(rx, 0, sizeof(*rx));
	rx->crc = crc;
	rx->markers = markers;
	rx->stream_pos = stream_pos;
	rx->max_ulpdu = max_ulpdu ? max_ulpdu : MPA_MAX_ULPDU;
	rx->state = XIW_RX_HDR;
	rx->crc_state = XIW_CRC_SEED;
}

/* Inline: on the way of every header, payload and trailer. */
static __always_inline void xiw_rx_eat(struct xiw_rx *rx, const u8 *p,
				       size_t n, bool covered)
{
	if (rx->crc && covered)
		rx->crc_state = xiw_crc_run(rx->crc_fn, rx->crc_ctx,
					    rx->crc_state, p, n);
	rx->stream_pos += (u32)n;
	rx->octets += n;
}

/* Returns true once the marker is complete; *err tells whether it is valid. */
static bool xiw_rx_marker(struct xiw_rx *rx, const u8 *p, size_t avail,
			  size_t *used, enum xiw_proto_err *err)
{
	size_t take = MPA_MARKER_LEN - rx->mk_got;
	bool covered = !(rx->state == XIW_RX_TRAILER &&
			 rx->trl_got > rx->trl_need - MPA_CRC_LEN);
	u16 expect;

	if (take > avail)
		take = avail;
	memcpy(rx->mk + rx->mk_got, p, take);
	rx->mk_got += (u8)take;
	xiw_rx_eat(rx, p, take, covered);
	*used = take;
	*err = XIW_OK;
	if (rx->mk_got < MPA_MARKER_LEN)
		return false;
	rx->mk_got = 0;
	if (rx->state == XIW_RX_HDR && rx->raw_got == 0)
		expect = 0;
	else
		expect = (u16)(rx->stream_pos - MPA_MARKER_LEN - rx->fpdu_pos);
	*err = xiw_mpa_marker_check(rx->mk, expect);
	return true;
}

/* Header octets: ULPDU_Length, then the DDP/RDMAP header. */
static enum xiw_proto_err xiw_rx_hdr_bytes(struct xiw_rx *rx, const u8 *p,
					   size_t n)
{
	u8 before = rx->raw_got;
	enum xiw_proto_err err;

	if (before == 0) {
		rx->fpdu_pos = rx->stream_pos;
		rx->raw_last = 0;
	}
	memcpy(rx->raw + before, p, n);
	rx->raw_got += (u8)n;
	xiw_rx_eat(rx, p, n, true);

	if (before < MPA_HDR_LEN && rx->raw_got >= MPA_HDR_LEN) {
		rx->ulpdu_len = xiw_get_be16(rx->raw);
		if (rx->ulpdu_len > rx->max_ulpdu)
			return XIW_ERR_MPA_ULPDU_LEN;
		if (rx->ulpdu_len < DDP_TAGGED_HDR_LEN)
			return XIW_ERR_RDMAP_HDR_SHORT;
	}
	if (before < MPA_HDR_LEN + 2 && rx->raw_got >= MPA_HDR_LEN + 2) {
		err = xiw_ddp_ctrl_check(rx->raw[MPA_HDR_LEN],
					 rx->raw[MPA_HDR_LEN + 1], &rx->info);
		if (err)
			return err;
		if (rx->ulpdu_len < rx->info->hdr_len)
			return XIW_ERR_RDMAP_HDR_SHORT;
		rx->raw_need = MPA_HDR_LEN + rx->info->hdr_len;
	}
	return XIW_OK;
}

/*
 * A whole header (ULPDU_Length and the DDP/RDMAP header) at @p, taken in
 * one step if all of it is there and passes the checks xiw_rx_hdr_bytes()
 * makes on the way.  Return: the octets taken, or 0: then the header is
 * taken in the three steps that stop at the first octet in error.
 */
static size_t xiw_rx_hdr_whole(struct xiw_rx *rx, const u8 *p, size_t avail)
{
	const struct xiw_rdmap_opinfo *info;
	u16 ulpdu_len;
	size_t n;

	if (avail < MPA_HDR_LEN + 2)
		return 0;
	ulpdu_len = xiw_get_be16(p);
	if (ulpdu_len > rx->max_ulpdu || ulpdu_len < DDP_TAGGED_HDR_LEN ||
	    xiw_ddp_ctrl_check(p[MPA_HDR_LEN], p[MPA_HDR_LEN + 1], &info) ||
	    ulpdu_len < info->hdr_len ||
	    avail < (size_t)MPA_HDR_LEN + info->hdr_len)
		return 0;
	n = MPA_HDR_LEN + info->hdr_len;
	rx->fpdu_pos = rx->stream_pos;
	rx->raw_last = 0;
	memcpy(rx->raw, p, n);
	rx->raw_got = (u8)n;
	rx->raw_need = (u8)n;
	rx->ulpdu_len = ulpdu_len;
	rx->info = info;
	xiw_rx_eat(rx, p, n, true);
	return n;
}

/* The header is all in rx->raw, its control octets checked (rx->info). */
static enum xiw_proto_err xiw_rx_hdr_done(struct xiw_rx *rx)
{
	enum xiw_proto_err err;
	u32 hl = rx->info->hdr_len;

	err = xiw_rdmap_hdr_decode(rx->raw + MPA_HDR_LEN, rx->info, &rx->hdr);
	if (err)
		return err;
	err = xiw_rdmap_seg_fits(rx->info, rx->ulpdu_len);
	if (err)
		return err;
	rx->data_len = rx->ulpdu_len - hl;
	rx->data_off = 0;
	rx->trl_got = 0;
	rx->trl_need = (u8)(xiw_mpa_pad_len(rx->ulpdu_len) + MPA_CRC_LEN);
	rx->state = rx->data_len ? XIW_RX_DATA : XIW_RX_TRAILER;
	return XIW_OK;
}

/* @n octets of the trailer at @p: pad (covered by the CRC), then the CRC. */
static void xiw_rx_trailer_bytes(struct xiw_rx *rx, const u8 *p, size_t n)
{
	u8 pad = rx->trl_need - MPA_CRC_LEN;
	size_t covered = rx->trl_got < pad ? pad - rx->trl_got : 0;

	if (covered > n)
		covered = n;
	memcpy(rx->trl + rx->trl_got, p, n);
	xiw_rx_eat(rx, p, covered, true);
	xiw_rx_eat(rx, p + covered, n - covered, false);
	rx->trl_got += (u8)n;
}

/* The segment has ended, its CRC checked: on to the next header. */
static void xiw_rx_seg_next(struct xiw_rx *rx)
{
	rx->segments++;
	rx->state = XIW_RX_HDR;
	rx->raw_last = rx->raw_got;
	rx->raw_got = 0;
	rx->raw_need = 0;
	rx->info = NULL;
	rx->crc_state = XIW_CRC_SEED;
}

static enum xiw_proto_err xiw_rx_trailer_done(struct xiw_rx *rx)
{
	u8 pad = rx->trl_need - MPA_CRC_LEN;

	if (rx->crc && xiw_crc_get(rx->trl + pad) != rx->crc_state)
		return XIW_ERR_MPA_CRC;
	xiw_rx_seg_next(rx);
	return XIW_OK;
}

/**
 * xiw_rx_take_whole() - take the rest of a segment offered whole
 * @rx: deframer state
 * @p: the input right behind the octets of the %XIW_RX_EV_HDR event that
 *	offered it (&xiw_rx_event.whole), the offer not taken back by
 *	another call since
 * @consumed: octets of @p used (always set): the payload and the trailer
 *
 * What the %XIW_RX_EV_DATA event with &xiw_rx_event.end would do, in one
 * call: the payload (the event's @data and @len) is the segment's once
 * this returns %XIW_OK, the trailer is taken, the CRC verified and the
 * segment has ended.  A consumer that wants the payload in chunks (or
 * not yet) calls xiw_rx_step() instead.
 *
 * Return: %XIW_OK; %XIW_ERR_INVAL without an offer (nothing is used);
 * else the error, sticky as xiw_rx_step()'s, with @consumed including the
 * offending octets.
 */
enum xiw_proto_err xiw_rx_take_whole(struct xiw_rx *rx, const u8 *p,
				     size_t *consumed)
{
	/* Payload and pad are covered by the CRC; the CRC field is not. */
	u32 covered = rx->data_len + rx->trl_need - MPA_CRC_LEN;
	u32 all = rx->data_len + rx->trl_need;

	*consumed = 0;
	if (!rx->whole || !p)
		return XIW_ERR_INVAL;
	rx->whole = false;
	*consumed = all;
	rx->stream_pos += all;
	rx->octets += all;
	rx->data_off = rx->data_len;
	rx->trl_got = rx->trl_need;
	if (rx->crc) {
		/* Only a CRC error's report reads the trailer back. */
		memcpy(rx->trl, p + rx->data_len, rx->trl_need);
		rx->crc_state = xiw_crc_run(rx->crc_fn, rx->crc_ctx,
					    rx->crc_state, p, covered);
		if (xiw_crc_get(p + covered) != rx->crc_state) {
			/* As xiw_rx_step(): the error is the current segment's. */
			rx->raw_last = 0;
			rx->state = XIW_RX_ERROR;
			rx->err = XIW_ERR_MPA_CRC;
			return XIW_ERR_MPA_CRC;
		}
	}
	xiw_rx_seg_next(rx);
	return XIW_OK;
}

/**
 * xiw_rx_step() - feed stream octets, get at most one event back
 * @rx: deframer state
 * @p: next octets of the TCP stream (any split is fine)
 * @len: number of octets at @p
 * @consumed: octets of @p used by this call (always set)
 * @ev: the event produced, %XIW_RX_EV_NONE if @p was used up first
 *
 * Usage: call in a loop, advancing @p by @consumed, until @len octets are
 * used; handle each event as it comes. %XIW_RX_EV_HDR makes @rx->hdr valid
 * (raw header octets in @rx->raw); %XIW_RX_EV_DATA points into @p, never
 * spans a marker and carries the payload offset; %XIW_RX_EV_END follows
 * the CRC check. Payload is handed out before the CRC is known: do not
 * complete anything before END (or a DATA event with @ev->end, where
 * @rx->join_end is set). Every event except NONE consumes at least one
 * octet, so the loop always makes progress.  With @rx->join_end an HDR
 * event may offer the rest of the segment whole (@ev->whole): take it with
 * xiw_rx_take_whole(), or go on calling this.
 *
 * Return: %XIW_OK, or the first protocol error; the error is sticky until
 * xiw_rx_init() and @consumed then includes the offending octets.
 */
enum xiw_proto_err xiw_rx_step(struct xiw_rx *rx, const u8 *p, size_t len,
			       size_t *consumed, struct xiw_rx_event *ev)
{
	enum xiw_proto_err err = XIW_OK;
	size_t used = 0;

	memset(ev, 0, sizeof(*ev));
	*consumed = 0;
	rx->whole = false;
	if (rx->state == XIW_RX_ERROR)
		return rx->err;
	if (len && !p)
		return XIW_ERR_INVAL;

	while (used < len) {
		const u8 *c = p + used;
		size_t avail = len - used, take, n;
		u32 lim = 0xffffffffU;

		if (rx->markers) {
			lim = xiw_mpa_marker_distance(rx->stream_pos);
			if (rx->mk_got || lim == 0) {
				bool done = xiw_rx_marker(rx, c, avail, &n, &err);

				used += n;
				if (done && err)
					goto fail;
				continue;
			}
		}
		if (avail > lim)
			avail = lim;

		switch (rx->state) {
		case XIW_RX_HDR:
			/*
			 * The whole header in one step where it is all there
			 * and sound, else stop after ULPDU_Length and after
			 * the control octets.
			 */
			take = 0;
			if (rx->raw_got == 0 && !rx->markers)
				take = xiw_rx_hdr_whole(rx, c, avail);
			if (take) {
				used += take;
			} else {
				if (rx->raw_got < MPA_HDR_LEN)
					take = MPA_HDR_LEN - rx->raw_got;
				else if (rx->raw_got < MPA_HDR_LEN + 2)
					take = MPA_HDR_LEN + 2 - rx->raw_got;
				else
					take = rx->raw_need - rx->raw_got;
				if (take > avail)
					take = avail;
				err = xiw_rx_hdr_bytes(rx, c, take);
				used += take;
				if (err)
					goto fail;
			}
			if (rx->raw_got >= MPA_HDR_LEN + 2 &&
			    rx->raw_got == rx->raw_need) {
				err = xiw_rx_hdr_done(rx);
				if (err)
					goto fail;
				ev->type = XIW_RX_EV_HDR;
				/* The rest at hand: offer it whole. */
				if (rx->join_end && !rx->markers &&
				    len - used >= (size_t)rx->data_len +
						  rx->trl_need) {
					rx->whole = true;
					ev->whole = true;
					ev->data = p + used;
					ev->len = rx->data_len;
				}
				*consumed = used;
				return XIW_OK;
			}
			break;
		case XIW_RX_DATA:
			take = rx->data_len - rx->data_off;
			if (take > avail)
				take = avail;
			xiw_rx_eat(rx, c, take, true);
			used += take;
			ev->type = XIW_RX_EV_DATA;
			ev->data = c;
			ev->len = (u32)take;
			ev->offset = rx->data_off;
			rx->data_off += (u32)take;
			if (rx->data_off < rx->data_len) {
				*consumed = used;
				return XIW_OK;
			}
			rx->state = XIW_RX_TRAILER;
			/* The whole trailer at hand (no markers): the end too. */
			if (rx->join_end && !rx->markers &&
			    avail - take >= rx->trl_need) {
				xiw_rx_trailer_bytes(rx, c + take, rx->trl_need);
				used += rx->trl_need;
				err = xiw_rx_trailer_done(rx);
				if (err)
					goto fail;
				ev->end = true;
			}
			*consumed = used;
			return XIW_OK;
		case XIW_RX_TRAILER:
			take = rx->trl_need - rx->trl_got;
			if (take > avail)
				take = avail;
			xiw_rx_trailer_bytes(rx, c, take);
			used += take;
			if (rx->trl_got == rx->trl_need) {
				err = xiw_rx_trailer_done(rx);
				if (err)
					goto fail;
				ev->type = XIW_RX_EV_END;
				*consumed = used;
				return XIW_OK;
			}
			break;
		default:
			err = XIW_ERR_INVAL;
			goto fail;
		}
	}
	*consumed = used;
	return XIW_OK;

fail:
	/* No event comes with an error, not even the DATA of a joined end. */
	memset(ev, 0, sizeof(*ev));
	/* The deframer's own errors are the current segment's, if any. */
	rx->raw_last = 0;
	rx->state = XIW_RX_ERROR;
	rx->err = err;
	*consumed = used;
	return err;
}
