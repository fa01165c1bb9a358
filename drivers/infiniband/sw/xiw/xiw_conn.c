// SPDX-License-Identifier: GPL-2.0
/*
 * xiw: life cycle of the data path of a connected QP -- start, socket
 * callbacks, the QP transport hooks and teardown.  See xiw_conn.h for the
 * contract with the connection manager.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <kunit/visibility.h>
#include <rdma/rdma_netlink.h>

#include "xiw.h"
#include "xiw_cm.h"
#include "xiw_dp.h"
#include "xiw_trace.h"

/* Transmit engines: per-CPU work, one QP's work never runs twice at once. */
static struct workqueue_struct *xiw_tx_wq;
/* Teardown and soft-RNR retries, which may sleep (socket lock, CM hooks). */
static struct workqueue_struct *xiw_close_wq;
static atomic_t xiw_tx_next_cpu = ATOMIC_INIT(0);

/*
 * Kicks taken over by a doorbell's caller.  A user QP's doorbell runs its
 * transmit engine in the poster's system call (xiw_conn_sq_kick()); when
 * the peer QP is on this host, TCP delivers to it in softirq right there,
 * in the poster's context, and a Read Request (or anything else that
 * needs the peer's engine) kicks that engine.  Handed to its worker, the
 * Read Response waits for a wakeup and for the preemption of whatever
 * runs on the worker's CPU -- the spinning requester, as often as not.
 * Instead the kick goes on this CPU's list and the poster runs the engine
 * itself once its own is done, still in its system call -- when it has
 * nothing more to send: a poster streaming from a full send queue leaves
 * the kicks to the workers (xiw_tx_defer_end()).
 *
 * @task is the poster that took this CPU's list, NULL when none has; @qp
 * is its QP; @list holds the connections whose kicks it took over.  Only
 * a softirq in @task's own context adds to @list, so @list has one writer
 * at a time without a lock: @task itself, or a softirq interrupting it on
 * this CPU.  The poster may migrate meanwhile; on another CPU its softirqs
 * find that CPU's @task is not theirs and kick the workers, and nothing
 * touches this @list until the poster hands it back, from whichever CPU
 * it is on, with interrupts off against its own softirqs
 * (xiw_tx_defer_end()).  Interrupts off, not bottom halves: the section
 * is a few stores, and local_bh_enable() in a task looks for pending
 * softirqs every time.  No migrate_disable() either, which costs more
 * than the whole list on a ping-pong.
 */
struct xiw_tx_defer {
	struct task_struct *task;
	struct xiw_qp *qp;
	struct list_head list;
};

static DEFINE_PER_CPU(struct xiw_tx_defer, xiw_tx_defer);

/*
 * Take the kick over for the poster running on this CPU, if it is the one
 * TCP's softirq runs on behalf of.  true: the poster runs the engine.
 */
static bool xiw_conn_tx_defer(struct xiw_conn *conn)
{
	struct xiw_tx_defer *d;

	if (in_hardirq() || !in_serving_softirq())
		return false;
	d = this_cpu_ptr(&xiw_tx_defer);
	/* A poster with more to send would hand it to the worker anyway. */
	if (READ_ONCE(d->task) != current || xiw_sqe_next_valid(d->qp))
		return false;
	/* Already waiting in a list: its drain runs the engine. */
	if (test_and_set_bit(0, &conn->tx_deferred))
		return true;
	if (!refcount_inc_not_zero(&conn->users)) {
		clear_bit(0, &conn->tx_deferred);
		return false;
	}
	list_add_tail(&conn->tx_defer_entry, &d->list);
	return true;
}

/**
 * xiw_conn_kick_tx - make the transmit engine run
 * @conn: the connection
 *
 * Any context.
 */
void xiw_conn_kick_tx(struct xiw_conn *conn)
{
	if (xiw_conn_tx_kickable(conn) && !xiw_conn_tx_defer(conn))
		queue_work_on(READ_ONCE(conn->tx_cpu), xiw_tx_wq,
			      &conn->tx_work);
}

/* Find the connection of a socket; caller holds sk_callback_lock. */
static struct xiw_conn *xiw_sk_conn(struct sock *sk)
{
	struct xiw_sk_user *sku = xiw_sk_user(sk);

	return sku ? sku->conn : NULL;
}

/**
 * xiw_conn_state_name - the name restrack and the logs give a state
 * @state: the state
 *
 * Return: a constant string, "?" for a value out of range.
 */
VISIBLE_IF_KUNIT const char *xiw_conn_state_name(enum xiw_conn_state state)
{
	static const char * const names[XIW_CONN_NUM_STATES] = {
		[XIW_CONN_STARTING] = "STARTING",
		[XIW_CONN_RUNNING] = "RUNNING",
		[XIW_CONN_PEER_FIN] = "PEER_FIN",
		[XIW_CONN_TERM_QUEUED] = "TERM_QUEUED",
		[XIW_CONN_TERM_OUT] = "TERM_OUT",
		[XIW_CONN_CLOSE_FIN] = "CLOSE_FIN",
		[XIW_CONN_CLOSE_RST] = "CLOSE_RST",
		[XIW_CONN_CLOSED] = "CLOSED",
	};

	return (unsigned int)state < XIW_CONN_NUM_STATES ? names[state] : "?";
}
EXPORT_SYMBOL_IF_KUNIT(xiw_conn_state_name);

/**
 * xiw_conn_next - the table of a connection's life
 * @state: the state now
 * @ev: what happened
 * @rx_held: soft-RNR holds a Send (the receive engine's, read without
 *	its lock: rnr_work settles a stall that ended meanwhile)
 *
 * The first error is the one a TERMINATE reports: the edge into
 * TERM_QUEUED records it, and later ones change nothing.  The first event
 * that closes decides how the stream ends, and its edge is the only one
 * that queues close_work: in order (a FIN) after a graceful disconnect or
 * a TERMINATE that went out or came in whole, with a reset otherwise --
 * above all behind part of our TERMINATE, which the peer would take for
 * the start of an FPDU.  A graceful close stands against a later ERROR;
 * only a broken socket turns it into a reset, until close_work commits.
 * The peer's FIN closes in order, once a Send soft-RNR holds is settled
 * and what followed it read (PEER_FIN, until RX_RESUMED).  Nothing leaves
 * CLOSED.  STARTING is RUNNING for every event but STARTED, and PEER_FIN
 * for every event but PEER_FIN and RX_RESUMED.  A pure function: the
 * KUnit suite xiw_conn_state walks every cell.
 *
 * Return: the next state and the XIW_CA_* actions of the edge.
 */
