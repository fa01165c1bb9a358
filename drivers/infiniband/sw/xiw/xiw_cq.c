// SPDX-License-Identifier: GPL-2.0
/*
 * xiw completion queues.
 *
 * A CQ is a ring of struct xiw_cqe followed by a struct xiw_cq_ctrl, in one
 * allocation.  For user CQs that memory is xiw_mmap_alloc()'s and mapped by
 * libsiw, which polls and arms notification without system calls; kernel
 * CQs use the same ring in kernel memory and xiw_poll_cq().
 *
 * Ownership of a slot is the VALID bit of its flags byte: the kernel writes
 * a CQE only into a slot whose VALID bit is clear, fills the body and sets
 * VALID last with a release store; the consumer copies the body out and
 * clears VALID.  A slot found still VALID means the ring is full: the CQE
 * is lost and IB_EVENT_CQ_ERR is raised.
 *
 * The completion handler of a user CQ is uverbs's, which queues an event
 * for the completion channel and wakes its reader: it takes only its own
 * lock and never calls back into the driver, so it runs right where the
 * CQE is written, whatever locks the data path holds there.  So does the
 * RDMA core's handler of a CQ it polls for a kernel consumer in softirq
 * or on a workqueue, which only schedules that poll.  Any other kernel
 * consumer's handler may call back (poll, re-arm, post), so for those
 * CQs, and for CQ events of all, the handler never runs on the call
 * chain that produced the completion: a per-CQ work item (xiw_cq_work())
 * runs it, and a work item never runs concurrently with itself, so at
 * most one handler runs per such CQ at a time.  It runs with bottom
 * halves disabled, the context a NIC driver's handler has.
 */

#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <kunit/visibility.h>
#include <rdma/ib_verbs.h>
#include <net/netlink.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>
#include <rdma/uverbs_ioctl.h>

#include "xiw.h"
#include "xiw_verbs.h"

static const enum ib_wc_status xiw_wc_status_map[XIW_NUM_WC_STATUS] = {
	[XIW_WC_SUCCESS] = IB_WC_SUCCESS,
	[XIW_WC_LOC_LEN_ERR] = IB_WC_LOC_LEN_ERR,
	[XIW_WC_LOC_PROT_ERR] = IB_WC_LOC_PROT_ERR,
	[XIW_WC_LOC_QP_OP_ERR] = IB_WC_LOC_QP_OP_ERR,
	[XIW_WC_WR_FLUSH_ERR] = IB_WC_WR_FLUSH_ERR,
	[XIW_WC_BAD_RESP_ERR] = IB_WC_BAD_RESP_ERR,
	[XIW_WC_LOC_ACCESS_ERR] = IB_WC_LOC_ACCESS_ERR,
	[XIW_WC_REM_ACCESS_ERR] = IB_WC_REM_ACCESS_ERR,
	[XIW_WC_REM_INV_REQ_ERR] = IB_WC_REM_INV_REQ_ERR,
	[XIW_WC_GENERAL_ERR] = IB_WC_GENERAL_ERR,
};

static const enum ib_wc_opcode xiw_wc_opcode_map[XIW_NUM_KOPCODES] = {
	[XIW_OP_WRITE] = IB_WC_RDMA_WRITE,
	[XIW_OP_READ] = IB_WC_RDMA_READ,
	[XIW_OP_READ_LOCAL_INV] = IB_WC_RDMA_READ,
	[XIW_OP_SEND] = IB_WC_SEND,
	[XIW_OP_SEND_WITH_IMM] = IB_WC_SEND,
	[XIW_OP_SEND_REMOTE_INV] = IB_WC_SEND,
	[XIW_OP_FETCH_AND_ADD] = IB_WC_FETCH_ADD,
	[XIW_OP_COMP_AND_SWAP] = IB_WC_COMP_SWAP,
	[XIW_OP_RECEIVE] = IB_WC_RECV,
	[XIW_OP_READ_RESPONSE] = IB_WC_RDMA_READ,
	[XIW_OP_INVAL_STAG] = IB_WC_LOCAL_INV,
	[XIW_OP_REG_MR] = IB_WC_REG_MR,
	[XIW_OP_WRITE_WITH_IMM] = IB_WC_RDMA_WRITE,
	[XIW_OP_RECV_RDMA_WITH_IMM] = IB_WC_RECV_RDMA_WITH_IMM,
	[XIW_OP_MASKED_FETCH_AND_ADD] = IB_WC_MASKED_FETCH_ADD,
	[XIW_OP_MASKED_COMP_AND_SWAP] = IB_WC_MASKED_COMP_SWAP,
};

