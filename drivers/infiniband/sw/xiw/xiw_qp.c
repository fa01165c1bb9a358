// SPDX-License-Identifier: GPL-2.0
/*
 * xiw queue pairs: verbs, the iWARP QP state machine, work queue rings
 * and the interface the data path and the connection manager use.
 *
 * States (RDMAC verbs / RFC 5040 sec. 6) and how verbs states map onto
 * them:
 *
 *	IB_QPS_RESET, _INIT, _RTR	-> IDLE
 *	IB_QPS_RTS			-> RTS
 *	IB_QPS_SQD			-> CLOSING
 *	IB_QPS_SQE			-> TERMINATE
 *	IB_QPS_ERR			-> ERROR
 *
 * Transitions (anything not listed is refused with -EINVAL; a transition
 * to the current state only updates attributes):
 *
 *	IDLE      -> RTS        connection established: only through
 *	                        xiw_qp_connect() (the CM); verbs cannot move
 *	                        an unconnected QP to RTS
 *	IDLE      -> ERROR      flush
 *	RTS       -> CLOSING    graceful close (iw_cm disconnect, SQD)
 *	RTS       -> TERMINATE  a TERMINATE is to be sent (data path)
 *	RTS       -> ERROR      abortive close; flush
 *	CLOSING   -> IDLE       the LLP closed gracefully with empty queues
 *	CLOSING   -> ERROR      flush
 *	TERMINATE -> ERROR      flush
 *	ERROR     -> ERROR      verbs: flush again (xiw_qp_error_again())
 *	ERROR     -> IDLE       reset; the rings are empty after the flush
 *
 * modify_qp to SQD (CLOSING) of a QP in TERMINATE or ERROR succeeds and
 * changes nothing: the graceful close it asks for is moot.
 *
 * Rings.  Kernel QPs use rings of struct xiw_ksqe / struct xiw_krqe; user
 * QPs use rings of struct xiw_sqe / struct xiw_rqe in xiw_mmap_alloc()
 * memory that libsiw maps.  In both, the VALID flag of a slot says who owns
 * it: the producer fills a slot whose VALID bit is clear and sets VALID
 * last (release); the consumer (xiw_sqe_fetch(), xiw_rqe_fetch(), flush)
 * copies it out and clears VALID (release).  User QPs post receives
 * without system calls and ring the send doorbell with an empty
 * post_send.
 *
 * Lock order: state_lock is never held together with another QP lock;
 * sq_lock or rq_lock -> srq lock -> cq lock -> xarray locks.
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/vmalloc.h>
#include <kunit/visibility.h>
#include <rdma/ib_verbs.h>
#include <net/netlink.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>
#include <rdma/uverbs_ioctl.h>

#include "xiw.h"
#include "xiw_conn.h"
#include "xiw_mem.h"
#include "xiw_verbs.h"

static const char * const xiw_qp_state_names[XIW_QP_NUM_STATES] = {
	[XIW_QP_IDLE] = "IDLE",
	[XIW_QP_RTS] = "RTS",
	[XIW_QP_CLOSING] = "CLOSING",
	[XIW_QP_TERMINATE] = "TERMINATE",
	[XIW_QP_ERROR] = "ERROR",
};

/* xiw_qp_transition_ok[old][new]: the table in the header comment. */
static const bool xiw_qp_transition_ok[XIW_QP_NUM_STATES][XIW_QP_NUM_STATES] = {
	[XIW_QP_IDLE] = {
		[XIW_QP_IDLE] = true, [XIW_QP_RTS] = true,
		[XIW_QP_ERROR] = true,
	},
	[XIW_QP_RTS] = {
		[XIW_QP_RTS] = true, [XIW_QP_CLOSING] = true,
		[XIW_QP_TERMINATE] = true, [XIW_QP_ERROR] = true,
	},
	[XIW_QP_CLOSING] = {
		[XIW_QP_CLOSING] = true, [XIW_QP_IDLE] = true,
		[XIW_QP_ERROR] = true,
	},
	[XIW_QP_TERMINATE] = {
		[XIW_QP_TERMINATE] = true, [XIW_QP_ERROR] = true,
	},
	[XIW_QP_ERROR] = {
		[XIW_QP_ERROR] = true, [XIW_QP_IDLE] = true,
	},
};

/**
 * xiw_qp_state_name - printable name of a QP state
 * @state: the state
 *
 * Return: the name, "?" for an invalid value.
 */
const char *xiw_qp_state_name(enum xiw_qp_state state)
{
	return state < XIW_QP_NUM_STATES ? xiw_qp_state_names[state] : "?";
}
EXPORT_SYMBOL_IF_KUNIT(xiw_qp_state_name);

static void xiw_qp_release(struct kref *ref)
{
	struct xiw_qp *qp = container_of(ref, struct xiw_qp, ref);

	complete(&qp->released);
}

/**
 * xiw_qp_get - take a reference on a QP
 * @qp: the QP, which the caller already holds a reference on
 */
void xiw_qp_get(struct xiw_qp *qp)
{
	kref_get(&qp->ref);
}

/**
 * xiw_qp_put - drop a reference taken by xiw_qp_get() or xiw_qp_lookup()
 * @qp: the QP
 *
 * Any context.
 */
void xiw_qp_put(struct xiw_qp *qp)
{
	kref_put(&qp->ref, xiw_qp_release);
}

/**
 * xiw_qp_lookup - find a QP by number and take a reference
 * @xdev: device
 * @qpn: QP number
 *
 * Any context.
 *
 * Return: the QP, to be released with xiw_qp_put(), or NULL.
 */
struct xiw_qp *xiw_qp_lookup(struct xiw_device *xdev, u32 qpn)
{
	struct xiw_qp *qp;
	unsigned long flags;

	xa_lock_irqsave(&xdev->qp_xa, flags);
	qp = xa_load(&xdev->qp_xa, qpn);
	if (qp && !kref_get_unless_zero(&qp->ref))
		qp = NULL;
	xa_unlock_irqrestore(&xdev->qp_xa, flags);
	return qp;
}

/*
 * May the caller bind @qp to a connection?  iw_cm takes the QP number of
 * a connect or an accept from its parameters, and rdma_ucm copies those
 * from userspace as they come: any process that can open the rdma_cm
 * device could otherwise name any QP of the device, another user's idle
 * QP or a kernel ULP's, and have its connection carried by it.  A user QP
 * serves the process that created it, or another with the same effective
 * uid (which could ptrace it anyway).  A kernel QP serves kernel context:
 * kernel ULPs connect and accept from workers, or from the system call of
 * a privileged process (an nvme-cli connect), which CAP_NET_ADMIN or
 * CAP_SYS_ADMIN stands for; a user process gets no kernel QP from iw_cm.
 */
static bool xiw_qp_cm_allowed(const struct xiw_qp *qp)
{
	if (current->flags & PF_KTHREAD)
		return true;
	if (qp->kernel_verbs)
		return ns_capable_noaudit(&init_user_ns, CAP_NET_ADMIN) ||
		       ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
	return task_tgid(current) == qp->owner_tgid ||
	       uid_eq(current_euid(), qp->owner_uid);
}

/**
 * xiw_qp_lookup_cm - find a QP by number for iw_cm, if the caller may use it
 * @xdev: device
 * @qpn: QP number from the connect or accept parameters
 *
 * As xiw_qp_lookup(), for iw_cm's get_qp, connect and accept, which run in
 * the context of the caller that named the QP.  Any context (get_qp runs
 * under iw_cm's spinlock).
 *
 * Return: the QP, to be released with xiw_qp_put(), or NULL if there is
 * none or it belongs to someone else.
 */
struct xiw_qp *xiw_qp_lookup_cm(struct xiw_device *xdev, u32 qpn)
{
	struct xiw_qp *qp = xiw_qp_lookup(xdev, qpn);

