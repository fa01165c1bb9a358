// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for xiw's verbs objects, driven without a device: the QP
 * state machine behind a fake transport ops struct, CQ ring overflow and
 * notification, and the STag/PD/access checks of an MR.  The functions
 * under test are the ones in xiw.ko, reached through its KUnit-only
 * exports (EXPORTED_FOR_KUNIT_TESTING).
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "xiw.h"
#include "xiw_mem.h"
#include "xiw_verbs.h"

/* ---- a bare CQ -------------------------------------------------------- */

struct xiw_kcq {
	struct xiw_cq cq;
	int comp_calls;
	int err_events;
};

static void xiw_kcq_comp(struct ib_cq *base_cq, void *ctx)
{
	struct xiw_kcq *k = ctx;

	k->comp_calls++;
}

static void xiw_kcq_event(struct ib_event *ev, void *ctx)
{
	struct xiw_kcq *k = ctx;

	if (ev->event == IB_EVENT_CQ_ERR)
		k->err_events++;
}

static void xiw_kcq_exit(void *data)
{
	struct xiw_kcq *k = data;

	cancel_work_sync(&k->cq.comp_work);
}

static struct xiw_kcq *xiw_kcq_new_as(struct kunit *test, u32 num_cqe,
				      bool kernel_verbs)
{
	struct xiw_kcq *k = kunit_kzalloc(test, sizeof(*k), GFP_KERNEL);
	struct xiw_cqe *queue;

	KUNIT_ASSERT_NOT_NULL(test, k);
	queue = kunit_kzalloc(test, num_cqe * sizeof(*queue) +
			      sizeof(struct xiw_cq_ctrl), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, queue);
	xiw_cq_init(&k->cq, num_cqe, queue, kernel_verbs);
	k->cq.base_cq.comp_handler = xiw_kcq_comp;
	k->cq.base_cq.event_handler = xiw_kcq_event;
	k->cq.base_cq.cq_context = k;
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, xiw_kcq_exit, k));
	return k;
}

static struct xiw_kcq *xiw_kcq_new(struct kunit *test, u32 num_cqe)
{
	return xiw_kcq_new_as(test, num_cqe, true);
}

/* Let the CQ's work item run and deliver what it has. */
static void xiw_kcq_settle(struct xiw_kcq *k)
{
	flush_work(&k->cq.comp_work);
}

static int xiw_kcq_poll(struct xiw_kcq *k, struct ib_wc *wc, int n)
{
	return xiw_poll_cq(&k->cq.base_cq, n, wc);
}

static void xiw_cq_overflow_drops_and_reports(struct kunit *test)
{
	struct xiw_kcq *k = xiw_kcq_new(test, 4);
	struct ib_wc wc[8];
	int i, n;

	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, 0, xiw_cqe_add(&k->cq, 100 + i, XIW_OP_SEND,
						     XIW_WC_SUCCESS, i, 0, NULL, false));
	/* Full: the fifth and sixth are refused, counted, and reported. */
	KUNIT_EXPECT_EQ(test, -ENOMEM, xiw_cqe_add(&k->cq, 104, XIW_OP_SEND,
						   XIW_WC_SUCCESS, 0, 0, NULL, false));
	KUNIT_EXPECT_EQ(test, -ENOMEM, xiw_cqe_add(&k->cq, 105, XIW_OP_SEND,
						   XIW_WC_SUCCESS, 0, 0, NULL, false));
	KUNIT_EXPECT_EQ(test, 2ULL, k->cq.overflow);
	xiw_kcq_settle(k);
	KUNIT_EXPECT_GE(test, k->err_events, 1);
	KUNIT_EXPECT_EQ(test, 0, k->comp_calls);

	/* What fitted comes out intact and in order. */
	n = xiw_kcq_poll(k, wc, ARRAY_SIZE(wc));
	KUNIT_ASSERT_EQ(test, 4, n);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ(test, (u64)(100 + i), wc[i].wr_id);
		KUNIT_EXPECT_EQ(test, (u32)i, wc[i].byte_len);
		KUNIT_EXPECT_EQ(test, IB_WC_SUCCESS, wc[i].status);
		KUNIT_EXPECT_EQ(test, IB_WC_SEND, wc[i].opcode);
	}
	KUNIT_EXPECT_EQ(test, 0, xiw_kcq_poll(k, wc, ARRAY_SIZE(wc)));

	/* Drained, the ring takes entries again, across the wrap. */
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, 0, xiw_cqe_add(&k->cq, 200 + i, XIW_OP_RECEIVE,
						     XIW_WC_WR_FLUSH_ERR, 0, 0, NULL, false));
	n = xiw_kcq_poll(k, wc, 2);
	KUNIT_ASSERT_EQ(test, 2, n);
	KUNIT_EXPECT_EQ(test, 200ULL, wc[0].wr_id);
	KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, wc[1].status);
	KUNIT_EXPECT_EQ(test, IB_WC_RECV, wc[1].opcode);
	n = xiw_kcq_poll(k, wc, 8);
	KUNIT_ASSERT_EQ(test, 1, n);
	KUNIT_EXPECT_EQ(test, 202ULL, wc[0].wr_id);
}

static void xiw_cq_one_entry_ring(struct kunit *test)
{
	struct xiw_kcq *k = xiw_kcq_new(test, 1);
	struct ib_wc wc;
	int i;

	for (i = 0; i < 5; i++) {
		KUNIT_EXPECT_EQ(test, 0, xiw_cqe_add(&k->cq, i, XIW_OP_WRITE,
						     XIW_WC_SUCCESS, 0, 0, NULL, false));
		KUNIT_EXPECT_EQ(test, -ENOMEM, xiw_cqe_add(&k->cq, 99, XIW_OP_WRITE,
							   XIW_WC_SUCCESS, 0, 0, NULL, false));
		KUNIT_ASSERT_EQ(test, 1, xiw_kcq_poll(k, &wc, 1));
		KUNIT_EXPECT_EQ(test, (u64)i, wc.wr_id);
	}
	KUNIT_EXPECT_EQ(test, 5ULL, k->cq.overflow);
}

