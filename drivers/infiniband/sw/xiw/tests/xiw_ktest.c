// SPDX-License-Identifier: GPL-2.0
/*
 * xiw_ktest.ko: an in-kernel RDMA consumer for testing xiw the way kernel
 * ULPs (NVMe-oF, NFS/RDMA, SMB Direct) use it: kernel rdma_cm connections,
 * the PD's DMA MR, 8-SGE sends, a kernel SRQ and its limit event, fast-reg
 * MRs over 256 scattered pages, fenced Send with Invalidate and fenced
 * local invalidate behind RDMA Reads, an access through an invalidated
 * STag and ib_drain_qp() on connected QPs; then rounds on new connections
 * that move a QP to ERROR while its Sends and receives are being taken.
 *
 * It only talks to RDMA devices through ib_core and rdma_cm, like any ULP.
 * Writing "SERVER_IP CLIENT_IP" to /sys/module/xiw_ktest/parameters/run
 * connects a client bound to CLIENT_IP to a listener on SERVER_IP (each
 * address on an RDMA device) and runs the steps; the write fails with
 * -EIO if a step failed.  Each step logs "xiw_ktest: ok|not ok N - what".
 */
#define pr_fmt(fmt) "xiw_ktest: " fmt

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#define XKT_PORT	7499
#define XKT_SGES	8
#define XKT_CHUNK	(128 * 1024)		/* client buffer: 8 x 128 KiB */
#define XKT_PAGES	256			/* fast-reg page list */
#define XKT_LEN		(XKT_PAGES * PAGE_SIZE)	/* 1 MiB on 4 KiB pages */
#define XKT_TMO		(10 * HZ)
#define XKT_WRS		16			/* each send and receive queue */
#define XKT_RACE_ROUNDS	128			/* ports XKT_PORT + 1 ... */
#define XKT_RACE_WRS	XKT_WRS			/* Sends and receives a round */
#define XKT_RACE_LEN	(16 * 1024)		/* zero-copy Sends */

/* One work request and what its completion said. */
struct xkt_wr {
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status status;
	enum ib_wc_opcode opcode;
	u32 byte_len;
	int wc_flags;
	u32 inv_rkey;
	__be32 imm;
};

struct xkt_end {
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_srq *srq;		/* the server receives from one */
	struct completion est;		/* ESTABLISHED or a failure */
	struct completion disc;		/* DISCONNECTED */
	int cm_status;			/* 0, or the failing event */
	atomic_t access_err;		/* IB_EVENT_QP_ACCESS_ERR seen */
	atomic_t srq_limit;		/* IB_EVENT_SRQ_LIMIT_REACHED seen */
};

struct xkt {
	struct rdma_cm_id *listen;
	struct completion step;		/* address, route or a connect request */
	struct rdma_cm_id *req_id;	/* the passive side's new id */
	int step_event;
	struct xkt_end cli;
	struct xkt_end srv;
	int num;
	int failed;
};

/* Serializes runs; guards nothing else. */
static DEFINE_MUTEX(xkt_lock);

static void xkt_result(struct xkt *t, bool ok, const char *what)
{
	t->num++;
	if (!ok)
		t->failed++;
	pr_info("%sok %d - %s\n", ok ? "" : "not ", t->num, what);
}

static void xkt_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct xkt_wr *w = container_of(wc->wr_cqe, struct xkt_wr, cqe);

	w->status = wc->status;
	w->opcode = wc->opcode;
	w->byte_len = wc->byte_len;
	w->wc_flags = wc->wc_flags;
	w->inv_rkey = wc->wc_flags & IB_WC_WITH_INVALIDATE ?
		      wc->ex.invalidate_rkey : 0;
	w->imm = wc->wc_flags & IB_WC_WITH_IMM ? wc->ex.imm_data : 0;
	complete(&w->done);
}

static void xkt_wr_init(struct xkt_wr *w)
{
	memset(w, 0, sizeof(*w));
	w->cqe.done = xkt_done;
	init_completion(&w->done);
}

/* Wait for @w; true if it completed with IB_WC_SUCCESS. */
static bool xkt_wait(struct xkt_wr *w, const char *what)
{
	if (!wait_for_completion_timeout(&w->done, XKT_TMO)) {
		pr_info("# %s: no completion\n", what);
		return false;
	}
	if (w->status != IB_WC_SUCCESS)
		pr_info("# %s: %s\n", what, ib_wc_status_msg(w->status));
	return w->status == IB_WC_SUCCESS;
}

static struct xkt_end *xkt_end_of(struct xkt *t, struct rdma_cm_id *id)
{
	if (id == t->cli.id)
		return &t->cli;
	if (id == t->srv.id)
		return &t->srv;
	return NULL;
}

static int xkt_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct xkt *t = id->context;
	struct xkt_end *e;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		t->step_event = ev->event;
		complete(&t->step);
		return 0;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		t->req_id = id;
		t->step_event = ev->event;
		complete(&t->step);
		return 0;
	default:
		break;
	}
	e = xkt_end_of(t, id);
	if (!e)
		return 0;
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		complete(&e->est);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		complete(&e->disc);
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		e->cm_status = ev->event;
		complete(&e->est);
		break;
	default:
		break;
	}
	return 0;
}

static void xkt_qp_event(struct ib_event *ev, void *ctx)
{
	struct xkt_end *e = ctx;

	if (ev->event == IB_EVENT_QP_ACCESS_ERR)
		atomic_inc(&e->access_err);
}