	if (qp && !xiw_qp_cm_allowed(qp)) {
		ibdev_dbg(&xdev->base_dev,
			  "QP %u: %s (pid %d, euid %u) is not its owner: refused\n",
			  qpn, current->comm, task_pid_nr(current),
			  from_kuid(&init_user_ns, current_euid()));
		xiw_qp_put(qp);
		qp = NULL;
	}
	return qp;
}

static bool xiw_qp_signalled(const struct xiw_qp *qp, u16 flags)
{
	return qp->sig_all || (flags & XIW_WQE_SIGNALLED);
}

/*
 * The user SQE at @sqe, found VALID (xiw_sqe_pending()), copied and
 * checked into @out; the slot is freed.  Every field is read from the
 * ring once: the checks and the engine see the same values, whatever
 * userspace writes meanwhile.  Of the SGE array only what the SQE uses is
 * copied: its num_sge entries, or for inline data all of it.
 */
static int xiw_sqe_take_user(struct xiw_qp *qp, struct xiw_sqe *sqe,
			     struct xiw_ksqe *out)
{
	u16 flags = READ_ONCE(sqe->flags);
	u8 num_sge = READ_ONCE(sqe->num_sge);
	u8 opcode = READ_ONCE(sqe->opcode);
	unsigned int i;
	int rv = 0;

	out->id = READ_ONCE(sqe->id);
	out->flags = flags;
	out->num_sge = num_sge;
	out->opcode = opcode;
	out->rkey = READ_ONCE(sqe->rkey);
	out->raddr = READ_ONCE(sqe->raddr);
	/* No user opcode has the kernel-only fields. */
	out->access = 0;
	out->imm = 0;
	out->add_swap = 0;
	out->add_swap_mask = 0;
	out->cmp = 0;
	out->cmp_mask = 0;
	if (flags & XIW_WQE_INLINE) {
		memcpy(out->sge, sqe->sge, sizeof(sqe->sge));
		if (out->sge[0].length > XIW_MAX_INLINE_USER)
			rv = -EINVAL;
	} else if (num_sge > XIW_MAX_SGE_USER || num_sge > qp->max_send_sge) {
		out->num_sge = 0;
		rv = -EINVAL;
	} else {
		/* Entry by entry: mostly one, where memcpy() sets up for six. */
		for (i = 0; i < num_sge; i++)
			out->sge[i] = sqe->sge[i];
	}
	/* Done reading: the slot belongs to userspace again. */
	smp_store_release(&sqe->flags, 0);
	qp->sq_get++;

	/* Everything above came from userspace: check it once, here. */
	switch (opcode) {
	case XIW_OP_WRITE:
	case XIW_OP_SEND:
	case XIW_OP_SEND_REMOTE_INV:
		break;
	case XIW_OP_READ:
		if (num_sge > XIW_MAX_SGE_RD || (flags & XIW_WQE_INLINE))
			rv = -EINVAL;
		break;
	default:
		rv = -EINVAL;
		break;
	}
	return rv;
}

/**
 * xiw_sqe_fetch - take the next SQE off the send queue
 * @qp: the QP
 * @out: receives the SQE in kernel form
 *
 * The slot is handed back to the producer: from now on the caller owns
 * the work request and must complete it with xiw_sqe_complete() (or keep
 * it where its @flush hook finds it).  Any context; never sleeps.
 *
 * The caller is the transport's transmit engine, which fetches only while
 * the QP reads RTS and only under the lock its flush hook takes
 * (xiw_conn.c's conn->lock).  The ring is flushed only in ERROR, after
 * that hook ran: a fetch ends before the flush of the ring begins, or
 * reads ERROR and does not happen.  So the ring has one consumer at a
 * time without sq_lock, which serializes the posters of a kernel QP and
 * the flushes (which call this holding it); the VALID flag hands a slot
 * from a poster to the engine.
 *
 * Return: 0; -ENOENT if the queue is empty; -EINVAL for a malformed user
 * SQE, which is consumed all the same (@out's id, opcode and flags are
 * valid) and is to be completed with XIW_WC_LOC_QP_OP_ERR.
 */
int xiw_sqe_fetch(struct xiw_qp *qp, struct xiw_ksqe *out)
{
	u32 idx = qp->sq_get % qp->num_sqe;
	struct xiw_ksqe *sqe;

	if (!xiw_sqe_pending(qp))
		return -ENOENT;
	if (!qp->kernel_verbs)
		return xiw_sqe_take_user(qp, &((struct xiw_sqe *)qp->sendq)[idx],
					 out);
	sqe = &((struct xiw_ksqe *)qp->sendq)[idx];
	*out = *sqe;
	/* The copy is done before the slot is free again. */
	smp_store_release(&sqe->flags, 0);
	qp->sq_get++;
	return 0;
}

/**
 * xiw_sqe_complete - complete a send work request
 * @qp: the QP
 * @sqe: the SQE as fetched
 * @bytes: bytes transferred
 * @status: completion status
 *
 * A CQE is written if the SQE is signalled or @status is an error.  Any
 * context; never sleeps.
 *
 * Return: 0, or -ENOMEM if the send CQ overflowed.
 */
int xiw_sqe_complete(struct xiw_qp *qp, const struct xiw_ksqe *sqe,
		     u32 bytes, enum xiw_wc_status status)
{
	return xiw_sqe_complete_id(qp, sqe->id, sqe->opcode, sqe->flags, bytes,
				   status);
}

/**
 * xiw_sqe_complete_id - complete a send work request known by its header
 * @qp: the QP
 * @id: work request id
 * @opcode: XIW_OP_* of the work request
 * @flags: XIW_WQE_* flags of the work request
 * @bytes: bytes transferred
 * @status: completion status
 *
 * As xiw_sqe_complete(), for a caller that kept only the header.
 *
 * Return: 0, or -ENOMEM if the send CQ overflowed.
 */
int xiw_sqe_complete_id(struct xiw_qp *qp, u64 id, u8 opcode, u16 flags,
			u32 bytes, enum xiw_wc_status status)
{
	atomic64_inc(&qp->stats.sq_completed);
	if (status == XIW_WC_SUCCESS && !xiw_qp_signalled(qp, flags))
		return 0;
	return xiw_cqe_add(qp->scq, id, opcode, status, bytes, 0, qp, false);
}

/**
 * xiw_sqe_local_exec - execute a local SQE (REG_MR, INVAL_STAG)
 * @qp: the QP
 * @sqe: the fetched SQE
 *
 * Called by the send queue processing when it reaches such an SQE, so
 * that local operations take effect in work request order; the caller
 * completes the SQE (in order with the ones before it).  Any context.
 *
 * Return: the completion status: XIW_WC_LOC_PROT_ERR if the operation
 * failed (the caller moves the QP to ERROR), XIW_WC_LOC_QP_OP_ERR if @sqe
 * is not a local operation.
 */
enum xiw_wc_status xiw_sqe_local_exec(struct xiw_qp *qp,
				      const struct xiw_ksqe *sqe)
{
	switch (sqe->opcode) {
	case XIW_OP_REG_MR:
		if (xiw_mr_fast_reg(sqe->reg_mr, qp->base_qp.pd, sqe->rkey,
				    sqe->access))
			return XIW_WC_LOC_PROT_ERR;
		return XIW_WC_SUCCESS;
	case XIW_OP_INVAL_STAG:
		if (xiw_mr_invalidate(qp->xdev, qp->base_qp.pd, sqe->rkey) !=
		    XIW_ACC_OK)
			return XIW_WC_LOC_PROT_ERR;
		return XIW_WC_SUCCESS;
	default:
		return XIW_WC_LOC_QP_OP_ERR;
	}
}