static void xiw_cq_notify_next_and_solicited(struct kunit *test)
{
	struct xiw_kcq *k = xiw_kcq_new(test, 8);
	struct ib_cq *cq = &k->cq.base_cq;
	struct ib_wc wc[8];

	/* Not armed: completions are silent. */
	xiw_cqe_add(&k->cq, 1, XIW_OP_SEND, XIW_WC_SUCCESS, 0, 0, NULL, true);
	xiw_kcq_settle(k);
	KUNIT_EXPECT_EQ(test, 0, k->comp_calls);

	/* Armed with a CQE waiting: REPORT_MISSED_EVENTS says so. */
	KUNIT_EXPECT_EQ(test, 1, xiw_req_notify_cq(cq, IB_CQ_NEXT_COMP |
						   IB_CQ_REPORT_MISSED_EVENTS));
	KUNIT_EXPECT_EQ(test, 1, xiw_kcq_poll(k, wc, 8));
	KUNIT_EXPECT_EQ(test, 0, xiw_req_notify_cq(cq, IB_CQ_NEXT_COMP |
						   IB_CQ_REPORT_MISSED_EVENTS));

	/* NEXT_COMP: one call for the next CQE, then disarmed. */
	xiw_cqe_add(&k->cq, 2, XIW_OP_SEND, XIW_WC_SUCCESS, 0, 0, NULL, false);
	xiw_kcq_settle(k);
	KUNIT_EXPECT_EQ(test, 1, k->comp_calls);
	xiw_cqe_add(&k->cq, 3, XIW_OP_SEND, XIW_WC_SUCCESS, 0, 0, NULL, false);
	xiw_kcq_settle(k);
	KUNIT_EXPECT_EQ(test, 1, k->comp_calls);

	/* SOLICITED: an unsolicited CQE stays silent, a solicited one fires. */
	KUNIT_EXPECT_EQ(test, 0, xiw_req_notify_cq(cq, IB_CQ_SOLICITED));
	xiw_cqe_add(&k->cq, 4, XIW_OP_RECEIVE, XIW_WC_SUCCESS, 0, 0, NULL, false);
	xiw_kcq_settle(k);
	KUNIT_EXPECT_EQ(test, 1, k->comp_calls);
	xiw_cqe_add(&k->cq, 5, XIW_OP_RECEIVE, XIW_WC_SUCCESS, 0, 0, NULL, true);
	xiw_kcq_settle(k);
	KUNIT_EXPECT_EQ(test, 2, k->comp_calls);
	KUNIT_EXPECT_EQ(test, 4, xiw_kcq_poll(k, wc, 8));
	KUNIT_EXPECT_EQ(test, 0, k->err_events);
}

/*
 * A user CQ's handler (uverbs's) is called where the CQE is written, with
 * whatever the data path holds: here with interrupts off, nothing left for
 * the work item.  A kernel consumer's own handler still waits for it.
 */
static void xiw_cq_user_handler_runs_inline(struct kunit *test)
{
	struct xiw_kcq *u = xiw_kcq_new_as(test, 4, false);
	struct xiw_kcq *k = xiw_kcq_new(test, 4);
	struct xiw_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	unsigned long flags;

	KUNIT_ASSERT_NOT_NULL(test, qp);
	qp->base_qp.qp_num = 7;
	KUNIT_EXPECT_EQ(test, 0, xiw_req_notify_cq(&u->cq.base_cq,
						   IB_CQ_NEXT_COMP));
	KUNIT_EXPECT_EQ(test, 0, xiw_req_notify_cq(&k->cq.base_cq,
						   IB_CQ_NEXT_COMP));
	local_irq_save(flags);
	KUNIT_EXPECT_EQ(test, 0, xiw_cqe_add(&u->cq, 1, XIW_OP_SEND,
					     XIW_WC_SUCCESS, 0, 0, qp, false));
	KUNIT_EXPECT_EQ(test, 0, xiw_cqe_add(&k->cq, 1, XIW_OP_SEND,
					     XIW_WC_SUCCESS, 0, 0, qp, false));
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(test, 1, u->comp_calls);
	KUNIT_EXPECT_FALSE(test, work_pending(&u->cq.comp_work));
	KUNIT_EXPECT_EQ(test, 7ULL, u->cq.queue[0].qp_id);
	xiw_kcq_settle(k);
	KUNIT_EXPECT_EQ(test, 1, k->comp_calls);

	/* Disarmed by that CQE: the next one is silent. */
	KUNIT_EXPECT_EQ(test, 0, xiw_cqe_add(&u->cq, 2, XIW_OP_SEND,
					     XIW_WC_SUCCESS, 0, 0, qp, false));
	KUNIT_EXPECT_EQ(test, 1, u->comp_calls);
}

/*
 * A kernel CQ the RDMA core polls for its consumer (the core allocated
 * its batch of work completions; softirq or workqueue polling) has the
 * core's handler, which only schedules: it runs where the CQE is written
 * too.  A CQ polled directly, or one whose consumer brought its own
 * handler (ib_create_cq()), keeps the work item.
 */
