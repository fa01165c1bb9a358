// SPDX-License-Identifier: GPL-2.0
/*
 * xiw: the receive engine.  The socket's data_ready runs tcp_read_sock();
 * every skb fragment goes through the protocol core's resumable deframer,
 * and each DDP segment is checked and placed straight into its target: a
 * tagged buffer (RDMA Write, Read Response) or the receive work request
 * bound to an untagged message (Send).  Inbound Read Requests go to the
 * transmit engine.  Any violation ends in a TERMINATE with the RFC's
 * layer/type/code (xiw_conn_fail()).
 *
 * Runs under the socket lock (softirq, or process context when the socket
 * was owned by a sender).  Placement into work requests happens under
 * conn->copy_lock, which the flush takes too, so that a flush never
 * completes a request being written; a Send's receive is taken, placed
 * into and completed under it alone.  conn->lock, which a kernel
 * post_recv may take in hard irq, is never held over a copy.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/skbuff.h>
#include <net/tcp.h>
#include <kunit/visibility.h>

#include "xiw.h"
#include "xiw_dp.h"
#include "xiw_trace.h"

/* Map an MR lookup failure of a tagged segment to its DDP error. */
static enum xiw_proto_err xiw_rx_tagged_err(enum xiw_access_result res)
{
	switch (res) {
	case XIW_ACC_PD_MISMATCH:
		return XIW_ERR_DDP_T_STAG_NOT_ASSOC;
	case XIW_ACC_BOUNDS:
		return XIW_ERR_DDP_T_BASE_BOUNDS;
	case XIW_ACC_WRAP:
		return XIW_ERR_DDP_T_TO_WRAP;
	case XIW_ACC_RIGHTS:
		return XIW_ERR_RDMAP_ACCESS;
	default:
		return XIW_ERR_DDP_T_INVALID_STAG;
	}
}

/**
 * xiw_read_src_err - the RDMAP error of a Read Request's source that
 *	failed its check
 * @res: what xiw_mr_lookup() said of the source
 *
 * Used on arrival of the request and again for every response segment.
 */
enum xiw_proto_err xiw_read_src_err(enum xiw_access_result res)
{
	switch (res) {
	case XIW_ACC_PD_MISMATCH:
		return XIW_ERR_RDMAP_STAG_NOT_ASSOC;
	case XIW_ACC_BOUNDS:
		return XIW_ERR_RDMAP_BASE_BOUNDS;
	case XIW_ACC_WRAP:
		return XIW_ERR_RDMAP_TO_WRAP;
	case XIW_ACC_RIGHTS:
		return XIW_ERR_RDMAP_ACCESS;
	default:
		return XIW_ERR_RDMAP_INVALID_STAG;
	}
}

/*
 * TERMINATE for the segment being received or, between segments, for the
 * one that just ended: its checks that wait for the CRC (a Read or Atomic
 * Request, Send with Invalidate) fail at its end, where the deframer has
 * already given up the header octets for the next segment (RFC 5040 sec
 * 4.8: the DDP header, and the RDMAP header of a Read Request, go back).
 */
static void xiw_rx_fail(struct xiw_conn *conn, enum xiw_proto_err err)
{
	const struct xiw_rx *rx = &conn->rx;

	xiw_conn_fail(conn, err, rx->raw, rx->raw_got ?: rx->raw_last);
}

struct xiw_rx_copy {
	struct xiw_conn *conn;
	const u8 *src;
};

/* Placement: the offload backend's, or a copy. */
static int xiw_rx_copy_piece(void *priv, void *kaddr, unsigned int len)
{
	struct xiw_rx_copy *cp = priv;
	const struct xiw_offload_ops *ops = cp->conn->offload;

	/* No payload is copied with interrupts off (see conn->copy_lock). */
	lockdep_assert_irqs_enabled();
	if (ops->rx_place)
		ops->rx_place(&cp->conn->oc, kaddr, cp->src, len);
	else
		memcpy(kaddr, cp->src, len);
	cp->src += len;
	return 0;
}

/* Write @len octets to @stag at @to after checking it. */
static __always_inline enum xiw_proto_err
xiw_rx_place_tagged(struct xiw_conn *conn, u32 stag, u64 to, const u8 *data,
		    u32 len, int access)
{
	struct xiw_qp *qp = conn->qp;
	struct xiw_rx_copy cp = { .conn = conn, .src = data };
	enum xiw_access_result res;
	struct xiw_mr *mr;
	int rv;

	res = __xiw_mr_lookup(qp->xdev, qp->base_qp.pd, stag, access, to, len,
			      &mr);
	if (res != XIW_ACC_OK)
		return xiw_rx_tagged_err(res);
	rv = xiw_mr_walk(mr, to, len, xiw_rx_copy_piece, &cp);
	xiw_mr_put(mr);
	return rv ? XIW_ERR_DDP_T_BASE_BOUNDS : XIW_OK;
}

/* Write @len octets at offset @off of a receive work request's buffers. */
static __always_inline int xiw_rx_place_rqe(struct xiw_conn *conn,
					    const struct xiw_krqe *rqe, u32 off,
					    const u8 *data, u32 len)
{
	struct xiw_qp *qp = conn->qp;
	struct xiw_rx_copy cp = { .conn = conn, .src = data };

	return xiw_sgl_walk(qp->xdev, qp->base_qp.pd, rqe->sge, rqe->num_sge,
			    off, len, IB_ACCESS_LOCAL_WRITE, xiw_rx_copy_piece,
			    &cp);
}

static u32 xiw_rqe_length(const struct xiw_krqe *rqe)
{
	u32 len = 0;
	unsigned int i;

	for (i = 0; i < rqe->num_sge; i++)
		len += rqe->sge[i].length;
	return len;
}

/*
 * A Send segment header: bind the message to a receive work request if it
 * starts one, and say in @q what the queue holds for it.  Caller holds
 * copy_lock.  Return: 0, or -EINVAL for a malformed user receive (taken
 * off the ring and completed in error here).
 */
static __always_inline int xiw_rx_send_bind(struct xiw_conn *conn,
					    struct xiw_ddp_queue *q)
{
	struct xiw_rx_untagged *ut = &conn->rx_ut[RDMAP_QN_SEND];
	const struct xiw_rdmap_hdr *h = &conn->rx.hdr;
	int rv = 0;