/**
 * xiw_ring_take_rqe - copy an RQE out of a receive ring and free its slot
 * @ring: ring of struct xiw_krqe (@kernel_ring) or struct xiw_rqe (user)
 * @idx: slot index
 * @kernel_ring: which element type @ring holds
 * @max_sge: SGE limit of the queue
 * @out: receives the RQE in kernel form
 * @get: consumer index, incremented when a slot was consumed
 *
 * Caller holds the lock of the queue that owns @ring.
 *
 * Return: 0; -ENOENT if the slot is not VALID; -EINVAL for a malformed
 * user RQE, consumed all the same (@out->id is valid).
 */
int xiw_ring_take_rqe(void *ring, u32 idx, bool kernel_ring, u32 max_sge,
		      struct xiw_krqe *out, u32 *get)
{
	struct xiw_krqe *rqe;
	struct xiw_rqe *urqe;
	unsigned int i;
	u8 num_sge;

	if (kernel_ring) {
		rqe = &((struct xiw_krqe *)ring)[idx];
		/* Pairs with the release of VALID by the kernel poster. */
		if (!(smp_load_acquire(&rqe->flags) & XIW_WQE_VALID))
			return -ENOENT;
		*out = *rqe;
		/* The copy is done before the slot is free again. */
		smp_store_release(&rqe->flags, 0);
		(*get)++;
		return 0;
	}

	urqe = &((struct xiw_rqe *)ring)[idx];
	/* Pairs with libsiw's atomic store of VALID. */
	if (!(smp_load_acquire(&urqe->flags) & XIW_WQE_VALID))
		return -ENOENT;
	/* Each field read once; of the SGEs only the num_sge in use. */
	num_sge = READ_ONCE(urqe->num_sge);
	out->id = READ_ONCE(urqe->id);
	out->flags = READ_ONCE(urqe->flags);
	out->num_sge = 0;
	out->opcode = XIW_OP_RECEIVE;
	out->unused = 0;
	if (num_sge <= XIW_MAX_SGE_USER && num_sge <= max_sge) {
		out->num_sge = num_sge;
		for (i = 0; i < num_sge; i++)
			out->sge[i] = urqe->sge[i];
	}
	/* Copied: the slot belongs to userspace again. */
	smp_store_release(&urqe->flags, 0);
	(*get)++;
	return out->num_sge == num_sge ? 0 : -EINVAL;
}

/*
 * Copy the RQE at rq_get out of the QP's own ring.  The one consumer at a
 * time: a flush holding rq_lock, or the receive engine (xiw_rqe_fetch()).
 */
static int xiw_rqe_take(struct xiw_qp *qp, struct xiw_krqe *out)
{
	u32 idx = qp->rq_get % qp->num_rqe;

	return xiw_ring_take_rqe(qp->recvq, idx, qp->kernel_verbs,
				 qp->max_recv_sge, out, &qp->rq_get);
}

/**
 * xiw_rqe_fetch - take the next receive work request of a QP
 * @qp: the QP
 * @rqe: receives the RQE in kernel form
 *
 * Takes from the QP's receive queue or from its SRQ.  The caller owns the
 * work request afterwards and completes it with xiw_rqe_complete().  Any
 * context; never sleeps.
 *
 * The caller is the transport's receive engine, which fetches only while
 * the QP is not in ERROR and only under the lock its flush hook takes
 * (xiw_conn.c's copy_lock).  The rings are flushed only in ERROR, after
 * that hook ran: a fetch ends before the flush of the ring begins, or
 * reads ERROR and does not happen.  So the QP's own ring has one consumer
 * at a time without rq_lock, which serializes the posters of a kernel RQ
 * and the flushes; the VALID flag hands a slot from a poster to the
 * engine, as in a user ring.  An SRQ, shared by QPs, keeps its lock.
 *
 * Return: 0; -ENOENT if no receive is posted; -EINVAL for a malformed user
 * RQE, consumed all the same (@rqe's id is valid).
 */
int xiw_rqe_fetch(struct xiw_qp *qp, struct xiw_krqe *rqe)
{
	if (qp->srq)
		return xiw_srq_fetch(qp->srq, rqe);
	return xiw_rqe_take(qp, rqe);
}

/**
 * xiw_rqe_complete - complete a receive work request
 * @qp: the QP
 * @rqe: the RQE as fetched; XIW_WQE_SOLICITED in its flags marks a
 *	solicited message (the data path sets it for Send with SE)
 * @bytes: bytes received
 * @inval_stag: STag the peer invalidated (Send with Invalidate), or 0
 * @status: completion status
 *
 * Any context; never sleeps.
 *
 * Return: 0, or -ENOMEM if the receive CQ overflowed.
 */
int xiw_rqe_complete(struct xiw_qp *qp, const struct xiw_krqe *rqe,
		     u32 bytes, u32 inval_stag, enum xiw_wc_status status)
{
	atomic64_inc(&qp->stats.rq_completed);
	return xiw_cqe_add(qp->rcq, rqe->id, XIW_OP_RECEIVE, status, bytes,
			   inval_stag, qp,
			   !!(rqe->flags & XIW_WQE_SOLICITED));
}

/**
 * xiw_rqe_complete_imm - complete a receive work request with immediate data
 * @qp: a kernel QP
 * @rqe: the RQE as fetched (XIW_WQE_SOLICITED as for xiw_rqe_complete())
 * @bytes: bytes received
 * @imm: the immediate data, in network order
 *
 * Any context; never sleeps.
 *
 * Return: 0, or -ENOMEM if the receive CQ overflowed.
 */
int xiw_rqe_complete_imm(struct xiw_qp *qp, const struct xiw_krqe *rqe,
			 u32 bytes, u32 imm)
{
	atomic64_inc(&qp->stats.rq_completed);
	return xiw_cqe_add_imm(qp->rcq, rqe->id, XIW_OP_RECV_RDMA_WITH_IMM,
			       bytes, imm, qp,
			       !!(rqe->flags & XIW_WQE_SOLICITED));
}

/*
 * The flushes take at most one ring's worth of work requests: a user ring
 * is shared with the process, which can set VALID in slot after slot as
 * fast as we clear it, and the loop runs with interrupts off.  A ring
 * holds no more than its size of posted requests; whatever a racing
 * process posts beyond that is the next flush's (a later post, or
 * destroy_qp).  They also stop when the CQ is full: the rest would only
 * count as overflow, and stay in the ring.
 */