static void xiw_cq_core_handler_runs_inline(struct kunit *test)
{
	static const struct {
		enum ib_poll_context ctx;
		bool core;
		bool inline_call;
	} v[] = {
		{ IB_POLL_SOFTIRQ, true, true },
		{ IB_POLL_WORKQUEUE, true, true },
		{ IB_POLL_UNBOUND_WORKQUEUE, true, true },
		{ IB_POLL_DIRECT, true, false },
		{ IB_POLL_SOFTIRQ, false, false },
	};
	struct xiw_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	struct ib_wc *wc = kunit_kzalloc(test, sizeof(*wc), GFP_KERNEL);
	unsigned long flags;
	unsigned int i;
	int rv, calls;

	KUNIT_ASSERT_NOT_NULL(test, qp);
	KUNIT_ASSERT_NOT_NULL(test, wc);
	for (i = 0; i < ARRAY_SIZE(v); i++) {
		struct xiw_kcq *k = xiw_kcq_new(test, 4);

		k->cq.base_cq.poll_ctx = v[i].ctx;
		k->cq.base_cq.wc = v[i].core ? wc : NULL;
		KUNIT_EXPECT_EQ(test, 0, xiw_req_notify_cq(&k->cq.base_cq,
							   IB_CQ_NEXT_COMP));
		/* The CQ's per-CPU work item cannot run before the restore. */
		local_irq_save(flags);
		rv = xiw_cqe_add(&k->cq, i, XIW_OP_SEND, XIW_WC_SUCCESS, 0, 0,
				 qp, false);
		calls = k->comp_calls;
		local_irq_restore(flags);
		KUNIT_EXPECT_EQ(test, 0, rv);
		KUNIT_EXPECT_EQ_MSG(test, v[i].inline_call ? 1 : 0, calls,
				    "case %u", i);
		xiw_kcq_settle(k);
		KUNIT_EXPECT_EQ_MSG(test, 1, k->comp_calls, "case %u", i);
	}
}

static struct kunit_case xiw_cq_cases[] = {
	KUNIT_CASE(xiw_cq_overflow_drops_and_reports),
	KUNIT_CASE(xiw_cq_one_entry_ring),
	KUNIT_CASE(xiw_cq_notify_next_and_solicited),
	KUNIT_CASE(xiw_cq_user_handler_runs_inline),
	KUNIT_CASE(xiw_cq_core_handler_runs_inline),
	{}
};

static struct kunit_suite xiw_cq_suite = {
	.name = "xiw_cq",
	.test_cases = xiw_cq_cases,
};

/* ---- the QP state machine behind a fake transport ---------------------- */

struct xiw_kqp {
	struct xiw_qp qp;
	struct xiw_kcq *scq;
	struct xiw_kcq *rcq;
	int kicks;
	int flushes;
	int flush_seen_cqes;	/* CQEs already in the send CQ at flush time */
	int changes;
	enum xiw_qp_state last_old;
	enum xiw_qp_state last_new;
	int detaches;
	void *detached;			/* what detach was handed */
	void *detach_saw_tctx;		/* @tctx as published during detach */
	enum xiw_qp_state detach_saw_state;
};

static struct xiw_kqp *xiw_kqp_of(struct xiw_qp *qp)
{
	return container_of(qp, struct xiw_kqp, qp);
}

static void xiw_fake_sq_kick(struct xiw_qp *qp)
{
	xiw_kqp_of(qp)->kicks++;
}

static void xiw_fake_state_change(struct xiw_qp *qp, enum xiw_qp_state old,
				  enum xiw_qp_state new)
{
	struct xiw_kqp *k = xiw_kqp_of(qp);

	k->changes++;
	k->last_old = old;
	k->last_new = new;
}

static void xiw_fake_flush(struct xiw_qp *qp)
{
	struct xiw_kqp *k = xiw_kqp_of(qp);

	k->flushes++;
	k->flush_seen_cqes = k->scq->cq.cq_put;
}

static void xiw_fake_detach(struct xiw_qp *qp, void *tctx)
{
	struct xiw_kqp *k = xiw_kqp_of(qp);

	k->detaches++;
	k->detached = tctx;
	k->detach_saw_tctx = rcu_access_pointer(qp->tctx);
	k->detach_saw_state = READ_ONCE(qp->state);
}

static const struct xiw_qp_transport_ops xiw_fake_tops = {
	.sq_kick = xiw_fake_sq_kick,
	.state_change = xiw_fake_state_change,
	.flush = xiw_fake_flush,
	.detach = xiw_fake_detach,
};

#define XIW_KQP_DEPTH	4

/* The fake QPs' consumer has no event handler. */
static void xiw_kqp_event_work(struct work_struct *work)
{
}

static struct xiw_kqp *xiw_kqp_new(struct kunit *test)
{
	struct xiw_kqp *k = kunit_kzalloc(test, sizeof(*k), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, k);
	k->scq = xiw_kcq_new(test, 16);
	k->rcq = xiw_kcq_new(test, 16);
	spin_lock_init(&k->qp.state_lock);
	INIT_WORK(&k->qp.event_work, xiw_kqp_event_work);
	spin_lock_init(&k->qp.sq_lock);
	spin_lock_init(&k->qp.rq_lock);
	k->qp.state = XIW_QP_IDLE;
	k->qp.kernel_verbs = true;
	k->qp.scq = &k->scq->cq;
	k->qp.rcq = &k->rcq->cq;
	k->qp.num_sqe = XIW_KQP_DEPTH;
	k->qp.num_rqe = XIW_KQP_DEPTH;
	k->qp.max_recv_sge = 1;
	k->qp.sendq = kunit_kcalloc(test, XIW_KQP_DEPTH, sizeof(struct xiw_ksqe),
				    GFP_KERNEL);
	k->qp.recvq = kunit_kcalloc(test, XIW_KQP_DEPTH, sizeof(struct xiw_krqe),
				    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, k->qp.sendq);
	KUNIT_ASSERT_NOT_NULL(test, k->qp.recvq);
	return k;
}