VISIBLE_IF_KUNIT struct xiw_conn_step
xiw_conn_next(enum xiw_conn_state state, enum xiw_conn_ev ev, bool rx_held)
{
	bool running = state <= XIW_CONN_PEER_FIN;
	bool term = state == XIW_CONN_TERM_QUEUED ||
		    state == XIW_CONN_TERM_OUT;
	struct xiw_conn_step step = { .state = state };

	switch (ev) {
	case XIW_CEV_STARTED:
		if (state == XIW_CONN_STARTING)
			step.state = XIW_CONN_RUNNING;
		return step;
	case XIW_CEV_COMMIT:
		if (state == XIW_CONN_CLOSE_FIN)
			step.state = XIW_CONN_CLOSED;
		if (state == XIW_CONN_CLOSE_RST)
			step = (struct xiw_conn_step){ XIW_CONN_CLOSED,
						       XIW_CA_ABRUPT };
		return step;
	case XIW_CEV_TERMINATE:
		if (running)
			step = (struct xiw_conn_step){ XIW_CONN_TERM_QUEUED,
						       XIW_CA_TERM_QUEUE };
		return step;
	case XIW_CEV_TERM_BUILT:
		if (state == XIW_CONN_TERM_QUEUED)
			step = (struct xiw_conn_step){ XIW_CONN_TERM_OUT,
						       XIW_CA_SEND_TERM };
		return step;
	case XIW_CEV_PEER_FIN:
		/* While our TERMINATE is due: reset, the FIN does not wait. */
		if (term) {
			step = (struct xiw_conn_step){ XIW_CONN_CLOSE_RST,
						       XIW_CA_QP_ERROR };
			break;
		}
		if (state == XIW_CONN_PEER_FIN || !running)
			return step;
		if (rx_held)
			return (struct xiw_conn_step){ XIW_CONN_PEER_FIN,
						       XIW_CA_RNR_NOW };
		step = (struct xiw_conn_step){ XIW_CONN_CLOSE_FIN,
					       XIW_CA_QP_CLOSING };
		break;
	case XIW_CEV_RX_RESUMED:
		if (state != XIW_CONN_PEER_FIN)
			return step;
		step = (struct xiw_conn_step){ XIW_CONN_CLOSE_FIN,
					       XIW_CA_QP_CLOSING };
		break;
	case XIW_CEV_QP_CLOSING:
		/* An SQD while our TERMINATE is due: term_work bounds it. */
		if (running)
			step.state = XIW_CONN_CLOSE_FIN;
		break;
	case XIW_CEV_QP_ERROR:
	case XIW_CEV_DESTROY:
		/* The QP is in ERROR already. */
		step.state = XIW_CONN_CLOSE_RST;
		break;
	case XIW_CEV_TERM_TIMEOUT:
		if (!term)
			return step;
		fallthrough;
	case XIW_CEV_LOCAL_ERR:
		step = (struct xiw_conn_step){ XIW_CONN_CLOSE_RST,
					       XIW_CA_QP_ERROR };
		break;
	case XIW_CEV_LLP_ERR:
		/* A QP in CLOSING stays there: close_work moves it. */
		if (state == XIW_CONN_CLOSE_FIN)
			return (struct xiw_conn_step){ .state = XIW_CONN_CLOSE_RST };
		step = (struct xiw_conn_step){ XIW_CONN_CLOSE_RST,
					       XIW_CA_QP_ERROR };
		break;
	case XIW_CEV_TERM_SENT:
		if (state == XIW_CONN_TERM_OUT)
			step = (struct xiw_conn_step){ XIW_CONN_CLOSE_FIN,
						       XIW_CA_QP_ERROR };
		break;
	case XIW_CEV_PEER_TERM:
		/* Ours cut short: no FIN behind the piece. */
		step.state = state == XIW_CONN_TERM_OUT ? XIW_CONN_CLOSE_RST :
							  XIW_CONN_CLOSE_FIN;
		step.act = XIW_CA_QP_ERROR;
		break;
	default:
		return step;
	}
	if (!xiw_conn_open(state))
		return (struct xiw_conn_step){ .state = state };
	if (!xiw_conn_open(step.state))
		step.act |= XIW_CA_CLOSE;
	return step;
}
EXPORT_SYMBOL_IF_KUNIT(xiw_conn_next);

/* Record the cause of the TERMINATE; on the edge into TERM_QUEUED only. */
static void xiw_conn_record_locked(struct xiw_conn *conn,
				   const struct xiw_conn_cause *cause)
{
	size_t len = cause->hdr ? min(cause->hdr_len, sizeof(conn->term_hdr)) : 0;

	lockdep_assert_held(&conn->lock);
	conn->term_err = cause->err;
	if (len)
		memcpy(conn->term_hdr, cause->hdr, len);
	conn->term_hdr_len = len;
}

/* The consumer learns of the error the TERMINATE will report. */
static void xiw_conn_raise(struct xiw_conn *conn,
			   const struct xiw_conn_cause *cause)
{
	struct xiw_term_code tc = {};

	xiw_proto_err_term(cause->err, &tc);
	ibdev_dbg(conn->qp->base_qp.device,
		  "QP %u: %s, TERMINATE layer %u type %u code 0x%02x\n",
		  xiw_qp_id(conn->qp), xiw_proto_err_name(cause->err),
		  tc.layer, tc.etype, tc.ecode);
	xiw_qp_event(conn->qp, tc.layer, tc.etype);
}

/**
 * xiw_conn_event - move a connection by an event
 * @conn: the connection
 * @ev: what happened
 * @cause: for XIW_CEV_TERMINATE, the error; else NULL
 *
 * The one writer of @conn->state.  What the edge asks for under the lock
 * (close_work, term_work, the cause) happens once and in the order of the
 * events; the calls out (the consumer's event, the QP's move, a kick) come
 * after it, and an event they cause comes back here as any other.  The
 * QP's move may be to ERROR, whose flush waits for the engines' copies:
 * process or softirq context, interrupts on, neither @conn->lock nor
 * @conn->copy_lock held.  The caller holds a users reference (or is the
 * start, close_work, term_work or detach).
 *
 * Return: the XIW_CA_* actions of the edge taken (0 if it moved nothing).
 */