static void xiw_cq_work(struct work_struct *work)
{
	struct xiw_cq *cq = container_of(work, struct xiw_cq, comp_work);
	struct ib_cq *base_cq = &cq->base_cq;

	if (test_and_clear_bit(XIW_CQ_EV_ERR, &cq->events) &&
	    base_cq->event_handler) {
		struct ib_event event = {
			.device = base_cq->device,
			.event = IB_EVENT_CQ_ERR,
			.element.cq = base_cq,
		};

		base_cq->event_handler(&event, base_cq->cq_context);
	}
	if (test_and_clear_bit(XIW_CQ_EV_COMP, &cq->events) &&
	    base_cq->comp_handler) {
		/*
		 * With bottom halves off, as under a NIC's interrupt: a
		 * consumer that polls from softirq (IB_POLL_SOFTIRQ) has its
		 * irq_poll run by this worker at local_bh_enable(), rather
		 * than by ksoftirqd after a wakeup.
		 */
		local_bh_disable();
		base_cq->comp_handler(base_cq, base_cq->cq_context);
		local_bh_enable();
	}
}

static void xiw_cq_raise(struct xiw_cq *cq, int event)
{
	set_bit(event, &cq->events);
	queue_work(xiw_cq_wq, &cq->comp_work);
}

/*
 * Disarm the notification word if this completion matches it.  The word
 * is shared with userspace, which may re-arm it at any moment: only the
 * value we saw is replaced.
 */
static bool xiw_cq_notify_disarm(struct xiw_cq *cq, bool solicited)
{
	u32 old = READ_ONCE(cq->notify->flags);

	for (;;) {
		u32 cur;

		if (!(old & XIW_NOTIFY_NEXT_COMPLETION) &&
		    !(solicited && (old & XIW_NOTIFY_SOLICITED)))
			return false;
		cur = cmpxchg(&cq->notify->flags, old, XIW_NOTIFY_NOT);
		if (cur == old)
			return true;
		old = cur;
	}
}

/*
 * May the CQ's completion handler run where the CQE is written, under
 * whatever locks the data path holds there?  A user CQ's is uverbs's,
 * which queues the event under a lock of its own.  A kernel CQ that the
 * RDMA core polls for its consumer (ib_alloc_cq(), ib_cq_pool_get(): it
 * allocated the CQ's batch of work completions) in softirq or on a
 * workqueue has the core's handler, which only schedules that poll
 * (irq_poll_sched(), queue_work()).  Any other kernel handler (a CQ from
 * ib_create_cq(), whose consumer may poll, post or re-arm from it) runs
 * from the CQ's work item, where no lock of ours is held.
 */
static bool xiw_cq_handler_inline(struct xiw_cq *cq)
{
	if (!cq->kernel_verbs)
		return true;
	if (!cq->base_cq.wc)
		return false;
	switch (cq->base_cq.poll_ctx) {
	case IB_POLL_SOFTIRQ:
	case IB_POLL_WORKQUEUE:
	case IB_POLL_UNBOUND_WORKQUEUE:
		return true;
	default:
		return false;
	}
}

/*
 * Write one CQE: @ext is the invalidated STag (@cqe_flags has
 * XIW_WQE_REM_INVAL), the immediate data (XIW_WQE_IMM) or unused.
 * Inline in its two callers: every completion of the data path.
 */