/* Post straight into the kernel rings, as post_send/post_recv would. */
static void xiw_kqp_post_send(struct xiw_kqp *k, u64 id, u16 flags)
{
	struct xiw_ksqe *sqe = &((struct xiw_ksqe *)k->qp.sendq)
				[k->qp.sq_put % k->qp.num_sqe];

	sqe->id = id;
	sqe->opcode = XIW_OP_SEND;
	/* Body before VALID, as a kernel post_send publishes it. */
	smp_store_release(&sqe->flags, flags | XIW_WQE_VALID);
	k->qp.sq_put++;
}

static void xiw_kqp_post_recv(struct xiw_kqp *k, u64 id)
{
	struct xiw_krqe *rqe = &((struct xiw_krqe *)k->qp.recvq)
				[k->qp.rq_put % k->qp.num_rqe];

	rqe->id = id;
	rqe->opcode = XIW_OP_RECEIVE;
	/* Body before VALID, as a kernel post_recv publishes it. */
	smp_store_release(&rqe->flags, XIW_WQE_VALID);
	k->qp.rq_put++;
}

/*
 * The iWARP QP states (RFC 5040 sec 6.2 and the verbs that drive them),
 * written out here independently of the driver's table: what may follow
 * each state.  RTS is only entered with a transport attached.
 */
#define XIW_S(st)	BIT(XIW_QP_##st)

static const u8 xiw_expected_moves[XIW_QP_NUM_STATES] = {
	[XIW_QP_IDLE] = XIW_S(IDLE) | XIW_S(RTS) | XIW_S(ERROR),
	[XIW_QP_RTS] = XIW_S(RTS) | XIW_S(CLOSING) | XIW_S(TERMINATE) | XIW_S(ERROR),
	[XIW_QP_CLOSING] = XIW_S(CLOSING) | XIW_S(IDLE) | XIW_S(ERROR),
	[XIW_QP_TERMINATE] = XIW_S(TERMINATE) | XIW_S(ERROR),
	[XIW_QP_ERROR] = XIW_S(ERROR) | XIW_S(IDLE),
};

static bool xiw_move_expected(enum xiw_qp_state from, enum xiw_qp_state to)
{
	return xiw_expected_moves[from] & BIT(to);
}

static void xiw_qp_every_transition(struct kunit *test)
{
	int from, to;

	for (from = 0; from < XIW_QP_NUM_STATES; from++) {
		for (to = 0; to < XIW_QP_NUM_STATES; to++) {
			struct xiw_kqp *k = xiw_kqp_new(test);
			bool ok = xiw_move_expected(from, to);
			int rv;

			k->qp.state = from;
			k->qp.tops = &xiw_fake_tops;
			rv = xiw_qp_modify(&k->qp, to);
			KUNIT_EXPECT_EQ_MSG(test, rv, ok ? 0 : -EINVAL, "%s -> %s",
					    xiw_qp_state_name(from),
					    xiw_qp_state_name(to));
			KUNIT_EXPECT_EQ_MSG(test, (int)k->qp.state, ok ? to : from,
					    "%s -> %s", xiw_qp_state_name(from),
					    xiw_qp_state_name(to));
			/*
			 * Hooks run for real changes only, never for refusals;
			 * only verbs flush again in ERROR, with a transport
			 * attached (xiw_qp_error_again_flushes).
			 */
			KUNIT_EXPECT_EQ_MSG(test, k->flushes,
					    ok && to == XIW_QP_ERROR && from != to,
					    "%s -> %s", xiw_qp_state_name(from),
					    xiw_qp_state_name(to));
			KUNIT_EXPECT_EQ_MSG(test, k->kicks,
					    ok && to == XIW_QP_RTS && from != to,
					    "%s -> %s", xiw_qp_state_name(from),
					    xiw_qp_state_name(to));
		}
	}
	KUNIT_EXPECT_STREQ(test, "?", xiw_qp_state_name(XIW_QP_NUM_STATES));
	{
		struct xiw_kqp *k = xiw_kqp_new(test);

		KUNIT_EXPECT_EQ(test, -EINVAL, xiw_qp_modify(&k->qp, XIW_QP_NUM_STATES));
		KUNIT_EXPECT_EQ(test, (int)XIW_QP_IDLE, (int)k->qp.state);
	}
}