static void xkt_srq_event(struct ib_event *ev, void *ctx)
{
	struct xkt_end *e = ctx;

	if (ev->event == IB_EVENT_SRQ_LIMIT_REACHED)
		atomic_inc(&e->srq_limit);
}

/*
 * PD (with its DMA MR), CQ and an RC QP with 8 SGEs on @e->id; with
 * @use_srq the QP receives from a new SRQ with 8-SGE receives.
 */
static int xkt_end_setup(struct xkt_end *e, bool use_srq)
{
	struct ib_qp_init_attr qa = {};
	int rv;

	e->pd = ib_alloc_pd(e->id->device, 0);
	if (IS_ERR(e->pd)) {
		rv = PTR_ERR(e->pd);
		e->pd = NULL;
		return rv;
	}
	e->cq = ib_alloc_cq(e->id->device, NULL, 64, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(e->cq)) {
		rv = PTR_ERR(e->cq);
		e->cq = NULL;
		return rv;
	}
	if (use_srq) {
		struct ib_srq_init_attr sa = {
			.event_handler = xkt_srq_event,
			.srq_context = e,
			.attr = { .max_wr = 16, .max_sge = XKT_SGES },
			.srq_type = IB_SRQT_BASIC,
		};

		e->srq = ib_create_srq(e->pd, &sa);
		if (IS_ERR(e->srq)) {
			rv = PTR_ERR(e->srq);
			e->srq = NULL;
			return rv;
		}
	}
	qa.event_handler = xkt_qp_event;
	qa.qp_context = e;
	qa.srq = e->srq;
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	qa.qp_type = IB_QPT_RC;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qa.cap.max_send_wr = XKT_WRS;
	qa.cap.max_recv_wr = XKT_WRS;
	qa.cap.max_send_sge = XKT_SGES;
	qa.cap.max_recv_sge = XKT_SGES;
	return rdma_create_qp(e->id, e->pd, &qa);
}

static void xkt_end_teardown(struct xkt_end *e)
{
	if (e->id && e->id->qp)
		rdma_destroy_qp(e->id);
	if (e->srq)
		ib_destroy_srq(e->srq);
	if (e->cq)
		ib_free_cq(e->cq);
	if (e->pd)
		ib_dealloc_pd(e->pd);
	if (e->id)
		rdma_destroy_id(e->id);
	e->id = NULL;
	e->srq = NULL;
	e->cq = NULL;
	e->pd = NULL;
}

static int xkt_step(struct xkt *t, int want)
{
	if (!wait_for_completion_timeout(&t->step, XKT_TMO))
		return -ETIMEDOUT;
	reinit_completion(&t->step);
	return t->step_event == want ? 0 : -EIO;
}