static __always_inline int xiw_cqe_put(struct xiw_cq *cq, u64 wr_id,
				       u8 opcode, enum xiw_wc_status status,
				       u32 bytes, u8 cqe_flags, u64 ext,
				       struct xiw_qp *qp, bool solicited)
{
	struct xiw_cqe *cqe;
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	cqe = &cq->queue[cq->cq_put % cq->num_cqe];
	/* Pairs with the consumer's release of the slot. */
	if (smp_load_acquire(&cqe->flags) & XIW_WQE_VALID) {
		cq->overflow++;
		spin_unlock_irqrestore(&cq->lock, flags);
		ibdev_dbg_ratelimited(cq->base_cq.device, "CQ %u overflow\n",
				      cq->id);
		xiw_cq_raise(cq, XIW_CQ_EV_ERR);
		return -ENOMEM;
	}
	cqe->id = wr_id;
	cqe->opcode = opcode;
	cqe->status = status;
	cqe->bytes = bytes;
	cqe->imm_data = 0;
	if (cqe_flags & XIW_WQE_REM_INVAL)
		cqe->inval_stag = ext;
	else if (cqe_flags & XIW_WQE_IMM)
		cqe->imm_data = ext;
	/*
	 * User CQs get the QP number libsiw knows from the create QP
	 * response; kernel CQs, never mapped, carry the QP pointer.
	 */
	cqe->qp_id = cq->kernel_verbs ? (u64)(uintptr_t)qp : xiw_qp_id(qp);
	/* The body must be visible before the consumer sees VALID. */
	smp_store_release(&cqe->flags, XIW_WQE_VALID | cqe_flags);
	cq->cq_put++;
	cq->completions++;
	spin_unlock_irqrestore(&cq->lock, flags);

	/*
	 * Order the CQE before reading the notification word; pairs with
	 * the barrier in xiw_req_notify_cq() (and libsiw's atomic store)
	 * so that an arm racing with this CQE is either seen here or sees
	 * the CQE through IB_CQ_REPORT_MISSED_EVENTS.
	 */
	smp_mb();
	if (!xiw_cq_notify_disarm(cq, solicited))
		return 0;
	/*
	 * A hop through the work item would cost the event-driven consumer
	 * a wakeup of the worker and a context switch per event.
	 */
	if (cq->base_cq.comp_handler && xiw_cq_handler_inline(cq))
		cq->base_cq.comp_handler(&cq->base_cq, cq->base_cq.cq_context);
	else
		xiw_cq_raise(cq, XIW_CQ_EV_COMP);
	return 0;
}

/**
 * xiw_cqe_add - write one completion into a CQ
 * @cq: the CQ
 * @wr_id: work request id
 * @opcode: enum xiw_opcode of the work request
 * @status: completion status
 * @bytes: number of bytes transferred
 * @inval_stag: STag invalidated by the peer (Send with Invalidate), or 0
 * @qp: the QP the work request belongs to
 * @solicited: the completion is solicited (wakes XIW_NOTIFY_SOLICITED)
 *
 * Any context; never sleeps.  The completion handler, if armed, runs here
 * when it only schedules the consumer's poll (user CQs, CQs the RDMA core
 * polls), else later from the CQ's work item.
 *
 * Return: 0, or -ENOMEM if the ring was full (the CQE is dropped and
 * IB_EVENT_CQ_ERR is raised).
 */
int xiw_cqe_add(struct xiw_cq *cq, u64 wr_id, u8 opcode,
		enum xiw_wc_status status, u32 bytes, u32 inval_stag,
		struct xiw_qp *qp, bool solicited)
{
	return xiw_cqe_put(cq, wr_id, opcode, status, bytes,
			   inval_stag ? XIW_WQE_REM_INVAL : 0, inval_stag, qp,
			   solicited);
}
EXPORT_SYMBOL_IF_KUNIT(xiw_cqe_add);

/**
 * xiw_cqe_add_imm - write a successful completion carrying immediate data
 * @cq: the CQ, a kernel CQ (libsiw has no way to report immediate data)
 * @wr_id: work request id
 * @opcode: XIW_OP_RECV_RDMA_WITH_IMM
 * @bytes: number of bytes transferred
 * @imm: the immediate data, in network order
 * @qp: the QP the work request belongs to
 * @solicited: the completion is solicited
 *
 * Any context; never sleeps.
 *
 * Return: 0, or -ENOMEM if the ring was full.
 */
int xiw_cqe_add_imm(struct xiw_cq *cq, u64 wr_id, u8 opcode, u32 bytes,
		    u32 imm, struct xiw_qp *qp, bool solicited)
{
	return xiw_cqe_put(cq, wr_id, opcode, XIW_WC_SUCCESS, bytes,
			   XIW_WQE_IMM, imm, qp, solicited);
}

/**
 * xiw_cq_init - set up the ring of a CQ
 * @cq: the CQ
 * @num_cqe: ring entries
 * @queue: @num_cqe zeroed CQEs followed by a struct xiw_cq_ctrl
 * @kernel_verbs: a kernel CQ (CQEs carry QP pointers), else a user CQ
 */