static void xiw_sq_flush(struct xiw_qp *qp)
{
	struct xiw_ksqe sqe;
	unsigned long flags;
	u32 n;

	/* Against another flush; the engine fetches no more (above). */
	spin_lock_irqsave(&qp->sq_lock, flags);
	for (n = 0; n < qp->num_sqe; n++) {
		if (xiw_sqe_fetch(qp, &sqe) == -ENOENT)
			break;
		atomic64_inc(&qp->stats.flushed);
		if (xiw_sqe_complete(qp, &sqe, 0, XIW_WC_WR_FLUSH_ERR))
			break;
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
}

static void xiw_rq_flush(struct xiw_qp *qp)
{
	struct xiw_krqe rqe;
	unsigned long flags;
	u32 n;

	if (qp->srq)
		return;	/* an SRQ is shared: nothing of it belongs to this QP */
	/* Against another flush; the engine fetches no more (above). */
	spin_lock_irqsave(&qp->rq_lock, flags);
	for (n = 0; n < qp->num_rqe; n++) {
		if (xiw_rqe_take(qp, &rqe) == -ENOENT)
			break;
		rqe.flags = 0;
		atomic64_inc(&qp->stats.flushed);
		if (xiw_rqe_complete(qp, &rqe, 0, 0, XIW_WC_WR_FLUSH_ERR))
			break;
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);
}

/**
 * xiw_qp_flush - complete every outstanding work request with WR_FLUSH_ERR
 * @qp: the QP, in ERROR state
 *
 * Work the data path holds is flushed first (its @flush hook), then the
 * send and receive rings, so that completions stay in order.  Interrupts
 * on, not in hard irq: the hook waits for the data path's copies.
 */
void xiw_qp_flush(struct xiw_qp *qp)
{
	const struct xiw_qp_transport_ops *tops = READ_ONCE(qp->tops);

	if (tops && tops->flush)
		tops->flush(qp);
	xiw_sq_flush(qp);
	xiw_rq_flush(qp);
}

/*
 * Deliver the QP's raised events to its consumer: the error first, then
 * Last WQE Reached, which follows the move to ERROR.  An event raised
 * twice before delivery is delivered once.
 */
static void xiw_qp_event_work(struct work_struct *work)
{
	static const enum ib_event_type order[] = {
		IB_EVENT_QP_FATAL,
		IB_EVENT_QP_REQ_ERR,
		IB_EVENT_QP_ACCESS_ERR,
		IB_EVENT_QP_LAST_WQE_REACHED,
	};
	struct xiw_qp *qp = container_of(work, struct xiw_qp, event_work);
	struct ib_qp *base_qp = &qp->base_qp;
	unsigned long events = xchg(&qp->events, 0);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(order); i++) {
		struct ib_event ev = {
			.device = base_qp->device,
			.element.qp = base_qp,
			.event = order[i],
		};

		if ((events & BIT(order[i])) && base_qp->event_handler)
			base_qp->event_handler(&ev, base_qp->qp_context);
	}
}

/*
 * Raise an affiliated asynchronous event of @qp: the consumer gets it
 * from xiw_qp_event_work(), with no lock of ours held, whatever the
 * context that raised it (the receive engine under the socket lock, a
 * verb under the consumer's own locks).  Any context.
 */
static void xiw_qp_raise(struct xiw_qp *qp, enum ib_event_type type)
{
	set_bit(type, &qp->events);
	queue_work(xiw_cq_wq, &qp->event_work);
}

/**
 * xiw_qp_event - report the error that ended a connection to the consumer
 * @qp: the QP
 * @layer: TERMINATE layer of the error (sent or received)
 * @etype: TERMINATE error type within @layer
 *
 * Raises the QP's affiliated asynchronous error: access errors (a remote
 * protection or tagged buffer error) as IB_EVENT_QP_ACCESS_ERR, invalid
 * requests (a remote operation or untagged buffer error) as
 * IB_EVENT_QP_REQ_ERR, everything else (catastrophic, LLP/MPA) as
 * IB_EVENT_QP_FATAL.  Any context.
 */
void xiw_qp_event(struct xiw_qp *qp, u8 layer, u8 etype)
{
	enum ib_event_type type = IB_EVENT_QP_FATAL;

	if ((layer == TERM_LAYER_RDMAP && etype == RDMAP_ETYPE_REMOTE_PROTECTION) ||
	    (layer == TERM_LAYER_DDP && etype == DDP_ETYPE_TAGGED_BUF))
		type = IB_EVENT_QP_ACCESS_ERR;
	else if ((layer == TERM_LAYER_RDMAP && etype == RDMAP_ETYPE_REMOTE_OPERATION) ||
		 (layer == TERM_LAYER_DDP && etype == DDP_ETYPE_UNTAGGED_BUF))
		type = IB_EVENT_QP_REQ_ERR;
	xiw_qp_raise(qp, type);
}

/*
 * What follows a transition from @old to @new (they differ), with
 * @qp->state_lock released: the hooks, the flush, the events.  @tops as
 * read under the lock with the new state; its state_change hook is not
 * called for a move the transport made itself (@by_transport).
 */
static void xiw_qp_state_changed(struct xiw_qp *qp,
				 const struct xiw_qp_transport_ops *tops,
				 enum xiw_qp_state old, enum xiw_qp_state new,
				 bool by_transport)
{
	ibdev_dbg(qp->base_qp.device, "QP %u: %s -> %s\n", xiw_qp_id(qp),
		  xiw_qp_state_name(old), xiw_qp_state_name(new));
	if (tops && tops->state_change && new != XIW_QP_RTS && !by_transport)
		tops->state_change(qp, old, new);
	/*
	 * post_send/post_recv read the state under sq_lock/rq_lock: a WR
	 * posted before the flush takes those locks is flushed here, one
	 * posted after sees ERROR and is flushed right away.
	 */
	if (new == XIW_QP_ERROR) {
		xiw_qp_flush(qp);
		/*
		 * An SRQ-attached QP in ERROR takes no more receives from
		 * its SRQ: Last WQE Reached, which ib_drain_qp() waits for
		 * (up to 60 s on 6.12) before it drains the receive CQ.
		 */
		if (qp->srq)
			xiw_qp_raise(qp, IB_EVENT_QP_LAST_WQE_REACHED);
	}
	if (new == XIW_QP_RTS && tops && tops->sq_kick)
		tops->sq_kick(qp);
}

/*
 * A verbs modify_qp to ERR of a QP in ERROR changes nothing but flushes
 * again.  The move that entered ERROR -- the data path's, say -- flushes
 * after it released state_lock, and may still be on its way there (its
 * flush hook waiting for a copy on another CPU) when the consumer's move
 * finds ERROR.  The consumer must find everything the QP held complete
 * once its move returns: ib_drain_sq() and ib_drain_rq() post their
 * marker next, and ERROR completes the marker at once.  The flush
 * completes nothing twice, and two flushes serialise on the transport's
 * and the rings' locks, so the completions stay in order.  Last WQE
 * Reached is the first flush's.
 *
 * Only while the transport, whose engines move the QP on their own, is
 * attached: once destroy_qp has withdrawn it, a flush of the rings would
 * write completions that carry a QP about to be freed (iw_cm moves the
 * QP to ERR in destroy_cm_id() while destroy_qp waits for iw_cm's
 * reference).  The data path's and the CM's own moves do not flush
 * again: nobody waits on them for completions.
 */
static void xiw_qp_error_again(struct xiw_qp *qp)
{
	ibdev_dbg(qp->base_qp.device, "QP %u: ERROR again, flushing\n",
		  xiw_qp_id(qp));
	xiw_qp_flush(qp);
}

/*
 * Make the transition to @new (< XIW_QP_NUM_STATES) if the table allows
 * it.  @old and @tops receive the state left and the transport as read
 * with the new state: the caller runs xiw_qp_state_changed() with them,
 * once state_lock is released, if @old differs from @new.
 */
static int xiw_qp_transition_locked(struct xiw_qp *qp, enum xiw_qp_state new,
				    enum ib_qp_state ib_state,
				    enum xiw_qp_state *old,
				    const struct xiw_qp_transport_ops **tops)
{
	lockdep_assert_held(&qp->state_lock);

	if (!xiw_qp_transition_ok[qp->state][new] ||
	    (new == XIW_QP_RTS && !qp->tops))
		return -EINVAL;
	*old = qp->state;
	WRITE_ONCE(qp->state, new);
	if (new == XIW_QP_IDLE)
		qp->ib_idle_state = ib_state;
	*tops = qp->tops;
	return 0;
}

/* Change the state under state_lock; then run hooks and flush unlocked. */
static int xiw_qp_set_state(struct xiw_qp *qp, enum xiw_qp_state new,
			    enum ib_qp_state ib_state, bool by_transport)
{
	const struct xiw_qp_transport_ops *tops;
	enum xiw_qp_state old;
	unsigned long flags;
	int rv;

	if (new >= XIW_QP_NUM_STATES)
		return -EINVAL;
	spin_lock_irqsave(&qp->state_lock, flags);
	rv = xiw_qp_transition_locked(qp, new, ib_state, &old, &tops);
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (!rv && old != new)
		xiw_qp_state_changed(qp, tops, old, new, by_transport);
	return rv;
}