static void xiw_qp_rts_needs_a_transport(struct kunit *test)
{
	struct xiw_kqp *k = xiw_kqp_new(test);

	KUNIT_EXPECT_EQ(test, -EINVAL, xiw_qp_modify(&k->qp, XIW_QP_RTS));
	KUNIT_EXPECT_EQ(test, (int)XIW_QP_IDLE, (int)k->qp.state);

	KUNIT_EXPECT_EQ(test, -EINVAL, xiw_qp_connect(&k->qp, &xiw_fake_tops, NULL,
						      XIW_MAX_ORD_QP + 1, 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, xiw_qp_connect(&k->qp, &xiw_fake_tops, NULL,
						      1, XIW_MAX_IRD_QP + 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, xiw_qp_connect(&k->qp, NULL, NULL, 1, 1));
	KUNIT_EXPECT_NULL(test, k->qp.tops);

	KUNIT_EXPECT_EQ(test, 0, xiw_qp_connect(&k->qp, &xiw_fake_tops, k, 16, 8));
	KUNIT_EXPECT_EQ(test, (int)XIW_QP_RTS, (int)k->qp.state);
	KUNIT_EXPECT_EQ(test, 1, k->kicks);
	KUNIT_EXPECT_EQ(test, 16U, k->qp.ord);
	KUNIT_EXPECT_EQ(test, 8U, k->qp.ird);
	KUNIT_EXPECT_PTR_EQ(test, (void *)k, k->qp.tctx);
	/* Not IDLE any more: a second connect is refused, nothing changes. */
	KUNIT_EXPECT_EQ(test, -EINVAL, xiw_qp_connect(&k->qp, &xiw_fake_tops, NULL, 1, 1));
	KUNIT_EXPECT_PTR_EQ(test, (void *)k, k->qp.tctx);

	/* Back in IDLE with the transport still attached: -EBUSY. */
	KUNIT_EXPECT_EQ(test, 0, xiw_qp_modify(&k->qp, XIW_QP_CLOSING));
	KUNIT_EXPECT_EQ(test, 0, xiw_qp_modify(&k->qp, XIW_QP_IDLE));
	KUNIT_EXPECT_EQ(test, -EBUSY, xiw_qp_connect(&k->qp, &xiw_fake_tops, NULL, 1, 1));
	KUNIT_EXPECT_EQ(test, 2, k->changes);
	KUNIT_EXPECT_EQ(test, (int)XIW_QP_CLOSING, (int)k->last_old);
	KUNIT_EXPECT_EQ(test, (int)XIW_QP_IDLE, (int)k->last_new);
}

static void xiw_qp_error_flushes_in_order(struct kunit *test)
{
	struct xiw_kqp *k = xiw_kqp_new(test);
	struct ib_wc wc[16];
	int n, i;

	KUNIT_ASSERT_EQ(test, 0, xiw_qp_connect(&k->qp, &xiw_fake_tops, NULL, 4, 4));
	xiw_kqp_post_send(k, 11, XIW_WQE_SIGNALLED);
	xiw_kqp_post_send(k, 12, 0);		/* unsignalled: flushed all the same */
	xiw_kqp_post_send(k, 13, XIW_WQE_SIGNALLED);
	xiw_kqp_post_recv(k, 21);
	xiw_kqp_post_recv(k, 22);

	KUNIT_ASSERT_EQ(test, 0, xiw_qp_modify(&k->qp, XIW_QP_TERMINATE));
	KUNIT_EXPECT_EQ(test, 0, k->flushes);
	KUNIT_ASSERT_EQ(test, 0, xiw_qp_modify(&k->qp, XIW_QP_ERROR));
	KUNIT_EXPECT_EQ(test, 1, k->flushes);
	/* The transport flushes what it holds before the rings are. */
	KUNIT_EXPECT_EQ(test, 0, k->flush_seen_cqes);
	KUNIT_EXPECT_EQ(test, (int)XIW_QP_TERMINATE, (int)k->last_old);
	KUNIT_EXPECT_EQ(test, (int)XIW_QP_ERROR, (int)k->last_new);

	n = xiw_kcq_poll(k->scq, wc, ARRAY_SIZE(wc));
	KUNIT_ASSERT_EQ(test, 3, n);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, (u64)(11 + i), wc[i].wr_id);
		KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, wc[i].status);
	}
	n = xiw_kcq_poll(k->rcq, wc, ARRAY_SIZE(wc));
	KUNIT_ASSERT_EQ(test, 2, n);
	KUNIT_EXPECT_EQ(test, 21ULL, wc[0].wr_id);
	KUNIT_EXPECT_EQ(test, 22ULL, wc[1].wr_id);
	KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, wc[1].status);
	KUNIT_EXPECT_EQ(test, IB_WC_RECV, wc[1].opcode);
	KUNIT_EXPECT_EQ(test, 5LL, atomic64_read(&k->qp.stats.flushed));

	/* ERROR again: nothing left, no new completions; then reset. */
	KUNIT_EXPECT_EQ(test, 0, xiw_qp_modify(&k->qp, XIW_QP_ERROR));
	KUNIT_EXPECT_EQ(test, 0, xiw_kcq_poll(k->scq, wc, ARRAY_SIZE(wc)));
	KUNIT_EXPECT_EQ(test, 0, xiw_qp_modify(&k->qp, XIW_QP_IDLE));
	KUNIT_EXPECT_EQ(test, -EINVAL, xiw_qp_modify(&k->qp, XIW_QP_TERMINATE));
}

/*
 * A move the transport makes itself (xiw_qp_transport_move()) does what
 * any move does -- the flush on ERROR -- but its state_change hook is not
 * called: the transport has acted on the move already.  Verbs moves still
 * call it.
 */
static void xiw_qp_transport_move_skips_its_hook(struct kunit *test)
{
	struct xiw_kqp *k = xiw_kqp_new(test);
	struct ib_wc wc[4];

	KUNIT_ASSERT_EQ(test, 0, xiw_qp_connect(&k->qp, &xiw_fake_tops, NULL, 4, 4));
	xiw_kqp_post_send(k, 11, XIW_WQE_SIGNALLED);
	xiw_kqp_post_recv(k, 21);

	KUNIT_EXPECT_EQ(test, 0, xiw_qp_transport_move(&k->qp, XIW_QP_TERMINATE));
	KUNIT_EXPECT_EQ(test, (int)XIW_QP_TERMINATE, (int)READ_ONCE(k->qp.state));
	KUNIT_EXPECT_EQ(test, -EINVAL, xiw_qp_transport_move(&k->qp, XIW_QP_CLOSING));
	KUNIT_EXPECT_EQ(test, 0, xiw_qp_transport_move(&k->qp, XIW_QP_ERROR));
	KUNIT_EXPECT_EQ(test, 0, k->changes);
	KUNIT_EXPECT_EQ(test, 1, k->flushes);
	KUNIT_ASSERT_EQ(test, 1, xiw_kcq_poll(k->scq, wc, ARRAY_SIZE(wc)));
	KUNIT_EXPECT_EQ(test, 11ULL, wc[0].wr_id);
	KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, wc[0].status);
	KUNIT_ASSERT_EQ(test, 1, xiw_kcq_poll(k->rcq, wc, ARRAY_SIZE(wc)));
	KUNIT_EXPECT_EQ(test, 21ULL, wc[0].wr_id);

	KUNIT_EXPECT_EQ(test, 0, xiw_qp_modify(&k->qp, XIW_QP_IDLE));
	KUNIT_EXPECT_EQ(test, 1, k->changes);
	KUNIT_EXPECT_EQ(test, (int)XIW_QP_IDLE, (int)k->last_new);
}