VISIBLE_IF_KUNIT void xiw_cq_init(struct xiw_cq *cq, u32 num_cqe,
				  struct xiw_cqe *queue, bool kernel_verbs)
{
	cq->num_cqe = num_cqe;
	cq->kernel_verbs = kernel_verbs;
	spin_lock_init(&cq->lock);
	INIT_WORK(&cq->comp_work, xiw_cq_work);
	cq->queue = queue;
	cq->notify = (struct xiw_cq_ctrl *)&queue[num_cqe];
}
EXPORT_SYMBOL_IF_KUNIT(xiw_cq_init);

/**
 * xiw_create_cq_impl - create a CQ (libsiw create CQ ABI)
 * @base_cq: core-allocated CQ
 * @attr: size, vector and flags
 * @udata: user data carrying struct xiw_uresp_create_cq, or NULL
 *
 * Called through the compat adapter XIW_COMPAT_CREATE_CQ (xiw_main.c).
 *
 * Return: 0, -EINVAL for a bad size, vector or response buffer,
 * -EOPNOTSUPP for creation flags, -ENOMEM over the CQ limit or without
 * memory.
 */
int xiw_create_cq_impl(struct ib_cq *base_cq, const struct ib_cq_init_attr *attr,
		       struct ib_udata *udata)
{
	struct xiw_device *xdev = to_xiw_dev(base_cq->device);
	struct xiw_cq *cq = to_xiw_cq(base_cq);
	struct xiw_uresp_create_cq uresp = {};
	struct xiw_cqe *queue;
	size_t size;
	u32 id;
	int rv;

	might_sleep();
	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > XIW_MAX_CQE ||
	    attr->comp_vector >= base_cq->device->num_comp_vectors)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(uresp))
		return -EINVAL;
	if (atomic_inc_return(&xdev->num_cq) > XIW_MAX_CQ) {
		rv = -ENOMEM;
		goto err_count;
	}

	cq->xdev = xdev;

	rv = xa_alloc_cyclic(&xdev->cq_xa, &id, cq, xa_limit_32b,
			     &xdev->next_cq_id, GFP_KERNEL);
	if (rv < 0)
		goto err_count;
	cq->id = id;

	size = array_size(attr->cqe, sizeof(struct xiw_cqe)) +
	       sizeof(struct xiw_cq_ctrl);
	if (udata)
		queue = xiw_mmap_alloc(udata, size, &cq->mmap_entry,
				       &uresp.cq_key);
	else
		queue = vzalloc(size);
	if (!queue) {
		rv = -ENOMEM;
		goto err_id;
	}
	xiw_cq_init(cq, attr->cqe, queue, !udata);
	base_cq->cqe = cq->num_cqe;

	if (udata) {
		uresp.cq_id = cq->id;
		uresp.num_cqe = cq->num_cqe;
		rv = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
		if (rv)
			goto err_queue;
	}
	return 0;

err_queue:
	if (cq->mmap_entry)
		xiw_mmap_remove(cq->mmap_entry);
	else
		vfree(cq->queue);
err_id:
	xa_erase(&xdev->cq_xa, cq->id);
err_count:
	atomic_dec(&xdev->num_cq);
	return rv;
}

/**
 * xiw_destroy_cq - destroy a CQ
 * @base_cq: the CQ; ib_core destroyed every QP using it before
 * @udata: user data (unused)
 *
 * Return: 0.
 */
int xiw_destroy_cq(struct ib_cq *base_cq, struct ib_udata *udata)
{
	struct xiw_cq *cq = to_xiw_cq(base_cq);
	struct xiw_device *xdev = cq->xdev;

	might_sleep();
	/* No handler may run once this returns. */
	cancel_work_sync(&cq->comp_work);
	if (cq->mmap_entry)
		xiw_mmap_remove(cq->mmap_entry);
	else
		vfree(cq->queue);
	cq->queue = NULL;
	xa_erase(&xdev->cq_xa, cq->id);
	atomic_dec(&xdev->num_cq);
	return 0;
}