/**
 * xiw_qp_modify - move a QP to another iWARP state
 * @qp: the QP
 * @new: the new state
 *
 * Called by verbs and by the data path / CM (e.g. RTS -> TERMINATE or
 * ERROR on a protocol error, CLOSING -> IDLE after a graceful close).
 * Entering ERROR flushes all queues.  Never sleeps (the hooks must not
 * either); not in hard irq nor with interrupts off, since the flush hook
 * waits for the data path's copies under a bottom-half lock.
 *
 * Return: 0, or -EINVAL for a transition the table does not allow.
 */
int xiw_qp_modify(struct xiw_qp *qp, enum xiw_qp_state new)
{
	return xiw_qp_set_state(qp, new, IB_QPS_INIT, false);
}
EXPORT_SYMBOL_IF_KUNIT(xiw_qp_modify);

/**
 * xiw_qp_transport_move - the transport moves its own QP
 * @qp: the QP
 * @new: XIW_QP_CLOSING, XIW_QP_TERMINATE or XIW_QP_ERROR
 *
 * As xiw_qp_modify() -- the flush on ERROR, Last WQE Reached -- but the
 * transport's state_change hook is not called: the transport decided the
 * move and has acted on it already, so the hook reports only the moves
 * verbs, iw_cm and the CM make.  Never sleeps; as xiw_qp_modify(), not
 * in hard irq nor with interrupts off (a move to ERROR flushes).
 *
 * Return: 0, or -EINVAL for a transition the table does not allow (a
 * verbs move got there first).
 */
int xiw_qp_transport_move(struct xiw_qp *qp, enum xiw_qp_state new)
{
	return xiw_qp_set_state(qp, new, IB_QPS_INIT, true);
}
EXPORT_SYMBOL_IF_KUNIT(xiw_qp_transport_move);

/**
 * xiw_qp_connect - attach a transport to an IDLE QP and move it to RTS
 * @qp: the QP
 * @tops: transport hooks (kept until destroy_qp calls @tops->detach)
 * @tctx: transport private data, see @qp->tctx
 * @ord: negotiated outbound RDMA Read depth
 * @ird: negotiated inbound RDMA Read depth
 *
 * The transport is published and the QP enters RTS in one step under
 * @qp->state_lock: on failure nothing was published, no hook has seen
 * @tctx and the caller may free it at once; on success only
 * @tops->detach withdraws it.  (Publishing first and moving to RTS after
 * let a destroy_qp in between move the QP to ERROR, fail the RTS, and
 * leave the caller and detach both withdrawing the transport.)
 *
 * Any context.
 *
 * Return: 0; -EINVAL for depths over the device limits or a QP that is
 * not IDLE; -EBUSY if a transport is already attached.
 */
int xiw_qp_connect(struct xiw_qp *qp, const struct xiw_qp_transport_ops *tops,
		   void *tctx, u32 ord, u32 ird)
{
	unsigned long flags;

	if (ord > XIW_MAX_ORD_QP || ird > XIW_MAX_IRD_QP || !tops)
		return -EINVAL;
	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state != XIW_QP_IDLE) {
		spin_unlock_irqrestore(&qp->state_lock, flags);
		return -EINVAL;
	}
	if (qp->tops) {
		spin_unlock_irqrestore(&qp->state_lock, flags);
		return -EBUSY;
	}
	qp->tops = tops;
	rcu_assign_pointer(qp->tctx, tctx);
	qp->ord = ord;
	qp->ird = ird;
	WRITE_ONCE(qp->state, XIW_QP_RTS);
	spin_unlock_irqrestore(&qp->state_lock, flags);

	xiw_qp_state_changed(qp, tops, XIW_QP_IDLE, XIW_QP_RTS, false);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(xiw_qp_connect);

static void *xiw_queue_alloc(struct ib_udata *udata, u32 num, size_t elem,
			     struct rdma_user_mmap_entry **entry, u64 *key)
{
	size_t size = array_size(num, elem);

	if (udata)
		return xiw_mmap_alloc(udata, size, entry, key);
	return vzalloc(size);
}

static void xiw_queue_free(void *queue, struct rdma_user_mmap_entry *entry)
{
	if (entry)
		xiw_mmap_remove(entry);
	else
		vfree(queue);
}

/**
 * xiw_create_qp - create an RC QP (libsiw create QP ABI)
 * @base_qp: core-allocated QP
 * @attrs: init attributes; @attrs->cap is updated to the actual sizes
 * @udata: user data carrying struct xiw_uresp_create_qp, or NULL
 *
 * Return: 0; -EOPNOTSUPP for other QP types or creation flags; -EINVAL
 * for out-of-range capabilities or a short response buffer; -ENOMEM over
 * the QP limit or without memory.
 */
int xiw_create_qp(struct ib_qp *base_qp, struct ib_qp_init_attr *attrs,
		  struct ib_udata *udata)
{
	struct xiw_device *xdev = to_xiw_dev(base_qp->device);
	struct xiw_qp *qp = to_xiw_qp(base_qp);
	struct xiw_uresp_create_qp uresp = {};
	u32 max_sge = udata ? XIW_MAX_SGE_USER : XIW_MAX_SGE_KERNEL;
	u32 max_inline = udata ? XIW_MAX_INLINE_USER : XIW_MAX_INLINE_KERNEL;
	struct ib_qp_cap *cap = &attrs->cap;
	u32 qpn;
	int rv;

	might_sleep();
	if (attrs->qp_type != IB_QPT_RC || attrs->create_flags)
		return -EOPNOTSUPP;
	if (!attrs->send_cq || !attrs->recv_cq)
		return -EINVAL;
	if (cap->max_send_wr > XIW_MAX_QP_WR ||
	    cap->max_send_sge > max_sge ||
	    cap->max_inline_data > max_inline)
		return -EINVAL;
	if (!attrs->srq && (cap->max_recv_wr > XIW_MAX_QP_WR ||
			    cap->max_recv_sge > max_sge))
		return -EINVAL;
	if (udata && udata->outlen < sizeof(uresp))
		return -EINVAL;
	if (atomic_inc_return(&xdev->num_qp) > XIW_MAX_QP) {
		rv = -ENOMEM;
		goto err_count;
	}

	qp->xdev = xdev;
	kref_init(&qp->ref);
	init_completion(&qp->released);
	INIT_WORK(&qp->event_work, xiw_qp_event_work);
	spin_lock_init(&qp->state_lock);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	qp->state = XIW_QP_IDLE;
	/* A new RNIC QP is IDLE, which verbs report as INIT (as siw does). */
	qp->ib_idle_state = IB_QPS_INIT;
	qp->kernel_verbs = !udata;
	qp->sig_all = attrs->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->scq = to_xiw_cq(attrs->send_cq);
	qp->rcq = to_xiw_cq(attrs->recv_cq);
	qp->srq = attrs->srq ? to_xiw_srq(attrs->srq) : NULL;
	qp->num_sqe = roundup_pow_of_two(max(cap->max_send_wr, 1U));
	qp->max_send_sge = max(cap->max_send_sge, 1U);
	qp->max_inline = cap->max_inline_data;
	if (!qp->srq) {
		qp->num_rqe = roundup_pow_of_two(max(cap->max_recv_wr, 1U));
		qp->max_recv_sge = max(cap->max_recv_sge, 1U);
	}

	/* Reserve the QP number; the QP becomes findable at the end. */
	rv = xa_alloc_cyclic_irq(&xdev->qp_xa, &qpn, NULL,
				 XA_LIMIT(1, XIW_MAX_QPN), &xdev->next_qpn,
				 GFP_KERNEL);
	if (rv < 0)
		goto err_count;
	base_qp->qp_num = qpn;

