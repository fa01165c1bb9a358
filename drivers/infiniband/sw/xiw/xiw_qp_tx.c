// SPDX-License-Identifier: GPL-2.0
/*
 * xiw: the transmit engine.  One work item per connected QP turns send
 * work requests, RDMA Read Responses, RTR and TERMINATE messages into
 * FPDUs of at most one MSS and hands them to TCP.
 *
 * Order of service: a partly sent FPDU first (an FPDU is never cut), then a
 * pending TERMINATE, the P2P RTR, the rest of the current send work
 * request, inbound Read Responses, and finally the next send work request.
 *
 * Payload of Sends and Writes of at least XIW_TX_ZC_MIN octets per FPDU in
 * pages TCP may hold goes out zero-copy (MSG_ZEROCOPY with a kernel
 * struct ubuf_info), unless the device's tx_zcopy setting says otherwise
 * or, under "auto", the stack has copied such an FPDU's pages: it copies
 * every one it delivers to a local socket (loopback, veth), so there the
 * copy zero-copy meant to save happens anyway, after the page references
 * and the wait for the notification.  Such a work request completes only
 * once the stack has let go of its pages, and the completions of later
 * requests wait behind it in the xiw_tx_pq, so the send queue still
 * completes in order.  The engine holds a reference on each page from the
 * moment it collects it until TCP holds its own: a flush completes the
 * request at once, and its consumer may free the pages while a full socket
 * still holds the FPDU back.  Read Responses are always copied: nothing
 * tells the responder when the consumer may change the source again.
 * Where zero-copy is off, such FPDUs still leave the consumer's pages as
 * they are: a batch of them goes to one sendmsg() as pieces of tx_buf
 * (headers, trailers, copied FPDUs) and of those pages, and TCP copies
 * them within the call, instead of the engine copying them into tx_buf
 * first.  A user QP's batch is the rest of one message.  A kernel QP's
 * starts at XIW_TX_PC_MIN octets of payload and goes on with the copied
 * FPDUs behind it (the next requests, Read Responses): the NVMe target's
 * 4 KiB Write and the Send of its response then reach TCP in one call.
 * Every request done while a batch is open completes once the batch is
 * in the socket, in order.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/net.h>
#include <linux/tcp.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>
#include <net/tcp.h>
#include <kunit/visibility.h>

#include "xiw.h"
#include "xiw_dp.h"
#include "xiw_trace.h"

/* FPDUs built per run before the work item yields the CPU. */
#define XIW_TX_BUDGET		64

/* Drop the engine's references on the first @n pages of @bv. */
static void xiw_tx_zc_put_pages(struct bio_vec *bv, unsigned int n)
{
	while (n)
		put_page(bv[--n].bv_page);
}

/* Hand @buf[*off..len) to TCP; -EAGAIN when the socket is full. */
static __always_inline int xiw_tx_push_kvec(struct xiw_conn *conn, u8 *buf,
					    size_t *off, size_t len, bool more)
{
	while (*off < len) {
		struct msghdr msg = {
			.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL |
				     (more ? MSG_MORE : 0),
		};
		struct kvec kv = {
			.iov_base = buf + *off,
			.iov_len = len - *off,
		};
		int rv;

		iov_iter_kvec(&msg.msg_iter, ITER_SOURCE, &kv, 1, kv.iov_len);
		rv = sock_sendmsg(conn->sock, &msg);
		if (rv < 0)
			return rv;
		*off += rv;
	}
	return 0;
}

/*
 * Hand the first @n pieces of tx_vec (@len octets) to TCP from octet *@off
 * on, with @msg's flags; *@off follows what TCP took.  -EAGAIN when the
 * socket is full.
 */
static int xiw_tx_push_vec(struct xiw_conn *conn, struct msghdr *msg,
			   unsigned int n, size_t len, size_t *off)
{
	int rv;

	iov_iter_bvec(&msg->msg_iter, ITER_SOURCE, conn->tx_vec, n, len);
	iov_iter_advance(&msg->msg_iter, *off);
	while (*off < len) {
		rv = sock_sendmsg(conn->sock, msg);
		if (rv < 0)
			return rv;
		*off += rv;
	}
	return 0;
}

/* Hand the rest of the zero-copy payload to TCP, which pins its pages. */
static int xiw_tx_push_zc(struct xiw_conn *conn)
{
	struct msghdr msg = {
		.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL | MSG_MORE |
			     MSG_ZEROCOPY,
		.msg_ubuf = &conn->tx_pend->ubuf,
	};

	return xiw_tx_push_vec(conn, &msg, conn->tx_zc_n, conn->tx_zc_len,
			       &conn->tx_zc_off);
}

/*
 * Describe @len octets of kernel memory at @p (tx_buf: slab, or vmalloc
 * past a page) as page pieces into @bv; return how many.  Only for TCP to
 * copy from: no page reference is taken.
 */