/* Connect; the server's QP receives from an SRQ if @srv_srq. */
static int xkt_connect(struct xkt *t, struct sockaddr *srv, struct sockaddr *cli,
		       bool srv_srq)
{
	struct rdma_conn_param cp = {
		.initiator_depth = 4, .responder_resources = 4, .retry_count = 7,
	};
	int rv;

	init_completion(&t->step);
	init_completion(&t->cli.est);
	init_completion(&t->cli.disc);
	init_completion(&t->srv.est);
	init_completion(&t->srv.disc);

	t->listen = rdma_create_id(&init_net, xkt_cm_handler, t, RDMA_PS_TCP,
				   IB_QPT_RC);
	if (IS_ERR(t->listen)) {
		rv = PTR_ERR(t->listen);
		t->listen = NULL;
		return rv;
	}
	rv = rdma_bind_addr(t->listen, srv);
	if (!rv)
		rv = rdma_listen(t->listen, 4);
	if (rv)
		return rv;

	t->cli.id = rdma_create_id(&init_net, xkt_cm_handler, t, RDMA_PS_TCP,
				   IB_QPT_RC);
	if (IS_ERR(t->cli.id)) {
		rv = PTR_ERR(t->cli.id);
		t->cli.id = NULL;
		return rv;
	}
	rv = rdma_resolve_addr(t->cli.id, cli, srv, 5000);
	if (!rv)
		rv = xkt_step(t, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (!rv)
		rv = rdma_resolve_route(t->cli.id, 5000);
	if (!rv)
		rv = xkt_step(t, RDMA_CM_EVENT_ROUTE_RESOLVED);
	if (!rv)
		rv = xkt_end_setup(&t->cli, false);
	if (!rv)
		rv = rdma_connect(t->cli.id, &cp);
	if (rv)
		return rv;

	rv = xkt_step(t, RDMA_CM_EVENT_CONNECT_REQUEST);
	if (rv)
		return rv;
	t->srv.id = t->req_id;
	rv = xkt_end_setup(&t->srv, srv_srq);
	if (rv)
		return rv;
	rdma_lock_handler(t->srv.id);
	rv = rdma_accept(t->srv.id, &cp);
	rdma_unlock_handler(t->srv.id);
	if (rv)
		return rv;
	if (!wait_for_completion_timeout(&t->srv.est, XKT_TMO) ||
	    !wait_for_completion_timeout(&t->cli.est, XKT_TMO))
		return -ETIMEDOUT;
	return t->srv.cm_status || t->cli.cm_status ? -ECONNREFUSED : 0;
}

static int xkt_post_send_flags(struct xkt_end *e, struct xkt_wr *w,
			       enum ib_wr_opcode op, struct ib_sge *sge,
			       int num_sge, u64 raddr, u32 rkey, int flags)
{
	struct ib_rdma_wr wr = {};

	xkt_wr_init(w);
	wr.wr.wr_cqe = &w->cqe;
	wr.wr.opcode = op;
	wr.wr.send_flags = IB_SEND_SIGNALED | flags;
	wr.wr.sg_list = sge;
	wr.wr.num_sge = num_sge;
	wr.remote_addr = raddr;
	wr.rkey = rkey;
	if (op == IB_WR_SEND_WITH_INV)
		wr.wr.ex.invalidate_rkey = rkey;
	return ib_post_send(e->id->qp, &wr.wr, NULL);
}

static int xkt_post_send(struct xkt_end *e, struct xkt_wr *w, enum ib_wr_opcode op,
			 struct ib_sge *sge, int num_sge, u64 raddr, u32 rkey)
{
	return xkt_post_send_flags(e, w, op, sge, num_sge, raddr, rkey, 0);
}

static int xkt_post_recv(struct xkt_end *e, struct xkt_wr *w,
			 struct ib_sge *sge, int num_sge)
{
	struct ib_recv_wr wr = {};

	xkt_wr_init(w);
	wr.wr_cqe = &w->cqe;
	wr.sg_list = sge;
	wr.num_sge = num_sge;
	if (e->srq)
		return ib_post_srq_recv(e->srq, &wr, NULL);
	return ib_post_recv(e->id->qp, &wr, NULL);
}

/* One RFC 7306 atomic on the 8 octets at @raddr; the old value lands in @sge. */
static int xkt_post_atomic(struct xkt_end *e, struct xkt_wr *w,
			   enum ib_wr_opcode op, struct ib_sge *sge, u64 raddr,
			   u32 rkey, u64 cmp_add, u64 swap, u64 cmp_add_mask,
			   u64 swap_mask)
{
	struct ib_atomic_wr wr = {};

	xkt_wr_init(w);
	wr.wr.wr_cqe = &w->cqe;
	wr.wr.opcode = op;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = raddr;
	wr.rkey = rkey;
	wr.compare_add = cmp_add;
	wr.swap = swap;
	wr.compare_add_mask = cmp_add_mask;
	wr.swap_mask = swap_mask;
	return ib_post_send(e->id->qp, &wr.wr, NULL);
}

/* RDMA Write with Immediate of @sge (none: zero length) to @raddr. */
static int xkt_post_write_imm(struct xkt_end *e, struct xkt_wr *w,
			      struct ib_sge *sge, u64 raddr, u32 rkey,
			      __be32 imm, int flags)
{
	struct ib_rdma_wr wr = {};

	xkt_wr_init(w);
	wr.wr.wr_cqe = &w->cqe;
	wr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	wr.wr.send_flags = IB_SEND_SIGNALED | flags;
	wr.wr.sg_list = sge;
	wr.wr.num_sge = sge ? 1 : 0;
	wr.wr.ex.imm_data = imm;
	wr.remote_addr = raddr;
	wr.rkey = rkey;
	return ib_post_send(e->id->qp, &wr.wr, NULL);
}

/* IB_WR_REG_MR of @mr with a new key and @access; waits for it. */
static bool xkt_reg_mr(struct xkt_end *e, struct ib_mr *mr, int access)
{
	struct ib_reg_wr wr = {};
	struct xkt_wr w;

	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey) & 0xff);
	xkt_wr_init(&w);
	wr.wr.wr_cqe = &w.cqe;
	wr.wr.opcode = IB_WR_REG_MR;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.mr = mr;
	wr.key = mr->rkey;
	wr.access = access;
	if (ib_post_send(e->id->qp, &wr.wr, NULL))
		return false;
	return xkt_wait(&w, "REG_MR");
}

/* IB_WR_LOCAL_INV of @rkey (with @flags, such as IB_SEND_FENCE); waits. */
static bool xkt_local_inv(struct xkt_end *e, u32 rkey, int flags)
{
	struct ib_send_wr wr = {};
	struct xkt_wr w;

	xkt_wr_init(&w);
	wr.wr_cqe = &w.cqe;
	wr.opcode = IB_WR_LOCAL_INV;
	wr.send_flags = IB_SEND_SIGNALED | flags;
	wr.ex.invalidate_rkey = rkey;
	if (ib_post_send(e->id->qp, &wr, NULL))
		return false;
	return xkt_wait(&w, "LOCAL_INV");
}

/* An SGE over @p through the DMA MR of @e's PD (virtual DMA: see below). */
static struct ib_sge xkt_sge(void *p, u32 len, struct xkt_end *e)
{
	return (struct ib_sge){ (u64)(uintptr_t)p, len, e->pd->local_dma_lkey };
}

/* Page @i of the client's 1 MiB made of XKT_SGES chunks. */
static u8 *xkt_chunk_page(u8 **chunk, int i)
{
	return chunk[i / (XKT_CHUNK / PAGE_SIZE)] + (i % (XKT_CHUNK / PAGE_SIZE)) * PAGE_SIZE;
}

static void xkt_fill(u8 *p, size_t len, u8 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(seed + i * 13 + (i >> 9));
}

/*
 * RFC 7306 on a connected pair: atomics on the first word of @mr's first
 * page @word, results into @res (16 words of the client), and Write with
 * Immediate into @mr's second page @page1.  Three results.
 */