	lockdep_assert_held(&conn->copy_lock);
	if (!h->mo && h->msn == ut->msn && !ut->active) {
		/*
		 * None once the QP reads ERROR: the flush hook, which holds
		 * copy_lock too, may have looked for one already.  The Send
		 * then finds no buffer; the connection is closing and drops
		 * it.
		 */
		rv = -ENOENT;
		if (READ_ONCE(conn->qp->state) != XIW_QP_ERROR)
			rv = xiw_rqe_fetch(conn->qp, &ut->rqe);
		if (!rv) {
			ut->active = true;
			ut->mo = 0;
			ut->buf_len = xiw_rqe_length(&ut->rqe);
		}
		/* Completed under the lock: see xiw_rx_send_end(). */
		if (rv == -EINVAL)
			xiw_rqe_complete(conn->qp, &ut->rqe, 0, 0,
					 XIW_WC_LOC_QP_OP_ERR);
	}
	q->msn = ut->msn;
	q->posted = ut->active ? 1 : 0;
	q->mo = ut->mo;
	q->buf_len = ut->active ? ut->buf_len : 0;
	return rv == -EINVAL ? rv : 0;
}

/* A Send segment header: bind the message to a receive work request. */
static enum xiw_proto_err xiw_rx_send_hdr(struct xiw_conn *conn)
{
	struct xiw_rx_untagged *ut = &conn->rx_ut[RDMAP_QN_SEND];
	const struct xiw_rdmap_hdr *h = &conn->rx.hdr;
	struct xiw_ddp_queue q;
	int rv;

	if (READ_ONCE(conn->rtr_rx) && conn->mpa.rtr == XIW_MPA_RTR_SEND) {
		/*
		 * The initiator's zero-length Send RTR, not for the ULP;
		 * xiw_rx_hdr() checked its shape, its MSN is checked here.
		 */
		if (h->msn != ut->msn)
			return XIW_ERR_MPA_NO_MATCHING_RTR;
		return XIW_OK;
	}
	spin_lock_bh(&conn->copy_lock);
	rv = xiw_rx_send_bind(conn, &q);
	spin_unlock_bh(&conn->copy_lock);
	if (rv)
		return XIW_ERR_RDMAP_CATASTROPHIC;
	return xiw_ddp_check_untagged(h, conn->rx.data_len, &q);
}

/*
 * A Read or Atomic Request: it must carry the next MSN of queue 1 and fit
 * the inbound depth (IRD).  Queue 1 has no buffers of its own that a
 * later MSN could land in ahead of time: every request is answered in
 * MSN order, and the expected MSN only ever advances by one per request
 * (xiw_rx_irq_queue()), so one from further ahead is outside the legal
 * range (RFC 5041 sec 7.1), however much IRD room there is.
 */
static enum xiw_proto_err xiw_rx_irq_check(struct xiw_conn *conn)
{
	struct xiw_ddp_queue q = {
		.msn = conn->rx_ut[RDMAP_QN_READ_REQ].msn,
	};
	unsigned long flags;

	if (conn->rx.hdr.msn != q.msn)
		return XIW_ERR_DDP_UT_MSN_RANGE;
	spin_lock_irqsave(&conn->lock, flags);
	q.posted = conn->ird - conn->irq_count;
	spin_unlock_irqrestore(&conn->lock, flags);
	return xiw_ddp_check_untagged(&conn->rx.hdr, conn->rx.data_len, &q);
}

/* Queue @ne for the transmit engine to answer; the request is consumed. */
static void xiw_rx_irq_queue(struct xiw_conn *conn,
			     const struct xiw_irq_entry *ne)
{
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	conn->irq[(conn->irq_head + conn->irq_count) % conn->ird] = *ne;
	conn->irq_count++;
	spin_unlock_irqrestore(&conn->lock, flags);
	conn->rx_ut[RDMAP_QN_READ_REQ].msn++;
	xiw_conn_kick_tx(conn);
}

/* A Read Request: check the source and queue it for the transmit engine. */
static enum xiw_proto_err xiw_rx_read_req(struct xiw_conn *conn)
{
	const struct xiw_read_req *rr = &conn->rx.hdr.u.read_req;
	struct xiw_qp *qp = conn->qp;
	enum xiw_access_result res;
	struct xiw_mr *mr = NULL;
	enum xiw_proto_err err;
	bool rtr = READ_ONCE(conn->rtr_rx);

	err = xiw_rx_irq_check(conn);
	if (err)
		return err;

	if (rtr) {
		/* xiw_rx_hdr() saw the agreed RTR type; it reads nothing. */
		if (rr->size)
			return XIW_ERR_MPA_NO_MATCHING_RTR;
	} else if (rr->size) {
		/*
		 * Checked now so that a bad request is answered with its own
		 * header copied; no reference is kept.  The transmit engine
		 * looks the source up again for every response segment
		 * (xiw_tx_build_read_resp()): the MR may be deregistered or
		 * invalidated meanwhile, and a queued request must never keep
		 * deregistration waiting on a peer that stopped reading.
		 * Rights come from the MR alone: rdma_cm leaves the QP access
		 * flags of an active-side QP created before rdma_connect() at
		 * 0, and siw, the peer most ULPs were tested with, does not
		 * enforce them either.
		 */
		res = xiw_mr_lookup(qp->xdev, qp->base_qp.pd, rr->src_stag,
				    IB_ACCESS_REMOTE_READ, rr->src_to, rr->size,
				    &mr);
		if (res != XIW_ACC_OK) {
			ibdev_dbg(qp->base_qp.device,
				  "QP %u: Read Request STag 0x%x TO 0x%llx len %u: access %d\n",
				  xiw_qp_id(qp), rr->src_stag, rr->src_to,
				  rr->size, res);
			return xiw_read_src_err(res);
		}
		xiw_mr_put(mr);
	}

	xiw_rx_irq_queue(conn, &(struct xiw_irq_entry){
		.req = *rr, .msn = conn->rx.hdr.msn });
	return XIW_OK;
}