/*
 * Another context has moved the QP to ERROR but not flushed yet (its
 * flush hook waits for a copy): a verbs move to ERR in ERROR
 * (ib_drain_sq()) flushes what is left itself, the transport first, so
 * that a marker posted next completes last.  The transport's own move in
 * ERROR and an SQD flush nothing, and neither does ERR once destroy_qp
 * has withdrawn the transport: completions would carry a QP being freed.
 */
static void xiw_qp_error_again_flushes(struct kunit *test)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct xiw_kqp *k = xiw_kqp_new(test);
	struct ib_wc wc[4];
	int n, i;

	k->qp.state = XIW_QP_ERROR;
	k->qp.tops = &xiw_fake_tops;
	rcu_assign_pointer(k->qp.tctx, k);
	xiw_kqp_post_send(k, 31, XIW_WQE_SIGNALLED);
	xiw_kqp_post_send(k, 32, XIW_WQE_SIGNALLED);
	xiw_kqp_post_recv(k, 41);

	KUNIT_ASSERT_EQ(test, 0, xiw_modify_qp(&k->qp.base_qp, &attr,
					       IB_QP_STATE, NULL));
	KUNIT_EXPECT_EQ(test, 1, k->flushes);
	KUNIT_EXPECT_EQ(test, 0, k->flush_seen_cqes);
	KUNIT_EXPECT_EQ(test, 0, k->changes);
	KUNIT_EXPECT_EQ(test, (int)XIW_QP_ERROR, (int)k->qp.state);
	n = xiw_kcq_poll(k->scq, wc, ARRAY_SIZE(wc));
	KUNIT_ASSERT_EQ(test, 2, n);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, (u64)(31 + i), wc[i].wr_id);
		KUNIT_EXPECT_EQ(test, IB_WC_WR_FLUSH_ERR, wc[i].status);
	}
	KUNIT_ASSERT_EQ(test, 1, xiw_kcq_poll(k->rcq, wc, ARRAY_SIZE(wc)));
	KUNIT_EXPECT_EQ(test, 41ULL, wc[0].wr_id);

	/* Not the transport's own move, nor an SQD. */
	xiw_kqp_post_send(k, 33, XIW_WQE_SIGNALLED);
	KUNIT_EXPECT_EQ(test, 0, xiw_qp_transport_move(&k->qp, XIW_QP_ERROR));
	attr.qp_state = IB_QPS_SQD;
	KUNIT_EXPECT_EQ(test, 0, xiw_modify_qp(&k->qp.base_qp, &attr,
					       IB_QP_STATE, NULL));
	KUNIT_EXPECT_EQ(test, 1, k->flushes);
	KUNIT_EXPECT_EQ(test, 0, xiw_kcq_poll(k->scq, wc, ARRAY_SIZE(wc)));

	/* Withdrawn, as destroy_qp does before it waits for iw_cm. */
	RCU_INIT_POINTER(k->qp.tctx, NULL);
	attr.qp_state = IB_QPS_ERR;
	KUNIT_EXPECT_EQ(test, 0, xiw_modify_qp(&k->qp.base_qp, &attr,
					       IB_QP_STATE, NULL));
	KUNIT_EXPECT_EQ(test, 1, k->flushes);
	KUNIT_EXPECT_EQ(test, 0, xiw_kcq_poll(k->scq, wc, ARRAY_SIZE(wc)));
	KUNIT_EXPECT_EQ(test, 0, k->changes);
	KUNIT_EXPECT_EQ(test, (int)XIW_QP_ERROR, (int)k->qp.state);
}

static void xiw_qp_error_with_full_cq(struct kunit *test)
{
	struct xiw_kqp *k = xiw_kqp_new(test);
	struct xiw_kcq *tiny = xiw_kcq_new(test, 2);
	struct ib_wc wc[8];

	k->qp.scq = &tiny->cq;
	k->qp.state = XIW_QP_RTS;
	k->qp.tops = &xiw_fake_tops;
	xiw_kqp_post_send(k, 1, XIW_WQE_SIGNALLED);
	xiw_kqp_post_send(k, 2, XIW_WQE_SIGNALLED);
	xiw_kqp_post_send(k, 3, XIW_WQE_SIGNALLED);
	/* Three flushes into two slots: the third is dropped and reported. */
	KUNIT_EXPECT_EQ(test, 0, xiw_qp_modify(&k->qp, XIW_QP_ERROR));
	xiw_kcq_settle(tiny);
	KUNIT_EXPECT_EQ(test, 1ULL, tiny->cq.overflow);
	KUNIT_EXPECT_GE(test, tiny->err_events, 1);
	KUNIT_EXPECT_EQ(test, 2, xiw_kcq_poll(tiny, wc, 8));
	KUNIT_EXPECT_EQ(test, 1ULL, wc[0].wr_id);
	KUNIT_EXPECT_EQ(test, 2ULL, wc[1].wr_id);
	/* The ring itself was drained: nothing stays posted. */
	KUNIT_EXPECT_EQ(test, k->qp.sq_put, k->qp.sq_get);
}

/*
 * destroy_qp of @k's QP (@connect: with the fake transport attached)
 * through xiw_destroy_qp(), on a device that has only the QP number map.
 */