static void xiw_cqe_to_wc(const struct xiw_cqe *cqe, struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->id;
	wc->status = cqe->status < XIW_NUM_WC_STATUS ?
		     xiw_wc_status_map[cqe->status] : IB_WC_GENERAL_ERR;
	wc->opcode = cqe->opcode < XIW_NUM_KOPCODES ?
		     xiw_wc_opcode_map[cqe->opcode] : IB_WC_SEND;
	wc->byte_len = cqe->bytes;
	wc->qp = &((struct xiw_qp *)(uintptr_t)cqe->qp_id)->base_qp;
	if (cqe->flags & XIW_WQE_REM_INVAL) {
		wc->ex.invalidate_rkey = cqe->inval_stag;
		wc->wc_flags = IB_WC_WITH_INVALIDATE;
	} else if (cqe->flags & XIW_WQE_IMM) {
		wc->ex.imm_data = (__force __be32)(u32)cqe->imm_data;
		wc->wc_flags = IB_WC_WITH_IMM;
	}
}

/**
 * xiw_poll_cq - reap completions of a kernel CQ
 * @base_cq: the CQ
 * @num_entries: capacity of @wc
 * @wc: filled in
 *
 * Never sleeps.  User CQs are polled by libsiw through the mapping.
 *
 * Return: the number of completions, or -EINVAL for a user CQ.
 */
int xiw_poll_cq(struct ib_cq *base_cq, int num_entries, struct ib_wc *wc)
{
	struct xiw_cq *cq = to_xiw_cq(base_cq);
	unsigned long flags;
	int n;

	if (!cq->kernel_verbs)
		return -EINVAL;

	spin_lock_irqsave(&cq->lock, flags);
	for (n = 0; n < num_entries; n++) {
		struct xiw_cqe *cqe = &cq->queue[cq->cq_get % cq->num_cqe];

		/* Pairs with smp_store_release() in xiw_cqe_add(). */
		if (!(smp_load_acquire(&cqe->flags) & XIW_WQE_VALID))
			break;
		xiw_cqe_to_wc(cqe, &wc[n]);
		/* Hand the slot back only after it was copied out. */
		smp_store_release(&cqe->flags, 0);
		cq->cq_get++;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(xiw_poll_cq);

/**
 * xiw_req_notify_cq - arm completion notification of a kernel CQ
 * @base_cq: the CQ
 * @flags: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, optionally with
 *	IB_CQ_REPORT_MISSED_EVENTS
 *
 * Never sleeps.
 *
 * Return: 0, or 1 with IB_CQ_REPORT_MISSED_EVENTS when completions are
 * waiting in the CQ.
 */
int xiw_req_notify_cq(struct ib_cq *base_cq, enum ib_cq_notify_flags flags)
{
	struct xiw_cq *cq = to_xiw_cq(base_cq);
	u32 arm = XIW_NOTIFY_SOLICITED;
	struct xiw_cqe *cqe;

	if ((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_NEXT_COMP)
		arm |= XIW_NOTIFY_NEXT_COMPLETION;
	/* Arm before looking at the ring; pairs with smp_mb() in xiw_cqe_add(). */
	smp_store_mb(cq->notify->flags, arm);

	if (!(flags & IB_CQ_REPORT_MISSED_EVENTS))
		return 0;
	cqe = &cq->queue[READ_ONCE(cq->cq_get) % cq->num_cqe];
	return (READ_ONCE(cqe->flags) & XIW_WQE_VALID) ? 1 : 0;
}
EXPORT_SYMBOL_IF_KUNIT(xiw_req_notify_cq);

/**
 * xiw_fill_res_cq_entry - driver details for `rdma res show cq -dd`
 * @msg: netlink message
 * @base_cq: the CQ
 *
 * Return: 0 or -EMSGSIZE.
 */
int xiw_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *base_cq)
{
	struct xiw_cq *cq = to_xiw_cq(base_cq);
	struct nlattr *nest;

	/* Driver attributes go into their own nest, which `rdma -dd` prints. */
	nest = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "cq_id", cq->id) ||
	    rdma_nl_put_driver_u32(msg, "ring_size", cq->num_cqe) ||
	    rdma_nl_put_driver_u32(msg, "cq_put", READ_ONCE(cq->cq_put)) ||
	    rdma_nl_put_driver_u64(msg, "completions",
				   READ_ONCE(cq->completions)) ||
	    rdma_nl_put_driver_u64(msg, "overflows", READ_ONCE(cq->overflow)) ||
	    rdma_nl_put_driver_u32_hex(msg, "notify",
				       READ_ONCE(cq->notify->flags))) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}