u32 xiw_conn_event(struct xiw_conn *conn, enum xiw_conn_ev ev,
		   const struct xiw_conn_cause *cause)
{
	enum xiw_conn_state old;
	struct xiw_conn_step step;
	unsigned long flags;

	lockdep_assert_not_held(&conn->lock);
	spin_lock_irqsave(&conn->lock, flags);
	old = conn->state;
	step = xiw_conn_next(old, ev, READ_ONCE(conn->rx_stalled));
	WRITE_ONCE(conn->state, step.state);
	if (step.act & XIW_CA_RECORD)
		xiw_conn_record_locked(conn, cause);
	if (step.act & XIW_CA_TERM_TIMER)
		queue_delayed_work(xiw_close_wq, &conn->term_work,
				   XIW_CONN_TERM_TIMEOUT);
	if (step.act & XIW_CA_RNR_NOW)
		mod_delayed_work(xiw_close_wq, &conn->rnr_work, 0);
	if (step.act & XIW_CA_CLOSE)
		queue_work(xiw_close_wq, &conn->close_work);
	spin_unlock_irqrestore(&conn->lock, flags);
	trace_xiw_conn_state(xiw_qp_id(conn->qp), ev, old, step.state);

	if (step.act & XIW_CA_RAISE)
		xiw_conn_raise(conn, cause);
	/*
	 * The QP moves without calling our state_change hook: what the move
	 * means has been decided above.  A move verbs made first stands.
	 */
	if ((step.act & XIW_CA_QP_TERMINATE) &&
	    xiw_qp_transport_move(conn->qp, XIW_QP_TERMINATE)) {
		/* Verbs moved it to CLOSING or ERROR first: no TERMINATE. */
		xiw_conn_event(conn, XIW_CEV_LOCAL_ERR, NULL);
		return step.act;
	}
	if (step.act & XIW_CA_QP_CLOSING)
		xiw_qp_transport_move(conn->qp, XIW_QP_CLOSING);
	if (step.act & XIW_CA_QP_ERROR)
		xiw_qp_transport_move(conn->qp, XIW_QP_ERROR);
	if (step.act & XIW_CA_KICK)
		xiw_conn_kick_tx(conn);
	return step.act;
}

/* Give the connection back from its offload backend. */
static void xiw_conn_offload_stop(struct xiw_conn *conn)
{
	if (conn->offload_started && conn->offload->conn_stop)
		conn->offload->conn_stop(&conn->oc);
	conn->offload_started = false;
}

/* The backend's CRC provider, in the proto core's shape. */
static u32 xiw_conn_offload_crc(void *ctx, u32 crc, const u8 *p, size_t len)
{
	struct xiw_conn *conn = ctx;

	return conn->offload->crc32c(&conn->oc, crc, p, len);
}

/*
 * Offer the connection to the device's offload backend (transport
 * hand-off); a backend that declines leaves it to software.  The hooks it
 * has replace the software paths: CRC, FPDU size, batching, placement.
 */
static void xiw_conn_offload_start(struct xiw_conn *conn, const char *name)
{
	const struct xiw_offload_ops *ops = xiw_offload_get(name ?: "software");
	struct xiw_device *xdev = conn->qp->xdev;
	struct net_device *ndev;
	int rv = 0;

	conn->oc.ibdev = dev_name(&xdev->base_dev.dev);
	conn->oc.qpn = xiw_qp_id(conn->qp);
	conn->oc.mpa = &conn->mpa;
	if (ops->conn_start) {
		rcu_read_lock();
		ndev = rcu_dereference(xdev->netdev);
		if (ndev)
			dev_hold(ndev);
		rcu_read_unlock();
		conn->oc.netdev = ndev;
		rv = ndev ? ops->conn_start(&conn->oc) : -ENODEV;
		conn->oc.netdev = NULL;
		if (ndev)
			dev_put(ndev);
	}
	if (rv) {
		pr_info_ratelimited("%s: QP %u: offload backend %s declined (%d): software\n",
				    conn->oc.ibdev, conn->oc.qpn, ops->name, rv);
		xiw_offload_put(ops);
		ops = xiw_offload_get("software");
	}
	conn->offload = ops;
	conn->offload_started = ops->conn_start && !rv;
	if (ops->crc32c) {
		conn->tx.crc_fn = xiw_conn_offload_crc;
		conn->tx.crc_ctx = conn;
		conn->rx.crc_fn = xiw_conn_offload_crc;
		conn->rx.crc_ctx = conn;
	}
	if (ops->tx_batch)
		conn->tx_batch = max_t(u32, ops->tx_batch(&conn->oc,
							  conn->tx_batch), 1);
}

/*
 * The socket callbacks are the data path's from before the connection is
 * published (xiw_conn_start()), but do nothing while it is STARTING: what
 * arrives meanwhile stays in the socket, and the start reads it.  The
 * start leaves STARTING under the write side of sk_callback_lock, so a
 * callback either sees it left or ran before the start's own read.
 */
static struct xiw_conn *xiw_sk_conn_started(struct sock *sk)
{
	struct xiw_conn *conn = xiw_sk_conn(sk);

	if (!conn || READ_ONCE(conn->state) == XIW_CONN_STARTING)
		return NULL;
	return conn;
}

/*
 * TCP calls this in softirq, or in process context with bottom halves on
 * (the socket's backlog, at release_sock()).  The read side needs them
 * off in neither: every writer of sk_callback_lock turns them off, and
 * readers pass each other, in softirq too.
 */
static void xiw_conn_data_ready(struct sock *sk)
{
	struct xiw_conn *conn;

	read_lock(&sk->sk_callback_lock);
	conn = xiw_sk_conn_started(sk);
	if (conn) {
		read_descriptor_t rd = {
			.arg.data = conn,
			.count = 1,
		};

		tcp_read_sock(sk, &rd, xiw_qp_rx_actor);
	}
	read_unlock(&sk->sk_callback_lock);
}