static void xiw_kqp_destroy(struct kunit *test, struct xiw_kqp *k, bool connect)
{
	struct xiw_device *xdev = kunit_kzalloc(test, sizeof(*xdev), GFP_KERNEL);
	u32 qpn;

	KUNIT_ASSERT_NOT_NULL(test, xdev);
	xa_init_flags(&xdev->qp_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	KUNIT_ASSERT_EQ(test, 0, xa_alloc_irq(&xdev->qp_xa, &qpn, &k->qp,
					      xa_limit_32b, GFP_KERNEL));
	k->qp.base_qp.qp_num = qpn;
	k->qp.xdev = xdev;
	atomic_set(&xdev->num_qp, 1);
	kref_init(&k->qp.ref);
	init_completion(&k->qp.released);
	/* destroy_qp frees a kernel QP's rings with vfree(). */
	k->qp.sendq = vzalloc(XIW_KQP_DEPTH * sizeof(struct xiw_ksqe));
	k->qp.recvq = vzalloc(XIW_KQP_DEPTH * sizeof(struct xiw_krqe));
	KUNIT_ASSERT_NOT_NULL(test, k->qp.sendq);
	KUNIT_ASSERT_NOT_NULL(test, k->qp.recvq);
	if (connect)
		KUNIT_ASSERT_EQ(test, 0, xiw_qp_connect(&k->qp, &xiw_fake_tops, k, 4, 4));
	k->changes = 0;

	KUNIT_EXPECT_EQ(test, 0, xiw_destroy_qp(&k->qp.base_qp, NULL));
	KUNIT_EXPECT_NULL(test, xa_load(&xdev->qp_xa, qpn));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&xdev->num_qp));
	xa_destroy(&xdev->qp_xa);
}

/*
 * destroy_qp withdraws the transport in the section that moves the QP to
 * ERROR and hands it to detach: detach finds the QP in ERROR with nothing
 * published, and no state_change hook runs for the move.
 */
static void xiw_qp_destroy_withdraws_the_transport(struct kunit *test)
{
	struct xiw_kqp *k = xiw_kqp_new(test);

	xiw_kqp_destroy(test, k, true);
	KUNIT_EXPECT_EQ(test, 1, k->detaches);
	KUNIT_EXPECT_PTR_EQ(test, (void *)k, k->detached);
	KUNIT_EXPECT_NULL(test, k->detach_saw_tctx);
	KUNIT_EXPECT_EQ(test, (int)XIW_QP_ERROR, (int)k->detach_saw_state);
	KUNIT_EXPECT_EQ(test, 0, k->changes);
	KUNIT_EXPECT_NULL(test, rcu_access_pointer(k->qp.tctx));

	/* Never connected: nothing to detach. */
	k = xiw_kqp_new(test);
	xiw_kqp_destroy(test, k, false);
	KUNIT_EXPECT_EQ(test, 0, k->detaches);
	KUNIT_EXPECT_EQ(test, 0, k->changes);
}

static struct kunit_case xiw_qp_state_cases[] = {
	KUNIT_CASE(xiw_qp_every_transition),
	KUNIT_CASE(xiw_qp_rts_needs_a_transport),
	KUNIT_CASE(xiw_qp_error_flushes_in_order),
	KUNIT_CASE(xiw_qp_transport_move_skips_its_hook),
	KUNIT_CASE(xiw_qp_error_again_flushes),
	KUNIT_CASE(xiw_qp_error_with_full_cq),
	KUNIT_CASE(xiw_qp_destroy_withdraws_the_transport),
	{}
};

static struct kunit_suite xiw_qp_state_suite = {
	.name = "xiw_qp_state",
	.test_cases = xiw_qp_state_cases,
};

/* ---- STag, PD and access checks ---------------------------------------- */

struct xiw_mr_check_case {
	const char *desc;
	bool valid;
	bool other_pd;
	enum xiw_mr_kind kind;
	int mr_access;
	int want_access;
	u64 addr;
	u64 len;
	enum xiw_access_result want;
};

#define XIW_MR_VA	0x10000ULL
#define XIW_MR_LEN	0x2000ULL
#define XIW_RW		(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_WRITE)

static const struct xiw_mr_check_case xiw_mr_check_cases[] = {
	{ "local read of the whole region", true, false, XIW_MR_USER, XIW_RW, 0,
	  XIW_MR_VA, XIW_MR_LEN, XIW_ACC_OK },
	{ "remote write, right granted", true, false, XIW_MR_USER, XIW_RW,
	  IB_ACCESS_REMOTE_WRITE, XIW_MR_VA + 8, 8, XIW_ACC_OK },
	{ "remote write, read-only MR", true, false, XIW_MR_USER,
	  IB_ACCESS_REMOTE_READ, IB_ACCESS_REMOTE_WRITE, XIW_MR_VA, 8, XIW_ACC_RIGHTS },
	{ "remote read, local-write-only MR", true, false, XIW_MR_USER,
	  IB_ACCESS_LOCAL_WRITE, IB_ACCESS_REMOTE_READ, XIW_MR_VA, 8, XIW_ACC_RIGHTS },
	{ "remote atomic without the right", true, false, XIW_MR_USER, XIW_RW,
	  IB_ACCESS_REMOTE_ATOMIC, XIW_MR_VA, 8, XIW_ACC_RIGHTS },
	{ "QP of another PD", true, true, XIW_MR_USER, XIW_RW, 0,
	  XIW_MR_VA, 8, XIW_ACC_PD_MISMATCH },
	{ "invalidated STag", false, false, XIW_MR_USER, XIW_RW, 0,
	  XIW_MR_VA, 8, XIW_ACC_INVALIDATED },
	{ "invalidated beats wrong PD", false, true, XIW_MR_USER, XIW_RW, 0,
	  XIW_MR_VA, 8, XIW_ACC_INVALIDATED },
	{ "one octet below the region", true, false, XIW_MR_USER, XIW_RW, 0,
	  XIW_MR_VA - 1, 2, XIW_ACC_BOUNDS },
	{ "one octet past the region", true, false, XIW_MR_USER, XIW_RW, 0,
	  XIW_MR_VA + XIW_MR_LEN - 4, 5, XIW_ACC_BOUNDS },
	{ "zero octets at the very end", true, false, XIW_MR_USER, XIW_RW, 0,
	  XIW_MR_VA + XIW_MR_LEN, 0, XIW_ACC_OK },
	{ "address + length wraps around", true, false, XIW_MR_USER, XIW_RW, 0,
	  XIW_MR_VA + 16, U64_MAX - 8, XIW_ACC_WRAP },
	{ "fast-reg MR bounds", true, false, XIW_MR_FAST, XIW_RW,
	  IB_ACCESS_REMOTE_READ, XIW_MR_VA + XIW_MR_LEN, 1, XIW_ACC_BOUNDS },
	{ "DMA MR: any address", true, false, XIW_MR_DMA, XIW_RW, 0,
	  0xffff888000000000ULL, 4096, XIW_ACC_OK },
	{ "DMA MR: wrap still refused", true, false, XIW_MR_DMA, XIW_RW, 0,
	  U64_MAX - 1, 4, XIW_ACC_WRAP },
	{ "DMA MR: last octet at 2^64 - 1 is no wrap, but out of bounds",
	  true, false, XIW_MR_DMA, XIW_RW, 0, U64_MAX - 3, 4, XIW_ACC_BOUNDS },
	{ "DMA MR: rights still checked", true, false, XIW_MR_DMA,
	  IB_ACCESS_LOCAL_WRITE, IB_ACCESS_REMOTE_WRITE, 0x1000, 4, XIW_ACC_RIGHTS },
};