/*
 * A Read Response segment of @len octets may only be placed inside the
 * sink our own Read Request @e named: its STag, from its Tagged Offset on,
 * no more octets than it asked for.  The placement checks the MR itself
 * (xiw_rx_place_tagged()), but any range of any MR with local write of
 * the QP's PD would pass there.  The P2P RTR Read asked for nothing (its
 * sink is STag 1, length 0), so its response places nothing.  A
 * zero-length segment places nothing and is not checked (RFC 5040 sec
 * 4.5: the STag of a zero-length Read is not validated).  Caller holds
 * conn->lock.
 */
static enum xiw_proto_err xiw_rx_read_resp_sink(const struct xiw_orq_entry *e,
						const struct xiw_rdmap_hdr *h,
						u32 len)
{
	/* What xiw_tx_build_sqe() and xiw_tx_build_rtr() put in the request. */
	u32 stag = e->rtr ? XIW_RTR_READ_STAG : 0;
	u64 to = 0, sink_len = 0;

	if (!len)
		return XIW_OK;
	if (!e->rtr && e->sqe.num_sge) {
		stag = e->sqe.sge[0].lkey;
		to = e->sqe.sge[0].laddr;
		sink_len = e->sqe.sge[0].length;
	}
	if (h->stag != stag)
		return XIW_ERR_DDP_T_INVALID_STAG;
	/* No wrap: placement refuses a TO + len beyond 2^64 on its own. */
	if (h->to < to || h->to - to > sink_len ||
	    len > sink_len - (h->to - to) ||
	    (u64)e->received + len > sink_len)
		return XIW_ERR_DDP_T_BASE_BOUNDS;
	return XIW_OK;
}

/* A Read Response segment header: it must answer our oldest request. */
static enum xiw_proto_err xiw_rx_read_resp_hdr(struct xiw_conn *conn)
{
	const struct xiw_rdmap_hdr *h = &conn->rx.hdr;
	struct xiw_orq_entry *e;
	enum xiw_proto_err err = XIW_OK;
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	if (!conn->orq_count) {
		err = XIW_ERR_RDMAP_OPCODE;
	} else {
		e = &conn->orq[conn->orq_head];
		if (e->atomic)
			err = XIW_ERR_RDMAP_OPCODE;
		else
			err = xiw_rx_read_resp_sink(e, h, conn->rx.data_len);
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	return err;
}

/* An Atomic Response header: it must answer our oldest request. */
static enum xiw_proto_err xiw_rx_atomic_resp_hdr(struct xiw_conn *conn)
{
	const struct xiw_rdmap_hdr *h = &conn->rx.hdr;
	enum xiw_proto_err err = XIW_OK;
	struct xiw_orq_entry *e;
	unsigned long flags;

	if (h->msn != conn->rx_atomic_msn)
		return XIW_ERR_DDP_UT_MSN_RANGE;
	spin_lock_irqsave(&conn->lock, flags);
	if (!conn->orq_count) {
		/* Nothing asked for: as a Read Response without a request. */
		err = XIW_ERR_RDMAP_OPCODE;
	} else {
		e = &conn->orq[conn->orq_head];
		if (!e->atomic || e->req_id != h->u.atomic_resp.req_id)
			err = XIW_ERR_RDMAP_OPCODE;
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	return err;
}

/* An Atomic Request: check the target, execute it, queue the response. */
static enum xiw_proto_err xiw_rx_atomic_req(struct xiw_conn *conn)
{
	const struct xiw_atomic_req *ar = &conn->rx.hdr.u.atomic_req;
	struct xiw_qp *qp = conn->qp;
	enum xiw_access_result res;
	enum xiw_proto_err err;
	struct xiw_mr *mr;
	u64 orig, val;
	int rv;

	/* Atomics count against the same inbound depth (IRD) as Reads. */
	err = xiw_rx_irq_check(conn);
	if (err)
		return err;

	res = xiw_mr_lookup(qp->xdev, qp->base_qp.pd, ar->stag,
			    IB_ACCESS_REMOTE_ATOMIC, ar->to, XIW_ATOMIC_LEN,
			    &mr);
	if (res != XIW_ACC_OK) {
		ibdev_dbg(qp->base_qp.device,
			  "QP %u: Atomic Request STag 0x%x TO 0x%llx: access %d\n",
			  xiw_qp_id(qp), ar->stag, ar->to, res);
		return xiw_read_src_err(res);
	}
	/*
	 * The target is a host-order 64 bit word, as verbs define it; 8
	 * octets copied with the device's atomic lock held.  Receive engines
	 * are its only takers, in softirq or in process context.
	 */
	spin_lock_bh(&qp->xdev->atomic_lock);
	rv = xiw_mr_copy_from(mr, ar->to, &orig, XIW_ATOMIC_LEN);
	if (!rv) {
		val = xiw_atomic_apply(ar, orig);
		if (val != orig)
			rv = xiw_mr_copy_to(mr, ar->to, &val, XIW_ATOMIC_LEN);
	}
	spin_unlock_bh(&qp->xdev->atomic_lock);
	xiw_mr_put(mr);
	if (rv)
		return XIW_ERR_RDMAP_BASE_BOUNDS;

	xiw_rx_irq_queue(conn, &(struct xiw_irq_entry){
		.atomic = true, .req_id = ar->req_id, .orig = orig });
	return XIW_OK;
}

/*
 * A response freed an ORQ slot: wake the transmit engine if a request
 * waits for it.  The engine holds such a request as its current one
 * (tx_sqe_active), found the ORQ full or the Read fence up under
 * conn->lock and stopped; we freed the slot under the same lock before
 * this peek, so a stop we miss here saw our slot.  A posted request the
 * engine has not taken yet gets its kick too; with none, the next
 * doorbell starts the engine, and a Read's ping-pong (ib_read_lat) is
 * spared a worker's cross-CPU wakeup per response.
 */
static void xiw_rx_orq_kick(struct xiw_conn *conn)
{
	if (READ_ONCE(conn->tx_sqe_active) || xiw_sqe_next_valid(conn->qp))
		xiw_conn_kick_tx(conn);
}

/* An Atomic Response: the old value goes to the request's 8 octets. */
static enum xiw_proto_err xiw_rx_atomic_resp_end(struct xiw_conn *conn)
{
	const struct xiw_rdmap_hdr *h = &conn->rx.hdr;
	struct xiw_qp *qp = conn->qp;
	struct xiw_rx_copy cp = { .conn = conn };
	struct xiw_orq_entry done;
	enum xiw_wc_status st = XIW_WC_SUCCESS;
	unsigned long flags;
	u64 value = h->u.atomic_resp.value;

