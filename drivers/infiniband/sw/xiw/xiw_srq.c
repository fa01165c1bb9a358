// SPDX-License-Identifier: GPL-2.0
/*
 * xiw shared receive queues.
 *
 * An SRQ is a ring of receive queue elements like a QP's receive queue
 * (struct xiw_krqe for kernel SRQs, struct xiw_rqe mapped by libsiw for
 * user SRQs) that any number of QPs take receives from.  Its limit event
 * is armed by modify_srq and fires once when fewer than srq_limit
 * receives remain posted after the data path took one.
 */

#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "xiw.h"
#include "xiw_verbs.h"

/* Deliver the limit event xiw_srq_fetch() raised, with no lock held. */
static void xiw_srq_event_work(struct work_struct *work)
{
	struct xiw_srq *srq = container_of(work, struct xiw_srq, event_work);
	struct ib_event event = {
		.device = srq->base_srq.device,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
		.element.srq = &srq->base_srq,
	};

	if (test_and_clear_bit(0, &srq->limit_event) &&
	    srq->base_srq.event_handler)
		srq->base_srq.event_handler(&event, srq->base_srq.srq_context);
}

/**
 * xiw_create_srq - create a shared receive queue (libsiw create SRQ ABI)
 * @base_srq: core-allocated SRQ
 * @init_attr: size, SGE limit, initial limit
 * @udata: user data carrying struct xiw_uresp_create_srq, or NULL
 *
 * Return: 0; -EOPNOTSUPP for non-basic SRQs; -EINVAL for out-of-range
 * attributes or a short response buffer; -ENOMEM over the SRQ limit or
 * without memory.
 */
int xiw_create_srq(struct ib_srq *base_srq, struct ib_srq_init_attr *init_attr,
		   struct ib_udata *udata)
{
	struct xiw_device *xdev = to_xiw_dev(base_srq->device);
	struct xiw_srq *srq = to_xiw_srq(base_srq);
	struct ib_srq_attr *attr = &init_attr->attr;
	struct xiw_uresp_create_srq uresp = {};
	u32 max_sge = udata ? XIW_MAX_SGE_USER : XIW_MAX_SGE_KERNEL;
	size_t size;
	int rv;

	might_sleep();
	if (init_attr->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (attr->max_wr > XIW_MAX_SRQ_WR || attr->max_sge > max_sge ||
	    attr->srq_limit > attr->max_wr)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(uresp))
		return -EINVAL;
	if (atomic_inc_return(&xdev->num_srq) > XIW_MAX_SRQ) {
		rv = -ENOMEM;
		goto err_count;
	}

	srq->xdev = xdev;
	spin_lock_init(&srq->lock);
	INIT_WORK(&srq->event_work, xiw_srq_event_work);
	srq->kernel_verbs = !udata;
	/* Not rounded: the ring works with any size, and stays <= the limit. */
	srq->num_rqe = max(attr->max_wr, 1U);
	srq->max_sge = max(attr->max_sge, 1U);
	srq->limit = attr->srq_limit;
	srq->armed = srq->limit != 0;

	if (udata) {
		size = array_size(srq->num_rqe, sizeof(struct xiw_rqe));
		srq->recvq = xiw_mmap_alloc(udata, size, &srq->mmap_entry,
					    &uresp.srq_key);
	} else {
		size = array_size(srq->num_rqe, sizeof(struct xiw_krqe));
		srq->recvq = vzalloc(size);
	}
	if (!srq->recvq) {
		rv = -ENOMEM;
		goto err_count;
	}
	attr->max_wr = srq->num_rqe;
	attr->max_sge = srq->max_sge;

	if (udata) {
		uresp.num_rqe = srq->num_rqe;
		rv = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
		if (rv)
			goto err_queue;
	}
	return 0;

err_queue:
	if (srq->mmap_entry)
		xiw_mmap_remove(srq->mmap_entry);
	else
		vfree(srq->recvq);
err_count:
	atomic_dec(&xdev->num_srq);
	return rv;
}

/**
 * xiw_modify_srq - arm the limit event (resizing is not supported)
 * @base_srq: the SRQ
 * @attr: new attributes
 * @mask: IB_SRQ_LIMIT (IB_SRQ_MAX_WR is refused)
 * @udata: user data (none in the ABI)
 *
 * Return: 0; -EOPNOTSUPP for a resize; -EINVAL for a limit above the SRQ
 * size.
 */
int xiw_modify_srq(struct ib_srq *base_srq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct xiw_srq *srq = to_xiw_srq(base_srq);
	unsigned long flags;

	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->num_rqe)
		return -EINVAL;
	spin_lock_irqsave(&srq->lock, flags);
	srq->limit = attr->srq_limit;
	srq->armed = srq->limit != 0;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

