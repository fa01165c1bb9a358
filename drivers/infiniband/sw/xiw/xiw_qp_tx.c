// SPDX-License-Identifier: GPL-2.0
/*
 * xiw: the transmit engine.  One work item per connected QP turns send
 * work requests, RDMA Read Responses, RTR and TERMINATE messages into
 * FPDUs of at most one MSS and hands them to TCP.
 *
 * Order of service: a partly sent FPDU first (an FPDU is never cut), then a
 * pending TERMINATE, the P2P RTR, the rest of the current send work
 * request, inbound Read Requests, and finally the next send work request.
 */

#include <linux/net.h>
#include <linux/tcp.h>
#include <net/tcp.h>

#include "xiw.h"
#include "xiw_dp.h"

/* FPDUs built per run before the work item yields the CPU. */
#define XIW_TX_BUDGET		64

/* Hand the rest of tx_buf to TCP; -EAGAIN when the socket is full. */
static int xiw_tx_push(struct xiw_conn *conn, bool more)
{
	while (conn->tx_off < conn->tx_len) {
		struct msghdr msg = {
			.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL |
				     (more ? MSG_MORE : 0),
		};
		struct kvec kv = {
			.iov_base = conn->tx_buf + conn->tx_off,
			.iov_len = conn->tx_len - conn->tx_off,
		};
		int rv;

		rv = kernel_sendmsg(conn->sock, &msg, &kv, 1, kv.iov_len);
		if (rv < 0)
			return rv;
		conn->tx_off += rv;
	}
	conn->tx_len = 0;
	conn->tx_off = 0;
	return 0;
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
	if (xiw_fpdu_build(&conn->tx, sl, plen ? 2 : 1, conn->tx_buf,
			   XIW_TX_BUF_LEN, &len))
		return -EINVAL;
	conn->tx_len = len;
	conn->tx_off = 0;
	return 0;
}

/* Largest payload of one segment with a header of @op. */
static u32 xiw_tx_max_payload(struct xiw_conn *conn, u8 op)
{
	const struct xiw_rdmap_opinfo *info = xiw_rdmap_op_lookup(op);
	u32 mss = READ_ONCE(tcp_sk(conn->sock->sk)->mss_cache);
	u32 mul = xiw_mpa_mulpdu(mss, conn->mpa.markers_tx, conn->mpa.crc);

	/* A tiny MSS still makes progress: TCP splits, the peer copes. */
	mul = max_t(u32, mul, info->hdr_len + 256);
	mul = min_t(u32, mul, MPA_MAX_ULPDU);
	return mul - info->hdr_len;
}

static void xiw_tx_untagged(struct xiw_rdmap_hdr *h, u8 op, u32 qn, u32 msn,
			    u32 mo, bool last)
{
	memset(h, 0, sizeof(*h));
	h->ddp_version = DDP_VERSION;
	h->rdmap_version = RDMAP_VERSION;
	h->opcode = op;
	h->qn = qn;
	h->msn = msn;
	h->mo = mo;
	h->last = last;
}

static void xiw_tx_tagged(struct xiw_rdmap_hdr *h, u8 op, u32 stag, u64 to,
			  bool last)
{
	memset(h, 0, sizeof(*h));
	h->tagged = true;
	h->ddp_version = DDP_VERSION;
	h->rdmap_version = RDMAP_VERSION;
	h->opcode = op;
	h->stag = stag;
	h->to = to;
	h->last = last;
}

struct xiw_tx_copy {
	u8 *dst;
};