	conn->rx_atomic_msn++;
	/*
	 * Placed under copy_lock: a flush never completes the request half
	 * written.  The head entry stays as it is while conn->lock is
	 * dropped: the transmit engine only adds behind it, and only the
	 * holders of copy_lock take it off.
	 */
	spin_lock_bh(&conn->copy_lock);
	spin_lock_irqsave(&conn->lock, flags);
	if (!conn->orq_count) {
		spin_unlock_irqrestore(&conn->lock, flags);
		spin_unlock_bh(&conn->copy_lock);
		return XIW_OK;	/* flushed meanwhile */
	}
	done = conn->orq[conn->orq_head];
	spin_unlock_irqrestore(&conn->lock, flags);
	cp.src = (const u8 *)&value;
	if (xiw_sgl_walk(qp->xdev, qp->base_qp.pd, done.sqe.sge, 1, 0,
			 XIW_ATOMIC_LEN, IB_ACCESS_LOCAL_WRITE,
			 xiw_rx_copy_piece, &cp))
		st = XIW_WC_LOC_PROT_ERR;
	spin_lock_irqsave(&conn->lock, flags);
	conn->orq_head = (conn->orq_head + 1) % conn->ord;
	conn->orq_count--;
	/* Completed under the lock too: see xiw_rx_read_resp_end(). */
	xiw_sqe_complete(qp, &done.sqe, XIW_ATOMIC_LEN, st);
	spin_unlock_irqrestore(&conn->lock, flags);
	spin_unlock_bh(&conn->copy_lock);
	if (st != XIW_WC_SUCCESS)
		xiw_conn_event(conn, XIW_CEV_LOCAL_ERR, NULL);
	xiw_rx_orq_kick(conn);
	return XIW_OK;
}

/* Immediate Data (RFC 7306): completes the receive it was bound to. */
static enum xiw_proto_err xiw_rx_imm_end(struct xiw_conn *conn)
{
	struct xiw_rx_untagged *ut = &conn->rx_ut[RDMAP_QN_SEND];
	const struct xiw_rdmap_hdr *h = &conn->rx.hdr;

	ut->msn++;
	ut->mo = 0;
	spin_lock_bh(&conn->copy_lock);
	/* Completed under the lock: see xiw_rx_send_end(). */
	if (ut->active) {
		ut->active = false;
		if (h->opcode == RDMAP_OP_IMM_DATA_SE)
			ut->rqe.flags |= XIW_WQE_SOLICITED;
		xiw_rqe_complete_imm(conn->qp, &ut->rqe, 0,
				     (__force u32)cpu_to_be32(h->u.imm_data >> 32));
	}
	spin_unlock_bh(&conn->copy_lock);
	return XIW_OK;
}

static void xiw_rx_terminate(struct xiw_conn *conn, const u8 *body, u32 len)
{
	struct xiw_term t;

	if (xiw_term_parse(body, len, &t) == XIW_OK) {
		pr_info_ratelimited("QP %u: peer sent TERMINATE layer %u type %u code 0x%02x\n",
				    xiw_qp_id(conn->qp), t.ctrl.code.layer,
				    t.ctrl.code.etype, t.ctrl.code.ecode);
		xiw_qp_event(conn->qp, t.ctrl.code.layer, t.ctrl.code.etype);
		xiw_count_term(conn->qp->xdev, t.ctrl.code.layer, false);
		trace_xiw_term(xiw_qp_id(conn->qp), false, t.ctrl.code.layer,
			       t.ctrl.code.etype, t.ctrl.code.ecode);
	} else {
		pr_info_ratelimited("QP %u: peer sent a malformed TERMINATE\n",
				    xiw_qp_id(conn->qp));
		xiw_count_term(conn->qp->xdev, TERM_LAYER_RDMAP, false);
		xiw_qp_event(conn->qp, TERM_LAYER_RDMAP,
			     RDMAP_ETYPE_CATASTROPHIC);
	}
	/*
	 * Nothing is sent back after a TERMINATE, and the close is graceful
	 * unless ours is partly out (XIW_CEV_PEER_TERM).
	 */
	xiw_conn_event(conn, XIW_CEV_PEER_TERM, NULL);
}

/*
 * A responder in peer-to-peer mode waits for the agreed RTR (RFC 6581):
 * the first message must be exactly that zero-length Write, Read Request
 * or Send.  Anything else is not the RTR it agreed to.
 */
static bool xiw_rx_is_rtr(struct xiw_conn *conn)
{
	const struct xiw_rdmap_hdr *h = &conn->rx.hdr;

	if (!h->last || conn->rx.data_len)
		return false;
	switch (conn->mpa.rtr) {
	case XIW_MPA_RTR_WRITE:
		return h->opcode == RDMAP_OP_WRITE;
	case XIW_MPA_RTR_READ:
		return h->opcode == RDMAP_OP_READ_REQ;
	case XIW_MPA_RTR_SEND:
		return h->opcode == RDMAP_OP_SEND && !h->mo;
	default:
		return false;
	}
}

/* Header of a new segment: check it against the queues it addresses. */
static __always_inline enum xiw_proto_err xiw_rx_hdr(struct xiw_conn *conn)
{
	const struct xiw_rdmap_hdr *h = &conn->rx.hdr;

	if (READ_ONCE(conn->rtr_rx) && h->opcode != RDMAP_OP_TERMINATE &&
	    !xiw_rx_is_rtr(conn))
		return XIW_ERR_MPA_NO_MATCHING_RTR;

	switch (h->opcode) {
	case RDMAP_OP_WRITE:
		/* The MR's rights are checked as data arrives (see above). */
		return XIW_OK;
	case RDMAP_OP_READ_REQ:
		return XIW_OK;	/* single segment: handled at its end */
	case RDMAP_OP_READ_RESP:
		return xiw_rx_read_resp_hdr(conn);
	case RDMAP_OP_SEND:
	case RDMAP_OP_SEND_SE:
	case RDMAP_OP_SEND_INV:
	case RDMAP_OP_SEND_SE_INV:
		return xiw_rx_send_hdr(conn);
	case RDMAP_OP_TERMINATE:
		if (h->msn != conn->rx_term_msn || h->mo)
			return XIW_ERR_DDP_UT_MSN_RANGE;
		return XIW_OK;
	case RDMAP_OP_IMM_DATA:
	case RDMAP_OP_IMM_DATA_SE:
		/* libsiw cannot report immediate data: user QPs refuse it. */
		if (!conn->qp->kernel_verbs)
			return XIW_ERR_RDMAP_OPCODE;
		return xiw_rx_send_hdr(conn);
	case RDMAP_OP_ATOMIC_REQ:
		return XIW_OK;	/* single segment: executed at its end */
	case RDMAP_OP_ATOMIC_RESP:
		return xiw_rx_atomic_resp_hdr(conn);
	default:
		return XIW_ERR_RDMAP_OPCODE;
	}
}

/* Payload of the current segment, @len octets at segment offset @off. */
static __always_inline enum xiw_proto_err
xiw_rx_data(struct xiw_conn *conn, const u8 *data, u32 len, u32 off)
{
	const struct xiw_rdmap_hdr *h = &conn->rx.hdr;
	struct xiw_rx_untagged *ut = &conn->rx_ut[RDMAP_QN_SEND];
	enum xiw_proto_err err = XIW_OK;
	unsigned long flags;
	bool owned;

	switch (h->opcode) {
	case RDMAP_OP_WRITE:
		return xiw_rx_place_tagged(conn, h->stag, h->to + off, data,
					   len, IB_ACCESS_REMOTE_WRITE);
	case RDMAP_OP_READ_RESP:
		/*
		 * The ORQ's head is ours while it is not empty; the transmit
		 * engine adds to it concurrently, so the count is read under
		 * conn->lock, and only holders of copy_lock empty it.
		 */
		spin_lock_bh(&conn->copy_lock);
		spin_lock_irqsave(&conn->lock, flags);
		owned = conn->orq_count;
		spin_unlock_irqrestore(&conn->lock, flags);
		if (owned)	/* else flushed: drop */
			err = xiw_rx_place_tagged(conn, h->stag, h->to + off,
						  data, len,
						  IB_ACCESS_LOCAL_WRITE);
		spin_unlock_bh(&conn->copy_lock);
		return err;
	case RDMAP_OP_SEND:
	case RDMAP_OP_SEND_SE:
	case RDMAP_OP_SEND_INV:
	case RDMAP_OP_SEND_SE_INV:
		/* ut->active: see xiw_rx_send_end(). */
		spin_lock_bh(&conn->copy_lock);
		if (ut->active &&
		    xiw_rx_place_rqe(conn, &ut->rqe, h->mo + off, data, len)) {
			ut->active = false;
			xiw_rqe_complete(conn->qp, &ut->rqe, 0, 0,
					 XIW_WC_LOC_PROT_ERR);
			err = XIW_ERR_RDMAP_CATASTROPHIC;
		}
		spin_unlock_bh(&conn->copy_lock);
		return err;
	case RDMAP_OP_TERMINATE:
		/* seg_check bounds the body; keep it for xiw_rx_end(). */
		if (off + len > sizeof(conn->rx_term_body) - RDMAP_TERM_CTRL_LEN)
			return XIW_ERR_RDMAP_TERM_MALFORMED;
		memcpy(conn->rx_term_body + RDMAP_TERM_CTRL_LEN + off, data,
		       len);
		return XIW_OK;
	default:
		return XIW_OK;
	}
}

static enum xiw_proto_err xiw_rx_send_end(struct xiw_conn *conn)
{
	struct xiw_rx_untagged *ut = &conn->rx_ut[RDMAP_QN_SEND];
	const struct xiw_rdmap_hdr *h = &conn->rx.hdr;
	struct xiw_qp *qp = conn->qp;
	u32 inval = 0, bytes;