	qp->sendq = xiw_queue_alloc(udata, qp->num_sqe,
				    udata ? sizeof(struct xiw_sqe) :
					    sizeof(struct xiw_ksqe),
				    &qp->sq_entry, &uresp.sq_key);
	if (!qp->sendq) {
		rv = -ENOMEM;
		goto err_qpn;
	}
	if (qp->num_rqe) {
		qp->recvq = xiw_queue_alloc(udata, qp->num_rqe,
					    udata ? sizeof(struct xiw_rqe) :
						    sizeof(struct xiw_krqe),
					    &qp->rq_entry, &uresp.rq_key);
		if (!qp->recvq) {
			rv = -ENOMEM;
			goto err_sq;
		}
	}

	cap->max_send_wr = qp->num_sqe;
	cap->max_recv_wr = qp->num_rqe;
	cap->max_send_sge = qp->max_send_sge;
	cap->max_recv_sge = qp->max_recv_sge;
	cap->max_inline_data = qp->max_inline;

	if (udata) {
		/* rq_key stays 0 with an SRQ: libsiw maps no RQ then. */
		uresp.qp_id = qpn;
		uresp.num_sqe = qp->num_sqe;
		uresp.num_rqe = qp->num_rqe;
		rv = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
		if (rv)
			goto err_rq;
	}
	if (udata) {
		qp->owner_uid = current_euid();
		qp->owner_tgid = get_pid(task_tgid(current));
	}
	xa_store_irq(&xdev->qp_xa, qpn, qp, GFP_KERNEL);
	return 0;

err_rq:
	if (qp->recvq)
		xiw_queue_free(qp->recvq, qp->rq_entry);
err_sq:
	xiw_queue_free(qp->sendq, qp->sq_entry);
err_qpn:
	xa_erase_irq(&xdev->qp_xa, qpn);
err_count:
	atomic_dec(&xdev->num_qp);
	return rv;
}

/**
 * xiw_destroy_qp - destroy a QP
 * @base_qp: the QP
 * @udata: user data (unused)
 *
 * Outstanding work requests are dropped without completions.  Waits until
 * the data path and the CM have dropped their references.
 *
 * Return: 0.
 */
int xiw_destroy_qp(struct ib_qp *base_qp, struct ib_udata *udata)
{
	struct xiw_qp *qp = to_xiw_qp(base_qp);
	struct xiw_device *xdev = qp->xdev;
	const struct xiw_qp_transport_ops *tops;
	unsigned long flags;
	void *tctx;

	might_sleep();
	xa_erase_irq(&xdev->qp_xa, xiw_qp_id(qp));

	/*
	 * ERROR and the withdrawal of the transport in one step, under the
	 * lock that published it: no hook finds the transport after this,
	 * and detach, which decides how the connection ends, is told rather
	 * than a state_change hook.
	 */
	spin_lock_irqsave(&qp->state_lock, flags);
	WRITE_ONCE(qp->state, XIW_QP_ERROR);
	tops = qp->tops;
	tctx = rcu_replace_pointer(qp->tctx, NULL,
				   lockdep_is_held(&qp->state_lock));
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (tctx && tops->detach)
		tops->detach(qp, tctx);

	xiw_qp_put(qp);
	wait_for_completion(&qp->released);
	/* Nothing raises events now; the consumer gets none after destroy. */
	cancel_work_sync(&qp->event_work);

	if (qp->recvq)
		xiw_queue_free(qp->recvq, qp->rq_entry);
	xiw_queue_free(qp->sendq, qp->sq_entry);
	put_pid(qp->owner_tgid);
	atomic_dec(&xdev->num_qp);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(xiw_destroy_qp);

static int xiw_ib_to_qp_state(enum ib_qp_state ib, enum xiw_qp_state *state)
{
	switch (ib) {
	case IB_QPS_RESET:
	case IB_QPS_INIT:
	case IB_QPS_RTR:
		*state = XIW_QP_IDLE;
		return 0;
	case IB_QPS_RTS:
		*state = XIW_QP_RTS;
		return 0;
	case IB_QPS_SQD:
		*state = XIW_QP_CLOSING;
		return 0;
	case IB_QPS_SQE:
		*state = XIW_QP_TERMINATE;
		return 0;
	case IB_QPS_ERR:
		*state = XIW_QP_ERROR;
		return 0;
	default:
		return -EINVAL;
	}
}

#define XIW_QP_ACCESS_SUPPORTED (IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC)

/**
 * xiw_modify_qp - verbs modify_qp
 * @base_qp: the QP
 * @attr: new attributes
 * @mask: IB_QP_* bits of @attr to apply
 * @udata: user data (none in the ABI)
 *
 * Only state, access flags and the RDMA Read depths mean something for an
 * iWARP QP; the other standard attributes are accepted and ignored.  A
 * call that fails changes nothing, not even the attributes it carried.
 * IB_QPS_ERR flushes the queues, in ERROR too while the QP has its
 * transport (xiw_qp_error_again()).
 *
 * Return: 0; -EOPNOTSUPP for non-standard attribute bits; -EINVAL for bad
 * values or a transition the state table refuses.
 */
int xiw_modify_qp(struct ib_qp *base_qp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata)
{
	struct xiw_qp *qp = to_xiw_qp(base_qp);
	const struct xiw_qp_transport_ops *tops = NULL;
	enum xiw_qp_state new = XIW_QP_IDLE, old = XIW_QP_IDLE;
	bool again = false;
	unsigned long flags;
	int rv = 0;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~XIW_QP_ACCESS_SUPPORTED))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > XIW_MAX_ORD_QP)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > XIW_MAX_IRD_QP)
		return -EINVAL;
	if ((mask & IB_QP_STATE) && xiw_ib_to_qp_state(attr->qp_state, &new))
		return -EINVAL;

	/*
	 * All or nothing: the attributes change together with a transition
	 * the table allows, under the lock that orders the transitions, or
	 * not at all (a refused modify_qp leaves the QP as it was).
	 */
	spin_lock_irqsave(&qp->state_lock, flags);
	if (mask & IB_QP_STATE) {
		/*
		 * A graceful close asked for after the connection already
		 * failed (librdmacm's rdma_disconnect() moves the QP to SQD
		 * first, also after the peer reset the stream) has nothing
		 * left to do: the QP stays where it is.
		 */
		if (new == XIW_QP_CLOSING && (qp->state == XIW_QP_TERMINATE ||
					      qp->state == XIW_QP_ERROR))
			new = qp->state;
		rv = xiw_qp_transition_locked(qp, new, attr->qp_state, &old,
					      &tops);
		again = !rv && old == XIW_QP_ERROR &&
			attr->qp_state == IB_QPS_ERR &&
			rcu_access_pointer(qp->tctx);
	}
	if (!rv) {
		if (mask & IB_QP_ACCESS_FLAGS)
			qp->access = attr->qp_access_flags;
		if (mask & IB_QP_MAX_QP_RD_ATOMIC)
			qp->ord = attr->max_rd_atomic;
		if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
			qp->ird = attr->max_dest_rd_atomic;
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (!rv && (mask & IB_QP_STATE) && old != new)
		xiw_qp_state_changed(qp, tops, old, new, false);
	else if (again)
		xiw_qp_error_again(qp);
	return rv;
}
EXPORT_SYMBOL_IF_KUNIT(xiw_modify_qp);

/**
 * xiw_query_qp - verbs query_qp
 * @base_qp: the QP
 * @attr: filled in
 * @mask: attributes asked for (all are filled)
 * @init_attr: filled in
 *
 * Return: 0.
 */