static void xkt_rfc7306(struct xkt *t, struct ib_mr *mr, u64 *word,
			u8 *page1, u64 *res, u8 *src, u8 *rbuf)
{
	struct xkt_end *c = &t->cli, *s = &t->srv;
	struct xkt_wr w, r, *many;
	struct ib_sge sge, rsge;
	bool ok, seen[16] = {};
	int i, waited = 0;

	/* Sixteen completions (with lockdep maps) do not fit the stack. */
	many = kcalloc(16, sizeof(*many), GFP_KERNEL);
	if (!many) {
		xkt_result(t, false, "memory for the RFC 7306 steps");
		return;
	}

	sge = xkt_sge(res, 8, c);
	*word = 1000;
	ok = !xkt_post_atomic(c, &w, IB_WR_ATOMIC_FETCH_AND_ADD, &sge,
			      mr->iova, mr->rkey, 234, 0, 0, 0) &&
	     xkt_wait(&w, "fetch-add") && w.opcode == IB_WC_FETCH_ADD &&
	     w.byte_len == 8 && res[0] == 1000 && READ_ONCE(*word) == 1234;
	ok = ok && !xkt_post_atomic(c, &w, IB_WR_ATOMIC_CMP_AND_SWP, &sge,
				    mr->iova, mr->rkey, 1234, 77, 0, 0) &&
	     xkt_wait(&w, "cmp-swap") && w.opcode == IB_WC_COMP_SWAP &&
	     res[0] == 1234 && READ_ONCE(*word) == 77;
	ok = ok && !xkt_post_atomic(c, &w, IB_WR_ATOMIC_CMP_AND_SWP, &sge,
				    mr->iova, mr->rkey, 5, 99, 0, 0) &&
	     xkt_wait(&w, "cmp-swap, no match") && res[0] == 77 &&
	     READ_ONCE(*word) == 77;
	/* Two 32 bit counters in one word: the low one wraps alone. */
	*word = 0x00000000ffffffffULL;
	ok = ok && !xkt_post_atomic(c, &w, IB_WR_MASKED_ATOMIC_FETCH_AND_ADD,
				    &sge, mr->iova, mr->rkey,
				    0x0000000100000001ULL, 0,
				    0x8000000080000000ULL, 0) &&
	     xkt_wait(&w, "masked fetch-add") &&
	     w.opcode == IB_WC_MASKED_FETCH_ADD &&
	     res[0] == 0x00000000ffffffffULL &&
	     READ_ONCE(*word) == 0x0000000100000000ULL;
	*word = 0x0123456789abcdefULL;
	ok = ok && !xkt_post_atomic(c, &w, IB_WR_MASKED_ATOMIC_CMP_AND_SWP,
				    &sge, mr->iova, mr->rkey,
				    0x0123456700000000ULL, 0xffff,
				    0xffffffff00000000ULL, 0xffff) &&
	     xkt_wait(&w, "masked cmp-swap") &&
	     w.opcode == IB_WC_MASKED_COMP_SWAP &&
	     res[0] == 0x0123456789abcdefULL &&
	     READ_ONCE(*word) == 0x0123456789abffffULL;
	/* The target must be 8-aligned: refused when posted. */
	ok = ok && xkt_post_atomic(c, &w, IB_WR_ATOMIC_FETCH_AND_ADD, &sge,
				   mr->iova + 4, mr->rkey, 1, 0, 0, 0) == -EINVAL;
	xkt_result(t, ok, "RFC 7306 FetchAdd and CmpSwap, plain and masked, old value returned");

	/* 16 at once through ORD 4: each sees a distinct old value. */
	*word = 0;
	ok = true;
	for (i = 0; ok && i < 16; i++) {
		struct ib_sge one = xkt_sge(&res[i], 8, c);

		res[i] = ~0ULL;
		ok = !xkt_post_atomic(c, &many[i], IB_WR_ATOMIC_FETCH_AND_ADD,
				      &one, mr->iova, mr->rkey, 1, 0, 0, 0);
	}
	for (i = 0; ok && i < 16; i++) {
		ok = xkt_wait(&many[i], "fetch-add of 16") && res[i] < 16 &&
		     !seen[res[i]];
		if (ok)
			seen[res[i]] = true;
	}
	waited = i;
	ok = ok && READ_ONCE(*word) == 16;
	xkt_result(t, ok, "16 FetchAdds posted at once through ORD 4: old values 0..15, total 16");

	/* Write with Immediate: the data, then one receive with the value. */
	xkt_fill(src, PAGE_SIZE, 0x77);
	memset(page1, 0, PAGE_SIZE);
	rsge = xkt_sge(rbuf, 64, s);
	sge = xkt_sge(src, PAGE_SIZE, c);
	ok = !xkt_post_recv(s, &r, &rsge, 1) &&
	     !xkt_post_write_imm(c, &w, &sge, mr->iova + PAGE_SIZE, mr->rkey,
				 cpu_to_be32(0xfeedf00d), 0) &&
	     xkt_wait(&w, "write with imm") && w.opcode == IB_WC_RDMA_WRITE &&
	     xkt_wait(&r, "imm receive") &&
	     r.opcode == IB_WC_RECV_RDMA_WITH_IMM &&
	     (r.wc_flags & IB_WC_WITH_IMM) &&
	     r.imm == cpu_to_be32(0xfeedf00d) && !memcmp(page1, src, PAGE_SIZE);
	/* Zero length, solicited: only the Immediate Data message goes. */
	ok = ok && !xkt_post_recv(s, &r, &rsge, 1) &&
	     !xkt_post_write_imm(c, &w, NULL, 0, 0, cpu_to_be32(7),
				 IB_SEND_SOLICITED) &&
	     xkt_wait(&w, "zero-length write with imm") &&
	     xkt_wait(&r, "imm receive") && r.byte_len == 0 &&
	     r.imm == cpu_to_be32(7);
	xkt_result(t, ok, "RDMA Write with Immediate: data placed, receive has IB_WC_WITH_IMM and the value");
	/* A request still outstanding (a failed run) may complete later. */
	if (waited == 16)
		kfree(many);
}