	if (READ_ONCE(conn->rtr_rx) && conn->mpa.rtr == XIW_MPA_RTR_SEND) {
		ut->msn++;
		return XIW_OK;	/* the caller ends the RTR wait */
	}
	ut->mo = h->mo + conn->rx.data_len;
	if (!h->last)
		return XIW_OK;

	bytes = ut->mo;
	ut->msn++;
	ut->mo = 0;
	if (h->opcode == RDMAP_OP_SEND_INV || h->opcode == RDMAP_OP_SEND_SE_INV) {
		if (xiw_mr_invalidate(qp->xdev, qp->base_qp.pd, h->rsvdulp) !=
		    XIW_ACC_OK) {
			spin_lock_bh(&conn->copy_lock);
			if (ut->active) {
				ut->active = false;
				xiw_rqe_complete(qp, &ut->rqe, bytes, 0,
						 XIW_WC_REM_INV_REQ_ERR);
			}
			spin_unlock_bh(&conn->copy_lock);
			return XIW_ERR_RDMAP_CANNOT_INVALIDATE;
		}
		inval = h->rsvdulp;
	}
	/*
	 * ut->active and ut->rqe change only under copy_lock, by this
	 * engine and by the flush hook.  The receive is completed in the
	 * same section that gives it up: a flush between the two would
	 * complete the receives behind it, still in the ring, ahead of it.
	 */
	spin_lock_bh(&conn->copy_lock);
	if (ut->active) {
		ut->active = false;
		if (h->opcode == RDMAP_OP_SEND_SE ||
		    h->opcode == RDMAP_OP_SEND_SE_INV)
			ut->rqe.flags |= XIW_WQE_SOLICITED;
		xiw_rqe_complete(qp, &ut->rqe, bytes, inval, XIW_WC_SUCCESS);
	}
	spin_unlock_bh(&conn->copy_lock);
	return XIW_OK;
}

static enum xiw_proto_err xiw_rx_read_resp_end(struct xiw_conn *conn)
{
	const struct xiw_rdmap_hdr *h = &conn->rx.hdr;
	enum xiw_wc_status st = XIW_WC_SUCCESS;
	struct xiw_orq_entry *e, done;
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	if (!conn->orq_count) {
		spin_unlock_irqrestore(&conn->lock, flags);
		return XIW_OK;	/* flushed meanwhile */
	}
	e = &conn->orq[conn->orq_head];
	e->received += conn->rx.data_len;
	if (h->last) {
		done = *e;
		conn->orq_head = (conn->orq_head + 1) % conn->ord;
		conn->orq_count--;
	}
	if (h->last && !done.rtr) {
		/*
		 * RDMA Read with local invalidate (rdma_rw's iWARP reads):
		 * the sink STag is invalid once the data is in, before the
		 * consumer sees the completion.
		 */
		if (done.sqe.opcode == XIW_OP_READ_LOCAL_INV &&
		    done.sqe.num_sge &&
		    xiw_mr_invalidate(conn->qp->xdev, conn->qp->base_qp.pd,
				      done.sqe.sge[0].lkey) != XIW_ACC_OK)
			st = XIW_WC_LOC_PROT_ERR;
		/*
		 * Completed under the lock a flush takes: a flush between
		 * the dequeue and the completion would complete the Reads
		 * behind this one (the engine's, the ORQ's) ahead of it.
		 */
		xiw_sqe_complete(conn->qp, &done.sqe, done.received, st);
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	if (st != XIW_WC_SUCCESS)
		xiw_conn_event(conn, XIW_CEV_LOCAL_ERR, NULL);
	if (h->last)
		xiw_rx_orq_kick(conn);
	return XIW_OK;
}

/* The current segment is complete and its CRC verified. */
static __always_inline enum xiw_proto_err xiw_rx_end(struct xiw_conn *conn)
{
	const struct xiw_rdmap_hdr *h = &conn->rx.hdr;
	enum xiw_proto_err err = XIW_OK;
	bool rtr = READ_ONCE(conn->rtr_rx);

	switch (h->opcode) {
	case RDMAP_OP_WRITE:
		break;
	case RDMAP_OP_READ_REQ:
		err = xiw_rx_read_req(conn);
		break;
	case RDMAP_OP_READ_RESP:
		err = xiw_rx_read_resp_end(conn);
		break;
	case RDMAP_OP_SEND:
	case RDMAP_OP_SEND_SE:
	case RDMAP_OP_SEND_INV:
	case RDMAP_OP_SEND_SE_INV:
		err = xiw_rx_send_end(conn);
		break;
	case RDMAP_OP_IMM_DATA:
	case RDMAP_OP_IMM_DATA_SE:
		err = xiw_rx_imm_end(conn);
		break;
	case RDMAP_OP_ATOMIC_REQ:
		err = xiw_rx_atomic_req(conn);
		break;
	case RDMAP_OP_ATOMIC_RESP:
		err = xiw_rx_atomic_resp_end(conn);
		break;
	case RDMAP_OP_TERMINATE:
		conn->rx_term_msn++;
		/* Control word from the header octets, the rest from data. */
		memcpy(conn->rx_term_body,
		       conn->rx.raw + MPA_HDR_LEN + DDP_UNTAGGED_HDR_LEN,
		       RDMAP_TERM_CTRL_LEN);
		xiw_rx_terminate(conn, conn->rx_term_body,
				 RDMAP_TERM_CTRL_LEN + conn->rx.data_len);
		return XIW_OK;
	default:
		break;
	}
	if (!err && rtr) {
		/* The first message after MPA was the RTR: now we may talk. */
		WRITE_ONCE(conn->rtr_rx, false);
		xiw_conn_kick_tx(conn);
	}
	return err;
}

/*
 * Soft-RNR.  A Send carrying the next expected MSN found no posted receive
 * (only a Send header gets XIW_ERR_DDP_UT_MSN_NOBUF from xiw_rx_hdr()).
 * With the device's soft_rnr_ms set, the receive engine holds instead of
 * sending the TERMINATE: the deframer keeps the header, the socket is not
 * read (TCP's window then closes on the peer) and the retry work runs the
 * header again about every millisecond, or at once when a kernel consumer
 * posts a receive.  Nothing different reaches the wire; when the time is
 * up the TERMINATE goes out as without the wait.  true: hold.
 */
static bool xiw_rx_rnr_hold(struct xiw_conn *conn)
{
	struct xiw_device *xdev = conn->qp->xdev;

	if (!conn->rnr_ms)
		return false;
	if (!conn->rx_stalled) {
		/* The peer has closed its side: no receive will make up for it. */
		if (READ_ONCE(conn->state) == XIW_CONN_PEER_FIN)
			return false;
		conn->rnr_deadline = jiffies + msecs_to_jiffies(conn->rnr_ms);
		WRITE_ONCE(conn->rx_stalled, true);
		atomic64_inc(&xdev->stats.soft_rnr_stalls);
		trace_xiw_soft_rnr(xiw_qp_id(conn->qp), conn->rx.hdr.msn, 0);
	} else if (time_after_eq(jiffies, conn->rnr_deadline) ||
		   READ_ONCE(conn->state) == XIW_CONN_PEER_FIN) {
		WRITE_ONCE(conn->rx_stalled, false);
		atomic64_inc(&xdev->stats.soft_rnr_timeouts);
		trace_xiw_soft_rnr(xiw_qp_id(conn->qp), conn->rx.hdr.msn, 2);
		return false;
	}
	xiw_conn_rnr_hold(conn);
	return true;
}

/**
 * xiw_qp_rx_resume - retry the Send that holds the receive engine
 * @conn: the connection; the caller holds the socket lock
 *
 * Return: true when the engine may read the socket again.
 */
bool xiw_qp_rx_resume(struct xiw_conn *conn)
{
	enum xiw_proto_err err;

	if (!xiw_conn_rx_live(conn) || !conn->rx_stalled)
		return false;
	err = xiw_rx_hdr(conn);
	if (err == XIW_ERR_DDP_UT_MSN_NOBUF && xiw_rx_rnr_hold(conn))
		return false;
	WRITE_ONCE(conn->rx_stalled, false);
	if (err) {
		xiw_rx_fail(conn, err);
		return false;
	}
	trace_xiw_soft_rnr(xiw_qp_id(conn->qp), conn->rx.hdr.msn, 1);
	return true;
}

/* The current segment is complete, its CRC verified: count it. */
static __always_inline void xiw_rx_seg_count(struct xiw_conn *conn)
{
	atomic64_inc(&conn->qp->xdev->stats.rx_fpdus);
	trace_xiw_fpdu_rx(xiw_qp_id(conn->qp), &conn->rx.hdr,
			  conn->rx.data_len);
}

static __always_inline enum xiw_proto_err xiw_rx_seg_end(struct xiw_conn *conn)
{
	xiw_rx_seg_count(conn);
	return xiw_rx_end(conn);
}

/*
 * Is the current segment the last of a plain Send (no invalidate, not the
 * RTR)?  Then its last chunk is placed and the receive completed in one
 * section of copy_lock (xiw_rx_send_last(), xiw_rx_send_whole()).
 */
static bool xiw_rx_is_send_last(struct xiw_conn *conn)
{
	const struct xiw_rdmap_hdr *h = &conn->rx.hdr;

	return h->last && !READ_ONCE(conn->rtr_rx) &&
	       (h->opcode == RDMAP_OP_SEND || h->opcode == RDMAP_OP_SEND_SE);
}

/*
 * The last chunk and the end of a plain Send: what xiw_rx_data() and then
 * xiw_rx_send_end() do, in one section of copy_lock, which the caller
 * holds.  @data: @len octets at segment offset @off.  The caller counts
 * the message (xiw_rx_send_done()) unless this fails.
 */
static __always_inline enum xiw_proto_err
xiw_rx_send_last_locked(struct xiw_conn *conn, const u8 *data, u32 len, u32 off)
{
	struct xiw_rx_untagged *ut = &conn->rx_ut[RDMAP_QN_SEND];
	const struct xiw_rdmap_hdr *h = &conn->rx.hdr;
	enum xiw_proto_err err = XIW_OK;

	lockdep_assert_held(&conn->copy_lock);
	if (ut->active) {
		ut->active = false;
		if (xiw_rx_place_rqe(conn, &ut->rqe, h->mo + off, data, len)) {
			xiw_rqe_complete(conn->qp, &ut->rqe, 0, 0,
					 XIW_WC_LOC_PROT_ERR);
			err = XIW_ERR_RDMAP_CATASTROPHIC;
		} else {
			if (h->opcode == RDMAP_OP_SEND_SE)
				ut->rqe.flags |= XIW_WQE_SOLICITED;
			xiw_rqe_complete(conn->qp, &ut->rqe,
					 h->mo + conn->rx.data_len, 0,
					 XIW_WC_SUCCESS);
		}
	}
	return err;
}

/* A plain Send has ended, placed and completed: the next MSN is due. */
static __always_inline void xiw_rx_send_done(struct xiw_conn *conn)
{
	struct xiw_rx_untagged *ut = &conn->rx_ut[RDMAP_QN_SEND];

	ut->msn++;
	ut->mo = 0;
	xiw_rx_seg_count(conn);
}

/* The last chunk and the end of a plain Send (xiw_rx_is_send_last()). */
static enum xiw_proto_err xiw_rx_send_last(struct xiw_conn *conn,
					   const u8 *data, u32 len, u32 off)
{
	enum xiw_proto_err err;

	spin_lock_bh(&conn->copy_lock);
	err = xiw_rx_send_last_locked(conn, data, len, off);
	spin_unlock_bh(&conn->copy_lock);
	if (!err)
		xiw_rx_send_done(conn);
	return err;
}

/*
 * The last segment of a plain Send, all of it in the input behind its
 * header (@ev->whole): bound to its receive, taken, placed and completed
 * in one section of copy_lock.  *@used: the octets taken behind the
 * header.  Return: as xiw_rx_hdr() (%XIW_ERR_DDP_UT_MSN_NOBUF with nothing
 * taken), then as xiw_rx_take_whole() and xiw_rx_send_last().
 */
static enum xiw_proto_err xiw_rx_send_whole(struct xiw_conn *conn,
					    const struct xiw_rx_event *ev,
					    size_t *used)
{
	struct xiw_ddp_queue q;
	enum xiw_proto_err err;

	*used = 0;
	spin_lock_bh(&conn->copy_lock);
	if (xiw_rx_send_bind(conn, &q))
		err = XIW_ERR_RDMAP_CATASTROPHIC;
	else
		err = xiw_ddp_check_untagged(&conn->rx.hdr, conn->rx.data_len,
					     &q);
	if (!err)
		err = xiw_rx_take_whole(&conn->rx, ev->data, used);
	if (!err)
		err = xiw_rx_send_last_locked(conn, ev->data, ev->len, 0);
	spin_unlock_bh(&conn->copy_lock);
	if (!err)
		xiw_rx_send_done(conn);
	return err;
}

/*
 * The payload of the current segment, @len octets at @data, and its end,
 * the CRC verified: the segment came whole (xiw_rx_take_whole()).  Not a
 * plain Send's last: xiw_rx_send_whole() takes those.
 */
static enum xiw_proto_err xiw_rx_whole(struct xiw_conn *conn, const u8 *data,
				       u32 len)
{
	enum xiw_proto_err err;

	if (len) {
		err = xiw_rx_data(conn, data, len, 0);
		if (err || !xiw_conn_rx_live(conn))
			return err;
	}
	return xiw_rx_seg_end(conn);
}

/*
 * A header event: check the header and, where the segment came whole
 * (&xiw_rx_event.whole), take the rest of it too.  *@used: the octets
 * taken behind the header.  Return: as xiw_rx_hdr(), with nothing taken
 * on %XIW_ERR_DDP_UT_MSN_NOBUF; then as xiw_rx_take_whole() and the
 * segment's placement and end.
 */
static enum xiw_proto_err xiw_rx_hdr_event(struct xiw_conn *conn,
					   const struct xiw_rx_event *ev,
					   size_t *used)
{
	enum xiw_proto_err err;

	*used = 0;
	if (ev->whole && xiw_rx_is_send_last(conn))
		return xiw_rx_send_whole(conn, ev, used);
	err = xiw_rx_hdr(conn);
	if (err || !ev->whole || !xiw_conn_rx_live(conn))
		return err;
	err = xiw_rx_take_whole(&conn->rx, ev->data, used);
	if (!err)
		err = xiw_rx_whole(conn, ev->data, ev->len);
	return err;
}

/*
 * Feed @len stream octets at @p through the deframer.  Return: the octets
 * it took: all of them, unless the engine stalled (soft-RNR).  Inline in
 * the skb walk of every received skb.
 */
static __always_inline size_t xiw_rx_feed(struct xiw_conn *conn, const u8 *p,
					  size_t len)
{
	size_t left = len, used;
	struct xiw_rx_event ev;
	enum xiw_proto_err err;

	while (left && !conn->rx_stalled && xiw_conn_rx_live(conn)) {
		err = xiw_rx_step(&conn->rx, p, left, &used, &ev);
		p += used;
		left -= used;
		if (!err) {
			switch (ev.type) {
			case XIW_RX_EV_HDR:
				err = xiw_rx_hdr_event(conn, &ev, &used);
				if (err == XIW_ERR_DDP_UT_MSN_NOBUF &&
				    xiw_rx_rnr_hold(conn))
					return len - left;
				p += used;
				left -= used;
				break;
			case XIW_RX_EV_DATA:
				if (ev.end && xiw_rx_is_send_last(conn)) {
					err = xiw_rx_send_last(conn, ev.data,
							       ev.len,
							       ev.offset);
					break;
				}
				err = xiw_rx_data(conn, ev.data, ev.len,
						  ev.offset);
				/* The end, as if it came in the next round. */
				if (!err && ev.end && xiw_conn_rx_live(conn))
					err = xiw_rx_seg_end(conn);
				break;
			case XIW_RX_EV_END:
				err = xiw_rx_seg_end(conn);
				break;
			default:
				break;
			}
		}
		if (err) {
			if (err == XIW_ERR_MPA_CRC)
				atomic64_inc(&conn->qp->xdev->stats.rx_crc_errors);
			xiw_rx_fail(conn, err);
			return len;
		}
	}
	return len - left;
}

/* xiw_skb_walk() of any skb, by skb_seq_read(). */
static size_t xiw_skb_walk_seq(struct sk_buff *skb, unsigned int off,
			       size_t len,
			       bool (*fn)(void *priv, const u8 *p,
					  unsigned int n),
			       void *priv)
{
	struct skb_seq_state st;
	unsigned int done = 0, n;
	const u8 *data;

	skb_prepare_seq_read(skb, off, off + len, &st);
	while ((n = skb_seq_read(done, &data, &st)) != 0) {
		/*
		 * skb_seq_read() hands out whole blocks: the last one can
		 * run past the end of the range (tcp_read_sock() passes a
		 * shorter range ahead of urgent data, for one).
		 */
		if (n > len - done)
			n = len - done;
		done += n;
		if (!fn(priv, data, n) || done == len) {
			skb_abort_seq_read(&st);
			break;
		}
	}
	return done;
}

/**
 * xiw_skb_walk - hand a byte range of an skb to a consumer, piece by piece
 * @skb: the skb: linear part, page fragments and frag_list, in any mix
 * @off: first octet, relative to @skb->data
 * @len: number of octets
 * @fn: called with each contiguous piece in stream order; returns false
 *	to stop the walk after that piece
 * @priv: passed to @fn
 *
 * Return: octets handed to @fn, @len unless @fn stopped the walk.
 */
VISIBLE_IF_KUNIT size_t xiw_skb_walk(struct sk_buff *skb, unsigned int off,
				     size_t len,
				     bool (*fn)(void *priv, const u8 *p,
						unsigned int n),
				     void *priv)
{
	const struct skb_shared_info *sh = skb_shinfo(skb);
	unsigned int hl = skb_headlen(skb), pos, at, n, i;
	size_t done = 0;

	/*
	 * A linear part and page fragments the kernel maps for good (no
	 * highmem), what TCP hands the receive engine nearly always, are
	 * walked right here; skb_seq_read() takes any other skb.
	 */
	if (IS_ENABLED(CONFIG_HIGHMEM) || skb_has_frag_list(skb) ||
	    !xiw_skb_frags_readable(skb))
		return xiw_skb_walk_seq(skb, off, len, fn, priv);
	if (off < hl) {
		n = min_t(size_t, len, hl - off);
		done = n;
		if (!fn(priv, skb->data + off, n) || done == len)
			return done;
	}
	pos = hl;
	for (i = 0; i < sh->nr_frags && done < len; i++) {
		const skb_frag_t *f = &sh->frags[i];
		unsigned int fl = skb_frag_size(f);

		at = off + done;
		if (at >= pos + fl) {
			pos += fl;
			continue;
		}
		n = min_t(size_t, len - done, pos + fl - at);
		done += n;
		if (!fn(priv, (const u8 *)skb_frag_address(f) + (at - pos), n) ||
		    done == len)
			break;
		pos += fl;
	}
	return done;
}
EXPORT_SYMBOL_IF_KUNIT(xiw_skb_walk);

static bool xiw_rx_feed_piece(void *priv, const u8 *p, unsigned int n)
{
	struct xiw_conn *conn = priv;

	conn->rx_unused = n - xiw_rx_feed(conn, p, n);
	return !conn->rx_stalled && xiw_conn_rx_live(conn);
}

/**
 * xiw_qp_rx_actor - tcp_read_sock() actor of a connected QP
 * @rd: read descriptor, arg.data is the connection
 * @skb: the skb
 * @off: offset of the new data in @skb
 * @len: octets of new data
 *
 * Return: octets consumed: @len (what follows an error is dropped), or
 * fewer when a Send without a receive holds the engine (soft-RNR); 0 while
 * it is held, which ends tcp_read_sock() and leaves the rest queued.
 */
int xiw_qp_rx_actor(read_descriptor_t *rd, struct sk_buff *skb,
		    unsigned int off, size_t len)
{
	struct xiw_conn *conn = rd->arg.data;
	size_t done;

	if (!xiw_conn_rx_live(conn))
		return len;
	if (conn->rx_stalled)
		return 0;
	conn->rx_unused = 0;
	done = xiw_skb_walk(skb, off, len, xiw_rx_feed_piece, conn);
	if (conn->rx_stalled && xiw_conn_rx_live(conn))
		len = done - conn->rx_unused;
	atomic64_add(len, &conn->qp->xdev->stats.rx_bytes);
	return len;
}

/**
 * xiw_qp_rx_flush - complete the receive work request being filled
 * @conn: the connection; the caller holds @conn->copy_lock, so no Send is
 *	being placed into it
 */
void xiw_qp_rx_flush(struct xiw_conn *conn)
{
	struct xiw_rx_untagged *ut = &conn->rx_ut[RDMAP_QN_SEND];

	lockdep_assert_held(&conn->copy_lock);
	if (ut->active) {
		ut->active = false;
		xiw_rqe_complete(conn->qp, &ut->rqe, 0, 0,
				 XIW_WC_WR_FLUSH_ERR);
	}
}