VISIBLE_IF_KUNIT unsigned int xiw_tx_kmem_vec(struct bio_vec *bv,
					      const u8 *p, size_t len)
{
	unsigned int n = 0;

	while (len) {
		unsigned int in_page = offset_in_page(p);
		unsigned int piece = min_t(size_t, len, PAGE_SIZE - in_page);
		struct page *page = is_vmalloc_addr(p) ? vmalloc_to_page(p) :
							 virt_to_page(p);

		bvec_set_page(&bv[n++], page, piece, in_page);
		p += piece;
		len -= piece;
	}
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(xiw_tx_kmem_vec);

/* How many pieces xiw_tx_kmem_vec() makes of @len octets at @p. */
VISIBLE_IF_KUNIT unsigned int xiw_tx_kmem_pieces(const u8 *p, size_t len)
{
	return len ? DIV_ROUND_UP(offset_in_page(p) + len, PAGE_SIZE) : 0;
}
EXPORT_SYMBOL_IF_KUNIT(xiw_tx_kmem_pieces);

/*
 * The pages batch takes tx_buf's octets from tx_pc_kstart up to @end as
 * its next pieces.  Room in tx_vec was checked (xiw_tx_pc_room()).
 */
static void xiw_tx_pc_kmem(struct xiw_conn *conn, size_t end)
{
	size_t len = end - conn->tx_pc_kstart;
	unsigned int i, n;

	n = xiw_tx_kmem_vec(conn->tx_vec + conn->tx_pc_n,
			    conn->tx_buf + conn->tx_pc_kstart, len);
	for (i = 0; i < n; i++)
		__set_bit(conn->tx_pc_n + i, conn->tx_pc_kmem);
	conn->tx_pc_n += n;
	conn->tx_pc_len += len;
	conn->tx_pc_kstart = end;
}

/*
 * The pages batch is done with: drop the engine's page references (TCP
 * copied them, or the connection is going) and start afresh.
 */
static void xiw_tx_pc_reset(struct xiw_conn *conn)
{
	unsigned int i;

	for (i = 0; i < conn->tx_pc_n; i++)
		if (!test_bit(i, conn->tx_pc_kmem))
			put_page(conn->tx_vec[i].bv_page);
	bitmap_zero(conn->tx_pc_kmem, XIW_TX_VECS);
	conn->tx_pc_n = 0;
	conn->tx_pc_kstart = 0;
	conn->tx_pc_len = 0;
	conn->tx_pc_off = 0;
	conn->tx_pc_fpdus = 0;
	conn->tx_pc_closed = false;
}

/*
 * Hand the rest of a batch with FPDUs framed around the consumer's pages
 * to TCP, which copies all its pieces within the call.  The first call
 * closes the batch: what tx_buf holds past the last page piece (the last
 * trailer, copied FPDUs behind it) becomes its last pieces.
 */
static int xiw_tx_push_pages(struct xiw_conn *conn, bool more)
{
	struct msghdr msg = {
		.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL |
			     (more ? MSG_MORE : 0),
	};

	if (!conn->tx_pc_closed) {
		xiw_tx_pc_kmem(conn, conn->tx_len);
		conn->tx_pc_closed = true;
	}
	return xiw_tx_push_vec(conn, &msg, conn->tx_pc_n, conn->tx_pc_len,
			       &conn->tx_pc_off);
}

static void xiw_tx_pc_release(struct xiw_conn *conn);

/* Hand the rest of the current FPDU to TCP; -EAGAIN when it is full. */
static int xiw_tx_push(struct xiw_conn *conn, bool more)
{
	size_t trl_off = conn->tx_trl_off;
	struct xiw_device *xdev;
	int rv;

	xdev = conn->qp->xdev;
	if (conn->tx_pc_n) {
		rv = xiw_tx_push_pages(conn, more);
		if (rv)
			return rv;
		atomic64_add(conn->tx_pc_len, &xdev->stats.tx_bytes);
		atomic64_add(conn->tx_pc_fpdus, &xdev->stats.tx_pc_fpdus);
		xiw_tx_pc_reset(conn);
		conn->tx_len = 0;
		conn->tx_off = 0;
		xiw_tx_pc_release(conn);
		return 0;
	}
	rv = xiw_tx_push_kvec(conn, conn->tx_buf, &conn->tx_off, conn->tx_len,
			      more || conn->tx_zc_n);
	if (!rv && conn->tx_zc_n)
		rv = xiw_tx_push_zc(conn);
	if (!rv && conn->tx_zc_n) {
		rv = xiw_tx_push_kvec(conn, conn->tx_trl, &trl_off,
				      conn->tx_trl_len, more);
		conn->tx_trl_off = trl_off;
	}
	if (rv)
		return rv;
	atomic64_add(conn->tx_len, &xdev->stats.tx_bytes);
	if (conn->tx_zc_n) {
		atomic64_inc(&xdev->stats.tx_zc_fpdus);
		atomic64_add(conn->tx_zc_len, &xdev->stats.tx_zc_bytes);
		atomic64_add(conn->tx_zc_len + conn->tx_trl_len,
			     &xdev->stats.tx_bytes);
		/* TCP holds its own references on the pages it took. */
		xiw_tx_zc_put_pages(conn->tx_vec, conn->tx_zc_n);
	}
	conn->tx_len = 0;
	conn->tx_off = 0;
	conn->tx_zc_n = 0;
	return 0;
}

/*
 * Hand tx_buf to TCP.  0, -EAGAIN (write_space kicks us again), or the
 * error that has just taken the connection down.
 */
static int xiw_tx_send(struct xiw_conn *conn, bool more)
{
	int rv = xiw_tx_push(conn, more);

	if (rv && rv != -EAGAIN)
		xiw_conn_event(conn, XIW_CEV_LLP_ERR, NULL);
	return rv;
}

/* tx_buf at @cap octets, what it holds copied over.  Under tx_mutex. */
static int xiw_tx_buf_grow(struct xiw_conn *conn, u32 cap)
{
	u8 *p = kvmalloc(cap, GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	memcpy(p, conn->tx_buf, conn->tx_len);
	kvfree(conn->tx_buf);
	conn->tx_buf = p;
	conn->tx_buf_cap = cap;
	return 0;
}

/*
 * Make room in tx_buf for one more FPDU of @ulpdu octets behind what it
 * holds (ULPDU_Length, pad, CRC and markers too).  The buffer starts
 * small (a connection of small messages never needs 64 KiB) and grows by
 * powers of two; what it holds is copied over.  Nothing else
 * points into it while it can still grow: TCP copies from it within
 * sendmsg(), a zero-copy FPDU, whose headers sit at its start, is never
 * batched behind, and a pages batch, whose pieces in tx_vec do point
 * into it, starts only once it is full grown (xiw_tx_pages_ok()).
 */
static __always_inline int xiw_tx_buf_room(struct xiw_conn *conn, size_t ulpdu)
{
	size_t need;

	lockdep_assert_held(&conn->tx_mutex);
	/* Full grown: xiw_fpdu_build() checks the room itself. */
	if (likely(conn->tx_buf_cap >= XIW_TX_BUF_LEN))
		return 0;
	need = conn->tx_len + xiw_mpa_fpdu_len(conn->tx.stream_pos,
					       conn->tx.markers, (u32)ulpdu);
	if (need <= conn->tx_buf_cap)
		return 0;
	return xiw_tx_buf_grow(conn, min_t(size_t, roundup_pow_of_two(need),
					   XIW_TX_BUF_LEN));
}

/* Frame one DDP segment (header @h, @plen octets at @payload) into tx_buf. */
static int xiw_tx_frame(struct xiw_conn *conn, const struct xiw_rdmap_hdr *h,
			const u8 *payload, u32 plen)
{
	u8 hdr[XIW_RDMAP_HDR_MAX];
	struct xiw_slice sl[2];
	size_t hl, len;

	if (xiw_rdmap_hdr_build(h, hdr, sizeof(hdr), &hl))
		return -EINVAL;
	sl[0].p = hdr;
	sl[0].len = hl;
	sl[1].p = payload;
	sl[1].len = plen;
	if (xiw_tx_buf_room(conn, hl + plen))
		return -ENOMEM;
	/* Appended: a batch of FPDUs goes to TCP in one call. */
	if (xiw_fpdu_build(&conn->tx, sl, plen ? 2 : 1,
			   conn->tx_buf + conn->tx_len,
			   conn->tx_buf_cap - conn->tx_len, &len))
		return -EINVAL;
	conn->tx_len += len;
	conn->tx_last_len = len;
	atomic64_inc(&conn->qp->xdev->stats.tx_fpdus);
	trace_xiw_fpdu_tx(xiw_qp_id(conn->qp), h, plen);
	return 0;
}

/*
 * Framing in place, for a connection without markers: ULPDU_Length and
 * the header go to the end of tx_buf, the payload is copied straight
 * behind them, and xiw_tx_place_end() adds pad and CRC.  The payload is
 * copied once, not into tx_payload first and then into the FPDU.
 */

/*
 * Room for an FPDU of @h and @plen octets of payload behind what tx_buf
 * holds.  Under tx_mutex, before copy_lock: tx_buf may be reallocated.
 */
static __always_inline int xiw_tx_place_room(struct xiw_conn *conn, u32 plen)
{
	return xiw_tx_buf_room(conn, XIW_RDMAP_HDR_MAX + plen);
}

/*
 * Write ULPDU_Length and @h at the end of tx_buf; *@hl gets the header's
 * length.  Nothing is committed: an FPDU given up leaves tx_len as it was.
 *
 * Return: where the payload goes, NULL if @h cannot be built or the FPDU
 * would not fit.
 */
static __always_inline u8 *xiw_tx_place_hdr(struct xiw_conn *conn,
					    const struct xiw_rdmap_hdr *h,
					    u32 plen, size_t *hl)
{
	u8 *f = conn->tx_buf + conn->tx_len;
	size_t room = conn->tx_buf_cap - conn->tx_len;

	if (room < MPA_HDR_LEN ||
	    xiw_rdmap_hdr_build(h, f + MPA_HDR_LEN, room - MPA_HDR_LEN, hl))
		return NULL;
	if (xiw_mpa_fpdu_len(conn->tx.stream_pos, false, *hl + plen) > room)
		return NULL;
	xiw_put_be16(f, (u16)(*hl + plen));
	return f + MPA_HDR_LEN + *hl;
}

/* The payload is in place: pad and CRC, and the FPDU joins the batch. */
static __always_inline void xiw_tx_place_end(struct xiw_conn *conn,
					     const struct xiw_rdmap_hdr *h,
					     size_t hl, u32 plen)
{
	u8 *f = conn->tx_buf + conn->tx_len;
	u8 trl[MPA_ALIGN + MPA_CRC_LEN];
	size_t len = MPA_HDR_LEN + hl + plen, tl;
	u32 crc = 0;

	if (conn->tx.crc)
		crc = xiw_crc_run(conn->tx.crc_fn, conn->tx.crc_ctx,
				  XIW_CRC_SEED, f, len);
	tl = xiw_fpdu_trailer(crc, conn->tx.crc, hl + plen, trl);
	memcpy(f + len, trl, tl);
	len += tl;
	conn->tx_len += len;
	conn->tx_last_len = len;
	conn->tx.stream_pos += len;
	atomic64_inc(&conn->qp->xdev->stats.tx_fpdus);
	trace_xiw_fpdu_tx(xiw_qp_id(conn->qp), h, plen);
}

/* Largest payload of one segment with a header of @op. */
static __always_inline u32 xiw_tx_max_payload(struct xiw_conn *conn, u8 op)
{
	const struct xiw_rdmap_opinfo *info = xiw_rdmap_op_lookup(op);
	u32 mss = READ_ONCE(tcp_sk(conn->sock->sk)->mss_cache);
	u32 mul, room;

	/* The backend's limit may change at any time: it is asked each time. */
	if (conn->offload->tx_mulpdu) {
		mul = xiw_mpa_mulpdu(mss, conn->mpa.markers_tx, conn->mpa.crc);
		mul = conn->offload->tx_mulpdu(&conn->oc, mul);
	} else {
		if (unlikely(mss != conn->tx_mss)) {
			conn->tx_mss = mss;
			conn->tx_mulpdu = xiw_mpa_mulpdu(mss,
							 conn->mpa.markers_tx,
							 conn->mpa.crc);
		}
		mul = conn->tx_mulpdu;
	}
	/* A tiny MSS still makes progress: TCP splits, the peer copes. */
	mul = max_t(u32, mul, info->hdr_len + 256);
	mul = min_t(u32, mul, MPA_MAX_ULPDU);
	/* What is left of tx_buf (all of it, or behind a batch), markers and all. */
	room = XIW_TX_BUF_LEN - conn->tx_len;
	room -= room / (MPA_MARKER_SPACING / MPA_MARKER_LEN) +
		MPA_HDR_LEN + MPA_ALIGN + MPA_CRC_LEN + MPA_MARKER_LEN;
	return min(mul, room) - info->hdr_len;
}

/*
 * The header of an untagged segment; its opcode's fields in @h->u, if any,
 * are the caller's to fill (xiw_rdmap_hdr_build() reads no other).
 */
static void xiw_tx_untagged(struct xiw_rdmap_hdr *h, u8 op, u32 qn, u32 msn,
			    u32 mo, bool last)
{
	h->tagged = false;
	h->last = last;
	h->ddp_version = DDP_VERSION;
	h->rdmap_version = RDMAP_VERSION;
	h->opcode = op;
	h->stag = 0;
	h->to = 0;
	h->rsvdulp = 0;
	h->qn = qn;
	h->msn = msn;
	h->mo = mo;
}

/* The header of a tagged segment (no opcode of it has fields in @h->u). */
static void xiw_tx_tagged(struct xiw_rdmap_hdr *h, u8 op, u32 stag, u64 to,
			  bool last)
{
	h->tagged = true;
	h->last = last;
	h->ddp_version = DDP_VERSION;
	h->rdmap_version = RDMAP_VERSION;
	h->opcode = op;
	h->stag = stag;
	h->to = to;
	h->rsvdulp = 0;
	h->qn = 0;
	h->msn = 0;
	h->mo = 0;
}

struct xiw_tx_copy {
	u8 *dst;
};

static int xiw_tx_copy_piece(void *priv, void *kaddr, unsigned int len)
{
	struct xiw_tx_copy *cp = priv;

	/* No payload is copied with interrupts off (see conn->copy_lock). */
	lockdep_assert_irqs_enabled();
	memcpy(cp->dst, kaddr, len);
	cp->dst += len;
	return 0;
}

/* Copy @len octets at @addr of @mr into @buf. */
static int xiw_tx_copy_mr(struct xiw_mr *mr, u64 addr, u8 *buf, u32 len)
{
	struct xiw_tx_copy cp = { .dst = buf };

	return xiw_mr_walk(mr, addr, len, xiw_tx_copy_piece, &cp);
}

/*
 * Gather @len octets from payload offset @off of the send work request
 * into @buf, checking every local STag.  Caller holds conn->copy_lock and
 * owns the request (tx_sqe_active).
 */
static __always_inline int xiw_tx_gather(struct xiw_conn *conn,
					 const struct xiw_ksqe *sqe, u32 off,
					 u8 *buf, u32 len)
{
	struct xiw_qp *qp = conn->qp;
	struct xiw_tx_copy cp = { .dst = buf };

	lockdep_assert_held(&conn->copy_lock);
	if (sqe->flags & XIW_WQE_INLINE) {
		const u8 *inl = (const u8 *)&sqe->sge[1];

		memcpy(buf, inl + off, len);
		return 0;
	}
	return xiw_sgl_walk(qp->xdev, qp->base_qp.pd, sqe->sge, sqe->num_sge,
			    off, len, 0, xiw_tx_copy_piece, &cp);
}

static u32 xiw_sqe_length(const struct xiw_ksqe *sqe)
{
	u32 len = 0;
	unsigned int i;

	if (sqe->flags & XIW_WQE_INLINE)
		return sqe->sge[0].length;
	for (i = 0; i < sqe->num_sge; i++)
		len += sqe->sge[i].length;
	return len;
}

/*
 * Ordered queues not freed yet.  A zero-copy skb can outlive its
 * connection, device and socket owner (in a qdisc, or in the queue of a
 * socket TCP keeps after close), and its notifier, xiw_tx_zc_put(), is
 * this module's code: module exit waits for the count to reach zero
 * (xiw_tx_pq_wait_all()).
 */
static atomic_t xiw_tx_pq_live = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(xiw_tx_pq_gone);

static void xiw_tx_pq_free(struct kref *ref)
{
	kfree(container_of(ref, struct xiw_tx_pq, ref));
	if (atomic_dec_and_test(&xiw_tx_pq_live))
		wake_up(&xiw_tx_pq_gone);
}

/**
 * xiw_tx_pq_wait_all - wait until no ordered queue is left
 *
 * Module exit, after every connection is gone: the stack may still hold
 * zero-copy skbs whose last put calls into this module.  The wait has no
 * bound of ours; TCP's own (retransmission, orphan) and the qdiscs' bound
 * it.  Process context.
 */
void xiw_tx_pq_wait_all(void)
{
	int n = atomic_read(&xiw_tx_pq_live);

	if (n)
		pr_info("waiting for the network stack to release zero-copy sends of %d closed connections\n",
			n);
	wait_event(xiw_tx_pq_gone, !atomic_read(&xiw_tx_pq_live));
	/*
	 * The notifier's last put happens inside an RCU read section: past
	 * this, no CPU is still running its code.
	 */
	synchronize_rcu();
}

/**
 * xiw_tx_pq_create - the ordered completion queue of a connection
 * @conn: the connection
 *
 * Return: the queue with the connection's reference, or NULL.
 */
struct xiw_tx_pq *xiw_tx_pq_create(struct xiw_conn *conn)
{
	struct xiw_tx_pq *pq;
	u32 n;

	/* In steps: nested, these macros expand past what sparse takes. */
	n = roundup_pow_of_two(max(conn->qp->num_sqe, 1U));
	n = clamp_t(u32, n, XIW_TX_PEND_MIN, XIW_TX_PEND);
	pq = kzalloc(struct_size(pq, slot, n), GFP_KERNEL);
	if (!pq)
		return NULL;
	pq->nslots = n;
	atomic_inc(&xiw_tx_pq_live);
	kref_init(&pq->ref);
	spin_lock_init(&pq->lock);
	pq->qp = conn->qp;
	pq->conn = conn;
	return pq;
}

/*
 * Pop the entries at the head that are done: framed by the engine (or
 * flushed) and no longer referenced by the stack.  Their completions are
 * written in order, here.
 */
static void xiw_tx_pq_reap(struct xiw_tx_pq *pq)
{
	lockdep_assert_held(&pq->lock);

	while (pq->count) {
		struct xiw_tx_pend *p = &pq->slot[pq->head];

		if (p->zc || (p->held && !p->flushed) ||
		    !(p->framed || p->flushed))
			break;
		if (!p->flushed && pq->qp)
			xiw_sqe_complete_id(pq->qp, p->id, p->opcode, p->flags,
					    p->bytes, p->status);
		pq->head = (pq->head + 1) % pq->nslots;
		/* Its completion first: see xiw_tx_sqe_done(). */
		smp_store_release(&pq->count, pq->count - 1);
	}
	if (pq->stalled && pq->count < pq->nslots && pq->conn) {
		pq->stalled = false;
		xiw_conn_kick_tx(pq->conn);
	}
}

/*
 * Complete everything in the queue with WR_FLUSH_ERR, in order.  Entries
 * the stack still references stay until their last reference is put.
 */
static void xiw_tx_pq_flush(struct xiw_tx_pq *pq)
{
	u32 n;

	lockdep_assert_held(&pq->lock);

	for (n = 0; n < pq->count; n++) {
		struct xiw_tx_pend *p = &pq->slot[(pq->head + n) % pq->nslots];

		if (p->flushed)
			continue;
		p->flushed = true;
		if (pq->qp)
			xiw_sqe_complete_id(pq->qp, p->id, p->opcode, p->flags,
					    0, XIW_WC_WR_FLUSH_ERR);
	}
	xiw_tx_pq_reap(pq);
}

/**
 * xiw_tx_pq_detach - the connection lets go of its ordered queue
 * @conn: the connection, both engines stopped and the QP flushed
 *
 * Late zero-copy notifications find the queue detached and only free it.
 */
void xiw_tx_pq_detach(struct xiw_conn *conn)
{
	struct xiw_tx_pq *pq = conn->tx_pq;
	struct xiw_tx_pend *p = conn->tx_pend;
	unsigned long flags;

	if (!pq)
		return;
	conn->tx_pend = NULL;
	spin_lock_irqsave(&pq->lock, flags);
	xiw_tx_pq_flush(pq);
	pq->qp = NULL;
	pq->conn = NULL;
	spin_unlock_irqrestore(&pq->lock, flags);
	/* A request cut off mid-framing: the engine's reference. */
	if (p && p->zc)
		xiw_ubuf_put(&p->ubuf);
	conn->tx_pq = NULL;
	kref_put(&pq->ref, xiw_tx_pq_free);
}

/*
 * The zero-copy notifier: called for every reference put on an entry's
 * ubuf, from skb release (any context but hard irq) or by the engine.
 */
static void xiw_tx_zc_put(struct sk_buff *skb, struct ubuf_info *u,
			  bool zerocopy_success)
{
	struct xiw_tx_pend *p = container_of(u, struct xiw_tx_pend, ubuf);
	struct xiw_tx_pq *pq = p->pq;
	unsigned long flags;

	/* See xiw_tx_pq_wait_all(): module exit waits this section out. */
	rcu_read_lock();
	if (!zerocopy_success && !READ_ONCE(pq->copied))
		WRITE_ONCE(pq->copied, true);
	if (refcount_dec_and_test(&u->refcnt)) {
		spin_lock_irqsave(&pq->lock, flags);
		p->zc = false;
		xiw_tx_pq_reap(pq);
		spin_unlock_irqrestore(&pq->lock, flags);
		kref_put(&pq->ref, xiw_tx_pq_free);
	}
	rcu_read_unlock();
}

XIW_COMPAT_UBUF_OPS(xiw_tx_zc_ops, xiw_tx_zc_put);

/*
 * Give the current send work request an entry in the ordered queue (with
 * a live zero-copy notification if @zc).  Return: 0, -EBUSY when the
 * queue is full (the engine is kicked when an entry frees), -ENOENT when
 * the request was flushed meanwhile.
 */
static int xiw_tx_pend_get(struct xiw_conn *conn, bool zc)
{
	struct xiw_tx_pq *pq = conn->tx_pq;
	struct xiw_tx_pend *p;
	unsigned long flags;
	int rv = 0;

	spin_lock_irqsave(&conn->lock, flags);
	if (!conn->tx_sqe_active) {
		rv = -ENOENT;
		goto out;
	}
	spin_lock(&pq->lock);
	if (pq->count == pq->nslots) {
		pq->stalled = true;
		spin_unlock(&pq->lock);
		rv = -EBUSY;
		goto out;
	}
	p = &pq->slot[(pq->head + pq->count) % pq->nslots];
	memset(p, 0, sizeof(*p));
	p->pq = pq;
	p->id = conn->tx_sqe.id;
	p->opcode = conn->tx_sqe.opcode;
	p->flags = conn->tx_sqe.flags;
	if (zc) {
		xiw_ubuf_init(&p->ubuf, &xiw_tx_zc_ops);
		p->zc = true;
		kref_get(&pq->ref);
	}
	WRITE_ONCE(pq->count, pq->count + 1);
	conn->tx_pend = p;
	spin_unlock(&pq->lock);
out:
	spin_unlock_irqrestore(&conn->lock, flags);
	return rv;
}

/*
 * Complete the current send work request if the engine still owns it: at
 * once, or through the ordered queue while older ones wait there.
 * Return: 0, or -EBUSY when the queue is full (try again when kicked).
 */
static int __xiw_tx_sqe_done(struct xiw_conn *conn,
			     enum xiw_wc_status status)
{
	struct xiw_tx_pq *pq = conn->tx_pq;
	struct xiw_tx_pend *p;
	unsigned long flags;
	bool owned, direct = false;

	spin_lock_irqsave(&conn->lock, flags);
	p = conn->tx_pend;
	owned = conn->tx_sqe_active;
	if (owned && !p) {
		/*
		 * Only this engine adds to the ordered queue (under tx_mutex):
		 * a count read as zero stays zero, and one read stale and not
		 * zero only takes the queue's path, which is right as well.
		 * The acquire pairs with the release in xiw_tx_pq_reap(): the
		 * completions of the entries gone are written before ours.
		 */
		direct = !conn->tx_pc_n && !smp_load_acquire(&pq->count);
		if (!direct) {
			spin_unlock_irqrestore(&conn->lock, flags);
			if (xiw_tx_pend_get(conn, false) == -EBUSY)
				return -EBUSY;
			/* Or -ENOENT: flushed meanwhile, owned is false now. */
			spin_lock_irqsave(&conn->lock, flags);
			p = conn->tx_pend;
			owned = conn->tx_sqe_active;
		}
	}
	conn->tx_sqe_active = false;
	conn->tx_pend = NULL;
	if (owned && p) {
		spin_lock(&pq->lock);
		p->status = status;
		p->bytes = conn->tx_sqe_len;
		p->framed = true;
		/* Its pages may be in the open batch: it waits for the batch. */
		if (conn->tx_pc_n) {
			p->held = true;
			conn->tx_pc_held = true;
		}
		xiw_tx_pq_reap(pq);
		spin_unlock(&pq->lock);
	}
	/*
	 * Completed under the lock a flush takes: a flush between the
	 * release and the completion would complete the requests behind
	 * this one, still in the ring, ahead of it.
	 */
	if (owned && direct)
		xiw_sqe_complete(conn->qp, &conn->tx_sqe, conn->tx_sqe_len,
				 status);
	spin_unlock_irqrestore(&conn->lock, flags);
	conn->tx_complete = false;
	conn->tx_imm = false;
	if (p && p->zc)
		xiw_ubuf_put(&p->ubuf);	/* the engine's reference */
	return 0;
}

/*
 * The engine's completion of its send work request, in task context.  A
 * kernel CQ polled in softirq (IB_POLL_SOFTIRQ, the NVMe host's) has its
 * completion handler raise that poll; raised from a task with bottom
 * halves on, it waits for ksoftirqd's wakeup and a context switch.  For a
 * consumer that waits for each post (xiw_conn_kick_tx_kernel()) bottom
 * halves are off around the completion, and the poll runs at
 * local_bh_enable(), right here.  A streaming one's polls are left to
 * ksoftirqd, which takes their completions in batches.
 */
static int xiw_tx_sqe_done(struct xiw_conn *conn, enum xiw_wc_status status)
{
	int rv;

	if (!conn->qp->kernel_verbs || READ_ONCE(conn->tx_kstream))
		return __xiw_tx_sqe_done(conn, status);
	lockdep_assert_irqs_enabled();
	local_bh_disable();
	rv = __xiw_tx_sqe_done(conn, status);
	local_bh_enable();
	return rv;
}

/*
 * A pages batch is in the socket: TCP has copied the pages, and the
 * requests done while it was open (xiw_tx_pend.held) complete now, in
 * order, with bottom halves off as in xiw_tx_sqe_done().  Caller holds
 * tx_mutex.
 */
static void xiw_tx_pc_release(struct xiw_conn *conn)
{
	struct xiw_tx_pq *pq = conn->tx_pq;
	bool bh = conn->qp->kernel_verbs && !READ_ONCE(conn->tx_kstream);
	unsigned long flags;
	u32 n;

	lockdep_assert_held(&conn->tx_mutex);
	if (!conn->tx_pc_held)
		return;
	conn->tx_pc_held = false;
	if (bh)
		local_bh_disable();
	spin_lock_irqsave(&pq->lock, flags);
	for (n = 0; n < pq->count; n++)
		pq->slot[(pq->head + n) % pq->nslots].held = false;
	xiw_tx_pq_reap(pq);
	spin_unlock_irqrestore(&pq->lock, flags);
	if (bh)
		local_bh_enable();
}

/*
 * Complete the Reads and Atomics waiting for their responses with
 * WR_FLUSH_ERR, oldest first; a response that comes later finds the ORQ
 * empty and is dropped.  Under copy_lock, which the receive engine holds
 * while it places into the sink of the ORQ's head, and conn->lock.
 */
static void xiw_tx_orq_flush_locked(struct xiw_conn *conn)
{
	struct xiw_orq_entry *e;
	u32 n;

	lockdep_assert_held(&conn->copy_lock);
	lockdep_assert_held(&conn->lock);

	for (n = 0; n < conn->orq_count; n++) {
		e = &conn->orq[(conn->orq_head + n) % conn->ord];
		if (!e->rtr)
			xiw_sqe_complete(conn->qp, &e->sqe, 0,
					 XIW_WC_WR_FLUSH_ERR);
	}
	conn->orq_count = 0;
}

/*
 * A local error on the send work request: complete it and fail the QP.
 * The Reads and Atomics still waiting for their responses were posted
 * before it and go first, flushed: its error completion must not overtake
 * theirs, which the QP's ERROR would otherwise only write after it.
 */
static void xiw_tx_sqe_fail(struct xiw_conn *conn, enum xiw_wc_status status)
{
	unsigned long flags;

	spin_lock_bh(&conn->copy_lock);
	spin_lock_irqsave(&conn->lock, flags);
	xiw_tx_orq_flush_locked(conn);
	spin_unlock_irqrestore(&conn->lock, flags);
	spin_unlock_bh(&conn->copy_lock);
	xiw_tx_sqe_done(conn, status);
	xiw_conn_event(conn, XIW_CEV_LOCAL_ERR, NULL);
}

/*
 * Build our TERMINATE into tx_buf; the caller sends it and fails the QP.
 * *@built stays false if the connection closed since the error (the
 * peer's TERMINATE, the bound of term_work, a destroy): nothing is sent.
 */
static int xiw_tx_build_term(struct xiw_conn *conn, bool *built)
{
	struct xiw_rdmap_hdr h;
	struct xiw_term t;
	unsigned long flags;
	size_t blen;
	u8 body[RDMAP_TERM_MAX_LEN];

	/* The cause was written on the edge into TERM_QUEUED, before us. */
	spin_lock_irqsave(&conn->lock, flags);
	xiw_term_init(&t, conn->term_err, conn->term_hdr_len ?
		      conn->term_hdr : NULL, conn->term_hdr_len);
	spin_unlock_irqrestore(&conn->lock, flags);
	if (xiw_term_build(&t, body, sizeof(body), &blen))
		return -EINVAL;
	if (!(xiw_conn_event(conn, XIW_CEV_TERM_BUILT, NULL) & XIW_CA_SEND_TERM))
		return 0;
	*built = true;
	xiw_count_term(conn->qp->xdev, t.ctrl.code.layer, true);
	trace_xiw_term(xiw_qp_id(conn->qp), true, t.ctrl.code.layer,
		       t.ctrl.code.etype, t.ctrl.code.ecode);
	/* The control word is the RDMAP header; the rest is payload. */
	xiw_tx_untagged(&h, RDMAP_OP_TERMINATE, RDMAP_QN_TERMINATE,
			conn->tx_msn[RDMAP_QN_TERMINATE]++, 0, true);
	h.u.term = t.ctrl;
	return xiw_tx_frame(conn, &h, body + RDMAP_TERM_CTRL_LEN,
			    blen - RDMAP_TERM_CTRL_LEN);
}

/* The initiator's P2P RTR: the agreed zero-length message. */
static int xiw_tx_build_rtr(struct xiw_conn *conn)
{
	struct xiw_rdmap_hdr h;
	unsigned long flags;

	conn->rtr_tx = false;
	switch (conn->mpa.rtr) {
	case XIW_MPA_RTR_READ:
		/* The response completes nothing; STag 1: peers reject 0. */
		spin_lock_irqsave(&conn->lock, flags);
		memset(&conn->orq[0], 0, sizeof(conn->orq[0]));
		conn->orq[0].rtr = true;
		conn->orq_head = 0;
		conn->orq_count = 1;
		spin_unlock_irqrestore(&conn->lock, flags);
		xiw_tx_untagged(&h, RDMAP_OP_READ_REQ, RDMAP_QN_READ_REQ,
				conn->tx_msn[RDMAP_QN_READ_REQ]++, 0, true);
		h.u.read_req.sink_stag = XIW_RTR_READ_STAG;
		h.u.read_req.src_stag = XIW_RTR_READ_STAG;
		break;
	case XIW_MPA_RTR_SEND:
		xiw_tx_untagged(&h, RDMAP_OP_SEND, RDMAP_QN_SEND,
				conn->tx_msn[RDMAP_QN_SEND]++, 0, true);
		break;
	default:
		xiw_tx_tagged(&h, RDMAP_OP_WRITE, 0, 0, true);
		break;
	}
	return xiw_tx_frame(conn, &h, NULL, 0);
}

/*
 * Room for @len octets in the payload bounce buffer.  It is sized by the
 * segments actually framed: MSS-sized FPDUs on a 1500 octet link need
 * about 1.4 KiB, not the 64 KiB an FPDU may carry.  Called under
 * tx_mutex, before the copy (and copy_lock, if it takes it).
 */
static int xiw_tx_payload_room(struct xiw_conn *conn, u32 len)
{
	u32 cap;
	u8 *p;

	lockdep_assert_held(&conn->tx_mutex);
	if (likely(len <= conn->tx_payload_cap))
		return 0;
	cap = min_t(u32, roundup_pow_of_two(max_t(u32, len, XIW_TX_PAYLOAD_MIN)),
		    MPA_MAX_ULPDU);
	p = kvmalloc(cap, GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	kvfree(conn->tx_payload);
	conn->tx_payload = p;
	conn->tx_payload_cap = cap;
	return 0;
}

/*
 * The source of the Read Request @e failed its check half way through the
 * response: TERMINATE with the RDMAP error of a bad source (as on arrival,
 * xiw_rx_read_req()) and the request's headers, rebuilt from @e.  The
 * engine sends it when it runs next (xiw_conn_fail() kicks it).
 */
static void xiw_tx_read_src_fail(struct xiw_conn *conn,
				 const struct xiw_irq_entry *e,
				 enum xiw_access_result res)
{
	u8 raw[MPA_HDR_LEN + DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN];
	struct xiw_rdmap_hdr h;
	size_t hl = 0;

	lockdep_assert_held(&conn->tx_mutex);
	ibdev_dbg(conn->qp->base_qp.device,
		  "QP %u: Read source STag 0x%x TO 0x%llx at %u of %u: access %d\n",
		  xiw_qp_id(conn->qp), e->req.src_stag, e->req.src_to, e->sent,
		  e->req.size, res);
	xiw_tx_untagged(&h, RDMAP_OP_READ_REQ, RDMAP_QN_READ_REQ, e->msn, 0,
			true);
	h.u.read_req = e->req;
	if (xiw_rdmap_hdr_build(&h, raw + MPA_HDR_LEN,
				sizeof(raw) - MPA_HDR_LEN, &hl) != XIW_OK)
		hl = 0;
	xiw_put_be16(raw, (u16)hl);
	xiw_conn_fail(conn, xiw_read_src_err(res), hl ? raw : NULL,
		      hl ? MPA_HDR_LEN + hl : 0);
}

/* Next segment of the oldest inbound Read Request; false if none. */
static int xiw_tx_build_read_resp(struct xiw_conn *conn, bool *built)
{
	enum xiw_access_result res = XIW_ACC_OK;
	struct xiw_irq_entry *e;
	struct xiw_rdmap_hdr h;
	struct xiw_mr *mr;
	unsigned long flags;
	u32 max, seg;
	bool last, place;
	size_t hl = 0;
	u8 *dst;
	int rv = 0;

	*built = false;
	max = xiw_tx_max_payload(conn, RDMAP_OP_READ_RESP);
	spin_lock_irqsave(&conn->lock, flags);
	if (!conn->irq_count || !conn->tx_buf) {
		spin_unlock_irqrestore(&conn->lock, flags);
		return 0;
	}
	e = &conn->irq[conn->irq_head];
	if (e->atomic) {
		/* Executed on arrival; the response carries the old value. */
		xiw_tx_untagged(&h, RDMAP_OP_ATOMIC_RESP, RDMAP_QN_ATOMIC_RESP,
				conn->tx_msn[RDMAP_QN_ATOMIC_RESP], 0, true);
		h.u.atomic_resp.req_id = e->req_id;
		h.u.atomic_resp.value = e->orig;
		spin_unlock_irqrestore(&conn->lock, flags);
		rv = xiw_tx_frame(conn, &h, NULL, 0);
		if (rv)
			return rv;
		conn->tx_msn[RDMAP_QN_ATOMIC_RESP]++;
		*built = true;
		spin_lock_irqsave(&conn->lock, flags);
		conn->irq_head = (conn->irq_head + 1) % conn->ird;
		conn->irq_count--;
		spin_unlock_irqrestore(&conn->lock, flags);
		return 0;
	}
	/*
	 * The head entry is this engine's without the lock: the receive
	 * engine only writes the slot behind the last (the IRQ is never
	 * full when it does), no flush touches the IRQ, and it is freed
	 * only once both engines have stopped.  The source is the peer's
	 * to read, not a work request: no flush waits for the copy, which
	 * runs under no lock.
	 */
	spin_unlock_irqrestore(&conn->lock, flags);
	seg = min(e->req.size - e->sent, max);
	last = e->sent + seg == e->req.size;
	xiw_tx_tagged(&h, RDMAP_OP_READ_RESP, e->req.sink_stag,
		      e->req.sink_to + e->sent, last);
	place = seg && !conn->tx.markers;
	dst = NULL;
	if (place) {
		rv = xiw_tx_place_room(conn, seg);
		dst = rv ? NULL : xiw_tx_place_hdr(conn, &h, seg, &hl);
		if (!dst)
			return rv ?: -EINVAL;
	} else if (seg) {
		rv = xiw_tx_payload_room(conn, seg);
		if (rv)
			return rv;
		dst = conn->tx_payload;	/* may have been reallocated */
	}
	if (seg) {
		/*
		 * The source as it is now: deregistered, invalidated or
		 * re-registered since the request came, it ends the response
		 * (RFC 5040 sec 7.1); the MR is held only for the copy.
		 */
		res = xiw_mr_lookup(conn->qp->xdev, conn->qp->base_qp.pd,
				    e->req.src_stag, IB_ACCESS_REMOTE_READ,
				    e->req.src_to + e->sent, seg, &mr);
		if (res == XIW_ACC_OK) {
			rv = xiw_tx_copy_mr(mr, e->req.src_to + e->sent, dst,
					    seg);
			xiw_mr_put(mr);
		}
	}
	if (res != XIW_ACC_OK) {
		xiw_tx_read_src_fail(conn, e, res);
		return 0;
	}
	if (rv)
		return -EFAULT;

	if (place) {
		xiw_tx_place_end(conn, &h, hl, seg);
	} else {
		rv = xiw_tx_frame(conn, &h, conn->tx_payload, seg);
		if (rv)
			return rv;
	}
	*built = true;
	e->sent += seg;
	conn->tx_more = !last;
	if (last) {
		spin_lock_irqsave(&conn->lock, flags);
		conn->irq_head = (conn->irq_head + 1) % conn->ird;
		conn->irq_count--;
		spin_unlock_irqrestore(&conn->lock, flags);
	}
	return 0;
}

static bool xiw_sqe_is_local(u8 opcode)
{
	return opcode == XIW_OP_REG_MR || opcode == XIW_OP_INVAL_STAG;
}

/*
 * A fenced local operation (IB_SEND_FENCE on a fast registration or a
 * local invalidation) waits, like any fenced request, for every Read and
 * Atomic before it: an invalidation must not pull the sink of a Read still
 * under way from under it.  It stays the current request, with no payload,
 * until the response that empties the ORQ kicks the engine.
 */
static bool xiw_tx_local_fenced(struct xiw_conn *conn)
{
	unsigned long flags;
	bool wait;

	if (!(conn->tx_sqe.flags & XIW_WQE_READ_FENCE))
		return false;
	spin_lock_irqsave(&conn->lock, flags);
	wait = conn->orq_count;
	spin_unlock_irqrestore(&conn->lock, flags);
	return wait;
}

/*
 * Run the local operation that is the current request, in work request
 * order with the rest of the send queue.  true: done, the engine goes on
 * to the next request; false: it failed (the QP is going to ERROR) or its
 * completion waits behind zero-copy requests (retried when kicked).
 */
static bool xiw_tx_local_exec(struct xiw_conn *conn)
{
	enum xiw_wc_status st;

	st = xiw_sqe_local_exec(conn->qp, &conn->tx_sqe);
	if (st != XIW_WC_SUCCESS) {
		xiw_tx_sqe_fail(conn, st);
		return false;
	}
	if (xiw_tx_sqe_done(conn, st)) {
		conn->tx_complete = true;
		return false;
	}
	return true;
}

/* Take the next send work request; false if there is none to start. */
static bool xiw_tx_next_sqe(struct xiw_conn *conn)
{
	struct xiw_ksqe *sqe = &conn->tx_sqe;
	unsigned long flags;
	int rv;

	for (;;) {
		/* Nothing posted: the look needs none of the locks below. */
		if (!xiw_sqe_pending(conn->qp))
			return false;
		/*
		 * Taken off the ring and owned in one section of @lock.  The
		 * flush hook runs once the QP's state reads ERROR and tests
		 * ownership under @lock: it finds the request in the ring or
		 * owned by the engine, never in neither.
		 */
		spin_lock_irqsave(&conn->lock, flags);
		rv = -ENOENT;
		if (READ_ONCE(conn->qp->state) == XIW_QP_RTS)
			rv = xiw_sqe_fetch(conn->qp, sqe);
		if (rv != -ENOENT)
			conn->tx_sqe_active = true;
		spin_unlock_irqrestore(&conn->lock, flags);
		if (rv == -ENOENT)
			return false;
		if (rv) {
			conn->tx_sqe_len = 0;
			xiw_tx_sqe_fail(conn, XIW_WC_LOC_QP_OP_ERR);
			return false;
		}
		if (xiw_sqe_is_local(sqe->opcode)) {
			conn->tx_sqe_len = 0;
			conn->tx_sqe_off = 0;
			conn->tx_imm = false;
			if (xiw_tx_local_fenced(conn) || !xiw_tx_local_exec(conn))
				return false;
			continue;
		}
		conn->tx_sqe_len = xiw_sqe_length(sqe);
		conn->tx_sqe_off = 0;
		conn->tx_imm = false;
		switch (sqe->opcode) {
		case XIW_OP_SEND:
		case XIW_OP_SEND_REMOTE_INV:
		case XIW_OP_WRITE:
			return true;
		case XIW_OP_WRITE_WITH_IMM:
			/* Without data the Write itself is left out. */
			conn->tx_imm = !conn->tx_sqe_len;
			return true;
		case XIW_OP_FETCH_AND_ADD:
		case XIW_OP_COMP_AND_SWAP:
		case XIW_OP_MASKED_FETCH_AND_ADD:
		case XIW_OP_MASKED_COMP_AND_SWAP:
			return true;
		case XIW_OP_READ:
		case XIW_OP_READ_LOCAL_INV:
			if (sqe->num_sge > XIW_MAX_SGE_RD) {
				xiw_tx_sqe_fail(conn, XIW_WC_LOC_QP_OP_ERR);
				return false;
			}
			return true;
		default:
			/* Not (yet) carried by this engine. */
			xiw_tx_sqe_fail(conn, XIW_WC_LOC_QP_OP_ERR);
			return false;
		}
	}
}

/*
 * Framing around the consumer's pages.  The headers go to tx_buf, the
 * payload stays in the pages (collected into tx_vec at @bv while its CRC
 * is summed); the pad and CRC go to tx_trl (zero-copy) or behind the
 * headers in tx_buf (pages batch).  Markers are never on here.
 */
struct xiw_tx_zc_walk {
	struct xiw_conn *conn;
	struct bio_vec *bv;
	unsigned int n;
	u32 crc;
	bool unsupported;
};

static int xiw_tx_zc_piece(void *priv, void *kaddr, unsigned int len)
{
	struct xiw_tx_zc_walk *zw = priv;
	struct bio_vec *bv = zw->bv;
	u8 *p = kaddr;

	/* The CRC of the payload runs with interrupts on (conn->copy_lock). */
	lockdep_assert_irqs_enabled();
	while (len) {
		unsigned int in_page = offset_in_page(p);
		unsigned int n = min_t(unsigned int, len, PAGE_SIZE - in_page);
		struct page *page = NULL;

		if (virt_addr_valid(p))
			page = virt_to_page(p);
		else if (is_vmalloc_addr(p))
			page = vmalloc_to_page(p);
		/* TCP takes page references: no slab, no highmem mapping. */
		if (!page || !sendpage_ok(page))
			goto unsupported;
		if (zw->n && bv[zw->n - 1].bv_page == page &&
		    bv[zw->n - 1].bv_offset + bv[zw->n - 1].bv_len == in_page) {
			bv[zw->n - 1].bv_len += n;
		} else {
			if (zw->n == XIW_TX_ZC_VECS)
				goto unsupported;
			/*
			 * Held until TCP has taken the page: the request
			 * is still ours (tx_sqe_active, under copy_lock),
			 * so no flush has completed it yet.
			 */
			get_page(page);
			bvec_set_page(&bv[zw->n++], page, n, in_page);
		}
		if (zw->conn->tx.crc)
			zw->crc = xiw_crc_run(zw->conn->tx.crc_fn,
					      zw->conn->tx.crc_ctx, zw->crc,
					      p, n);
		p += n;
		len -= n;
	}
	return 0;

unsupported:
	zw->unsupported = true;
	return -EOPNOTSUPP;
}

/*
 * Zero-copy for the next large FPDU?  Under "auto", not once the stack
 * copied the pages of one: the connection delivers to a local socket,
 * where zero-copy costs the page references and the notification on top
 * of the copy.  Caller holds tx_mutex.
 */
static bool xiw_tx_zc_wanted(struct xiw_conn *conn)
{
	if (conn->tx_zcopy == XIW_TX_ZCOPY_AUTO &&
	    READ_ONCE(conn->tx_pq->copied)) {
		WRITE_ONCE(conn->tx_zcopy, XIW_TX_ZCOPY_OFF);
		atomic64_inc(&conn->qp->xdev->stats.tx_zc_copied);
	}
	return conn->tx_zcopy != XIW_TX_ZCOPY_OFF;
}

/*
 * Room for one more FPDU in the pages batch: its headers' pieces (all of
 * tx_buf since the last page piece, copied FPDUs included), its payload's
 * and the last of tx_buf that closes the batch.  Caller holds tx_mutex.
 */
static bool xiw_tx_pc_room(struct xiw_conn *conn)
{
	return !conn->tx_pc_closed &&
	       conn->tx_pc_n + 2 * XIW_TX_KMEM_VECS + XIW_TX_ZC_VECS <=
	       XIW_TX_VECS &&
	       conn->tx_buf_cap - conn->tx_len >=
	       MPA_HDR_LEN + XIW_RDMAP_HDR_MAX + MPA_ALIGN + MPA_CRC_LEN;
}

/*
 * Can the next FPDU be framed around the consumer's pages?  The page
 * vector is allocated by the first such FPDU, and tx_buf grows to its
 * full size then, so that it never moves under the pieces of a pages
 * batch: a connection that sends only small messages (or none) keeps
 * both out of its memory.  Without them the FPDU is copied.  Caller
 * holds tx_mutex.
 */
static bool xiw_tx_pages_ok(struct xiw_conn *conn)
{
	lockdep_assert_held(&conn->tx_mutex);
	if (unlikely(!conn->tx_vec)) {
		conn->tx_vec = kmalloc_array(XIW_TX_VECS, sizeof(*conn->tx_vec),
					     GFP_KERNEL);
		if (!conn->tx_vec)
			return false;
	}
	if (unlikely(conn->tx_buf_cap < XIW_TX_BUF_LEN) &&
	    xiw_tx_buf_grow(conn, XIW_TX_BUF_LEN))
		return false;
	if (conn->tx_zc_n)
		return false;	/* behind a zero-copy FPDU: nothing */
	return xiw_tx_pc_room(conn);
}

/*
 * ULPDU_Length and the headers of an FPDU framed around pages into tx_buf
 * at @at; *@hlen gets their length, *@crc the CRC so far.  Nothing is
 * committed: tx_len stays.
 */
static int xiw_tx_zc_hdr(struct xiw_conn *conn, const struct xiw_rdmap_hdr *h,
			 u32 plen, size_t at, size_t *hlen, u32 *crc)
{
	u8 *f = conn->tx_buf + at;
	size_t hl;

	if (xiw_rdmap_hdr_build(h, f + MPA_HDR_LEN, XIW_RDMAP_HDR_MAX, &hl))
		return -EINVAL;
	xiw_put_be16(f, (u16)(hl + plen));
	trace_xiw_fpdu_tx(xiw_qp_id(conn->qp), h, plen);
	*hlen = MPA_HDR_LEN + hl;
	*crc = conn->tx.crc ? xiw_crc_run(conn->tx.crc_fn, conn->tx.crc_ctx,
					  XIW_CRC_SEED, f, *hlen) : 0;
	return 0;
}

/*
 * A zero-copy FPDU's payload is collected: add pad and CRC, account the
 * stream.  Its headers are all tx_buf holds (@hlen octets).
 */
static void xiw_tx_zc_trailer(struct xiw_conn *conn, size_t hlen, u32 crc,
			      unsigned int n, u32 plen)
{
	u32 ulpdu = hlen - MPA_HDR_LEN + plen;

	conn->tx_len = hlen;
	conn->tx_off = 0;
	conn->tx_zc_n = n;
	conn->tx_zc_len = plen;
	conn->tx_zc_off = 0;
	conn->tx_trl_len = xiw_fpdu_trailer(crc, conn->tx.crc, ulpdu,
					    conn->tx_trl);
	conn->tx_trl_off = 0;
	conn->tx.stream_pos += hlen + plen + conn->tx_trl_len;
	conn->tx_last_len = hlen + plen + conn->tx_trl_len;
	atomic64_inc(&conn->qp->xdev->stats.tx_fpdus);
}

/*
 * An FPDU of the pages batch is collected: @k pieces of tx_buf up to its
 * headers' end (@hlen octets at tx_len) and the @n page pieces behind
 * them join the batch; pad and CRC go behind the headers in tx_buf,
 * which the next FPDU's pieces (or the batch's close) take.
 */
static void xiw_tx_pc_commit(struct xiw_conn *conn, size_t hlen, u32 crc,
			     unsigned int n, u32 plen)
{
	size_t end = conn->tx_len + hlen;
	size_t tl;

	xiw_tx_pc_kmem(conn, end);
	conn->tx_pc_n += n;
	conn->tx_pc_len += plen;
	tl = xiw_fpdu_trailer(crc, conn->tx.crc, hlen - MPA_HDR_LEN + plen,
			      conn->tx_buf + end);
	conn->tx_len = end + tl;
	conn->tx.stream_pos += hlen + plen + tl;
	conn->tx_last_len = hlen + plen + tl;
	conn->tx_pc_fpdus++;
	atomic64_inc(&conn->qp->xdev->stats.tx_fpdus);
}

static bool xiw_sqe_is_atomic(u8 opcode)
{
	return opcode == XIW_OP_FETCH_AND_ADD ||
	       opcode == XIW_OP_COMP_AND_SWAP ||
	       opcode == XIW_OP_MASKED_FETCH_AND_ADD ||
	       opcode == XIW_OP_MASKED_COMP_AND_SWAP;
}

/* Reads and atomics wait in the ORQ for their response. */
static bool xiw_sqe_uses_orq(u8 opcode)
{
	return opcode == XIW_OP_READ || opcode == XIW_OP_READ_LOCAL_INV ||
	       xiw_sqe_is_atomic(opcode);
}

/* The Atomic Request header of @sqe (RFC 7306); takes the next id. */
static void xiw_tx_atomic_req(struct xiw_conn *conn,
			      const struct xiw_ksqe *sqe,
			      struct xiw_rdmap_hdr *h)
{
	struct xiw_atomic_req *ar = &h->u.atomic_req;
	bool add = sqe->opcode == XIW_OP_FETCH_AND_ADD ||
		   sqe->opcode == XIW_OP_MASKED_FETCH_AND_ADD;

	/* Atomic Requests share the Read Request queue and its MSNs. */
	xiw_tx_untagged(h, RDMAP_OP_ATOMIC_REQ, RDMAP_QN_READ_REQ,
			conn->tx_msn[RDMAP_QN_READ_REQ]++, 0, true);
	/* The compare fields of a FetchAdd go out as zeros. */
	memset(ar, 0, sizeof(*ar));
	ar->op = add ? RDMAP_ATOMIC_FETCHADD : RDMAP_ATOMIC_CMPSWAP;
	ar->req_id = conn->tx_atomic_id++;
	ar->stag = sqe->rkey;
	ar->to = sqe->raddr;
	ar->data = sqe->add_swap;
	ar->data_mask = sqe->add_swap_mask;
	if (!add) {
		ar->cmp = sqe->cmp;
		ar->cmp_mask = sqe->cmp_mask;
	}
}

/*
 * Build the next segment of the current send work request.  Returns 0 with
 * *built false when the request must wait (a fence behind Reads or Atomics,
 * ORQ full).
 */
static int xiw_tx_build_sqe(struct xiw_conn *conn, bool *built)
{
	struct xiw_ksqe *sqe = &conn->tx_sqe;
	struct xiw_rdmap_hdr *h = &conn->tx_hdr;
	unsigned long flags;
	struct xiw_tx_zc_walk zw = {};
	u32 seg = 0, max, batched;
	bool last, active, zc, pages, place;
	size_t hl = 0, zhl = 0;
	u8 *dst = NULL;
	u8 op;
	int rv;

	*built = false;
	batched = conn->tx_len;
	if (xiw_sqe_uses_orq(sqe->opcode)) {
		bool atomic = xiw_sqe_is_atomic(sqe->opcode);
		struct xiw_orq_entry *e;

		/*
		 * The response completes this request, from the receive
		 * engine, as soon as it is in: perhaps before a batch sent in
		 * the same call had returned.  The requests an open pages
		 * batch holds back (xiw_tx_pend.held) were posted first, so
		 * the batch goes out, and they complete, before the request
		 * is framed.  A full socket stops the engine until
		 * write_space kicks it; an error has taken the connection
		 * down.
		 */
		if (conn->tx_pc_n && xiw_tx_send(conn, true))
			return 0;

		spin_lock_irqsave(&conn->lock, flags);
		if (!conn->tx_sqe_active) {
			spin_unlock_irqrestore(&conn->lock, flags);
			return 0;
		}
		if (conn->orq_count == conn->ord ||
		    ((sqe->flags & XIW_WQE_READ_FENCE) && conn->orq_count)) {
			spin_unlock_irqrestore(&conn->lock, flags);
			return 0;	/* RX kicks us when a response is in */
		}
		/* Queue it before the request can be answered. */
		e = &conn->orq[(conn->orq_head + conn->orq_count) % conn->ord];
		e->sqe = *sqe;
		e->rtr = false;
		e->atomic = atomic;
		e->req_id = conn->tx_atomic_id;
		e->received = 0;
		conn->orq_count++;
		conn->tx_sqe_active = false;
		spin_unlock_irqrestore(&conn->lock, flags);

		if (atomic) {
			xiw_tx_atomic_req(conn, sqe, h);
			rv = xiw_tx_frame(conn, h, NULL, 0);
			*built = !rv;
			return rv;
		}
		xiw_tx_untagged(h, RDMAP_OP_READ_REQ, RDMAP_QN_READ_REQ,
				conn->tx_msn[RDMAP_QN_READ_REQ]++, 0, true);
		/* A Read without a sink asks for nothing at STag 0. */
		h->u.read_req = (struct xiw_read_req){
			.src_stag = sqe->rkey,
			.src_to = sqe->raddr,
		};
		if (sqe->num_sge) {
			h->u.read_req.sink_stag = sqe->sge[0].lkey;
			h->u.read_req.sink_to = sqe->sge[0].laddr;
			h->u.read_req.size = sqe->sge[0].length;
		}
		rv = xiw_tx_frame(conn, h, NULL, 0);
		*built = !rv;
		return rv;
	}

	/*
	 * A fenced request waits for every Read and Atomic before it, whatever
	 * its type (the verbs' IB_SEND_FENCE: an invalidating Send behind a
	 * Read must not overtake it).  Nothing joins the ORQ while a request
	 * of the send queue is under way, so the first segment decides.
	 */
	if (sqe->flags & XIW_WQE_READ_FENCE) {
		spin_lock_irqsave(&conn->lock, flags);
		active = conn->tx_sqe_active && !conn->orq_count;
		spin_unlock_irqrestore(&conn->lock, flags);
		if (!active)
			return 0;	/* flushed, or RX kicks us at the response */
	}

	if (conn->tx_imm) {
		/* The Write is out: its Immediate Data message completes it. */
		spin_lock_irqsave(&conn->lock, flags);
		active = conn->tx_sqe_active;
		spin_unlock_irqrestore(&conn->lock, flags);
		if (!active)
			return 0;	/* flushed under us */
		xiw_tx_untagged(h, (sqe->flags & XIW_WQE_SOLICITED) ?
				RDMAP_OP_IMM_DATA_SE : RDMAP_OP_IMM_DATA,
				RDMAP_QN_SEND, conn->tx_msn[RDMAP_QN_SEND], 0,
				true);
		/* The four octets of verbs immediate data lead the eight. */
		h->u.imm_data = (u64)be32_to_cpu((__force __be32)sqe->imm) << 32;
		rv = xiw_tx_frame(conn, h, NULL, 0);
		if (rv)
			return rv;
		conn->tx_msn[RDMAP_QN_SEND]++;
		conn->tx_imm = false;
		conn->tx_complete = true;
		*built = true;
		return 0;
	}

	if (sqe->opcode == XIW_OP_WRITE || sqe->opcode == XIW_OP_WRITE_WITH_IMM) {
		op = RDMAP_OP_WRITE;
	} else if (sqe->opcode == XIW_OP_SEND_REMOTE_INV) {
		op = (sqe->flags & XIW_WQE_SOLICITED) ? RDMAP_OP_SEND_SE_INV :
							RDMAP_OP_SEND_INV;
	} else {
		op = (sqe->flags & XIW_WQE_SOLICITED) ? RDMAP_OP_SEND_SE :
							RDMAP_OP_SEND;
	}
	max = xiw_tx_max_payload(conn, op);
	seg = min(conn->tx_sqe_len - conn->tx_sqe_off, max);
	last = conn->tx_sqe_off + seg == conn->tx_sqe_len;
	place = seg && !conn->tx.markers;
	rv = place ? xiw_tx_place_room(conn, seg) :
		     xiw_tx_payload_room(conn, seg);
	if (rv)
		return rv;

	if (op == RDMAP_OP_WRITE) {
		xiw_tx_tagged(h, op, sqe->rkey, sqe->raddr + conn->tx_sqe_off,
			      last);
	} else {
		xiw_tx_untagged(h, op, RDMAP_QN_SEND,
				conn->tx_msn[RDMAP_QN_SEND], conn->tx_sqe_off,
				last);
		if (op == RDMAP_OP_SEND_INV || op == RDMAP_OP_SEND_SE_INV)
			h->rsvdulp = sqe->rkey;
	}

	/*
	 * A large FPDU of consumer memory is framed around its pages: sent
	 * zero-copy if wanted (alone: tx_buf holds nothing else), else
	 * joined to the pages batch, which TCP copies straight from them
	 * (one copy, where building it in tx_buf makes two).
	 */
	pages = seg >= (conn->qp->kernel_verbs ? XIW_TX_PC_MIN :
						 XIW_TX_ZC_MIN) &&
		!conn->tx.markers && !(sqe->flags & XIW_WQE_INLINE) &&
		xiw_tx_pages_ok(conn);
	zc = pages && seg >= XIW_TX_ZC_MIN && !conn->tx_len &&
	     xiw_tx_zc_wanted(conn);
	if (zc && !conn->tx_pend) {
		rv = xiw_tx_pend_get(conn, true);
		if (rv == -ENOENT)
			return 0;	/* flushed under us */
		zc = !rv;	/* a full queue: TCP copies this one */
	}
	zc = zc && conn->tx_pend->zc;
	if (pages && xiw_tx_zc_hdr(conn, h, seg, conn->tx_len, &zhl, &zw.crc))
		return -EINVAL;

	/*
	 * tx_sqe_active is written by this engine and by a flush, which
	 * holds copy_lock: under it, this engine reads it without
	 * conn->lock, and a flush waits until the copy is done.
	 */
	spin_lock_bh(&conn->copy_lock);
	if (!conn->tx_sqe_active) {
		spin_unlock_bh(&conn->copy_lock);
		conn->tx_len = batched;	/* drop this FPDU's headers only */
		return 0;	/* flushed under us */
	}
	if (pages) {
		zw.conn = conn;
		zw.bv = conn->tx_vec;
		/* In a pages batch, behind tx_buf's pieces up to its headers. */
		if (!zc)
			zw.bv += conn->tx_pc_n +
				 xiw_tx_kmem_pieces(conn->tx_buf +
						    conn->tx_pc_kstart,
						    conn->tx_len + zhl -
						    conn->tx_pc_kstart);
		zw.n = 0;
		zw.unsupported = false;
		rv = xiw_sgl_walk(conn->qp->xdev, conn->qp->base_qp.pd, sqe->sge,
				  sqe->num_sge, conn->tx_sqe_off, seg, 0,
				  xiw_tx_zc_piece, &zw);
		/* Nothing of this FPDU goes out from them: let the pages go. */
		if (rv)
			xiw_tx_zc_put_pages(zw.bv, zw.n);
		if (rv && zw.unsupported) {
			/*
			 * Not all in pages TCP may hold (slab memory, more
			 * than XIW_TX_ZC_VECS pieces): built in tx_buf after
			 * all, where these headers went, so they are
			 * dropped.
			 */
			pages = false;
			zc = false;
			conn->tx_len = batched;
		}
	}
	if (!pages && place) {
		/* Room was made above; nothing here allocates. */
		dst = xiw_tx_place_hdr(conn, h, seg, &hl);
		rv = dst ? xiw_tx_gather(conn, sqe, conn->tx_sqe_off, dst,
					 seg) : 0;
	} else if (!pages) {
		rv = seg ? xiw_tx_gather(conn, sqe, conn->tx_sqe_off,
					 conn->tx_payload, seg) : 0;
	}
	spin_unlock_bh(&conn->copy_lock);
	if (!pages && place && !dst) {
		conn->tx_len = batched;
		return -EINVAL;
	}
	if (rv) {
		conn->tx_len = batched;
		xiw_tx_sqe_fail(conn, XIW_WC_LOC_PROT_ERR);
		return 0;
	}

	if (zc) {
		xiw_tx_zc_trailer(conn, zhl, zw.crc, zw.n, seg);
	} else if (pages) {
		xiw_tx_pc_commit(conn, zhl, zw.crc, zw.n, seg);
	} else if (place) {
		xiw_tx_place_end(conn, h, hl, seg);
	} else {
		rv = xiw_tx_frame(conn, h, conn->tx_payload, seg);
		if (rv)
			return rv;
	}
	if (op != RDMAP_OP_WRITE && last)
		conn->tx_msn[RDMAP_QN_SEND]++;
	conn->tx_sqe_off += seg;
	if (last && sqe->opcode == XIW_OP_WRITE_WITH_IMM)
		conn->tx_imm = true;
	else
		conn->tx_complete = last;
	conn->tx_more = !conn->tx_complete;
	*built = true;
	return 0;
}

/*
 * The framing buffer, allocated when the connection first has something
 * to send: a connection that never sends (or only receives) costs none,
 * and connection setup stays cheap (the kernel zeroes what it allocates
 * when init_on_alloc is on, as on Debian).  It starts at XIW_TX_BUF_MIN
 * and grows with what is framed (xiw_tx_buf_room()).  Freed with the
 * connection.  Caller holds tx_mutex.
 */
static int xiw_tx_bufs(struct xiw_conn *conn)
{
	lockdep_assert_held(&conn->tx_mutex);
	if (likely(conn->tx_buf))
		return 0;
	conn->tx_buf = kvmalloc(XIW_TX_BUF_MIN, GFP_KERNEL);
	if (!conn->tx_buf)
		return -ENOMEM;
	conn->tx_buf_cap = XIW_TX_BUF_MIN;
	return 0;
}

/*
 * One step: build the next FPDU into tx_buf -- our TERMINATE if @term.
 * *@built false: nothing to send.
 */
static int xiw_tx_build(struct xiw_conn *conn, bool term, bool *built)
{
	struct xiw_qp *qp = conn->qp;
	int rv;

	*built = false;
	conn->tx_more = false;
	if (term) {
		rv = xiw_tx_bufs(conn);
		if (!rv)
			rv = xiw_tx_build_term(conn, built);
		if (rv)
			*built = false;
		return rv;
	}
	if (READ_ONCE(qp->state) != XIW_QP_RTS)
		return 0;
	if (conn->rtr_tx) {
		rv = xiw_tx_bufs(conn);
		if (!rv)
			rv = xiw_tx_build_rtr(conn);
		*built = !rv;
		return rv;
	}
	if (READ_ONCE(conn->rtr_rx))
		return 0;	/* the responder speaks after the RTR */
	if (conn->tx_sqe_active && (conn->tx_sqe_off || conn->tx_imm))
		return xiw_tx_build_sqe(conn, built);
	/*
	 * A response queued after this check is seen by the run its
	 * enqueuer kicks.
	 */
	if (READ_ONCE(conn->irq_count)) {
		rv = xiw_tx_bufs(conn);
		if (rv)
			return rv;
		rv = xiw_tx_build_read_resp(conn, built);
		if (rv || *built)
			return rv;
	}
	if (conn->tx_sqe_active && !conn->tx_complete &&
	    xiw_sqe_is_local(conn->tx_sqe.opcode)) {
		/* A fenced local operation, parked by xiw_tx_next_sqe(). */
		if (xiw_tx_local_fenced(conn) || !xiw_tx_local_exec(conn))
			return 0;
	}
	if (!conn->tx_sqe_active && !xiw_tx_next_sqe(conn))
		return 0;
	rv = xiw_tx_bufs(conn);
	if (rv)
		return rv;
	return xiw_tx_build_sqe(conn, built);
}

/*
 * More to frame right now: the rest of the current message, a Read or
 * Atomic Response, or a posted work request.  A peek; the engine looks
 * again before it stops.
 */
static bool xiw_tx_work_waiting(struct xiw_conn *conn)
{
	return (conn->tx_sqe_active && !conn->tx_complete) ||
	       READ_ONCE(conn->irq_count) || xiw_sqe_next_valid(conn->qp);
}

/*
 * Does a pages batch go on?  While tx_vec has room and there is more to
 * frame: for a kernel QP the rest of its message, the next work request, a
 * Read Response; for a user QP the rest of its message only.  The pages
 * are the consumer's until TCP has copied them, so a work request done
 * while the batch is open completes once the batch is out, and so does
 * every one behind it (xiw_tx_pend.held): a Send's completion must not
 * tell the consumer that the pages of the Write before it are free again
 * while they still wait here.  A user QP's small Writes go faster copied
 * into tx_buf, many requests to one call, than one batch each
 * (Documentation/performance.rst).  The Immediate Data of a Write goes
 * after the batch.
 */
static bool xiw_tx_pc_more(struct xiw_conn *conn)
{
	if (!conn->qp->kernel_verbs)
		return conn->tx_sqe_active && !conn->tx_complete &&
		       !conn->tx_imm && xiw_tx_pc_room(conn);
	return !conn->tx_imm && xiw_tx_pc_room(conn) &&
	       xiw_tx_work_waiting(conn);
}

/*
 * Keep the FPDU just built in tx_buf and frame the next one behind it?
 * While small copied FPDUs leave room for another, of the same message or
 * of the next work request or Read Response: the batch then reaches TCP
 * in one call.  A work request whose FPDUs all sit in tx_buf completes
 * when the engine gets to it, before or after the batch goes out: its
 * payload is copied already, just as TCP's send buffer holds it once
 * sendmsg() returns.  With nothing else waiting the batch goes out first,
 * so the completion and the look for more work are not on the path to
 * the peer.  The engine hands a batch to TCP before it stops for any
 * reason (xiw_tx_end_batch()).
 */
static bool xiw_tx_batch_more(struct xiw_conn *conn, u32 *batch)
{
	bool more;

	if (conn->tx_pc_n)
		more = xiw_tx_pc_more(conn);
	else
		more = !conn->tx_zc_n && xiw_tx_work_waiting(conn) &&
		       conn->tx_last_len < XIW_TX_ZC_MIN &&
		       XIW_TX_BUF_LEN - conn->tx_len >= conn->tx_last_len + 256;
	if (!more || READ_ONCE(conn->state) == XIW_CONN_TERM_QUEUED ||
	    ++*batch >= conn->tx_batch) {
		*batch = 0;
		return false;
	}
	return true;
}

/* Before the engine stops: the batch in tx_buf goes to TCP.  false: dead. */
static __always_inline bool xiw_tx_end_batch(struct xiw_conn *conn)
{
	int rv = conn->tx_len ? xiw_tx_send(conn, false) : 0;

	return !rv || rv == -EAGAIN;
}

/*
 * Hand our TERMINATE, built last into tx_buf, to TCP; nothing follows it.
 * A full socket (the peer's window closed behind earlier FPDUs) leaves the
 * rest for the next run, which write_space kicks; the connection's
 * term_work bounds that wait.  Once the TERMINATE is wholly in the socket
 * the QP goes to ERROR and the close is graceful: the TERMINATE goes out
 * ahead of the FIN, retransmitted by TCP as any data, where a reset would
 * throw it away with whatever the peer's window still holds back.
 */
static void xiw_tx_term_out(struct xiw_conn *conn)
{
	int rv = xiw_tx_push(conn, false);

	if (rv == -EAGAIN)
		return;
	xiw_conn_event(conn, rv ? XIW_CEV_LLP_ERR : XIW_CEV_TERM_SENT, NULL);
}

/**
 * xiw_qp_tx_run - the transmit engine of one connected QP
 * @conn: the connection; the caller holds @conn->tx_mutex
 *
 * Builds and sends FPDUs until there is nothing to send, the socket is
 * full (write_space kicks the worker again) or the budget is spent (the
 * worker is kicked to go on).  Process context.
 */
void xiw_qp_tx_run(struct xiw_conn *conn)
{
	int budget = XIW_TX_BUDGET;
	bool built, term;
	u32 batch = 0;
	int rv;

	lockdep_assert_held(&conn->tx_mutex);

	/* Only this engine moves the connection into TERM_OUT. */
	if (READ_ONCE(conn->state) == XIW_CONN_TERM_OUT) {
		xiw_tx_term_out(conn);
		return;
	}
	while (xiw_conn_tx_live(conn)) {
		if (conn->tx_len && !xiw_tx_batch_more(conn, &batch) &&
		    xiw_tx_send(conn, conn->tx_sqe_active && !conn->tx_complete))
			return;
		/* A full ordered queue stalls us until an entry frees. */
		if (conn->tx_complete && xiw_tx_sqe_done(conn, XIW_WC_SUCCESS)) {
			xiw_tx_end_batch(conn);
			return;
		}
		if (!budget--) {
			if (xiw_tx_end_batch(conn))
				xiw_conn_kick_tx(conn);
			return;
		}
		term = READ_ONCE(conn->state) == XIW_CONN_TERM_QUEUED;
		rv = xiw_tx_build(conn, term, &built);
		if (rv) {
			xiw_conn_event(conn, XIW_CEV_LOCAL_ERR, NULL);
			return;
		}
		if (!built) {
			xiw_tx_end_batch(conn);
			return;
		}
		if (term) {
			xiw_tx_term_out(conn);
			return;
		}
	}
	/*
	 * A graceful close was decided: nothing more is framed, but what is
	 * framed (a batch whose work requests may have completed already)
	 * goes into the socket ahead of the FIN.
	 */
	if (conn->tx_len && READ_ONCE(conn->state) == XIW_CONN_CLOSE_FIN)
		xiw_tx_end_batch(conn);
}

/**
 * xiw_qp_tx_work - the worker that runs the transmit engine
 * @work: &xiw_conn.tx_work
 */
void xiw_qp_tx_work(struct work_struct *work)
{
	struct xiw_conn *conn = container_of(work, struct xiw_conn, tx_work);

	/*
	 * The posts this run takes (see xiw_conn_kick_tx_kernel()); a run
	 * kicked for other reasons (room in the socket again) says nothing.
	 */
	if (conn->qp->kernel_verbs) {
		int posts = atomic_xchg(&conn->tx_kposts, 0);

		if (posts)
			WRITE_ONCE(conn->tx_kstream, posts > 1);
	}
	mutex_lock(&conn->tx_mutex);
	xiw_qp_tx_run(conn);
	mutex_unlock(&conn->tx_mutex);
}

/**
 * xiw_tx_zc_drop - let go of consumer pages TCP has not wholly taken
 * @conn: the connection, both engines stopped
 *
 * The engine's references on the pages of a zero-copy FPDU or a pages
 * batch; TCP holds its own on what it took zero-copy.
 */
void xiw_tx_zc_drop(struct xiw_conn *conn)
{
	xiw_tx_zc_put_pages(conn->tx_vec, conn->tx_zc_n);
	conn->tx_zc_n = 0;
	xiw_tx_pc_reset(conn);
}

/**
 * xiw_qp_tx_flush - complete what the transmit engine holds with WR_FLUSH_ERR
 * @conn: the connection; the caller holds @conn->copy_lock, so neither
 *	engine is copying for any of these requests
 *
 * The send work request in progress and every outstanding RDMA Read.
 */
void xiw_qp_tx_flush(struct xiw_conn *conn)
{
	unsigned long flags;
	bool sqe;

	lockdep_assert_held(&conn->copy_lock);
	spin_lock_irqsave(&conn->lock, flags);
	sqe = conn->tx_sqe_active;
	conn->tx_sqe_active = false;
	/*
	 * Oldest first: what waits in the ordered queue, the Reads and
	 * Atomics waiting for their responses, then the request in
	 * progress, which the engine took after all of them (a Read of its
	 * own held back by a full ORQ or a fence among it).
	 */
	spin_lock(&conn->tx_pq->lock);
	xiw_tx_pq_flush(conn->tx_pq);
	spin_unlock(&conn->tx_pq->lock);
	xiw_tx_orq_flush_locked(conn);
	if (sqe && !conn->tx_pend)
		xiw_sqe_complete(conn->qp, &conn->tx_sqe, 0,
				 XIW_WC_WR_FLUSH_ERR);
	spin_unlock_irqrestore(&conn->lock, flags);
}