/* The steps on a connected pair. */
static void xkt_steps(struct xkt *t)
{
	struct xkt_end *c = &t->cli, *s = &t->srv;
	u8 *chunk[XKT_SGES] = {}, *rbuf = NULL;
	struct page **pages;
	struct ib_sge sge[XKT_SGES];
	struct scatterlist *sgl = NULL;
	struct ib_mr *mr = NULL, *cmr = NULL;
	struct scatterlist csg;
	struct ib_sge one;
	struct xkt_wr w, r, *rd = NULL;
	int access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		     IB_ACCESS_REMOTE_READ;
	bool ok, mapped = false, cmapped = false;
	int i, n;

	/*
	 * Buffers are addressed by kernel virtual address, which is what a
	 * software RDMA device's DMA mapping yields (ib_uses_virt_dma()).
	 */
	if (!ib_uses_virt_dma(s->id->device) || !ib_uses_virt_dma(c->id->device)) {
		xkt_result(t, false, "the devices use virtual DMA");
		return;
	}
	pages = kcalloc(XKT_PAGES, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return;
	/*
	 * The client's buffer comes from the page allocator as compound
	 * pages, which TCP can hold references on, so that the 1 MiB Write
	 * goes out zero-copy.  kmalloc() memory of this size cannot: 7.x
	 * hands out large kmalloc() pages frozen (page_count() 0), which
	 * sendpage_ok() refuses.
	 */
	for (i = 0; i < XKT_SGES; i++) {
		chunk[i] = (u8 *)__get_free_pages(GFP_KERNEL | __GFP_COMP,
						  get_order(XKT_CHUNK));
		if (!chunk[i])
			goto out;
	}
	rbuf = kzalloc(XKT_SGES * 1024, GFP_KERNEL);
	rd = kcalloc(XKT_SGES, sizeof(*rd), GFP_KERNEL);
	if (!rbuf || !rd)
		goto out;

	/* 1. An 8-SGE Send into an 8-SGE receive, both through the DMA MR. */
	for (i = 0; i < XKT_SGES; i++) {
		xkt_fill(chunk[i], 1024, 0x11 * i);
		sge[i] = xkt_sge(rbuf + (XKT_SGES - 1 - i) * 1024, 1024, s);
	}
	ok = !xkt_post_recv(s, &r, sge, XKT_SGES);
	for (i = 0; i < XKT_SGES; i++)
		sge[i] = xkt_sge(chunk[i], 1024, c);
	ok = ok && !xkt_post_send(c, &w, IB_WR_SEND, sge, XKT_SGES, 0, 0);
	ok = ok && xkt_wait(&w, "8-SGE send") && xkt_wait(&r, "8-SGE receive") &&
	     r.byte_len == XKT_SGES * 1024;
	for (i = 0; ok && i < XKT_SGES; i++)
		ok = !memcmp(rbuf + (XKT_SGES - 1 - i) * 1024, chunk[i], 1024);
	xkt_result(t, ok, "8-SGE Send into an 8-SGE SRQ receive through the PD's DMA MR");

	/*
	 * 1b. The SRQ limit: three receives, limit 3; the first Send leaves
	 * two and raises the event, once.  Two more Sends use up the rest.
	 */
	{
		struct ib_srq_attr sa = { .srq_limit = 3 };
		struct xkt_wr rr[3];

		ok = true;
		for (i = 0; i < 3; i++) {
			sge[i] = xkt_sge(rbuf + i * 1024, 1024, s);
			ok = ok && !xkt_post_recv(s, &rr[i], &sge[i], 1);
		}
		ok = ok && !ib_modify_srq(s->srq, &sa, IB_SRQ_LIMIT);
		sge[3] = xkt_sge(chunk[0], 64, c);
		for (i = 0; ok && i < 3; i++) {
			ok = !xkt_post_send(c, &w, IB_WR_SEND, &sge[3], 1, 0, 0) &&
			     xkt_wait(&w, "send") && xkt_wait(&rr[i], "SRQ receive");
			if (i == 0) {
				for (n = 0; n < 100 && !atomic_read(&s->srq_limit); n++)
					msleep(20);
				ok = ok && atomic_read(&s->srq_limit) == 1;
			}
		}
		ok = ok && atomic_read(&s->srq_limit) == 1;
		xkt_result(t, ok, "kernel SRQ: the limit event fires once below the limit");
	}

	/* 2. A fast-reg MR over 256 scattered pages, written and read remotely. */
	for (i = 0; i < XKT_PAGES; i++) {
		pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!pages[i])
			goto out;
	}
	sgl = kcalloc(XKT_PAGES, sizeof(*sgl), GFP_KERNEL);
	if (!sgl)
		goto out;
	sg_init_table(sgl, XKT_PAGES);
	for (i = 0; i < XKT_PAGES; i++)
		sg_set_page(&sgl[i], pages[i], PAGE_SIZE, 0);
	n = ib_dma_map_sg(s->id->device, sgl, XKT_PAGES, DMA_BIDIRECTIONAL);
	mapped = n > 0;
	mr = ib_alloc_mr(s->pd, IB_MR_TYPE_MEM_REG, XKT_PAGES);
	if (IS_ERR(mr)) {
		mr = NULL;
		xkt_result(t, false, "ib_alloc_mr with 256 pages");
		goto out;
	}
	ok = mapped && ib_map_mr_sg(mr, sgl, n, NULL, PAGE_SIZE) == n &&
	     mr->length == XKT_LEN && xkt_reg_mr(s, mr, access);
	xkt_result(t, ok, "fast-reg MR over 256 scattered pages (IB_WR_REG_MR)");

	for (i = 0; i < XKT_SGES; i++) {
		xkt_fill(chunk[i], XKT_CHUNK, 0x31 + i);
		sge[i] = xkt_sge(chunk[i], XKT_CHUNK, c);
	}
	ok = ok && !xkt_post_send(c, &w, IB_WR_RDMA_WRITE, sge, XKT_SGES, mr->iova,
				  mr->rkey) && xkt_wait(&w, "1 MiB write");
	/* A Send behind the Write: when it arrives, the Write has landed. */
	sge[0] = xkt_sge(rbuf, 64, s);
	ok = ok && !xkt_post_recv(s, &r, sge, 1);
	sge[0] = xkt_sge(chunk[0], 64, c);
	ok = ok && !xkt_post_send(c, &w, IB_WR_SEND, sge, 1, 0, 0) &&
	     xkt_wait(&w, "fence send") && xkt_wait(&r, "fence receive");
	for (i = 0; ok && i < XKT_PAGES; i++) {
		ok = !memcmp(page_address(pages[i]), xkt_chunk_page(chunk, i), PAGE_SIZE);
		if (!ok)
			pr_info("# page %d differs\n", i);
	}
	xkt_result(t, ok, "1 MiB RDMA Write from 8 SGEs lands in the 256 pages");

	for (i = 0; i < XKT_SGES; i++) {
		memset(chunk[i], 0, XKT_CHUNK);
		sge[i] = xkt_sge(chunk[i], XKT_CHUNK, c);
	}
	for (i = 0; i < XKT_PAGES; i++)
		xkt_fill(page_address(pages[i]), PAGE_SIZE, 0x55 + i);
	/* A Read scatters into one SGE: read the MR chunk by chunk. */
	ok = true;
	for (i = 0; ok && i < XKT_SGES; i++)
		ok = !xkt_post_send(c, &w, IB_WR_RDMA_READ, &sge[i], 1,
				    mr->iova + (u64)i * XKT_CHUNK, mr->rkey) &&
		     xkt_wait(&w, "read");
	for (i = 0; ok && i < XKT_PAGES; i++)
		ok = !memcmp(page_address(pages[i]), xkt_chunk_page(chunk, i), PAGE_SIZE);
	xkt_result(t, ok, "RDMA Read of the 256-page MR returns its pages");

	/*
	 * 3. Reads of the whole MR, then at once a fenced Send with Invalidate
	 * of it, as a ULP gives back the buffer it read from.  The fence holds
	 * the Send on the client until the last Read Response is in: were it
	 * on the wire earlier, it would invalidate the MR under the server's
	 * Read Responses, which end in a TERMINATE then.  The receive reports
	 * the invalidated STag.
	 */
	for (i = 0; i < XKT_PAGES; i++)
		xkt_fill(page_address(pages[i]), PAGE_SIZE, 0x77 + i);
	for (i = 0; i < XKT_SGES; i++) {
		memset(chunk[i], 0, XKT_CHUNK);
		sge[i] = xkt_sge(chunk[i], XKT_CHUNK, c);
	}
	one = xkt_sge(rbuf, 64, s);
	ok = !xkt_post_recv(s, &r, &one, 1);
	for (i = 0; ok && i < XKT_SGES; i++)
		ok = !xkt_post_send(c, &rd[i], IB_WR_RDMA_READ, &sge[i], 1,
				    mr->iova + (u64)i * XKT_CHUNK, mr->rkey);
	one = xkt_sge(rbuf + 4096, 64, c);
	ok = ok && !xkt_post_send_flags(c, &w, IB_WR_SEND_WITH_INV, &one, 1, 0,
					mr->rkey, IB_SEND_FENCE);
	for (i = 0; ok && i < XKT_SGES; i++)
		ok = xkt_wait(&rd[i], "read ahead of the fence");
	ok = ok && xkt_wait(&w, "fenced send with invalidate") &&
	     xkt_wait(&r, "receive") &&
	     (r.wc_flags & IB_WC_WITH_INVALIDATE) && r.inv_rkey == mr->rkey;
	for (i = 0; ok && i < XKT_PAGES; i++)
		ok = !memcmp(page_address(pages[i]), xkt_chunk_page(chunk, i), PAGE_SIZE);
	xkt_result(t, ok, "1 MiB of Reads, then a fenced Send with Invalidate of their source");

	/* 3b. RFC 7306 through the MR, registered again with atomic rights. */
	ok = xkt_reg_mr(s, mr, access | IB_ACCESS_REMOTE_ATOMIC);
	xkt_result(t, ok, "fast-reg again with IB_ACCESS_REMOTE_ATOMIC");
	if (ok) {
		xkt_rfc7306(t, mr, page_address(pages[0]),
			    page_address(pages[1]), (u64 *)chunk[0], chunk[1],
			    rbuf);
		ok = xkt_local_inv(s, mr->rkey, 0);
	}

	/*
	 * 4. The invalidated MR registers again under a new key and is
	 * written.  Then the server reads 128 KiB of the client's into it and
	 * posts a fenced IB_WR_LOCAL_INV of it right behind: the invalidation
	 * waits for the Read's last response, which would find its sink gone
	 * otherwise.
	 */
	ok = xkt_reg_mr(s, mr, access);
	sge[0] = xkt_sge(chunk[0], 4096, c);
	ok = ok && !xkt_post_send(c, &w, IB_WR_RDMA_WRITE, sge, 1, mr->iova, mr->rkey) &&
	     xkt_wait(&w, "write, new key");
	cmr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, XKT_CHUNK / PAGE_SIZE);
	if (IS_ERR(cmr)) {
		cmr = NULL;
		xkt_result(t, false, "ib_alloc_mr on the client");
		goto out;
	}
	xkt_fill(chunk[1], XKT_CHUNK, 0x99);
	sg_init_one(&csg, chunk[1], XKT_CHUNK);
	cmapped = ib_dma_map_sg(c->id->device, &csg, 1, DMA_BIDIRECTIONAL) == 1;
	ok = ok && cmapped && ib_map_mr_sg(cmr, &csg, 1, NULL, PAGE_SIZE) == 1 &&
	     xkt_reg_mr(c, cmr, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ);
	one = (struct ib_sge){ mr->iova, XKT_CHUNK, mr->lkey };
	ok = ok && !xkt_post_send(s, &rd[0], IB_WR_RDMA_READ, &one, 1, cmr->iova,
				  cmr->rkey);
	ok = ok && xkt_local_inv(s, mr->rkey, IB_SEND_FENCE) &&
	     xkt_wait(&rd[0], "read into the MR");
	for (i = 0; ok && i < XKT_CHUNK / PAGE_SIZE; i++)
		ok = !memcmp(page_address(pages[i]), chunk[1] + i * PAGE_SIZE, PAGE_SIZE);
	xkt_result(t, ok, "fast-reg again, written; a Read into it, then a fenced IB_WR_LOCAL_INV");

	/*
	 * 5. A Write through the invalidated STag: the server terminates the
	 * stream (DDP tagged buffer error), both QPs get an access error.
	 */
	ok = !xkt_post_send(c, &w, IB_WR_RDMA_WRITE, sge, 1, mr->iova, mr->rkey);
	wait_for_completion_timeout(&w.done, XKT_TMO);
	for (i = 0; i < 100 && (!atomic_read(&s->access_err) ||
				!atomic_read(&c->access_err)); i++)
		msleep(50);
	ok = ok && atomic_read(&s->access_err) && atomic_read(&c->access_err);
	xkt_result(t, ok, "Write through the invalidated STag: access error on both QPs");

	/*
	 * 6. ib_drain_qp() returns on both QPs; a receive posted to the
	 * client's own receive queue is flushed (the server's SRQ is shared
	 * and keeps its receives).
	 */
	sge[0] = xkt_sge(rbuf, 64, c);
	ok = !xkt_post_recv(c, &r, sge, 1);
	ib_drain_qp(s->id->qp);
	ib_drain_qp(c->id->qp);
	ok = ok && completion_done(&r.done) && r.status == IB_WC_WR_FLUSH_ERR;
	xkt_result(t, ok, "ib_drain_qp on both QPs; a posted receive is flushed");