static void xiw_conn_write_space(struct sock *sk)
{
	struct xiw_conn *conn;

	read_lock_bh(&sk->sk_callback_lock);
	conn = xiw_sk_conn_started(sk);
	if (conn && sk_stream_is_writeable(sk)) {
		if (sk->sk_socket)
			clear_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		xiw_conn_kick_tx(conn);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Teardown: stop both engines, give the socket back to the CM, settle the
 * QP state.  Runs once per connection.  The QP needs no reference of ours:
 * destroy_qp lets it go only after detach has flushed this work.
 */
static void xiw_conn_close_work(struct work_struct *work)
{
	struct xiw_conn *conn = container_of(work, struct xiw_conn, close_work);
	struct sock *sk = conn->sock->sk;
	struct xiw_qp *qp = conn->qp;
	enum xiw_qp_state state;
	bool abrupt;

	/*
	 * The close was decided before this was queued: both engines have
	 * seen it or will at their next step.  What follows waits for the
	 * ones still running.  Every receive pass but rnr_work's retry of a
	 * held Send runs inside xiw_conn_data_ready(), under the read side
	 * of sk_callback_lock: the write side waits for them, and later
	 * ones find no connection.
	 */
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_data_ready = conn->saved_data_ready;
	sk->sk_write_space = conn->saved_write_space;
	conn->sku->conn = NULL;
	write_unlock_bh(&sk->sk_callback_lock);
	/*
	 * rnr_work's retry: the cancel waits for a run and takes a queued
	 * one, its own requeue included.  Nothing queues it again: the
	 * receive engine is stopped, and a kernel post_recv queues it only
	 * while the connection runs, tested under conn->lock, where the
	 * close was decided.
	 */
	cancel_delayed_work_sync(&conn->rnr_work);

	/* The socket goes back to the CM: count its retransmissions. */
	spin_lock_bh(&qp->xdev->conn_lock);
	list_del_init(&conn->dev_entry);
	atomic64_add(tcp_sk(sk)->total_retrans,
		     &qp->xdev->stats.tcp_retrans);
	spin_unlock_bh(&qp->xdev->conn_lock);

	/*
	 * The commit.  The engine, in tx_work or in a doorbell's caller, may
	 * be running, and its socket error may still turn a graceful close
	 * into a reset: under tx_mutex, after that run, how the stream ends
	 * is decided for good.  A run after it finds CLOSED and touches
	 * nothing; xiw_conn_free() cancels whatever is queued then.
	 */
	mutex_lock(&conn->tx_mutex);
	abrupt = xiw_conn_event(conn, XIW_CEV_COMMIT, NULL) & XIW_CA_ABRUPT;
	mutex_unlock(&conn->tx_mutex);
	/* The engine is done with any TERMINATE: no bound to keep. */
	cancel_delayed_work_sync(&conn->term_work);

	xiw_conn_offload_stop(conn);
	conn->cm_ops->llp_close(conn->cm_ctx, abrupt);

	/*
	 * Whatever is still queued is flushed.  The QP may not have left RTS
	 * or TERMINATE yet: the event that closed moves it after the close
	 * was queued (to CLOSING after the peer's FIN, to ERROR after a
	 * socket error or our TERMINATE), and that move then fails or finds
	 * ERROR.  An IDLE QP was reset by verbs after its ERROR.
	 */
	state = READ_ONCE(qp->state);
	if (state != XIW_QP_ERROR && state != XIW_QP_IDLE)
		xiw_qp_transport_move(qp, XIW_QP_ERROR);
}

/**
 * xiw_conn_fail - a protocol error: send TERMINATE, then go to ERROR
 * @conn: the connection
 * @err: what went wrong; its TERMINATE triplet is sent
 * @hdr: octets of the offending FPDU from ULPDU_Length on, or NULL
 * @hdr_len: octets at @hdr
 *
 * The first error wins (XIW_CEV_TERMINATE).  The transmit engine sends
 * the TERMINATE, then moves the QP to ERROR; it waits for room in the
 * socket as long as it needs, and term_work bounds that wait.  As
 * xiw_conn_event(): not in hard irq, nor with interrupts off or
 * @conn->copy_lock held.
 */
void xiw_conn_fail(struct xiw_conn *conn, enum xiw_proto_err err,
		   const u8 *hdr, size_t hdr_len)
{
	const struct xiw_conn_cause cause = {
		.err = err,
		.hdr = hdr,
		.hdr_len = hdr_len,
	};

	xiw_conn_event(conn, XIW_CEV_TERMINATE, &cause);
}

/*
 * Our TERMINATE is still not wholly in the socket: the peer's window has
 * stayed closed (it does not read) since the error.  Give up on it: the
 * connection is reset, as it would be without a TERMINATE.
 */
static void xiw_conn_term_work(struct work_struct *work)
{
	struct xiw_conn *conn =
		container_of(to_delayed_work(work), struct xiw_conn, term_work);

	if (xiw_conn_event(conn, XIW_CEV_TERM_TIMEOUT, NULL) & XIW_CA_CLOSE)
		pr_info_ratelimited("QP %u: TERMINATE not taken by TCP within %u s, resetting\n",
				    xiw_qp_id(conn->qp),
				    XIW_CONN_TERM_TIMEOUT / HZ);
}

/*
 * The connection of @qp for a hook that holds a QP reference (iw_cm moving
 * the QP to ERROR on its close event, the CM telling us the TCP
 * connection went down, a restrack dump, a post_send or kernel post_recv),
 * with a reference of its own, or NULL once destroy_qp has withdrawn it.
 * Put with xiw_conn_put_user().  Detach waits for these references, which
 * are held for the length of one hook, not for a grace period: destroying
 * many QPs one after the other does not pay one each.
 */
static __always_inline struct xiw_conn *xiw_conn_from_qp(struct xiw_qp *qp)
{
	struct xiw_conn *conn;

	rcu_read_lock();
	conn = rcu_dereference(qp->tctx);
	if (conn && !refcount_inc_not_zero(&conn->users))
		conn = NULL;
	rcu_read_unlock();
	return conn;
}

static __always_inline void xiw_conn_put_user(struct xiw_conn *conn)
{
	if (refcount_dec_and_test(&conn->users))
		complete(&conn->users_gone);
}

/*
 * The poster of @qp takes this CPU's list: kicks from softirq in its
 * context on this CPU come to it (xiw_conn_tx_defer()).  NULL if another
 * poster, preempted or migrated, holds it.
 */
static struct xiw_tx_defer *xiw_tx_defer_begin(struct xiw_qp *qp)
{
	struct xiw_tx_defer *d;

	/* No other task of this CPU takes the list between look and store. */
	preempt_disable();
	d = this_cpu_ptr(&xiw_tx_defer);
	/* Pairs with the release in xiw_tx_defer_end(): its splice is done. */
	if (smp_load_acquire(&d->task)) {
		d = NULL;
	} else {
		d->qp = qp;
		/* A softirq that sees @task on this CPU sees @qp too. */
		barrier();
		WRITE_ONCE(d->task, current);
	}
	preempt_enable();
	return d;
}

/*
 * Hand the list back and run the engines whose kicks the poster took
 * over, in kick order, if @run: the poster has nothing more in its own
 * send queue and would only go back to wait for its completion.  A
 * poster with more to send leaves them to their workers, as it does an
 * engine already running elsewhere (a worker, another poster): streaming
 * Reads must not wait while their poster frames Read Responses.  Kicks
 * during these runs go to the workers too.
 */
static void xiw_tx_defer_end(struct xiw_tx_defer *d, bool run)
{
	struct xiw_conn *conn;
	unsigned long flags;
	LIST_HEAD(todo);

	local_irq_save(flags);
	list_splice_init(&d->list, &todo);
	/* The next poster of @d's CPU may take it once the splice is done. */
	smp_store_release(&d->task, NULL);
	local_irq_restore(flags);
	while (!list_empty(&todo)) {
		conn = list_first_entry(&todo, struct xiw_conn, tx_defer_entry);
		list_del(&conn->tx_defer_entry);
		/* A kick from here on is a new one. */
		clear_bit(0, &conn->tx_deferred);
		/*
		 * The run below sees the work of any kick that found the bit
		 * set (pairs with test_and_set_bit() in the kicker).
		 */
		smp_mb__after_atomic();
		if (run && mutex_trylock(&conn->tx_mutex)) {
			atomic64_inc(&conn->qp->xdev->stats.tx_poster_runs);
			xiw_qp_tx_run(conn);
			mutex_unlock(&conn->tx_mutex);
		} else {
			xiw_conn_kick_tx(conn);
		}
		xiw_conn_put_user(conn);
	}
}

/*
 * Kick the transmit engine on a CPU other than the caller's: the worker
 * then frames and sends while the caller goes on posting.  The worker
 * moves there for good: its own re-kicks (budget spent, socket writable
 * again) must not land on the poster's CPU, where it would wait for a
 * spinning poller to be preempted.
 */
static void xiw_conn_kick_tx_beside(struct xiw_conn *conn)
{
	unsigned int cpu = READ_ONCE(conn->tx_cpu);
	unsigned int self = raw_smp_processor_id();

	if (cpu == self) {
		/* The next CPU up: streams of many QPs stay spread. */
		cpu = cpumask_next(self, cpu_online_mask);
		if (cpu >= nr_cpu_ids)
			cpu = cpumask_first(cpu_online_mask);
		if (cpu >= nr_cpu_ids)
			cpu = self;
		WRITE_ONCE(conn->tx_cpu, cpu);
	}
	if (xiw_conn_tx_kickable(conn))
		queue_work_on(cpu, xiw_tx_wq, &conn->tx_work);
}

/*
 * A kernel consumer's post, which its worker takes: the consumer may post
 * from any context, and the engine sleeps.  Where that worker runs
 * follows the posts its last run took.  A consumer that waits for each
 * (one post a run: the NVMe host at queue depth 1, the target answering
 * it) gets the worker of the CPU it posts from, which runs once the
 * poster is done; one on another CPU costs an interrupt, often an idle
 * CPU's wakeup, and the completion then wakes the poster across CPUs
 * again.  A consumer that streams (several posts a run) gets a worker
 * beside it, which frames while it goes on posting, as a streaming user
 * QP does.
 */
static void xiw_conn_kick_tx_kernel(struct xiw_conn *conn)
{
	unsigned int cpu;

	if (atomic_inc_return(&conn->tx_kposts) > 1) {
		xiw_conn_kick_tx(conn);	/* queued already, or running */
		return;
	}
	if (READ_ONCE(conn->tx_kstream)) {
		xiw_conn_kick_tx_beside(conn);
		return;
	}
	cpu = raw_smp_processor_id();
	if (READ_ONCE(conn->tx_cpu) != cpu)
		WRITE_ONCE(conn->tx_cpu, cpu);
	xiw_conn_kick_tx(conn);
}

/*
 * New send work.  The doorbell of a user QP (a post_send system call)
 * runs the transmit engine right in the caller when the consumer waits
 * for the result (a signalled work request): handing it to a worker
 * costs a wakeup of another CPU and the preemption of whatever spins
 * there, on the path of every ping-pong (performance.rst has the
 * numbers).  An unsignalled one means the consumer is
 * streaming: a worker beside it takes the queue, and libsiw, which rings
 * only when the kernel has taken the previous SQE, posts on without a
 * system call while the worker frames whole batches into one sendmsg().
 * Kernel consumers may post from any context and always go through the
 * worker (xiw_conn_kick_tx_kernel()).
 */
static void xiw_conn_sq_kick(struct xiw_qp *qp)
{
	/*
	 * A users reference, not an RCU section: the engine may run right
	 * here and sleep.  Detach waits for it, so whatever this kick queues
	 * is queued before teardown's last cancel of the engine.
	 */
	struct xiw_conn *conn = xiw_conn_from_qp(qp);

	if (!conn)
		return;
	if (!qp->kernel_verbs && in_task() && xiw_conn_tx_kickable(conn)) {
		if (xiw_sqe_next_unsignalled(qp)) {
			xiw_conn_kick_tx_beside(conn);
			goto out;
		}
		if (mutex_trylock(&conn->tx_mutex)) {
			struct xiw_tx_defer *d = xiw_tx_defer_begin(qp);

			xiw_qp_tx_run(conn);
			mutex_unlock(&conn->tx_mutex);
			if (d)
				xiw_tx_defer_end(d, !xiw_sqe_next_valid(qp));
			goto out;
		}
	}
	if (qp->kernel_verbs)
		xiw_conn_kick_tx_kernel(conn);
	else
		xiw_conn_kick_tx(conn);
out:
	xiw_conn_put_user(conn);
}

static void xiw_conn_state_change(struct xiw_qp *qp, enum xiw_qp_state old,
				  enum xiw_qp_state new)
{
	struct xiw_conn *conn = xiw_conn_from_qp(qp);

	if (!conn)
		return;
	switch (new) {
	case XIW_QP_CLOSING:
		xiw_conn_event(conn, XIW_CEV_QP_CLOSING, NULL);
		break;
	case XIW_QP_TERMINATE:
		/* Moved here by verbs without an error of ours: report one. */
		xiw_conn_fail(conn, XIW_ERR_RDMAP_CATASTROPHIC_STREAM, NULL, 0);
		break;
	case XIW_QP_ERROR:
		/*
		 * From CLOSING it ends the graceful close CLOSING asked for
		 * (whose hook may be running behind this one on another
		 * CPU).  Otherwise the table decides: after a TERMINATE
		 * either way a FIN, not a reset, which would throw away what
		 * the socket still holds, the TERMINATE itself among it; a
		 * TERMINATE of ours cut short must not be followed by a FIN,
		 * the peer would take the piece for the start of an FPDU.
		 */
		xiw_conn_event(conn, old == XIW_QP_CLOSING ?
				     XIW_CEV_QP_CLOSING : XIW_CEV_QP_ERROR, NULL);
		break;
	default:
		break;
	}
	xiw_conn_put_user(conn);
}

static void xiw_conn_flush(struct xiw_qp *qp)
{
	struct xiw_conn *conn = xiw_conn_from_qp(qp);

	if (!conn)
		return;
	/*
	 * A copy in progress finishes first: the work request it copies for
	 * completes after it, and the engine finds it no longer owns it at
	 * its next copy.
	 */
	spin_lock_bh(&conn->copy_lock);
	xiw_qp_tx_flush(conn);
	xiw_qp_rx_flush(conn);
	spin_unlock_bh(&conn->copy_lock);
	xiw_conn_put_user(conn);
}

static void xiw_conn_free(struct xiw_conn *conn)
{
	struct xiw_device *xdev = conn->qp->xdev;

	spin_lock_bh(&xdev->conn_lock);
	list_del_init(&conn->dev_entry);
	spin_unlock_bh(&xdev->conn_lock);
	xiw_conn_offload_stop(conn);
	if (conn->offload)
		xiw_offload_put(conn->offload);
	xiw_tx_pq_detach(conn);
	/*
	 * The engine's one cancel.  Every source of a kick is gone: detach
	 * waited for the doorbells' and hooks' users references, close_work
	 * gave the callbacks back, the ordered queue is detached (no reap
	 * kicks), and a kick that read the state before the close was
	 * decided has queued by now.  rnr_work and term_work were cancelled
	 * by close_work, after which nothing queues them; on the start's
	 * failure path nothing ever did.
	 */
	cancel_work_sync(&conn->tx_work);
	kvfree(conn->tx_payload);
	xiw_tx_zc_drop(conn);
	kfree(conn->tx_vec);
	kvfree(conn->tx_buf);
	kfree(conn->irq);
	kfree(conn->orq);
	/* A hook may still be testing @users of a withdrawn connection. */
	kfree_rcu(conn, rcu);
}

/*
 * destroy_qp has withdrawn the connection from @qp (xiw_destroy_qp()):
 * close it as the QP's move to ERROR would have -- in order after a
 * TERMINATE went out or came in whole, with a reset otherwise, unless a
 * close was decided already (a graceful disconnect keeps its FIN) -- and
 * free it.
 */
static void xiw_conn_detach(struct xiw_qp *qp, void *tctx)
{
	struct xiw_conn *conn = tctx;

	might_sleep();
	xiw_conn_event(conn, XIW_CEV_DESTROY, NULL);
	/*
	 * Hooks that found the connection before destroy_qp withdrew it may
	 * still run (see xiw_conn_from_qp()), and so may xiw_conn_start(),
	 * which holds its own reference to its end; they finish before it
	 * goes.  The connection is closing now, so close_work was queued on
	 * the edge that closed it and nothing queues it again: this is its
	 * one flush.
	 */
	xiw_conn_put_user(conn);
	wait_for_completion(&conn->users_gone);
	flush_work(&conn->close_work);
	xiw_conn_free(conn);
}

/*
 * Run the soft-RNR retry now.  Under the lock that decides a close: none
 * is queued once the connection stopped running, so close_work's cancel
 * is the last word.
 */
static void xiw_conn_rnr_kick(struct xiw_conn *conn)
{
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	if (xiw_conn_rx_live(conn))
		mod_delayed_work(xiw_close_wq, &conn->rnr_work, 0);
	spin_unlock_irqrestore(&conn->lock, flags);
}

/* A kernel consumer posted a receive: a held Send may go on now. */
static void xiw_conn_rq_kick(struct xiw_qp *qp)
{
	struct xiw_conn *conn = xiw_conn_from_qp(qp);

	if (!conn)
		return;
	if (READ_ONCE(conn->rx_stalled))
		xiw_conn_rnr_kick(conn);
	xiw_conn_put_user(conn);
}

/*
 * Soft-RNR: retry the Send that holds the receive engine, and read the
 * socket again once it has a receive.  Under the socket lock, which keeps
 * the softirq receive path out (it backlogs instead).
 */
static void xiw_conn_rnr_work(struct work_struct *work)
{
	struct xiw_conn *conn =
		container_of(to_delayed_work(work), struct xiw_conn, rnr_work);
	struct sock *sk = conn->sock->sk;

	lock_sock(sk);
	if (xiw_qp_rx_resume(conn))
		xiw_conn_data_ready(sk);
	release_sock(sk);
	/* After the peer's FIN (PEER_FIN): the close waited for this. */
	if (!READ_ONCE(conn->rx_stalled))
		xiw_conn_event(conn, XIW_CEV_RX_RESUMED, NULL);
}

/**
 * xiw_conn_rnr_hold - schedule the next soft-RNR retry
 * @conn: the connection, its receive engine stalled
 *
 * Any context.
 */
void xiw_conn_rnr_hold(struct xiw_conn *conn)
{
	queue_delayed_work(xiw_close_wq, &conn->rnr_work,
			   max(msecs_to_jiffies(1), 1UL));
}

static const struct xiw_qp_transport_ops xiw_tcp_transport_ops = {
	.sq_kick = xiw_conn_sq_kick,
	.rq_kick = xiw_conn_rq_kick,
	.state_change = xiw_conn_state_change,
	.flush = xiw_conn_flush,
	.detach = xiw_conn_detach,
};

/* Spread transmit engines over the CPUs, preferring the netdev's node. */
static int xiw_conn_pick_cpu(struct xiw_qp *qp)
{
	unsigned int i = (unsigned int)atomic_inc_return(&xiw_tx_next_cpu);

	return cpumask_local_spread(i % num_online_cpus(), qp->xdev->numa_node);
}

/**
 * xiw_conn_start - attach the data path to a connected QP
 * @qp: the QP, IDLE
 * @args: socket, agreed parameters and CM hooks
 *
 * See xiw_conn.h.  Process context.
 *
 * Return: 0; -ENOMEM; -EINVAL for a QP that is not IDLE or unusable
 * parameters; -ENOTCONN if the socket is not connected.
 */
int xiw_conn_start(struct xiw_qp *qp, const struct xiw_conn_start_args *args)
{
	struct sock *sk = args->sock->sk;
	struct xiw_sk_user *sku;
	struct xiw_conn *conn;
	bool nospace;
	u32 ord, ird;
	int rv;

	might_sleep();
	if (!args->cm_ops || !args->cm_ops->llp_close)
		return -EINVAL;
	if (sk->sk_state != TCP_ESTABLISHED)
		return -ENOTCONN;

	/*
	 * What the CM agreed: the enhanced words' outcome, or without them
	 * (MPA revision 1) the IRD and ORD the ULP passed to connect or
	 * accept.  Not the QP's attributes: rdma_cm never sets them on an
	 * iWARP QP, so they are 0 until the connection sets them below.
	 */
	ord = clamp_t(u32, args->mpa.ord, 1, XIW_MAX_ORD_QP);
	ird = clamp_t(u32, args->mpa.ird, 1, XIW_MAX_IRD_QP);

	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn)
		return -ENOMEM;
	conn->qp = qp;
	conn->sock = args->sock;
	conn->mpa = args->mpa;
	conn->initiator = args->initiator;
	conn->ord = ord;
	conn->ird = ird;
	conn->cm_ops = args->cm_ops;
	conn->cm_ctx = args->cm_ctx;
	conn->tx_cpu = xiw_conn_pick_cpu(qp);
	/* One for the QP's pointer, one for this start (see detach). */
	refcount_set(&conn->users, 2);
	init_completion(&conn->users_gone);
	spin_lock_init(&conn->copy_lock);
	spin_lock_init(&conn->lock);
	mutex_init(&conn->tx_mutex);
	INIT_WORK(&conn->tx_work, xiw_qp_tx_work);
	INIT_WORK(&conn->close_work, xiw_conn_close_work);
	INIT_DELAYED_WORK(&conn->rnr_work, xiw_conn_rnr_work);
	INIT_DELAYED_WORK(&conn->term_work, xiw_conn_term_work);
	INIT_LIST_HEAD(&conn->dev_entry);
	INIT_LIST_HEAD(&conn->tx_defer_entry);
	conn->tx_batch = max_t(u32, args->tx_batch, 1);
	conn->tx_zcopy = args->tx_zcopy;
	conn->rnr_ms = args->soft_rnr_ms;
	conn->tx_msn[RDMAP_QN_SEND] = 1;
	conn->tx_msn[RDMAP_QN_READ_REQ] = 1;
	conn->tx_msn[RDMAP_QN_TERMINATE] = 1;
	conn->tx_msn[RDMAP_QN_ATOMIC_RESP] = 1;
	conn->rx_ut[RDMAP_QN_SEND].msn = 1;
	conn->rx_ut[RDMAP_QN_READ_REQ].msn = 1;
	conn->rx_term_msn = 1;
	conn->rx_atomic_msn = 1;
	conn->rtr_tx = args->mpa.p2p && args->initiator;
	conn->rtr_rx = args->mpa.p2p && !args->initiator;
	xiw_tx_init(&conn->tx, args->mpa.crc, args->mpa.markers_tx,
		    args->stream_pos_tx);
	xiw_rx_init(&conn->rx, args->mpa.crc, args->mpa.markers_rx,
		    args->stream_pos_rx, 0);
	/* The receive engine takes a segment's end with its last chunk. */
	conn->rx.join_end = true;
	xiw_conn_offload_start(conn, args->offload);

	rv = -ENOMEM;
	conn->orq = kcalloc(ord, sizeof(*conn->orq), GFP_KERNEL);
	conn->irq = kcalloc(ird, sizeof(*conn->irq), GFP_KERNEL);
	/* tx_buf and tx_payload come with the first FPDU (xiw_tx_bufs()). */
	conn->tx_pq = xiw_tx_pq_create(conn);
	if (!conn->orq || !conn->irq || !conn->tx_pq)
		goto err_free;

	/* Listed before anything can tear it down (close_work unlists it). */
	spin_lock_bh(&qp->xdev->conn_lock);
	list_add_tail(&conn->dev_entry, &qp->xdev->conn_list);
	spin_unlock_bh(&qp->xdev->conn_lock);

	/*
	 * The data path owns data_ready and write_space from before the
	 * connection is published: a close may be requested as soon as a
	 * hook can find it, and close_work gives them back.
	 */
	write_lock_bh(&sk->sk_callback_lock);
	sku = xiw_sk_user(sk);
	conn->sku = sku;
	conn->saved_data_ready = sk->sk_data_ready;
	conn->saved_write_space = sk->sk_write_space;
	sk->sk_data_ready = xiw_conn_data_ready;
	sk->sk_write_space = xiw_conn_write_space;
	sku->conn = conn;
	write_unlock_bh(&sk->sk_callback_lock);

	/* Published and in RTS, or neither: nothing has seen it on failure. */
	rv = xiw_qp_connect(qp, &xiw_tcp_transport_ops, conn, ord, ird);
	if (rv)
		goto err_restore;

	/* A close decided meanwhile stands: it has queued close_work. */
	write_lock_bh(&sk->sk_callback_lock);
	xiw_conn_event(conn, XIW_CEV_STARTED, NULL);
	write_unlock_bh(&sk->sk_callback_lock);

	/*
	 * Data may have arrived behind the MPA frame already; tcp_read_sock()
	 * wants the socket lock, which softirq receive holds otherwise.
	 */
	lock_sock(sk);
	xiw_conn_data_ready(sk);
	/*
	 * The move to RTS ran the doorbell, which may have filled the socket
	 * while write_space still did nothing: if it waits for room, a
	 * write_space that came meanwhile is lost, a later one reaches us.
	 */
	nospace = sk->sk_socket && test_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	release_sock(sk);
	/*
	 * Work posted before the connection, or the RTR, needs the engine;
	 * otherwise the first doorbell starts it (waking a worker for
	 * nothing cost every connection setup a cross-CPU wakeup).  What
	 * the receive path queues for it, it kicks for itself.
	 */
	if (conn->rtr_tx || nospace || xiw_sqe_next_valid(qp))
		xiw_conn_kick_tx(conn);
	/* The last touch: a destroy_qp that came meanwhile frees it now. */
	xiw_conn_put_user(conn);
	return 0;

err_restore:
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_data_ready = conn->saved_data_ready;
	sk->sk_write_space = conn->saved_write_space;
	sku->conn = NULL;
	write_unlock_bh(&sk->sk_callback_lock);
err_free:
	xiw_conn_free(conn);
	return rv;
}

/**
 * xiw_conn_llp_down - the CM saw the TCP connection go down
 * @qp: the QP
 * @err: 0 for an orderly close by the peer, else a negative errno
 *
 * Process or softirq context, interrupts on: the QP's move to ERROR
 * flushes it, which waits for the engines' copies.
 */
void xiw_conn_llp_down(struct xiw_qp *qp, int err)
{
	struct xiw_conn *conn = xiw_conn_from_qp(qp);

	if (!conn)
		return;
	/*
	 * The peer closed in order: close our side in order too -- after a
	 * Send soft-RNR holds is settled (its TERMINATE, or the receive
	 * came) and the data behind it read; with a reset if our TERMINATE
	 * is due.
	 */
	if (err)
		xiw_conn_event(conn, XIW_CEV_LLP_ERR, NULL);
	else
		xiw_conn_event(conn, XIW_CEV_PEER_FIN, NULL);
	xiw_conn_put_user(conn);
}

static const char *xiw_tcp_state_name(int state)
{
	static const char * const names[] = {
		[TCP_ESTABLISHED] = "ESTABLISHED",
		[TCP_SYN_SENT] = "SYN_SENT",
		[TCP_SYN_RECV] = "SYN_RECV",
		[TCP_FIN_WAIT1] = "FIN_WAIT1",
		[TCP_FIN_WAIT2] = "FIN_WAIT2",
		[TCP_TIME_WAIT] = "TIME_WAIT",
		[TCP_CLOSE] = "CLOSE",
		[TCP_CLOSE_WAIT] = "CLOSE_WAIT",
		[TCP_LAST_ACK] = "LAST_ACK",
		[TCP_LISTEN] = "LISTEN",
		[TCP_CLOSING] = "CLOSING",
	};

	return state >= 0 && state < ARRAY_SIZE(names) && names[state] ?
	       names[state] : "?";
}

/**
 * xiw_conn_fill_res - the connection of a QP as restrack driver details
 * @msg: netlink message, inside the driver nest
 * @qp: the QP
 *
 * The TCP state, ports and retransmissions of the socket, the agreed MPA
 * parameters and the data path settings; nothing for a QP without a
 * connection, or whose connection has given its socket back.
 *
 * Return: 0 or -EMSGSIZE.
 */
int xiw_conn_fill_res(struct sk_buff *msg, struct xiw_qp *qp)
{
	struct xiw_device *xdev = qp->xdev;
	struct xiw_conn *conn;
	const struct sock *sk;
	int rv = 0;

	conn = xiw_conn_from_qp(qp);
	if (!conn)
		return 0;
	/* On the list, the socket is the connection's (see close_work). */
	spin_lock_bh(&xdev->conn_lock);
	if (list_empty(&conn->dev_entry))
		goto out;
	sk = conn->sock->sk;
	if (rdma_nl_put_driver_string(msg, "tcp_state",
				      xiw_tcp_state_name(READ_ONCE(sk->sk_state))) ||
	    rdma_nl_put_driver_u32(msg, "tcp_lport", sk->sk_num) ||
	    rdma_nl_put_driver_u32(msg, "tcp_rport", ntohs(sk->sk_dport)) ||
	    rdma_nl_put_driver_u32(msg, "tcp_retransmits",
				   READ_ONCE(tcp_sk(sk)->total_retrans)) ||
	    xiw_mpa_fill_res(msg, &conn->mpa) ||
	    rdma_nl_put_driver_string(msg, "conn_state",
				      xiw_conn_state_name(READ_ONCE(conn->state))) ||
	    rdma_nl_put_driver_u32(msg, "tx_batch", conn->tx_batch) ||
	    rdma_nl_put_driver_string(msg, "tx_zcopy",
				      xiw_tx_zcopy_name(READ_ONCE(conn->tx_zcopy))) ||
	    rdma_nl_put_driver_u32(msg, "soft_rnr_ms", conn->rnr_ms))
		rv = -EMSGSIZE;
out:
	spin_unlock_bh(&xdev->conn_lock);
	xiw_conn_put_user(conn);
	return rv;
}

/**
 * xiw_dev_tcp_retrans - TCP segments the device's connections retransmitted
 * @xdev: device
 *
 * Those of closed connections, counted at teardown, and those of the
 * connections up now, read from their sockets.  Process or softirq context.
 *
 * Return: the sum.
 */
u64 xiw_dev_tcp_retrans(struct xiw_device *xdev)
{
	struct xiw_conn *conn;
	u64 n;

	spin_lock_bh(&xdev->conn_lock);
	n = atomic64_read(&xdev->stats.tcp_retrans);
	list_for_each_entry(conn, &xdev->conn_list, dev_entry)
		n += READ_ONCE(tcp_sk(conn->sock->sk)->total_retrans);
	spin_unlock_bh(&xdev->conn_lock);
	return n;
}

/**
 * xiw_conn_init - create the data path's workqueues
 *
 * Return: 0 or -ENOMEM.
 */
int xiw_conn_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		INIT_LIST_HEAD(&per_cpu(xiw_tx_defer, cpu).list);
	xiw_tx_wq = alloc_workqueue("xiw_tx",
				    WQ_HIGHPRI | WQ_MEM_RECLAIM | XIW_WQ_PERCPU, 0);
	if (!xiw_tx_wq)
		return -ENOMEM;
	xiw_close_wq = alloc_workqueue("xiw_close", WQ_UNBOUND | WQ_MEM_RECLAIM,
				       0);
	if (!xiw_close_wq) {
		destroy_workqueue(xiw_tx_wq);
		return -ENOMEM;
	}
	return 0;
}

/**
 * xiw_conn_exit - wait for the zero-copy sends the network stack holds,
 *	then destroy the data path's workqueues
 */
void xiw_conn_exit(void)
{
	xiw_tx_pq_wait_all();
	destroy_workqueue(xiw_close_wq);
	destroy_workqueue(xiw_tx_wq);
}