int xiw_query_qp(struct ib_qp *base_qp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init_attr)
{
	static const enum ib_qp_state ib_state[XIW_QP_NUM_STATES] = {
		[XIW_QP_IDLE] = IB_QPS_INIT,
		[XIW_QP_RTS] = IB_QPS_RTS,
		[XIW_QP_CLOSING] = IB_QPS_SQD,
		[XIW_QP_TERMINATE] = IB_QPS_SQE,
		[XIW_QP_ERROR] = IB_QPS_ERR,
	};
	struct xiw_qp *qp = to_xiw_qp(base_qp);
	unsigned long flags;

	memset(attr, 0, sizeof(*attr));
	memset(init_attr, 0, sizeof(*init_attr));

	spin_lock_irqsave(&qp->state_lock, flags);
	attr->qp_state = qp->state == XIW_QP_IDLE ? qp->ib_idle_state :
						    ib_state[qp->state];
	attr->qp_access_flags = qp->access;
	attr->max_rd_atomic = qp->ord;
	attr->max_dest_rd_atomic = qp->ird;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = IB_MTU_4096;
	attr->cap.max_send_wr = qp->num_sqe;
	attr->cap.max_recv_wr = qp->num_rqe;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_recv_sge = qp->max_recv_sge;
	attr->cap.max_inline_data = qp->max_inline;
	attr->sq_draining = 0;

	init_attr->event_handler = base_qp->event_handler;
	init_attr->qp_context = base_qp->qp_context;
	init_attr->send_cq = base_qp->send_cq;
	init_attr->recv_cq = base_qp->recv_cq;
	init_attr->srq = base_qp->srq;
	init_attr->cap = attr->cap;
	init_attr->qp_type = IB_QPT_RC;
	init_attr->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR :
					       IB_SIGNAL_REQ_WR;
	return 0;
}

/*
 * An RFC 7306 atomic: one 8 octet result buffer, an 8-aligned target.  The
 * plain verbs are the masked ones with every bit compared and swapped and
 * no field boundary in the addition.
 */
static int xiw_ksqe_atomic(const struct ib_send_wr *wr,
			   struct xiw_ksqe *sqe)
{
	const struct ib_atomic_wr *aw = atomic_wr(wr);

	if (wr->num_sge != 1 || wr->sg_list[0].length < XIW_ATOMIC_LEN ||
	    (wr->send_flags & IB_SEND_INLINE) ||
	    (aw->remote_addr & (XIW_ATOMIC_LEN - 1)))
		return -EINVAL;
	sqe->raddr = aw->remote_addr;
	sqe->rkey = aw->rkey;
	switch (wr->opcode) {
	case IB_WR_ATOMIC_CMP_AND_SWP:
		sqe->opcode = XIW_OP_COMP_AND_SWAP;
		sqe->cmp = aw->compare_add;
		sqe->cmp_mask = ~0ULL;
		sqe->add_swap = aw->swap;
		sqe->add_swap_mask = ~0ULL;
		break;
	case IB_WR_MASKED_ATOMIC_CMP_AND_SWP:
		sqe->opcode = XIW_OP_MASKED_COMP_AND_SWAP;
		sqe->cmp = aw->compare_add;
		sqe->cmp_mask = aw->compare_add_mask;
		sqe->add_swap = aw->swap;
		sqe->add_swap_mask = aw->swap_mask;
		break;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		sqe->opcode = XIW_OP_FETCH_AND_ADD;
		sqe->add_swap = aw->compare_add;
		sqe->add_swap_mask = 0;
		break;
	default:
		sqe->opcode = XIW_OP_MASKED_FETCH_AND_ADD;
		sqe->add_swap = aw->compare_add;
		sqe->add_swap_mask = aw->compare_add_mask;
		break;
	}
	sqe->sge[0].laddr = wr->sg_list[0].addr;
	sqe->sge[0].length = XIW_ATOMIC_LEN;
	sqe->sge[0].lkey = wr->sg_list[0].lkey;
	sqe->num_sge = 1;
	return 0;
}

/* Map a kernel send WR opcode; also validates per-opcode constraints. */
static int xiw_ksqe_from_wr(struct xiw_qp *qp, const struct ib_send_wr *wr,
			    struct xiw_ksqe *sqe)
{
	u32 i, total = 0;

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
		sqe->opcode = XIW_OP_WRITE;
		sqe->raddr = rdma_wr(wr)->remote_addr;
		sqe->rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_READ_WITH_INV:
		if (wr->num_sge > XIW_MAX_SGE_RD ||
		    (wr->send_flags & IB_SEND_INLINE))
			return -EINVAL;
		sqe->opcode = wr->opcode == IB_WR_RDMA_READ ?
			      XIW_OP_READ : XIW_OP_READ_LOCAL_INV;
		sqe->raddr = rdma_wr(wr)->remote_addr;
		sqe->rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		/* RFC 7306: an RDMA Write followed by an Immediate Data message. */
		sqe->opcode = XIW_OP_WRITE_WITH_IMM;
		sqe->raddr = rdma_wr(wr)->remote_addr;
		sqe->rkey = rdma_wr(wr)->rkey;
		sqe->imm = (__force u32)wr->ex.imm_data;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case IB_WR_MASKED_ATOMIC_CMP_AND_SWP:
	case IB_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		return xiw_ksqe_atomic(wr, sqe);
	case IB_WR_SEND:
		sqe->opcode = XIW_OP_SEND;
		break;
	case IB_WR_SEND_WITH_INV:
		sqe->opcode = XIW_OP_SEND_REMOTE_INV;
		sqe->rkey = wr->ex.invalidate_rkey;
		break;
	case IB_WR_LOCAL_INV:
		sqe->opcode = XIW_OP_INVAL_STAG;
		sqe->rkey = wr->ex.invalidate_rkey;
		return 0;
	case IB_WR_REG_MR:
		if (!reg_wr(wr)->mr)
			return -EINVAL;
		sqe->opcode = XIW_OP_REG_MR;
		sqe->reg_mr = to_xiw_mr(reg_wr(wr)->mr);
		sqe->rkey = reg_wr(wr)->key;
		sqe->access = reg_wr(wr)->access;
		return 0;
	default:
		return -EINVAL;
	}

	if (wr->send_flags & IB_SEND_INLINE) {
		u8 *data = (u8 *)&sqe->sge[1];

		for (i = 0; i < wr->num_sge; i++) {
			u32 len = wr->sg_list[i].length;

			if (len > qp->max_inline - total)
				return -EINVAL;
			memcpy(data + total,
			       (void *)(uintptr_t)wr->sg_list[i].addr, len);
			total += len;
		}
		sqe->flags |= XIW_WQE_INLINE;
		sqe->sge[0].laddr = (u64)(uintptr_t)data;
		sqe->sge[0].length = total;
		sqe->sge[0].lkey = 0;
		sqe->num_sge = 1;
		return 0;
	}
	if (wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		sqe->sge[i].laddr = wr->sg_list[i].addr;
		sqe->sge[i].length = wr->sg_list[i].length;
		sqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	sqe->num_sge = wr->num_sge;
	return 0;
}

static u8 xiw_wr_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
		return XIW_OP_WRITE;
	case IB_WR_RDMA_READ:
		return XIW_OP_READ;
	case IB_WR_RDMA_READ_WITH_INV:
		return XIW_OP_READ_LOCAL_INV;
	case IB_WR_SEND_WITH_INV:
		return XIW_OP_SEND_REMOTE_INV;
	case IB_WR_LOCAL_INV:
		return XIW_OP_INVAL_STAG;
	case IB_WR_REG_MR:
		return XIW_OP_REG_MR;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return XIW_OP_WRITE_WITH_IMM;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return XIW_OP_COMP_AND_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return XIW_OP_FETCH_AND_ADD;
	case IB_WR_MASKED_ATOMIC_CMP_AND_SWP:
		return XIW_OP_MASKED_COMP_AND_SWAP;
	case IB_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		return XIW_OP_MASKED_FETCH_AND_ADD;
	default:
		return XIW_OP_SEND;
	}
}