out:
	if (cmr)
		ib_dereg_mr(cmr);
	if (cmapped)
		ib_dma_unmap_sg(c->id->device, &csg, 1, DMA_BIDIRECTIONAL);
	if (mr)
		ib_dereg_mr(mr);
	if (mapped)
		ib_dma_unmap_sg(s->id->device, sgl, XKT_PAGES, DMA_BIDIRECTIONAL);
	kfree(sgl);
	for (i = 0; i < XKT_PAGES; i++)
		if (pages[i])
			__free_page(pages[i]);
	kfree(pages);
	kfree(rd);
	kfree(rbuf);
	for (i = 0; i < XKT_SGES; i++)
		free_pages((unsigned long)chunk[i], get_order(XKT_CHUNK));
}

/* A work request of the race rounds counts its completions. */
struct xkt_once {
	struct ib_cqe cqe;
	atomic_t n;
	enum ib_wc_status status;
};

static void xkt_once_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct xkt_once *w = container_of(wc->wr_cqe, struct xkt_once, cqe);

	w->status = wc->status;
	atomic_inc(&w->n);
}

/* How many of @n requests from @w on have completed. */
static int xkt_once_count(struct xkt_once *w, int n)
{
	int i, done = 0;

	for (i = 0; i < n; i++)
		done += atomic_read(&w[i].n) > 0;
	return done;
}