static void xiw_mr_check_case_desc(const struct xiw_mr_check_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(xiw_mr_check, xiw_mr_check_cases, xiw_mr_check_case_desc);

static void xiw_mr_check_table(struct kunit *test)
{
	const struct xiw_mr_check_case *c = test->param_value;
	struct ib_pd *pd = kunit_kzalloc(test, sizeof(*pd), GFP_KERNEL);
	struct ib_pd *other = kunit_kzalloc(test, sizeof(*other), GFP_KERNEL);
	struct xiw_mr *mr = kunit_kzalloc(test, sizeof(*mr), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, pd);
	KUNIT_ASSERT_NOT_NULL(test, other);
	KUNIT_ASSERT_NOT_NULL(test, mr);
	mr->pd = pd;
	mr->kind = c->kind;
	mr->valid = c->valid;
	mr->access = c->mr_access;
	mr->va = XIW_MR_VA;
	mr->length = XIW_MR_LEN;
	KUNIT_EXPECT_EQ(test, (int)c->want,
			(int)xiw_mr_check(mr, c->other_pd ? other : pd,
					  c->want_access, c->addr, c->len));
}

/*
 * An STag's index reserved by a registration still in progress holds a
 * zero entry: the lookup finds no MR there, and returns (the xarray's
 * retry loop retries zero entries; a lookup that turned them into NULL
 * only after it spun forever, on a post or a peer's guessed STag).
 * Once the MR is in, the STag's key decides.
 */
static void xiw_kunit_mr_release(struct kref *ref)
{
	complete(&container_of(ref, struct xiw_mr, ref)->released);
}

static void xiw_mr_lookup_reserved_index(struct kunit *test)
{
	struct xiw_device *xdev = kunit_kzalloc(test, sizeof(*xdev), GFP_KERNEL);
	struct ib_pd *pd = kunit_kzalloc(test, sizeof(*pd), GFP_KERNEL);
	struct xiw_mr *mr = kunit_kzalloc(test, sizeof(*mr), GFP_KERNEL);
	struct xiw_mr *found;
	u32 idx;

	KUNIT_ASSERT_NOT_NULL(test, xdev);
	KUNIT_ASSERT_NOT_NULL(test, pd);
	KUNIT_ASSERT_NOT_NULL(test, mr);
	xa_init_flags(&xdev->mem_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	KUNIT_ASSERT_EQ(test, 0, xa_alloc_irq(&xdev->mem_xa, &idx, NULL,
					      XA_LIMIT(1, 1000), GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, (int)XIW_ACC_BAD_STAG,
			(int)xiw_mr_lookup(xdev, pd, idx << 8 | 0x5a, 0, 0, 0,
					   &found));
	KUNIT_EXPECT_NULL(test, found);

	mr->pd = pd;
	mr->kind = XIW_MR_DMA;
	mr->valid = true;
	mr->stag = idx << 8 | 0x5a;
	kref_init(&mr->ref);
	init_completion(&mr->released);
	xa_store_irq(&xdev->mem_xa, idx, mr, GFP_KERNEL);
	KUNIT_EXPECT_EQ(test, (int)XIW_ACC_BAD_STAG,
			(int)xiw_mr_lookup(xdev, pd, idx << 8 | 0x5b, 0, 0, 0,
					   &found));
	KUNIT_EXPECT_EQ(test, (int)XIW_ACC_OK,
			(int)xiw_mr_lookup(xdev, pd, idx << 8 | 0x5a, 0, 0, 0,
					   &found));
	KUNIT_EXPECT_PTR_EQ(test, found, mr);
	if (found == mr)
		KUNIT_EXPECT_FALSE(test, kref_put(&mr->ref, xiw_kunit_mr_release));
	/* The lookups' references are all back: only the owner's is left. */
	KUNIT_EXPECT_EQ(test, 1U, kref_read(&mr->ref));
	xa_destroy(&xdev->mem_xa);
}

static struct kunit_case xiw_mr_cases[] = {
	KUNIT_CASE_PARAM(xiw_mr_check_table, xiw_mr_check_gen_params),
	KUNIT_CASE(xiw_mr_lookup_reserved_index),
	{}
};

static struct kunit_suite xiw_mr_suite = {
	.name = "xiw_mr_access",
	.test_cases = xiw_mr_cases,
};

kunit_test_suites(&xiw_cq_suite, &xiw_qp_state_suite, &xiw_mr_suite);