static int xiw_tx_copy_piece(void *priv, void *kaddr, unsigned int len)
{
	struct xiw_tx_copy *cp = priv;

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
 * into @buf, checking every local STag.  Caller holds conn->lock.
 */
static int xiw_tx_gather(struct xiw_conn *conn, const struct xiw_ksqe *sqe,
			 u32 off, u8 *buf, u32 len)
{
	struct xiw_qp *qp = conn->qp;
	struct xiw_tx_copy cp = { .dst = buf };

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

/* Complete the current send work request if the engine still owns it. */
static void xiw_tx_sqe_done(struct xiw_conn *conn, enum xiw_wc_status status)
{
	unsigned long flags;
	bool owned;

	spin_lock_irqsave(&conn->lock, flags);
	owned = conn->tx_sqe_active;
	conn->tx_sqe_active = false;
	spin_unlock_irqrestore(&conn->lock, flags);
	conn->tx_complete = false;
	if (owned)
		xiw_sqe_complete(conn->qp, &conn->tx_sqe, conn->tx_sqe_len,
				 status);
}

/* A local error on the send work request: complete it and fail the QP. */
static void xiw_tx_sqe_fail(struct xiw_conn *conn, enum xiw_wc_status status)
{
	xiw_tx_sqe_done(conn, status);
	set_bit(XIW_CONN_TX_DEAD, &conn->flags);
	xiw_qp_modify(conn->qp, XIW_QP_ERROR);
}

/* Build the TERMINATE message; the caller sends it and fails the QP. */
static int xiw_tx_build_term(struct xiw_conn *conn)
{
	struct xiw_rdmap_hdr h;
	struct xiw_term t;
	unsigned long flags;
	size_t blen;
	u8 body[RDMAP_TERM_MAX_LEN];

	spin_lock_irqsave(&conn->lock, flags);
	conn->term_pending = false;
	xiw_term_init(&t, conn->term_err, conn->term_hdr_len ?
		      conn->term_hdr : NULL, conn->term_hdr_len);
	spin_unlock_irqrestore(&conn->lock, flags);
	if (xiw_term_build(&t, body, sizeof(body), &blen))
		return -EINVAL;
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
		h.u.read_req.sink_stag = 1;
		h.u.read_req.src_stag = 1;
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

/* Next segment of the oldest inbound Read Request; false if none. */
static int xiw_tx_build_read_resp(struct xiw_conn *conn, bool *built)
{
	struct xiw_irq_entry *e;
	struct xiw_rdmap_hdr h;
	unsigned long flags;
	u32 max, seg;
	bool last;
	int rv = 0;

	*built = false;
	max = xiw_tx_max_payload(conn, RDMAP_OP_READ_RESP);
	spin_lock_irqsave(&conn->lock, flags);
	if (!conn->irq_count) {
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
	seg = min(e->req.size - e->sent, max);
	last = e->sent + seg == e->req.size;
	if (seg)
		rv = xiw_tx_copy_mr(e->mr, e->req.src_to + e->sent,
				    conn->tx_payload, seg);
	spin_unlock_irqrestore(&conn->lock, flags);
	if (rv)
		return -EFAULT;

	xiw_tx_tagged(&h, RDMAP_OP_READ_RESP, e->req.sink_stag,
		      e->req.sink_to + e->sent, last);
	rv = xiw_tx_frame(conn, &h, conn->tx_payload, seg);
	if (rv)
		return rv;
	*built = true;
	e->sent += seg;
	if (last) {
		struct xiw_mr *mr;

		spin_lock_irqsave(&conn->lock, flags);
		mr = e->mr;
		e->mr = NULL;
		conn->irq_head = (conn->irq_head + 1) % conn->ird;
		conn->irq_count--;
		spin_unlock_irqrestore(&conn->lock, flags);
		if (mr)
			xiw_mr_put(mr);
	}
	return 0;
}

/* Take the next send work request; false if there is none to start. */
static bool xiw_tx_next_sqe(struct xiw_conn *conn)
{
	struct xiw_ksqe *sqe = &conn->tx_sqe;
	unsigned long flags;
	int rv;

	for (;;) {
		rv = xiw_sqe_fetch(conn->qp, sqe);
		if (rv == -ENOENT)
			return false;
		if (rv) {
			conn->tx_sqe_active = true;
			conn->tx_sqe_len = 0;
			xiw_tx_sqe_fail(conn, XIW_WC_LOC_QP_OP_ERR);
			return false;
		}
		if (sqe->opcode == XIW_OP_REG_MR ||
		    sqe->opcode == XIW_OP_INVAL_STAG) {
			/* Local operations complete in work request order. */
			if (xiw_sqe_local_op(conn->qp, sqe)) {
				set_bit(XIW_CONN_TX_DEAD, &conn->flags);
				xiw_qp_modify(conn->qp, XIW_QP_ERROR);
				return false;
			}
			continue;
		}
		spin_lock_irqsave(&conn->lock, flags);
		conn->tx_sqe_active = true;
		spin_unlock_irqrestore(&conn->lock, flags);
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
 * *built false when the request must wait (Read fence, ORQ full).
 */
static int xiw_tx_build_sqe(struct xiw_conn *conn, bool *built)
{
	struct xiw_ksqe *sqe = &conn->tx_sqe;
	struct xiw_rdmap_hdr h;
	unsigned long flags;
	u32 seg = 0, max;
	bool last, active;
	u8 op;
	int rv;

	*built = false;
	if (xiw_sqe_uses_orq(sqe->opcode)) {
		bool atomic = xiw_sqe_is_atomic(sqe->opcode);
		struct xiw_orq_entry *e;

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
			xiw_tx_atomic_req(conn, sqe, &h);
			rv = xiw_tx_frame(conn, &h, NULL, 0);
			*built = !rv;
			return rv;
		}
		xiw_tx_untagged(&h, RDMAP_OP_READ_REQ, RDMAP_QN_READ_REQ,
				conn->tx_msn[RDMAP_QN_READ_REQ]++, 0, true);
		if (sqe->num_sge) {
			h.u.read_req.sink_stag = sqe->sge[0].lkey;
			h.u.read_req.sink_to = sqe->sge[0].laddr;
			h.u.read_req.size = sqe->sge[0].length;
		}
		h.u.read_req.src_stag = sqe->rkey;
		h.u.read_req.src_to = sqe->raddr;
		rv = xiw_tx_frame(conn, &h, NULL, 0);
		*built = !rv;
		return rv;
	}

	if (conn->tx_imm) {
		/* The Write is out: its Immediate Data message completes it. */
		spin_lock_irqsave(&conn->lock, flags);
		active = conn->tx_sqe_active;
		spin_unlock_irqrestore(&conn->lock, flags);
		if (!active)
			return 0;	/* flushed under us */
		xiw_tx_untagged(&h, (sqe->flags & XIW_WQE_SOLICITED) ?
				RDMAP_OP_IMM_DATA_SE : RDMAP_OP_IMM_DATA,
				RDMAP_QN_SEND, conn->tx_msn[RDMAP_QN_SEND], 0,
				true);
		/* The four octets of verbs immediate data lead the eight. */
		h.u.imm_data = (u64)be32_to_cpu((__force __be32)sqe->imm) << 32;
		rv = xiw_tx_frame(conn, &h, NULL, 0);
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

	spin_lock_irqsave(&conn->lock, flags);
	if (!conn->tx_sqe_active) {
		spin_unlock_irqrestore(&conn->lock, flags);
		return 0;	/* flushed under us */
	}
	rv = seg ? xiw_tx_gather(conn, sqe, conn->tx_sqe_off,
				 conn->tx_payload, seg) : 0;
	spin_unlock_irqrestore(&conn->lock, flags);
	if (rv) {
		xiw_tx_sqe_fail(conn, XIW_WC_LOC_PROT_ERR);
		return 0;
	}

	if (op == RDMAP_OP_WRITE) {
		xiw_tx_tagged(&h, op, sqe->rkey, sqe->raddr + conn->tx_sqe_off,
			      last);
	} else {
		xiw_tx_untagged(&h, op, RDMAP_QN_SEND,
				conn->tx_msn[RDMAP_QN_SEND], conn->tx_sqe_off,
				last);
		if (op == RDMAP_OP_SEND_INV || op == RDMAP_OP_SEND_SE_INV)
			h.rsvdulp = sqe->rkey;
		if (last)
			conn->tx_msn[RDMAP_QN_SEND]++;
	}
	rv = xiw_tx_frame(conn, &h, conn->tx_payload, seg);
	if (rv)
		return rv;
	conn->tx_sqe_off += seg;
	if (last && sqe->opcode == XIW_OP_WRITE_WITH_IMM)
		conn->tx_imm = true;
	else
		conn->tx_complete = last;
	*built = true;
	return 0;
}

/* One step: build the next FPDU into tx_buf.  false: nothing to send. */
static int xiw_tx_build(struct xiw_conn *conn, bool *built)
{
	struct xiw_qp *qp = conn->qp;
	bool term;
	int rv;

	*built = false;
	term = READ_ONCE(conn->term_pending);
	if (term) {
		rv = xiw_tx_build_term(conn);
		*built = !rv;
		return rv;
	}
	if (READ_ONCE(qp->state) != XIW_QP_RTS)
		return 0;
	if (conn->rtr_tx) {
		rv = xiw_tx_build_rtr(conn);
		*built = !rv;
		return rv;
	}
	if (READ_ONCE(conn->rtr_rx))
		return 0;	/* the responder speaks after the RTR */
	if (conn->tx_sqe_active && (conn->tx_sqe_off || conn->tx_imm))
		return xiw_tx_build_sqe(conn, built);
	rv = xiw_tx_build_read_resp(conn, built);
	if (rv || *built)
		return rv;
	if (!conn->tx_sqe_active && !xiw_tx_next_sqe(conn))
		return 0;
	return xiw_tx_build_sqe(conn, built);
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
	bool built, sent_term;
	int rv;

	lockdep_assert_held(&conn->tx_mutex);

	while (!test_bit(XIW_CONN_TX_DEAD, &conn->flags)) {
		if (conn->tx_len) {
			rv = xiw_tx_push(conn, conn->tx_sqe_active &&
					 !conn->tx_complete);
			if (rv == -EAGAIN)
				return;	/* write_space kicks us again */
			if (rv) {
				set_bit(XIW_CONN_TX_DEAD, &conn->flags);
				xiw_conn_llp_down(conn->qp, rv);
				return;
			}
			if (conn->tx_complete)
				xiw_tx_sqe_done(conn, XIW_WC_SUCCESS);
		}
		if (!budget--) {
			xiw_conn_kick_tx(conn);
			return;
		}
		sent_term = READ_ONCE(conn->term_pending);
		rv = xiw_tx_build(conn, &built);
		if (rv) {
			set_bit(XIW_CONN_TX_DEAD, &conn->flags);
			xiw_qp_modify(conn->qp, XIW_QP_ERROR);
			return;
		}
		if (!built)
			return;
		if (sent_term) {
			/* Nothing follows a TERMINATE. */
			xiw_tx_push(conn, false);
			set_bit(XIW_CONN_TX_DEAD, &conn->flags);
			xiw_qp_modify(conn->qp, XIW_QP_ERROR);
			return;
		}
	}
}

/**
 * xiw_qp_tx_work - the worker that runs the transmit engine
 * @work: &xiw_conn.tx_work
 */
void xiw_qp_tx_work(struct work_struct *work)
{
	struct xiw_conn *conn = container_of(work, struct xiw_conn, tx_work);

	mutex_lock(&conn->tx_mutex);
	xiw_qp_tx_run(conn);
	mutex_unlock(&conn->tx_mutex);
}

/**
 * xiw_qp_tx_flush - complete what the transmit engine holds with WR_FLUSH_ERR
 * @conn: the connection
 *
 * The send work request in progress and every outstanding RDMA Read.  Any
 * context.
 */
void xiw_qp_tx_flush(struct xiw_conn *conn)
{
	struct xiw_orq_entry *e;
	unsigned long flags;
	bool sqe;
	u32 n;

	spin_lock_irqsave(&conn->lock, flags);
	sqe = conn->tx_sqe_active;
	conn->tx_sqe_active = false;
	if (sqe)
		xiw_sqe_complete(conn->qp, &conn->tx_sqe, 0,
				 XIW_WC_WR_FLUSH_ERR);
	for (n = 0; n < conn->orq_count; n++) {
		e = &conn->orq[(conn->orq_head + n) % conn->ord];
		if (!e->rtr)
			xiw_sqe_complete(conn->qp, &e->sqe, 0,
					 XIW_WC_WR_FLUSH_ERR);
	}
	conn->orq_count = 0;
	spin_unlock_irqrestore(&conn->lock, flags);
}