/*
 * One race round on a new connection whose server has a receive queue of
 * its own: the server posts XKT_RACE_WRS receives, the client as many
 * Sends, and once @after of the QP's own requests have completed this
 * thread moves the server's QP (@err_server) or the client's to ERROR,
 * while its engine is taking the rest off the ring.  Once ib_drain_qp()
 * returned on both,
 * each request has completed exactly once, in success or flushed: one
 * an engine took as the flush ran is neither lost nor completed twice.
 * @buf holds 2 * XKT_RACE_WRS slots of XKT_RACE_LEN bytes; @flushed
 * counts the requests that completed flushed.
 */
static int xkt_race_round(struct sockaddr *srv, struct sockaddr *cli,
			  bool err_server, int after, u8 *buf,
			  unsigned int *flushed)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	unsigned long until = jiffies + HZ;
	struct xkt_once *wr, *own;
	struct xkt *t;
	int i, n, rv;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	wr = kcalloc(2 * XKT_RACE_WRS, sizeof(*wr), GFP_KERNEL);
	rv = t && wr ? xkt_connect(t, srv, cli, false) : -ENOMEM;
	for (i = 0; !rv && i < 2 * XKT_RACE_WRS; i++) {
		struct xkt_end *e = i < XKT_RACE_WRS ? &t->srv : &t->cli;
		struct ib_sge sge = xkt_sge(buf + i * XKT_RACE_LEN,
					    XKT_RACE_LEN, e);
		struct ib_recv_wr r = {
			.wr_cqe = &wr[i].cqe, .sg_list = &sge, .num_sge = 1,
		};
		struct ib_send_wr s = {
			.wr_cqe = &wr[i].cqe, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED,
		};

		wr[i].cqe.done = xkt_once_done;
		if (i < XKT_RACE_WRS)
			rv = ib_post_recv(e->id->qp, &r, NULL);
		else
			rv = ib_post_send(e->id->qp, &s, NULL);
	}
	if (rv)
		goto out;
	own = err_server ? wr : wr + XKT_RACE_WRS;
	while (xkt_once_count(own, XKT_RACE_WRS) < after &&
	       time_before(jiffies, until))
		usleep_range(5, 20);
	rv = ib_modify_qp(err_server ? t->srv.id->qp : t->cli.id->qp, &attr,
			  IB_QP_STATE);
	ib_drain_qp(t->cli.id->qp);
	ib_drain_qp(t->srv.id->qp);
	for (i = 0; i < 2 * XKT_RACE_WRS; i++) {
		n = atomic_read(&wr[i].n);
		if (n == 1) {
			*flushed += wr[i].status == IB_WC_WR_FLUSH_ERR;
			continue;
		}
		pr_info("# %s %d completed %d times\n",
			i < XKT_RACE_WRS ? "receive" : "Send", i % XKT_RACE_WRS, n);
		rv = rv ?: -EIO;
	}