/* User doorbell: an empty post_send on a user QP. */
static int xiw_sq_doorbell(struct xiw_qp *qp)
{
	const struct xiw_qp_transport_ops *tops;

	switch (READ_ONCE(qp->state)) {
	case XIW_QP_IDLE:
		return 0;	/* stays queued until the QP is connected */
	case XIW_QP_RTS:
		tops = READ_ONCE(qp->tops);
		if (tops && tops->sq_kick)
			tops->sq_kick(qp);
		return 0;
	case XIW_QP_ERROR:
		xiw_sq_flush(qp);
		return 0;
	default:
		return -ENOTCONN;
	}
}

/**
 * xiw_post_send - post send work requests, or ring the user doorbell
 * @base_qp: the QP
 * @wr: work requests; must be NULL for user QPs (doorbell)
 * @bad_wr: set to the first request not posted
 *
 * Never sleeps.  WRs are queued in IDLE and RTS; in ERROR they are flushed
 * at once (this is what makes ib_drain_sq() work).
 *
 * Return: 0; -EINVAL for a malformed WR or WRs on a user QP; -ENOMEM when
 * the SQ (or, while flushing, the CQ) is full; -ENOTCONN while closing.
 */
int xiw_post_send(struct ib_qp *base_qp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr)
{
	struct xiw_qp *qp = to_xiw_qp(base_qp);
	const struct xiw_qp_transport_ops *tops;
	enum xiw_qp_state state;
	unsigned long flags;
	int rv = 0;

	if (!qp->kernel_verbs) {
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		return xiw_sq_doorbell(qp);
	}

	spin_lock_irqsave(&qp->sq_lock, flags);
	state = READ_ONCE(qp->state);
	for (; wr; wr = wr->next) {
		struct xiw_ksqe *sqe;

		if (state == XIW_QP_ERROR) {
			/* The SQ is empty in ERROR: completing now keeps order. */
			if (xiw_cqe_add(qp->scq, wr->wr_id,
					xiw_wr_opcode(wr->opcode),
					XIW_WC_WR_FLUSH_ERR, 0, 0, qp, false)) {
				rv = -ENOMEM;
				break;
			}
			atomic64_inc(&qp->stats.flushed);
			continue;
		}
		if (state != XIW_QP_IDLE && state != XIW_QP_RTS) {
			rv = -ENOTCONN;
			break;
		}
		sqe = &((struct xiw_ksqe *)qp->sendq)[qp->sq_put % qp->num_sqe];
		if (READ_ONCE(sqe->flags) & XIW_WQE_VALID) {
			rv = -ENOMEM;
			break;
		}
		memset(sqe, 0, offsetof(struct xiw_ksqe, sge));
		sqe->id = wr->wr_id;
		rv = xiw_ksqe_from_wr(qp, wr, sqe);
		if (rv)
			break;
		if ((wr->send_flags & IB_SEND_SIGNALED) || qp->sig_all)
			sqe->flags |= XIW_WQE_SIGNALLED;
		if (wr->send_flags & IB_SEND_SOLICITED)
			sqe->flags |= XIW_WQE_SOLICITED;
		if (wr->send_flags & IB_SEND_FENCE)
			sqe->flags |= XIW_WQE_READ_FENCE;
		/* The SQE body before VALID; pairs with xiw_sqe_fetch(). */
		smp_store_release(&sqe->flags, sqe->flags | XIW_WQE_VALID);
		qp->sq_put++;
		atomic64_inc(&qp->stats.sq_posted);
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (rv)
		*bad_wr = wr;

	if (state == XIW_QP_RTS) {
		tops = READ_ONCE(qp->tops);
		if (tops && tops->sq_kick)
			tops->sq_kick(qp);
	}
	return rv;
}

/**
 * xiw_post_recv - post receive work requests of a kernel QP
 * @base_qp: the QP
 * @wr: work requests
 * @bad_wr: set to the first request not posted
 *
 * Never sleeps.  User QPs post receives through the mapped ring; QPs on an
 * SRQ through the SRQ.  In ERROR, WRs are flushed at once (ib_drain_rq()).
 *
 * Return: 0; -EINVAL for user or SRQ QPs or too many SGEs; -ENOMEM when
 * the RQ (or, while flushing, the CQ) is full.
 */
int xiw_post_recv(struct ib_qp *base_qp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr)
{
	struct xiw_qp *qp = to_xiw_qp(base_qp);
	unsigned long flags;
	int rv = 0;

	if (!qp->kernel_verbs || qp->srq) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq_lock, flags);
	for (; wr; wr = wr->next) {
		struct xiw_krqe *rqe;
		u32 i;

		if (READ_ONCE(qp->state) == XIW_QP_ERROR) {
			if (xiw_cqe_add(qp->rcq, wr->wr_id, XIW_OP_RECEIVE,
					XIW_WC_WR_FLUSH_ERR, 0, 0, qp, false)) {
				rv = -ENOMEM;
				break;
			}
			atomic64_inc(&qp->stats.flushed);
			continue;
		}
		if (wr->num_sge > qp->max_recv_sge) {
			rv = -EINVAL;
			break;
		}
		rqe = &((struct xiw_krqe *)qp->recvq)[qp->rq_put % qp->num_rqe];
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
		qp->rq_put++;
		atomic64_inc(&qp->stats.rq_posted);
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (READ_ONCE(qp->state) == XIW_QP_RTS) {
		const struct xiw_qp_transport_ops *tops = READ_ONCE(qp->tops);

		if (tops && tops->rq_kick)
			tops->rq_kick(qp);
	}
	if (rv)
		*bad_wr = wr;
	return rv;
}

/**
 * xiw_fill_res_qp_entry - driver details for `rdma res show qp -dd`
 * @msg: netlink message
 * @base_qp: the QP
 *
 * Return: 0 or -EMSGSIZE.
 */
int xiw_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *base_qp)
{
	struct xiw_qp *qp = to_xiw_qp(base_qp);
	struct nlattr *nest;

	/* Driver attributes go into their own nest, which `rdma -dd` prints. */
	nest = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_string(msg, "iwarp_state",
				      xiw_qp_state_name(READ_ONCE(qp->state))) ||
	    rdma_nl_put_driver_u32(msg, "sq_size", qp->num_sqe) ||
	    rdma_nl_put_driver_u32(msg, "rq_size", qp->num_rqe) ||
	    rdma_nl_put_driver_u32(msg, "sq_get", READ_ONCE(qp->sq_get)) ||
	    rdma_nl_put_driver_u32(msg, "rq_get", READ_ONCE(qp->rq_get)) ||
	    rdma_nl_put_driver_u64(msg, "sq_posted",
				   atomic64_read(&qp->stats.sq_posted)) ||
	    rdma_nl_put_driver_u64(msg, "sq_completed",
				   atomic64_read(&qp->stats.sq_completed)) ||
	    rdma_nl_put_driver_u64(msg, "rq_posted",
				   atomic64_read(&qp->stats.rq_posted)) ||
	    rdma_nl_put_driver_u64(msg, "rq_completed",
				   atomic64_read(&qp->stats.rq_completed)) ||
	    rdma_nl_put_driver_u64(msg, "flushed",
				   atomic64_read(&qp->stats.flushed)) ||
	    rdma_nl_put_driver_u32(msg, "ord", READ_ONCE(qp->ord)) ||
	    rdma_nl_put_driver_u32(msg, "ird", READ_ONCE(qp->ird)) ||
	    rdma_nl_put_driver_u32(msg, "srq", !!qp->srq) ||
	    xiw_conn_fill_res(msg, qp)) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}