/**
 * xiw_query_srq - report SRQ attributes
 * @base_srq: the SRQ
 * @attr: filled in
 *
 * Return: 0.
 */
int xiw_query_srq(struct ib_srq *base_srq, struct ib_srq_attr *attr)
{
	struct xiw_srq *srq = to_xiw_srq(base_srq);
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	attr->max_wr = srq->num_rqe;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->armed ? srq->limit : 0;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

/**
 * xiw_destroy_srq - destroy an SRQ
 * @base_srq: the SRQ; ib_core destroyed every QP using it before
 * @udata: user data (unused)
 *
 * Return: 0.
 */
int xiw_destroy_srq(struct ib_srq *base_srq, struct ib_udata *udata)
{
	struct xiw_srq *srq = to_xiw_srq(base_srq);

	might_sleep();
	cancel_work_sync(&srq->event_work);
	if (srq->mmap_entry)
		xiw_mmap_remove(srq->mmap_entry);
	else
		vfree(srq->recvq);
	srq->recvq = NULL;
	atomic_dec(&srq->xdev->num_srq);
	return 0;
}

/**
 * xiw_post_srq_recv - post receives to a kernel SRQ
 * @base_srq: the SRQ
 * @wr: work requests
 * @bad_wr: set to the first request not posted
 *
 * Never sleeps.  User SRQs are posted to through the mapped ring.
 *
 * Return: 0; -EINVAL for a user SRQ or too many SGEs; -ENOMEM when full.
 */
int xiw_post_srq_recv(struct ib_srq *base_srq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	struct xiw_srq *srq = to_xiw_srq(base_srq);
	unsigned long flags;
	int rv = 0;

	if (!srq->kernel_verbs) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		struct xiw_krqe *rqe;
		u32 i;

		if (wr->num_sge > srq->max_sge) {
			rv = -EINVAL;
			break;
		}
		rqe = &((struct xiw_krqe *)srq->recvq)[srq->rq_put %
						       srq->num_rqe];
		if (READ_ONCE(rqe->flags) & XIW_WQE_VALID) {
			rv = -ENOMEM;
			break;
		}
		rqe->id = wr->wr_id;
		rqe->num_sge = wr->num_sge;
		rqe->opcode = XIW_OP_RECEIVE;
		for (i = 0; i < wr->num_sge; i++) {
			rqe->sge[i].laddr = wr->sg_list[i].addr;
			rqe->sge[i].length = wr->sg_list[i].length;
			rqe->sge[i].lkey = wr->sg_list[i].lkey;
		}
		/* Body before VALID; pairs with xiw_ring_take_rqe(). */
		smp_store_release(&rqe->flags, XIW_WQE_VALID);
		srq->rq_put++;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (rv)
		*bad_wr = wr;
	return rv;
}

/* Is the slot @ahead places after rq_get still posted?  Under srq->lock. */
static bool xiw_srq_slot_posted(struct xiw_srq *srq, u32 ahead)
{
	u32 idx = (srq->rq_get + ahead) % srq->num_rqe;

	lockdep_assert_held(&srq->lock);
	if (srq->kernel_verbs)
		return READ_ONCE(((struct xiw_krqe *)srq->recvq)[idx].flags) &
		       XIW_WQE_VALID;
	return READ_ONCE(((struct xiw_rqe *)srq->recvq)[idx].flags) &
	       XIW_WQE_VALID;
}

/**
 * xiw_srq_fetch - take the next receive off an SRQ
 * @srq: the SRQ
 * @rqe: receives the RQE in kernel form
 *
 * Raises IB_EVENT_SRQ_LIMIT_REACHED (once per arming) when fewer than the
 * armed limit of receives remain.  Called by the data path, never on a
 * verb's call chain.  Any context; never sleeps.
 *
 * Return: 0; -ENOENT if the SRQ is empty; -EINVAL for a malformed user RQE
 * (consumed; @rqe->id is valid).
 */
int xiw_srq_fetch(struct xiw_srq *srq, struct xiw_krqe *rqe)
{
	bool limit_event = false;
	unsigned long flags;
	int rv;

	spin_lock_irqsave(&srq->lock, flags);
	rv = xiw_ring_take_rqe(srq->recvq, srq->rq_get % srq->num_rqe,
			       srq->kernel_verbs, srq->max_sge, rqe,
			       &srq->rq_get);
	/* Fewer than limit left <=> the (limit-1)th next slot is empty. */
	if (rv != -ENOENT && srq->armed &&
	    !xiw_srq_slot_posted(srq, srq->limit - 1)) {
		srq->armed = false;
		limit_event = true;
	}
	spin_unlock_irqrestore(&srq->lock, flags);

	/* Delivered from xiw_srq_event_work(): our caller holds its locks. */
	if (limit_event) {
		set_bit(0, &srq->limit_event);
		queue_work(xiw_cq_wq, &srq->event_work);
	}
	return rv;
}