out:
	if (t) {
		xkt_end_teardown(&t->srv);
		xkt_end_teardown(&t->cli);
		if (t->listen)
			rdma_destroy_id(t->listen);
	}
	kfree(wr);
	kfree(t);
	return rv;
}

static void xkt_set_port(struct sockaddr_storage *ss, u16 port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

/*
 * The race rounds, each on a port of its own (the last round's may be in
 * TIME_WAIT), erroring the server and the client in turns after 1 to
 * XKT_RACE_WRS - 1 of its requests completed.
 */
static void xkt_races(struct xkt *t, const struct sockaddr_storage *srv,
		      struct sockaddr_storage *cli)
{
	struct sockaddr_storage ss = *srv;
	unsigned int flushed = 0;
	u8 *buf;
	int i, rv;

	buf = vzalloc(2 * XKT_RACE_WRS * XKT_RACE_LEN);
	rv = buf ? 0 : -ENOMEM;
	for (i = 0; !rv && i < XKT_RACE_ROUNDS; i++) {
		xkt_set_port(&ss, XKT_PORT + 1 + i);
		rv = xkt_race_round((struct sockaddr *)&ss,
				    (struct sockaddr *)cli, i & 1,
				    1 + (i >> 1) % (XKT_RACE_WRS - 1), buf,
				    &flushed);
		if (rv)
			pr_info("# race round %d: %d\n", i, rv);
	}
	vfree(buf);
	pr_info("# race rounds: %u of %u requests flushed\n", flushed,
		XKT_RACE_ROUNDS * 2 * XKT_RACE_WRS);
	xkt_result(t, !rv,
		   "QPs moved to ERROR as their Sends and receives are taken: each completes once");
}

static int xkt_parse(const char *s, struct sockaddr_storage *ss)
{
	return inet_pton_with_scope(&init_net, AF_UNSPEC, s, NULL, ss);
}

static int xkt_run(const char *val, const struct kernel_param *kp)
{
	struct sockaddr_storage srv = {}, cli = {};
	char a[64] = {}, b[64] = {};
	struct xkt *t;
	int rv;

	if (sscanf(val, "%63s %63s", a, b) != 2 || xkt_parse(a, &srv) ||
	    xkt_parse(b, &cli))
		return -EINVAL;
	xkt_set_port(&srv, XKT_PORT);

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	atomic_set(&t->cli.access_err, 0);
	atomic_set(&t->srv.access_err, 0);
	atomic_set(&t->cli.srq_limit, 0);
	atomic_set(&t->srv.srq_limit, 0);
	mutex_lock(&xkt_lock);
	pr_info("run %s -> %s\n", b, a);
	rv = xkt_connect(t, (struct sockaddr *)&srv, (struct sockaddr *)&cli, true);
	xkt_result(t, !rv, "kernel rdma_cm connection, QPs with 8 send and receive SGEs");
	if (!rv) {
		xkt_steps(t);
		rdma_disconnect(t->cli.id);
		wait_for_completion_timeout(&t->cli.disc, XKT_TMO);
		wait_for_completion_timeout(&t->srv.disc, XKT_TMO);
	} else {
		pr_info("# connect: %d\n", rv);
	}
	xkt_end_teardown(&t->srv);
	xkt_end_teardown(&t->cli);
	if (t->listen)
		rdma_destroy_id(t->listen);
	if (!rv)
		xkt_races(t, &srv, &cli);
	pr_info("%d of %d failed\n", t->failed, t->num);
	rv = t->failed ? -EIO : 0;
	mutex_unlock(&xkt_lock);
	kfree(t);
	return rv;
}

static const struct kernel_param_ops xkt_run_ops = {
	.set = xkt_run,
};
module_param_cb(run, &xkt_run_ops, NULL, 0200);
MODULE_PARM_DESC(run, "write \"SERVER_IP CLIENT_IP\" to run the test");

MODULE_DESCRIPTION("xiw test: an in-kernel RDMA consumer");
MODULE_AUTHOR("xiw developers");
MODULE_LICENSE("GPL");
