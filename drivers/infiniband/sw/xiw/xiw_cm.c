// SPDX-License-Identifier: GPL-2.0
/*
 * xiw: the iWARP connection manager.
 *
 * iw_cm device ops (connect, accept, reject, listen), TCP connection setup
 * on kernel sockets in the device's network namespace, and the MPA
 * Request/Reply exchange, whose frames are parsed, built and negotiated
 * only by the protocol core (proto/mpa.c).  Once MPA has succeeded the
 * connection is handed to the data path with xiw_conn_start(); the data
 * path gives it back through the llp_close hook.  Documentation/cm.rst
 * describes the state machine and the upcalls.
 *
 * Every connection and every listener is a struct xiw_cep: lifetime by
 * kref, exclusion by its mutex.  Socket callbacks (softirq) only queue the
 * endpoint's work item; all decisions are taken in the work item, in the
 * iw_cm downcalls and in llp_close, each under the endpoint's mutex.
 *
 * References on an endpoint:
 *  - its owner: the creator (iw_connect, the listener's accept work), then
 *    iw_cm while a CONNECT_REQUEST waits for accept/reject, then the data
 *    path from xiw_conn_start() until llp_close; a listener's owner is its
 *    iw_cm_id until iw_destroy_listen;
 *  - one while callbacks are installed on a socket;
 *  - one per queued work item and per armed timer;
 *  - a pending child holds one on its listener, the listener's list of
 *    pending children one on each child.
 *
 * Lock order: a child's mutex, then its listener's mutex (nested); nothing
 * takes a child's mutex while holding a listener's.  rtnl_lock, then an
 * endpoint's mutex (xiw_cm_dev_gone()): nothing under an endpoint's mutex
 * takes rtnl_lock.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/inet.h>
#include <linux/jiffies.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/tcp.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <net/tcp_states.h>
#include <rdma/ib_verbs.h>
#include <rdma/iw_cm.h>

#include "xiw.h"
#include "xiw_cm.h"
#include "xiw_conn.h"
#include "xiw_proto.h"
#include "xiw_trace.h"

#define XIW_MPA_FRAME_MAX	(MPA_RR_HDR_LEN + MPA_MAX_PD_LEN)

/* Pending (pre-CONNECT_REQUEST) connections per listener. */
#define XIW_CM_PENDING_MIN	16
#define XIW_CM_PENDING_MAX	1024

/* Connections a listener accepts per work run before requeueing itself. */
#define XIW_CM_ACCEPT_BATCH	32

/**
 * enum xiw_cep_state - endpoint states
 * @XIW_CEP_IDLE: allocated, not yet set up
 * @XIW_CEP_LISTEN: listener
 * @XIW_CEP_CONNECTING: active: TCP handshake in progress
 * @XIW_CEP_AWAIT_REP: active: MPA Request sent, reading the Reply
 * @XIW_CEP_AWAIT_REQ: passive: TCP connection accepted, reading the Request
 * @XIW_CEP_RECVD_REQ: passive: CONNECT_REQUEST raised, waiting for iw_cm's
 *	accept or reject
 * @XIW_CEP_RDMA: the data path owns the connection (xiw_conn_start())
 * @XIW_CEP_DRAIN: graceful close: FIN sent, waiting for the peer's
 * @XIW_CEP_CLOSED: socket released; nothing left to do
 * @XIW_CEP_NUM_STATES: number of states
 */
enum xiw_cep_state {
	XIW_CEP_IDLE,
	XIW_CEP_LISTEN,
	XIW_CEP_CONNECTING,
	XIW_CEP_AWAIT_REP,
	XIW_CEP_AWAIT_REQ,
	XIW_CEP_RECVD_REQ,
	XIW_CEP_RDMA,
	XIW_CEP_DRAIN,
	XIW_CEP_CLOSED,
	XIW_CEP_NUM_STATES
};

static const char * const xiw_cep_state_names[XIW_CEP_NUM_STATES] = {
	[XIW_CEP_IDLE] = "IDLE",
	[XIW_CEP_LISTEN] = "LISTEN",
	[XIW_CEP_CONNECTING] = "CONNECTING",
	[XIW_CEP_AWAIT_REP] = "AWAIT_REP",
	[XIW_CEP_AWAIT_REQ] = "AWAIT_REQ",
	[XIW_CEP_RECVD_REQ] = "RECVD_REQ",
	[XIW_CEP_RDMA] = "RDMA",
	[XIW_CEP_DRAIN] = "DRAIN",
	[XIW_CEP_CLOSED] = "CLOSED",
};

/**
 * struct xiw_cep - connection endpoint (one TCP connection or listener)
 * @sku: what sk_user_data of @sock points to; shared with the data path,
 *	which sets @sku.conn while it owns the connection
 * @ref: references, see the top of this file
 * @mutex: serializes the work item, the timer, the iw_cm downcalls and
 *	llp_close on this endpoint; guards every field below except the
 *	constant ones (@id, @ibname, @active) and @all_entry
 * @id: number for log lines
 * @ibname: device name at creation, for log lines
 * @all_entry: entry in xiw_cep_all, under xiw_cep_all_lock
 * @xdev: owning device; used only while iw_cm guarantees it is alive
 *	(downcalls, CONN_SENT, listening), never in DRAIN or CLOSED
 * @state: enum xiw_cep_state
 * @active: initiator
 * @sock: the socket, NULL once released
 * @saved_state_change: @sock's callback before ours (restored on release)
 * @saved_data_ready: likewise
 * @saved_error_report: likewise
 * @peer_addr: the peer's address, for log lines
 * @ulp_key: the context of @cm_id, which rdma_cm sets to its own id:
 *	matched against rdma_cm ids for restrack, never dereferenced
 * @cm_id: iw_cm id with a reference (add_ref), NULL when none is owed
 *	further events
 * @qp: QP with a reference (xiw_qp_get), from connect/accept to close
 * @listener: passive, until CONNECT_REQUEST is raised: the listener, with
 *	a reference
 * @listen_entry: passive: entry in @listener's @children
 * @children: listener: connections whose MPA Request is still awaited
 * @nr_children: listener: length of @children
 * @max_children: listener: limit of @children
 * @work: handles socket events; queued by the socket callbacks
 * @timer: connect, MPA and drain timeouts
 * @deadline: when the armed timeout expires (a timer run that finds it in
 *	the future is stale and does nothing)
 * @cfg: the device's settings when the endpoint was created
 * @policy: MPA policy of this connection: from @cfg, with the ULP's
 *	IRD/ORD and, for a retry, revision 1
 * @peer: the peer's MPA frame (@peer.pdata points into @rx_buf)
 * @agreed: the negotiated parameters
 * @rx_buf: the peer's MPA frame as received (XIW_MPA_FRAME_MAX octets,
 *	allocated by the first read of it; freed by xiw_cep_mpa_done())
 * @rx_len: octets in @rx_buf
 * @pdata: active: a copy of the ULP's private data for the MPA Request
 *	(kept for a revision 1 retry; freed by xiw_cep_mpa_done())
 * @pdata_len: length of @pdata
 * @rev1_retried: active: the rev 2 Request failed, this is the rev 1 retry
 * @connected: CONNECT_REPLY(0) or ESTABLISHED was raised: iw_cm expects
 *	DISCONNECT and CLOSE next
 * @disconnected: DISCONNECT was raised
 * @llp_down: xiw_conn_llp_down() was called for this connection
 * @cb_quiet: xiw_cep_start_connect() handles what the TCP handshake does
 *	during kernel_connect() itself: the socket callbacks queue no work
 *	meanwhile; written under the socket's sk_callback_lock
 */
struct xiw_cep {
	struct xiw_sk_user sku;
	struct kref ref;
	struct mutex mutex;		/* work, timer, downcalls */
	u32 id;
	char ibname[IB_DEVICE_NAME_MAX];
	struct list_head all_entry;

	struct xiw_device *xdev;
	enum xiw_cep_state state;
	bool active;

	struct socket *sock;
	void (*saved_state_change)(struct sock *sk);
	void (*saved_data_ready)(struct sock *sk);
	void (*saved_error_report)(struct sock *sk);
	struct sockaddr_storage peer_addr;

	struct iw_cm_id *cm_id;
	const void *ulp_key;
	struct xiw_qp *qp;

	struct xiw_cep *listener;
	struct list_head listen_entry;
	struct list_head children;
	unsigned int nr_children;
	unsigned int max_children;

	struct work_struct work;
	struct delayed_work timer;
	unsigned long deadline;

	struct xiw_dev_cfg cfg;
	struct xiw_mpa_policy policy;
	struct xiw_mpa_frame peer;
	struct xiw_mpa_params agreed;
	u8 *rx_buf;
	u16 rx_len;
	u8 *pdata;
	u16 pdata_len;

	bool rev1_retried;
	bool connected;
	bool disconnected;
	bool llp_down;
	bool cb_quiet;
};

/* CM work and timeouts of all endpoints (unbound, not ordered). */
static struct workqueue_struct *xiw_cm_wq;

/* Every endpoint, for module exit and diagnostics. */
static DEFINE_SPINLOCK(xiw_cep_all_lock);
static LIST_HEAD(xiw_cep_all);
static DECLARE_WAIT_QUEUE_HEAD(xiw_cep_gone);
static atomic_t xiw_cep_next_id = ATOMIC_INIT(0);

static const struct xiw_conn_cm_ops xiw_cm_conn_ops;
static void xiw_cep_work_fn(struct work_struct *work);
static void xiw_cep_timer_fn(struct work_struct *work);
static void xiw_cep_connected(struct xiw_cep *cep);

static const char *xiw_cep_state_name(enum xiw_cep_state state)
{
	return state < XIW_CEP_NUM_STATES ? xiw_cep_state_names[state] : "?";
}

#define xiw_dbg_cep(cep, fmt, ...)					\
	pr_debug("%s: cep %u %s: " fmt, (cep)->ibname, (cep)->id,	\
		 xiw_cep_state_name((cep)->state), ##__VA_ARGS__)

/* Peer-triggered problems: one rate-limited line naming the peer. */
#define xiw_warn_cep(cep, fmt, ...)					\
	pr_warn_ratelimited("%s: cep %u peer %pISpc: " fmt,		\
			    (cep)->ibname, (cep)->id, &(cep)->peer_addr,	\
			    ##__VA_ARGS__)

/* ---------------------------------------------------------------------- */
/* Endpoint life cycle                                                     */
/* ---------------------------------------------------------------------- */

static struct xiw_cep *xiw_cep_alloc(struct xiw_device *xdev)
{
	struct xiw_cep *cep = kzalloc(sizeof(*cep), GFP_KERNEL);

	if (!cep)
		return NULL;
	kref_init(&cep->ref);
	mutex_init(&cep->mutex);
	cep->id = (u32)atomic_inc_return(&xiw_cep_next_id);
	strscpy(cep->ibname, dev_name(&xdev->base_dev.dev),
		sizeof(cep->ibname));
	cep->xdev = xdev;
	cep->state = XIW_CEP_IDLE;
	INIT_LIST_HEAD(&cep->listen_entry);
	INIT_LIST_HEAD(&cep->children);
	INIT_WORK(&cep->work, xiw_cep_work_fn);
	INIT_DELAYED_WORK(&cep->timer, xiw_cep_timer_fn);
	xiw_dev_cfg_get(xdev, &cep->cfg);
	xiw_dev_cfg_policy(&cep->cfg, false, &cep->policy);

	spin_lock_irq(&xiw_cep_all_lock);
	list_add_tail(&cep->all_entry, &xiw_cep_all);
	spin_unlock_irq(&xiw_cep_all_lock);
	return cep;
}

static void xiw_cep_release(struct kref *ref)
{
	struct xiw_cep *cep = container_of(ref, struct xiw_cep, ref);
	unsigned long flags;
	bool empty;

	/* Everything an endpoint holds is given back before its last ref. */
	WARN_ON_ONCE(cep->sock || cep->cm_id || cep->qp || cep->listener ||
		     !list_empty(&cep->children));
	xiw_dbg_cep(cep, "released\n");
	spin_lock_irqsave(&xiw_cep_all_lock, flags);
	list_del(&cep->all_entry);
	empty = list_empty(&xiw_cep_all);
	spin_unlock_irqrestore(&xiw_cep_all_lock, flags);
	mutex_destroy(&cep->mutex);
	kfree(cep->rx_buf);
	kfree(cep->pdata);
	kfree(cep);
	if (empty)
		wake_up_all(&xiw_cep_gone);
}

/*
 * The MPA exchange is over (the data path owns the connection and the
 * upcall that announced it took its copy of the private data): the
 * buffers it needed go, so that a connection keeps only what it uses.
 */
static void xiw_cep_mpa_done(struct xiw_cep *cep)
{
	lockdep_assert_held(&cep->mutex);
	cep->peer.pdata = NULL;
	cep->peer.pdata_len = 0;
	kfree(cep->rx_buf);
	cep->rx_buf = NULL;
	cep->rx_len = 0;
	kfree(cep->pdata);
	cep->pdata = NULL;
	cep->pdata_len = 0;
}

static void xiw_cep_get(struct xiw_cep *cep)
{
	kref_get(&cep->ref);
}

/* Any context: the last reference is never dropped in a socket callback. */
static void xiw_cep_put(struct xiw_cep *cep)
{
	kref_put(&cep->ref, xiw_cep_release);
}

/* Queue the endpoint's work; the queued work item holds a reference. */
static void xiw_cep_queue_work(struct xiw_cep *cep)
{
	xiw_cep_get(cep);
	if (!queue_work(xiw_cm_wq, &cep->work))
		xiw_cep_put(cep);	/* already queued, with its own ref */
}

/*
 * Arm (or re-arm) the timeout.  Caller holds @cep->mutex or owns @cep
 * before it is published to socket callbacks.
 */
static void xiw_cep_arm_timer(struct xiw_cep *cep, unsigned long tmo)
{
	cep->deadline = jiffies + tmo;
	xiw_cep_get(cep);
	if (mod_delayed_work(xiw_cm_wq, &cep->timer, tmo))
		xiw_cep_put(cep);	/* was pending: it keeps its ref */
}

/* The wait for the peer's MPA Request or Reply: the device's setting. */
static void xiw_cep_arm_mpa_timer(struct xiw_cep *cep)
{
	xiw_cep_arm_timer(cep, msecs_to_jiffies(cep->cfg.mpa_timeout_ms));
}

/* A timer run that already started finds the state changed or the
 * deadline moved and does nothing.
 */
static void xiw_cep_cancel_timer(struct xiw_cep *cep)
{
	lockdep_assert_held(&cep->mutex);
	if (cancel_delayed_work(&cep->timer))
		xiw_cep_put(cep);
}

/* ---------------------------------------------------------------------- */
/* Socket callbacks and socket ownership                                  */
/* ---------------------------------------------------------------------- */

/*
 * The endpoint of a socket: sk_user_data is its struct xiw_sk_user.  The
 * callbacks run with sk_callback_lock read-held (see xiw_sk_user()).
 */
static struct xiw_cep *xiw_sk_cep(struct sock *sk)
{
	struct xiw_sk_user *sku = xiw_sk_user(sk);

	return sku ? container_of(sku, struct xiw_cep, sku) : NULL;
}

/* A connection's data arrived (MPA phase, drain). */
static void xiw_cm_data_ready(struct sock *sk)
{
	struct xiw_cep *cep;

	read_lock_bh(&sk->sk_callback_lock);
	cep = xiw_sk_cep(sk);
	if (cep && !cep->cb_quiet)
		xiw_cep_queue_work(cep);
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * A listener has a connection in its accept queue.  Accepted sockets
 * inherit this callback until they get their own; their sk_user_data is
 * not copied (SK_USER_DATA_NOCOPY), so they find no endpoint here.
 */
static void xiw_cm_listen_data_ready(struct sock *sk)
{
	struct xiw_cep *cep;

	read_lock_bh(&sk->sk_callback_lock);
	cep = xiw_sk_cep(sk);
	if (cep && sk->sk_state == TCP_LISTEN)
		xiw_cep_queue_work(cep);
	read_unlock_bh(&sk->sk_callback_lock);
}

static void xiw_cm_state_change(struct sock *sk)
{
	void (*orig)(struct sock *sk) = NULL;
	struct xiw_cep *cep;

	read_lock_bh(&sk->sk_callback_lock);
	cep = xiw_sk_cep(sk);
	if (cep) {
		orig = cep->saved_state_change;
		if (!cep->cb_quiet)
			xiw_cep_queue_work(cep);
	}
	read_unlock_bh(&sk->sk_callback_lock);
	if (orig)
		orig(sk);
}

static void xiw_cm_error_report(struct sock *sk)
{
	void (*orig)(struct sock *sk) = NULL;
	struct xiw_cep *cep;

	read_lock_bh(&sk->sk_callback_lock);
	cep = xiw_sk_cep(sk);
	if (cep) {
		orig = cep->saved_error_report;
		if (!cep->cb_quiet)
			xiw_cep_queue_work(cep);
	}
	read_unlock_bh(&sk->sk_callback_lock);
	if (orig)
		orig(sk);
}

/*
 * Take over @sock's callbacks.  @orig_data_ready, if not NULL, replaces
 * the data_ready callback found on the socket as the one to restore (an
 * accepted socket inherited the listener's).  The installed callbacks hold
 * a reference on @cep until xiw_cep_sock_release().
 */
static void xiw_cep_sock_attach(struct xiw_cep *cep, struct socket *sock,
				void (*orig_data_ready)(struct sock *sk))
{
	struct sock *sk = sock->sk;

	xiw_cep_get(cep);
	cep->sock = sock;
	write_lock_bh(&sk->sk_callback_lock);
	cep->saved_data_ready = orig_data_ready ?: sk->sk_data_ready;
	cep->saved_state_change = sk->sk_state_change;
	cep->saved_error_report = sk->sk_error_report;
	if (cep->state == XIW_CEP_LISTEN) {
		/* Accepted sockets must not inherit it. */
		__rcu_assign_sk_user_data_with_flags(sk, &cep->sku,
						     SK_USER_DATA_NOCOPY);
		sk->sk_data_ready = xiw_cm_listen_data_ready;
	} else {
		/* No flag: a connected socket has no children to hide it from. */
		rcu_assign_sk_user_data(sk, &cep->sku);
		sk->sk_data_ready = xiw_cm_data_ready;
		sk->sk_state_change = xiw_cm_state_change;
		sk->sk_error_report = xiw_cm_error_report;
	}
	write_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Restore the socket's callbacks and release it; @abort resets the
 * connection (SO_LINGER 0) instead of closing it.  Drops the callbacks'
 * reference: the caller must hold one of its own.
 */
static void xiw_cep_sock_release(struct xiw_cep *cep, bool abort)
{
	struct socket *sock = cep->sock;
	struct sock *sk;

	if (!sock)
		return;
	sk = sock->sk;
	write_lock_bh(&sk->sk_callback_lock);
	rcu_assign_sk_user_data(sk, NULL);
	sk->sk_data_ready = cep->saved_data_ready;
	if (cep->state != XIW_CEP_LISTEN) {
		sk->sk_state_change = cep->saved_state_change;
		sk->sk_error_report = cep->saved_error_report;
	}
	write_unlock_bh(&sk->sk_callback_lock);
	if (abort)
		sock_no_linger(sk);
	sock_release(sock);
	cep->sock = NULL;
	xiw_cep_put(cep);
}

static bool xiw_cep_sock_established(const struct xiw_cep *cep)
{
	return cep->sock && READ_ONCE(cep->sock->sk->sk_state) == TCP_ESTABLISHED;
}

/* The peer sent its FIN, or the connection is gone. */
static bool xiw_cep_sock_peer_closed(const struct xiw_cep *cep)
{
	struct sock *sk = cep->sock->sk;

	return READ_ONCE(sk->sk_state) == TCP_CLOSE ||
	       (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN);
}

/* A TCP socket in the network namespace of the device's netdev. */
static int xiw_sock_create(struct xiw_device *xdev, int family,
			   struct socket **sockp, int *ifindex)
{
	struct net_device *ndev;
	struct net *net = NULL;
	int rv;

	rcu_read_lock();
	ndev = rcu_dereference(xdev->netdev);
	if (ndev) {
		net = maybe_get_net(dev_net(ndev));
		if (ifindex)
			*ifindex = ndev->ifindex;
	}
	rcu_read_unlock();
	if (!net)
		return -ENODEV;
	/*
	 * Not a kernel socket: like a user socket it holds a reference on
	 * its namespace for its whole life, also as an orphan after release.
	 */
	rv = __sock_create(net, family, SOCK_STREAM, IPPROTO_TCP, sockp, 0);
	put_net(net);
	return rv;
}

static int xiw_sockaddr_len(const struct sockaddr_storage *ss)
{
	switch (ss->ss_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return -EAFNOSUPPORT;
	}
}

static bool xiw_sockaddr_any(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return ipv6_addr_any(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/* The port of an AF_INET or AF_INET6 address. */
static __be16 *xiw_sockaddr_port(struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return &((struct sockaddr_in *)ss)->sin_port;
	return &((struct sockaddr_in6 *)ss)->sin6_port;
}

/* Send all of @buf now or fail: MPA frames are small, the socket new. */
static int xiw_cep_send(struct xiw_cep *cep, const void *buf, size_t len)
{
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL };
	struct kvec iov = { .iov_base = (void *)buf, .iov_len = len };
	int rv;

	rv = kernel_sendmsg(cep->sock, &msg, &iov, 1, len);
	if (rv < 0)
		return rv;
	return (size_t)rv == len ? 0 : -EIO;
}

/*
 * Read the rest of the peer's MPA frame, never more: the header first,
 * then exactly PD_Length octets.  Octets after the frame belong to the
 * data path.
 *
 * Return: 1 when the frame is complete, 0 when more octets are needed,
 * -ECONNRESET on end of stream, another -errno on a socket error.
 */
static int xiw_cep_recv_frame(struct xiw_cep *cep)
{
	struct msghdr msg = {};
	struct kvec iov;
	size_t need;
	int rv;

	if (!cep->rx_buf) {
		cep->rx_buf = kmalloc(XIW_MPA_FRAME_MAX, GFP_KERNEL);
		if (!cep->rx_buf)
			return -ENOMEM;
		cep->rx_len = 0;
	}
	for (;;) {
		need = xiw_mpa_frame_need(cep->rx_buf, cep->rx_len);
		if (cep->rx_len >= need)
			return 1;
		iov.iov_base = cep->rx_buf + cep->rx_len;
		iov.iov_len = need - cep->rx_len;
		rv = kernel_recvmsg(cep->sock, &msg, &iov, 1, iov.iov_len,
				    MSG_DONTWAIT);
		if (rv == -EAGAIN)
			return 0;
		if (rv < 0)
			return rv;
		if (rv == 0)
			return -ECONNRESET;
		cep->rx_len += rv;
	}
}

/*
 * Frame @f with @pdata and send it.  The frame goes out whole before this
 * returns, so its buffer lives for the call only.
 */
static int xiw_cep_send_frame(struct xiw_cep *cep, struct xiw_mpa_frame *f,
			      const void *pdata, u16 pdata_len)
{
	enum xiw_proto_err err;
	size_t len;
	u8 *buf;
	int rv;

	buf = kmalloc(XIW_MPA_FRAME_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	f->pdata = pdata_len ? pdata : NULL;
	f->pdata_len = pdata_len;
	err = xiw_mpa_frame_build(f, buf, XIW_MPA_FRAME_MAX, &len);
	if (err) {
		xiw_dbg_cep(cep, "cannot build MPA frame: %s\n",
			    xiw_proto_err_name(err));
		rv = -EINVAL;
		goto out;
	}
	rv = xiw_cep_send(cep, buf, len);
out:
	kfree(buf);
	return rv;
}

/*
 * Send a TERMINATE reporting the MPA negotiation failure @err as the first
 * FPDU after the MPA frames (RFC 6581).  Nothing else is in the socket
 * yet, so it is taken whole or not at all; the close that follows is
 * graceful, the FIN behind it.
 */
static void xiw_cep_send_term(struct xiw_cep *cep, enum xiw_proto_err err,
			      bool crc)
{
	struct xiw_rdmap_hdr h = {};
	u8 hdr[XIW_RDMAP_HDR_MAX];
	u8 fpdu[MPA_HDR_LEN + XIW_RDMAP_HDR_MAX + MPA_ALIGN + MPA_CRC_LEN];
	struct xiw_term term;
	struct xiw_slice sl;
	struct xiw_tx tx;
	size_t hlen, flen;

	if (xiw_term_init(&term, err, NULL, 0))
		return;
	h.last = true;
	h.opcode = RDMAP_OP_TERMINATE;
	h.qn = RDMAP_QN_TERMINATE;
	h.msn = 1;
	h.u.term = term.ctrl;
	if (xiw_rdmap_hdr_build(&h, hdr, sizeof(hdr), &hlen))
		return;
	sl.p = hdr;
	sl.len = hlen;
	xiw_tx_init(&tx, crc, false, 0);
	if (xiw_fpdu_build(&tx, &sl, 1, fpdu, sizeof(fpdu), &flen))
		return;
	if (xiw_cep_send(cep, fpdu, flen))
		xiw_dbg_cep(cep, "TERMINATE not sent\n");
	else if (cep->xdev)
		xiw_count_term(cep->xdev, term.ctrl.code.layer, true);
	trace_xiw_term(cep->qp ? xiw_qp_id(cep->qp) : 0, true,
		       term.ctrl.code.layer, term.ctrl.code.etype,
		       term.ctrl.code.ecode);
}

/* Errors RFC 6581 reports with a TERMINATE as well as the MPA reject. */
static bool xiw_mpa_err_wants_term(enum xiw_proto_err err)
{
	return err == XIW_ERR_MPA_INSUFFICIENT_IRD ||
	       err == XIW_ERR_MPA_NO_MATCHING_RTR ||
	       err == XIW_ERR_MPA_P2P_MISMATCH;
}

/* ---------------------------------------------------------------------- */
/* Upcalls                                                                */
/* ---------------------------------------------------------------------- */

static int xiw_cep_upcall(struct xiw_cep *cep, struct iw_cm_id *id,
			  enum iw_cm_event_type type, int status)
{
	struct iw_cm_event ev = {};

	lockdep_assert_held(&cep->mutex);
	ev.event = type;
	ev.status = status;
	switch (type) {
	case IW_CM_EVENT_CONNECT_REQUEST:
		ev.provider_data = cep;
		if (cep->peer.enhanced) {
			/* The peer's own IRD and ORD, as far as we can serve. */
			ev.ird = min_t(u16, cep->peer.ird, XIW_MAX_IRD_QP);
			ev.ord = min_t(u16, cep->peer.ord, XIW_MAX_ORD_QP);
		} else {
			ev.ird = cep->policy.ird;
			ev.ord = cep->policy.ord;
		}
		fallthrough;
	case IW_CM_EVENT_CONNECT_REPLY:
		if (cep->peer.pdata_len) {
			ev.private_data = (void *)cep->peer.pdata;
			ev.private_data_len = (u8)cep->peer.pdata_len;
		}
		if (cep->sock) {
			kernel_getsockname(cep->sock,
					   (struct sockaddr *)&ev.local_addr);
			kernel_getpeername(cep->sock,
					   (struct sockaddr *)&ev.remote_addr);
		}
		if (type == IW_CM_EVENT_CONNECT_REQUEST)
			break;
		fallthrough;
	case IW_CM_EVENT_ESTABLISHED:
		if (!status) {
			ev.ird = cep->agreed.ird;
			ev.ord = cep->agreed.ord;
		}
		break;
	default:
		break;
	}
	xiw_dbg_cep(cep, "upcall event %d status %d\n", type, status);
	trace_xiw_cm_event(cep->ibname, cep->id, type, status);
	return id->event_handler(id, &ev);
}

/* Give back the iw_cm id: no further events are owed to it. */
static void xiw_cep_drop_cm_id(struct xiw_cep *cep)
{
	struct iw_cm_id *id = cep->cm_id;

	if (!id)
		return;
	cep->cm_id = NULL;
	WRITE_ONCE(cep->ulp_key, NULL);
	id->rem_ref(id);
}

static void xiw_cep_drop_qp(struct xiw_cep *cep)
{
	if (cep->qp) {
		xiw_qp_put(cep->qp);
		cep->qp = NULL;
	}
}

/* ---------------------------------------------------------------------- */
/* Closing                                                                */
/* ---------------------------------------------------------------------- */

/* Close the socket: reset it and be done. */
static void xiw_cep_abort(struct xiw_cep *cep)
{
	lockdep_assert_held(&cep->mutex);
	xiw_cep_cancel_timer(cep);
	xiw_cep_sock_release(cep, true);
	cep->state = XIW_CEP_CLOSED;
}

/*
 * Close the socket gracefully: FIN now; release when the peer's FIN has
 * arrived or after XIW_CM_DRAIN_TIMEOUT.  The endpoint no longer uses its
 * device from here on.
 */
static void xiw_cep_close_graceful(struct xiw_cep *cep)
{
	lockdep_assert_held(&cep->mutex);
	xiw_cep_cancel_timer(cep);
	cep->xdev = NULL;
	if (!cep->sock) {
		cep->state = XIW_CEP_CLOSED;
		return;
	}
	kernel_sock_shutdown(cep->sock, SHUT_WR);
	if (xiw_cep_sock_peer_closed(cep)) {
		xiw_cep_sock_release(cep, false);
		cep->state = XIW_CEP_CLOSED;
		return;
	}
	cep->state = XIW_CEP_DRAIN;
	xiw_cep_arm_timer(cep, XIW_CM_DRAIN_TIMEOUT);
}

/* DRAIN: throw away what the peer still sends; release after its FIN. */
static void xiw_cep_drain(struct xiw_cep *cep)
{
	struct msghdr msg = {};
	struct kvec iov;
	u8 scratch[128];
	int i, rv;

	for (i = 0; i < 64; i++) {
		iov.iov_base = scratch;
		iov.iov_len = sizeof(scratch);
		rv = kernel_recvmsg(cep->sock, &msg, &iov, 1, sizeof(scratch),
				    MSG_DONTWAIT);
		if (rv <= 0)
			break;
	}
	if (i == 64) {
		/* Busy peer: come back later rather than hog the worker. */
		xiw_cep_queue_work(cep);
		return;
	}
	if (xiw_cep_sock_peer_closed(cep)) {
		xiw_cep_cancel_timer(cep);
		xiw_cep_sock_release(cep, false);
		cep->state = XIW_CEP_CLOSED;
	}
}

/* ---------------------------------------------------------------------- */
/* Passive side                                                           */
/* ---------------------------------------------------------------------- */

/*
 * A pending child leaves its listener: off the listener's list (dropping
 * the list's reference), and the child's reference on the listener goes.
 * The caller holds a reference on @cep besides the list's.
 */
static void xiw_cep_detach_listener(struct xiw_cep *cep)
{
	struct xiw_cep *lcep = cep->listener;

	lockdep_assert_held(&cep->mutex);
	if (!lcep)
		return;
	mutex_lock_nested(&lcep->mutex, SINGLE_DEPTH_NESTING);
	/* A listener that stopped listening took its list away already. */
	if (lcep->state == XIW_CEP_LISTEN && !list_empty(&cep->listen_entry)) {
		list_del_init(&cep->listen_entry);
		lcep->nr_children--;
		xiw_cep_put(cep);
	}
	mutex_unlock(&lcep->mutex);
	cep->listener = NULL;
	xiw_cep_put(lcep);
}

/* Passive connection before CONNECT_REQUEST: reset it, no upcall. */
static void xiw_cep_passive_abort(struct xiw_cep *cep)
{
	xiw_cep_detach_listener(cep);
	xiw_cep_abort(cep);
}

/* Refuse a request: MPA Reply with the R flag (and maybe a TERMINATE). */
static void xiw_cep_send_reject(struct xiw_cep *cep, enum xiw_proto_err why,
				const void *pdata, u8 pdata_len)
{
	struct xiw_mpa_frame rep;

	if (xiw_mpa_reply_init(&cep->policy, &cep->peer, &cep->agreed, why,
			       &rep))
		return;
	if (xiw_cep_send_frame(cep, &rep, pdata, pdata_len))
		return;
	if (cep->xdev)
		atomic64_inc(&cep->xdev->stats.mpa_rej_sent);
	if (xiw_mpa_err_wants_term(why))
		xiw_cep_send_term(cep, why, rep.crc || cep->peer.crc);
}

/* AWAIT_REQ: read and judge the MPA Request, then raise CONNECT_REQUEST. */
static void xiw_cep_proc_request(struct xiw_cep *cep)
{
	enum xiw_proto_err err;
	struct xiw_cep *lcep;
	size_t consumed;
	int rv;

	rv = xiw_cep_recv_frame(cep);
	if (!rv)
		return;
	if (rv < 0) {
		xiw_dbg_cep(cep, "connection lost before MPA Request: %d\n", rv);
		xiw_cep_passive_abort(cep);
		return;
	}
	err = xiw_mpa_frame_parse(cep->rx_buf, cep->rx_len, &cep->peer,
				  &consumed);
	if (!err && cep->peer.reply)
		err = XIW_ERR_MPA_UNEXPECTED_KEY;
	if (err) {
		xiw_warn_cep(cep, "malformed MPA Request (%s), closing\n",
			     xiw_proto_err_name(err));
		memset(&cep->peer, 0, sizeof(cep->peer));
		xiw_cep_passive_abort(cep);
		return;
	}
	if (cep->peer.pdata_len > U8_MAX) {
		/* iw_cm carries at most 255 octets of private data. */
		xiw_warn_cep(cep, "MPA Request with %u octets of private data, rejecting\n",
			     cep->peer.pdata_len);
		err = XIW_ERR_MPA_PD_LEN;
	} else {
		err = xiw_mpa_negotiate(&cep->policy, &cep->peer, &cep->agreed);
		if (err)
			xiw_warn_cep(cep, "MPA negotiation failed (%s), rejecting\n",
				     xiw_proto_err_name(err));
	}
	if (err) {
		xiw_cep_send_reject(cep, err, NULL, 0);
		xiw_cep_detach_listener(cep);
		xiw_cep_close_graceful(cep);
		return;
	}

	xiw_cep_cancel_timer(cep);
	lcep = cep->listener;
	mutex_lock_nested(&lcep->mutex, SINGLE_DEPTH_NESTING);
	if (lcep->state != XIW_CEP_LISTEN || !lcep->cm_id) {
		mutex_unlock(&lcep->mutex);
		xiw_cep_passive_abort(cep);
		return;
	}
	/* The list's reference on us becomes iw_cm's until accept/reject. */
	list_del_init(&cep->listen_entry);
	lcep->nr_children--;
	cep->state = XIW_CEP_RECVD_REQ;
	rv = xiw_cep_upcall(cep, lcep->cm_id, IW_CM_EVENT_CONNECT_REQUEST, 0);
	mutex_unlock(&lcep->mutex);
	cep->listener = NULL;
	xiw_cep_put(lcep);
	if (rv) {
		xiw_warn_cep(cep, "iw_cm cannot take the connection (%d)\n", rv);
		xiw_cep_abort(cep);
		xiw_cep_put(cep);	/* iw_cm's reference */
	}
}

/* LISTEN: accept what TCP has queued; each connection gets a child. */
static void xiw_cep_accept_conns(struct xiw_cep *lcep)
{
	struct socket *nsock;
	struct xiw_cep *cep;
	int i, rv;

	for (i = 0; i < XIW_CM_ACCEPT_BATCH; i++) {
		rv = kernel_accept(lcep->sock, &nsock, O_NONBLOCK);
		if (rv == -EAGAIN)
			return;
		if (rv) {
			xiw_dbg_cep(lcep, "accept: %d\n", rv);
			return;
		}
		if (lcep->nr_children >= lcep->max_children) {
			pr_warn_ratelimited("%s: listener cep %u: %u connections wait for their MPA Request, refusing more\n",
					    lcep->ibname, lcep->id,
					    lcep->nr_children);
			sock_no_linger(nsock->sk);
			sock_release(nsock);
			continue;
		}
		cep = xiw_cep_alloc(lcep->xdev);
		if (!cep) {
			sock_no_linger(nsock->sk);
			sock_release(nsock);
			continue;
		}
		cep->state = XIW_CEP_AWAIT_REQ;
		kernel_getpeername(nsock, (struct sockaddr *)&cep->peer_addr);
		if (!cep->cfg.nagle)
			tcp_sock_set_nodelay(nsock->sk);
		/* The creator's reference goes to the listener's list. */
		xiw_cep_get(lcep);
		cep->listener = lcep;
		list_add_tail(&cep->listen_entry, &lcep->children);
		lcep->nr_children++;
		xiw_cep_arm_mpa_timer(cep);
		xiw_cep_sock_attach(cep, nsock, lcep->saved_data_ready);
		xiw_dbg_cep(cep, "accepted from %pISpc\n", &cep->peer_addr);
		/* The Request may be queued already. */
		xiw_cep_queue_work(cep);
	}
	xiw_cep_queue_work(lcep);
}

/* ---------------------------------------------------------------------- */
/* Active side                                                            */
/* ---------------------------------------------------------------------- */

/* Create, bind and start connecting the socket; arm the connect timeout. */
static int xiw_cep_start_connect(struct xiw_cep *cep)
{
	struct iw_cm_id *id = cep->cm_id;
	struct sockaddr_storage *laddr = &id->m_local_addr;
	struct sockaddr_storage *raddr = &id->m_remote_addr;
	struct socket *sock;
	int alen = xiw_sockaddr_len(raddr);
	int rv;

	lockdep_assert_held(&cep->mutex);
	if (alen < 0 || laddr->ss_family != raddr->ss_family)
		return -EAFNOSUPPORT;
	if (!cep->xdev)
		return -ENODEV;
	rv = xiw_sock_create(cep->xdev, raddr->ss_family, &sock, NULL);
	if (rv)
		return rv;
	sock_set_reuseaddr(sock->sk);
	if (raddr->ss_family == AF_INET6 && id->afonly) {
		rv = ip6_sock_set_v6only(sock->sk);
		if (rv)
			goto err_release;
	}
	if (!cep->cfg.nagle)
		tcp_sock_set_nodelay(sock->sk);
	rv = kernel_bind(sock, xiw_sockaddr(laddr), alen);
	if (rv == -EADDRINUSE && *xiw_sockaddr_port(laddr)) {
		/*
		 * RDMA CM picks the local port in a port space of its own, and
		 * a TCP socket outside RDMA can hold the same port on this
		 * address (listening, or connected without SO_REUSEADDR).  The
		 * TCP port is only the wire's: take a free one, as the iWARP
		 * port mapper would map it, and CONNECT_REPLY reports the
		 * address actually bound, which iw_cm keeps (xiw_cep_upcall()).
		 */
		struct sockaddr_storage any = *laddr;

		*xiw_sockaddr_port(&any) = 0;
		xiw_dbg_cep(cep, "port of %pISpc in use by TCP, binding another\n",
			    laddr);
		rv = kernel_bind(sock, xiw_sockaddr(&any), alen);
	}
	if (rv)
		goto err_release;

	cep->state = XIW_CEP_CONNECTING;
	cep->rx_len = 0;
	memset(&cep->peer, 0, sizeof(cep->peer));
	/*
	 * On a local or virtual link the handshake often completes inside
	 * kernel_connect(): the MPA Request then goes out from here, not
	 * from a work item the state change would wake another CPU for.
	 */
	cep->cb_quiet = true;
	xiw_cep_sock_attach(cep, sock, NULL);
	rv = kernel_connect(sock, xiw_sockaddr(raddr), alen, O_NONBLOCK);
	write_lock_bh(&sock->sk->sk_callback_lock);
	cep->cb_quiet = false;
	write_unlock_bh(&sock->sk->sk_callback_lock);
	if (rv && rv != -EINPROGRESS) {
		xiw_cep_sock_release(cep, true);
		cep->state = XIW_CEP_IDLE;
		return rv;
	}
	xiw_cep_arm_timer(cep, XIW_CM_CONNECT_TIMEOUT);
	/*
	 * Connected already, or refused meanwhile: go on here.  A later
	 * change of the socket queues the work, which waits for our mutex.
	 */
	if (!rv || READ_ONCE(sock->sk->sk_state) != TCP_SYN_SENT) {
		xiw_cep_connected(cep);
		/* Whatever the peer sent meanwhile woke no one. */
		if (cep->state == XIW_CEP_AWAIT_REP &&
		    !skb_queue_empty_lockless(&sock->sk->sk_receive_queue))
			xiw_cep_queue_work(cep);
	}
	return 0;

err_release:
	sock_release(sock);
	return rv;
}

/*
 * The active connection failed: raise CONNECT_REPLY with @status (with
 * the peer's private data if a Reply carried any), then close: with a
 * reset, or @graceful (FIN, drain) after a TERMINATE of ours.
 */
static void __xiw_cep_connect_failed(struct xiw_cep *cep, int status,
				     bool graceful)
{
	lockdep_assert_held(&cep->mutex);
	xiw_dbg_cep(cep, "connect failed: %d\n", status);
	xiw_cep_cancel_timer(cep);
	if (cep->cm_id)
		xiw_cep_upcall(cep, cep->cm_id, IW_CM_EVENT_CONNECT_REPLY,
			       status);
	if (graceful)
		xiw_cep_close_graceful(cep);
	else
		xiw_cep_abort(cep);
	xiw_cep_drop_cm_id(cep);
	xiw_cep_drop_qp(cep);
	cep->xdev = NULL;
	xiw_cep_put(cep);	/* the connection's reference */
}

static void xiw_cep_connect_failed(struct xiw_cep *cep, int status)
{
	__xiw_cep_connect_failed(cep, status, false);
}

/* Our rev 2 Request was refused: try once more with rev 1 (as cxgb4). */
static bool xiw_cep_retry_rev1(struct xiw_cep *cep)
{
	int rv;

	if (cep->rev1_retried || cep->policy.rev != MPA_REV_2)
		return false;
	xiw_dbg_cep(cep, "rev 2 refused, retrying with rev 1\n");
	xiw_cep_cancel_timer(cep);
	xiw_cep_sock_release(cep, true);
	cep->rev1_retried = true;
	cep->policy.rev = MPA_REV_1;
	cep->policy.p2p = false;
	rv = xiw_cep_start_connect(cep);
	if (rv) {
		xiw_dbg_cep(cep, "rev 1 retry failed to start: %d\n", rv);
		return false;
	}
	return true;
}

/* CONNECTING: the TCP handshake finished (or failed): send the Request. */
static void xiw_cep_connected(struct xiw_cep *cep)
{
	struct sock *sk = cep->sock->sk;
	struct xiw_mpa_frame req;
	int state = READ_ONCE(sk->sk_state);
	int rv;

	if (state == TCP_SYN_SENT || state == TCP_SYN_RECV)
		return;
	if (state != TCP_ESTABLISHED && state != TCP_CLOSE_WAIT) {
		rv = sock_error(sk) ?: -ECONNRESET;
		xiw_cep_connect_failed(cep, rv);
		return;
	}
	kernel_getpeername(cep->sock, (struct sockaddr *)&cep->peer_addr);
	if (xiw_mpa_request_init(&cep->policy, &req)) {
		xiw_cep_connect_failed(cep, -EINVAL);
		return;
	}
	cep->state = XIW_CEP_AWAIT_REP;
	xiw_cep_arm_mpa_timer(cep);
	rv = xiw_cep_send_frame(cep, &req, cep->pdata, cep->pdata_len);
	if (rv) {
		xiw_cep_connect_failed(cep, rv == -EINVAL ? rv : -ECONNRESET);
		return;
	}
	xiw_dbg_cep(cep, "MPA rev %u Request sent\n", req.rev);
}

/* Hand the connection to the data path; the caller raises the upcall. */
static int xiw_cep_start_rdma(struct xiw_cep *cep)
{
	struct xiw_conn_start_args args = {
		.sock = cep->sock,
		.mpa = cep->agreed,
		.initiator = cep->active,
		.stream_pos_tx = 0,	/* markers count from after MPA */
		.stream_pos_rx = 0,
		.tx_batch = cep->cfg.tx_batch,
		.soft_rnr_ms = cep->cfg.soft_rnr_ms,
		.tx_zcopy = cep->cfg.tx_zcopy,
		.offload = cep->cfg.offload,
		.cm_ops = &xiw_cm_conn_ops,
		.cm_ctx = cep,
	};
	int rv;

	rv = xiw_conn_start(cep->qp, &args);
	if (rv)
		return rv;
	xiw_cep_cancel_timer(cep);
	cep->state = XIW_CEP_RDMA;
	cep->connected = true;
	return 0;
}

/*
 * The data path runs, but iw_cm could not take the event that announces
 * it: iw_cm is owed nothing more, the QP goes to ERROR and the data path's
 * llp_close then closes the connection.
 */
static void xiw_cep_upcall_lost(struct xiw_cep *cep, int rv)
{
	pr_warn_ratelimited("%s: cep %u: iw_cm event lost (%d), closing\n",
			    cep->ibname, cep->id, rv);
	cep->connected = false;
	xiw_cep_drop_cm_id(cep);
	xiw_qp_modify(cep->qp, XIW_QP_ERROR);
}

/* AWAIT_REP: read and judge the MPA Reply; start the data path. */
static void xiw_cep_proc_reply(struct xiw_cep *cep)
{
	enum xiw_proto_err err;
	size_t consumed;
	int rv;

	rv = xiw_cep_recv_frame(cep);
	if (!rv)
		return;
	if (rv < 0) {
		/* Closed on our Request without a word: maybe rev 1 only. */
		if (rv != -ENOMEM && !cep->rx_len && xiw_cep_retry_rev1(cep))
			return;
		xiw_cep_connect_failed(cep, rv == -ENOMEM ? rv : -ECONNRESET);
		return;
	}
	err = xiw_mpa_frame_parse(cep->rx_buf, cep->rx_len, &cep->peer,
				  &consumed);
	if (!err && !cep->peer.reply)
		err = XIW_ERR_MPA_UNEXPECTED_KEY;
	if (!err && cep->peer.pdata_len > U8_MAX)
		err = XIW_ERR_MPA_PD_LEN;
	if (err) {
		xiw_warn_cep(cep, "malformed MPA Reply (%s), closing\n",
			     xiw_proto_err_name(err));
		memset(&cep->peer, 0, sizeof(cep->peer));
		xiw_cep_connect_failed(cep, -EPROTO);
		return;
	}
	if (cep->peer.reject) {
		if (cep->xdev)
			atomic64_inc(&cep->xdev->stats.mpa_rej_recv);
		/*
		 * A peer refusing revision 2 rejects with a revision 1 Reply
		 * and nothing for a ULP; private data means a ULP saw our
		 * Request and said no, which a retry would only ask again.
		 */
		if (cep->peer.rev == MPA_REV_1 && !cep->peer.pdata_len &&
		    xiw_cep_retry_rev1(cep))
			return;
		xiw_dbg_cep(cep, "MPA Request rejected by the peer\n");
		xiw_cep_connect_failed(cep, -ECONNREFUSED);
		return;
	}
	err = xiw_mpa_negotiate(&cep->policy, &cep->peer, &cep->agreed);
	if (err) {
		xiw_warn_cep(cep, "MPA negotiation failed (%s), terminating\n",
			     xiw_proto_err_name(err));
		xiw_cep_send_term(cep, err, cep->peer.crc ||
				  cep->policy.crc == XIW_MPA_CRC_PREFER ||
				  cep->policy.crc == XIW_MPA_CRC_REQUIRE);
		/* FIN behind the TERMINATE: a reset could overtake it. */
		__xiw_cep_connect_failed(cep, -EINVAL, true);
		return;
	}
	rv = xiw_cep_start_rdma(cep);
	if (rv) {
		xiw_dbg_cep(cep, "data path did not start: %d\n", rv);
		xiw_cep_connect_failed(cep, rv);
		return;
	}
	xiw_dbg_cep(cep, "MPA rev %u, crc %d, ird %u, ord %u, p2p %d\n",
		    cep->agreed.rev, cep->agreed.crc, cep->agreed.ird,
		    cep->agreed.ord, cep->agreed.p2p);
	rv = xiw_cep_upcall(cep, cep->cm_id, IW_CM_EVENT_CONNECT_REPLY, 0);
	xiw_cep_mpa_done(cep);
	if (rv)
		xiw_cep_upcall_lost(cep, rv);
}

/* ---------------------------------------------------------------------- */
/* RDMA mode and the data path's close                                    */
/* ---------------------------------------------------------------------- */

/*
 * RDMA: the TCP connection went down under the data path.  Returns the QP
 * (with a reference) that xiw_conn_llp_down() must be told about, after
 * the mutex is dropped: the data path may call llp_close from there.
 */
static struct xiw_qp *xiw_cep_check_llp(struct xiw_cep *cep, int *err)
{
	struct sock *sk = cep->sock->sk;
	int state = READ_ONCE(sk->sk_state);

	if (cep->llp_down || !cep->qp || state == TCP_ESTABLISHED)
		return NULL;
	if (state == TCP_CLOSE_WAIT) {
		*err = 0;
	} else {
		*err = sock_error(sk);
		if (!*err)
			*err = state == TCP_CLOSE ? -ECONNRESET : 0;
	}
	cep->llp_down = true;
	xiw_dbg_cep(cep, "LLP down (tcp state %d, err %d)\n", state, *err);
	if (cep->cm_id && cep->connected && !cep->disconnected) {
		cep->disconnected = true;
		xiw_cep_upcall(cep, cep->cm_id, IW_CM_EVENT_DISCONNECT, *err);
	}
	xiw_qp_get(cep->qp);
	return cep->qp;
}

/* cm_ops.llp_close: the data path is done with the socket. */
static void xiw_cm_llp_close(void *cm_ctx, bool abrupt)
{
	struct xiw_cep *cep = cm_ctx;

	might_sleep();
	mutex_lock(&cep->mutex);
	xiw_dbg_cep(cep, "llp_close(%s)\n", abrupt ? "abrupt" : "graceful");
	if (cep->cm_id && cep->connected) {
		if (!cep->disconnected) {
			cep->disconnected = true;
			xiw_cep_upcall(cep, cep->cm_id, IW_CM_EVENT_DISCONNECT,
				       0);
		}
		xiw_cep_upcall(cep, cep->cm_id, IW_CM_EVENT_CLOSE, 0);
	}
	cep->connected = false;
	xiw_cep_drop_cm_id(cep);
	xiw_cep_drop_qp(cep);
	if (abrupt) {
		xiw_cep_abort(cep);
		cep->xdev = NULL;
	} else {
		xiw_cep_close_graceful(cep);
	}
	mutex_unlock(&cep->mutex);
	xiw_cep_put(cep);	/* the data path's reference */
}

static const struct xiw_conn_cm_ops xiw_cm_conn_ops = {
	.llp_close = xiw_cm_llp_close,
};

/* ---------------------------------------------------------------------- */
/* Work and timeouts                                                      */
/* ---------------------------------------------------------------------- */

static void xiw_cep_work_fn(struct work_struct *work)
{
	struct xiw_cep *cep = container_of(work, struct xiw_cep, work);
	struct xiw_qp *down_qp = NULL;
	int down_err = 0;

	mutex_lock(&cep->mutex);
	switch (cep->state) {
	case XIW_CEP_LISTEN:
		xiw_cep_accept_conns(cep);
		break;
	case XIW_CEP_CONNECTING:
		xiw_cep_connected(cep);
		if (cep->state != XIW_CEP_AWAIT_REP)
			break;
		fallthrough;	/* the Reply may be there already */
	case XIW_CEP_AWAIT_REP:
		xiw_cep_proc_reply(cep);
		break;
	case XIW_CEP_AWAIT_REQ:
		xiw_cep_proc_request(cep);
		break;
	case XIW_CEP_RDMA:
		down_qp = xiw_cep_check_llp(cep, &down_err);
		break;
	case XIW_CEP_DRAIN:
		xiw_cep_drain(cep);
		break;
	default:
		/* RECVD_REQ waits for iw_cm; IDLE and CLOSED have no socket. */
		break;
	}
	mutex_unlock(&cep->mutex);
	if (down_qp) {
		xiw_conn_llp_down(down_qp, down_err);
		xiw_qp_put(down_qp);
	}
	xiw_cep_put(cep);
}

static void xiw_cep_timer_fn(struct work_struct *work)
{
	struct xiw_cep *cep = container_of(to_delayed_work(work),
					   struct xiw_cep, timer);

	mutex_lock(&cep->mutex);
	if (time_before(jiffies, cep->deadline))
		goto out;	/* re-armed meanwhile */
	switch (cep->state) {
	case XIW_CEP_CONNECTING:
		xiw_dbg_cep(cep, "TCP connect timed out\n");
		xiw_cep_connect_failed(cep, -ETIMEDOUT);
		break;
	case XIW_CEP_AWAIT_REP:
		xiw_warn_cep(cep, "no MPA Reply within %u ms\n",
			     cep->cfg.mpa_timeout_ms);
		memset(&cep->peer, 0, sizeof(cep->peer));
		xiw_cep_connect_failed(cep, -ETIMEDOUT);
		break;
	case XIW_CEP_AWAIT_REQ:
		xiw_warn_cep(cep, "no MPA Request within %u ms, closing\n",
			     cep->cfg.mpa_timeout_ms);
		xiw_cep_passive_abort(cep);
		break;
	case XIW_CEP_DRAIN:
		xiw_dbg_cep(cep, "no FIN from the peer, releasing\n");
		xiw_cep_sock_release(cep, false);
		cep->state = XIW_CEP_CLOSED;
		break;
	default:
		break;
	}
out:
	mutex_unlock(&cep->mutex);
	xiw_cep_put(cep);
}

/* ---------------------------------------------------------------------- */
/* iw_cm device ops                                                       */
/* ---------------------------------------------------------------------- */

/**
 * xiw_connect - iw_cm connect: start an active connection
 * @id: iw_cm id; m_local_addr and m_remote_addr are used
 * @params: QP, IRD/ORD and private data for the MPA Request
 *
 * Never waits for the network: the TCP handshake and the MPA exchange run
 * in CM work, which raises IW_CM_EVENT_CONNECT_REPLY exactly once.
 *
 * Return: 0, or -errno with no event to follow.
 */
int xiw_connect(struct iw_cm_id *id, struct iw_cm_conn_param *params)
{
	struct xiw_device *xdev = to_xiw_dev(id->device);
	struct xiw_cep *cep;
	struct xiw_qp *qp;
	int rv;

	might_sleep();
	if (params->ord > XIW_MAX_ORD_QP || params->ird > XIW_MAX_IRD_QP ||
	    params->private_data_len > MPA_MAX_PD_LEN - MPA_V2_HDR_LEN ||
	    (params->private_data_len && !params->private_data))
		return -EINVAL;
	if (xiw_sockaddr_len(&id->m_remote_addr) < 0)
		return -EAFNOSUPPORT;
	qp = xiw_qp_lookup_cm(xdev, params->qpn);
	if (!qp)
		return -EINVAL;
	cep = xiw_cep_alloc(xdev);
	if (!cep) {
		xiw_qp_put(qp);
		return -ENOMEM;
	}
	if (params->private_data_len) {
		cep->pdata = kmemdup(params->private_data,
				     params->private_data_len, GFP_KERNEL);
		if (!cep->pdata) {
			xiw_cep_put(cep);
			xiw_qp_put(qp);
			return -ENOMEM;
		}
	}
	/*
	 * This call's own reference: the connection's may be gone before
	 * we unlock, should the connect fail within the call.
	 */
	xiw_cep_get(cep);
	mutex_lock(&cep->mutex);
	cep->active = true;
	cep->qp = qp;
	xiw_dev_cfg_policy(&cep->cfg, true, &cep->policy);
	cep->policy.ird = params->ird;
	cep->policy.ord = params->ord;
	cep->pdata_len = params->private_data_len;
	memcpy(&cep->peer_addr, &id->m_remote_addr, sizeof(cep->peer_addr));
	id->add_ref(id);
	cep->cm_id = id;
	WRITE_ONCE(cep->ulp_key, id->context);
	id->provider_data = cep;

	rv = xiw_cep_start_connect(cep);
	if (rv) {
		xiw_dbg_cep(cep, "connect to %pISpc failed: %d\n",
			    &id->m_remote_addr, rv);
		id->provider_data = NULL;
		xiw_cep_drop_cm_id(cep);
		xiw_cep_drop_qp(cep);
		cep->state = XIW_CEP_CLOSED;
		mutex_unlock(&cep->mutex);
		xiw_cep_put(cep);	/* the connection's */
		xiw_cep_put(cep);	/* ours */
		return rv;
	}
	xiw_dbg_cep(cep, "connecting %pISpc -> %pISpc\n", &id->m_local_addr,
		    &id->m_remote_addr);
	mutex_unlock(&cep->mutex);
	xiw_cep_put(cep);
	return 0;
}

/**
 * xiw_accept - iw_cm accept: answer a CONNECT_REQUEST with an MPA Reply
 * @id: the iw_cm id of the new connection; provider_data is the endpoint
 * @params: QP, IRD/ORD and private data for the MPA Reply
 *
 * Sends the Reply, starts the data path and raises IW_CM_EVENT_ESTABLISHED.
 *
 * Return: 0, or -errno with the connection closed and no event to follow.
 */
int xiw_accept(struct iw_cm_id *id, struct iw_cm_conn_param *params)
{
	struct xiw_device *xdev = to_xiw_dev(id->device);
	struct xiw_cep *cep = id->provider_data;
	struct xiw_mpa_frame rep;
	enum xiw_proto_err err;
	struct xiw_qp *qp;
	int rv;

	might_sleep();
	if (!cep)
		return -EINVAL;
	mutex_lock(&cep->mutex);
	if (cep->state != XIW_CEP_RECVD_REQ) {
		/* Accepted or rejected before: iw_cm owns no reference. */
		mutex_unlock(&cep->mutex);
		return -EINVAL;
	}
	if (params->ord > XIW_MAX_ORD_QP || params->ird > XIW_MAX_IRD_QP ||
	    params->private_data_len > MPA_MAX_PD_LEN - MPA_V2_HDR_LEN ||
	    (params->private_data_len && !params->private_data)) {
		rv = -EINVAL;
		goto err_abort;
	}
	if (!xiw_cep_sock_established(cep)) {
		rv = -ECONNRESET;
		goto err_abort;
	}
	qp = xiw_qp_lookup_cm(xdev, params->qpn);
	if (!qp) {
		rv = -EINVAL;
		goto err_abort;
	}
	cep->qp = qp;
	cep->policy.ird = params->ird;
	cep->policy.ord = params->ord;
	err = xiw_mpa_negotiate(&cep->policy, &cep->peer, &cep->agreed);
	if (err) {
		xiw_warn_cep(cep, "MPA negotiation with the ULP's IRD/ORD failed (%s)\n",
			     xiw_proto_err_name(err));
		xiw_cep_send_reject(cep, err, NULL, 0);
		xiw_cep_drop_qp(cep);
		xiw_cep_close_graceful(cep);
		rv = -EINVAL;
		goto err_unlock;
	}
	if (xiw_mpa_reply_init(&cep->policy, &cep->peer, &cep->agreed, XIW_OK,
			       &rep)) {
		rv = -EINVAL;
		goto err_qp;
	}
	rv = xiw_cep_send_frame(cep, &rep, params->private_data,
				params->private_data_len);
	if (rv)
		goto err_qp;

	id->add_ref(id);
	cep->cm_id = id;
	WRITE_ONCE(cep->ulp_key, id->context);
	rv = xiw_cep_start_rdma(cep);
	if (rv) {
		xiw_dbg_cep(cep, "data path did not start: %d\n", rv);
		xiw_cep_drop_cm_id(cep);
		goto err_qp;
	}
	xiw_dbg_cep(cep, "MPA rev %u, crc %d, ird %u, ord %u, p2p %d\n",
		    cep->agreed.rev, cep->agreed.crc, cep->agreed.ird,
		    cep->agreed.ord, cep->agreed.p2p);
	/* iw_cm's reference becomes the data path's. */
	rv = xiw_cep_upcall(cep, id, IW_CM_EVENT_ESTABLISHED, 0);
	xiw_cep_mpa_done(cep);
	if (rv)
		xiw_cep_upcall_lost(cep, rv);
	mutex_unlock(&cep->mutex);
	return rv;

err_qp:
	xiw_cep_drop_qp(cep);
err_abort:
	xiw_cep_abort(cep);
err_unlock:
	cep->xdev = NULL;
	mutex_unlock(&cep->mutex);
	xiw_cep_put(cep);	/* iw_cm's reference */
	return rv;
}

/**
 * xiw_reject - iw_cm reject: refuse a CONNECT_REQUEST
 * @id: the iw_cm id of the new connection; provider_data is the endpoint
 * @pdata: private data for the MPA Reply
 * @pdata_len: its length
 *
 * Sends an MPA Reply with the R flag and closes the connection gracefully.
 *
 * Return: 0, or -EINVAL if the request was answered already.
 */
int xiw_reject(struct iw_cm_id *id, const void *pdata, u8 pdata_len)
{
	struct xiw_cep *cep = id->provider_data;

	might_sleep();
	if (!cep)
		return -EINVAL;
	mutex_lock(&cep->mutex);
	if (cep->state != XIW_CEP_RECVD_REQ) {
		mutex_unlock(&cep->mutex);
		return -EINVAL;
	}
	if (pdata_len && !pdata)
		pdata_len = 0;
	xiw_dbg_cep(cep, "rejected by the ULP\n");
	if (xiw_cep_sock_established(cep)) {
		xiw_cep_send_reject(cep, XIW_ERR_MPA_REJECTED, pdata, pdata_len);
		xiw_cep_close_graceful(cep);
	} else {
		xiw_cep_abort(cep);
		cep->xdev = NULL;
	}
	mutex_unlock(&cep->mutex);
	xiw_cep_put(cep);	/* iw_cm's reference */
	return 0;
}

/**
 * xiw_create_listen - iw_cm create_listen: listen on m_local_addr
 * @id: iw_cm id
 * @backlog: TCP backlog; also bounds the connections that may wait for
 *	their MPA Request
 *
 * A wildcard address is narrowed to the device's netdev, so that every
 * device can listen on the same port.
 *
 * Return: 0 or -errno.
 */
int xiw_create_listen(struct iw_cm_id *id, int backlog)
{
	struct xiw_device *xdev = to_xiw_dev(id->device);
	struct sockaddr_storage *laddr = &id->m_local_addr;
	int alen = xiw_sockaddr_len(laddr);
	struct socket *sock;
	struct xiw_cep *cep;
	int ifindex = 0;
	int rv;

	might_sleep();
	if (alen < 0)
		return alen;
	rv = xiw_sock_create(xdev, laddr->ss_family, &sock, &ifindex);
	if (rv)
		return rv;
	sock_set_reuseaddr(sock->sk);
	if (laddr->ss_family == AF_INET6 && id->afonly) {
		rv = ip6_sock_set_v6only(sock->sk);
		if (rv)
			goto err_sock;
	}
	if (xiw_sockaddr_any(laddr)) {
		rv = sock_bindtoindex(sock->sk, ifindex, true);
		if (rv)
			goto err_sock;
	}
	rv = kernel_bind(sock, xiw_sockaddr(laddr), alen);
	if (rv)
		goto err_sock;
	rv = kernel_listen(sock, backlog);
	if (rv)
		goto err_sock;

	cep = xiw_cep_alloc(xdev);
	if (!cep) {
		rv = -ENOMEM;
		goto err_sock;
	}
	mutex_lock(&cep->mutex);
	cep->state = XIW_CEP_LISTEN;
	cep->max_children = clamp_t(int, backlog, XIW_CM_PENDING_MIN,
				    XIW_CM_PENDING_MAX);
	memcpy(&cep->peer_addr, laddr, sizeof(cep->peer_addr));
	/* The creator's reference is the iw_cm id's until destroy_listen. */
	id->add_ref(id);
	cep->cm_id = id;
	WRITE_ONCE(cep->ulp_key, id->context);
	id->provider_data = cep;
	xiw_cep_sock_attach(cep, sock, NULL);
	/* Connections that completed before our callback was in. */
	xiw_cep_queue_work(cep);
	xiw_dbg_cep(cep, "listening on %pISpc (ifindex %d)\n", laddr,
		    xiw_sockaddr_any(laddr) ? ifindex : 0);
	mutex_unlock(&cep->mutex);
	return 0;

err_sock:
	sock_release(sock);
	pr_debug("%s: listen on %pISpc failed: %d\n",
		 dev_name(&xdev->base_dev.dev), laddr, rv);
	return rv;
}

/**
 * xiw_destroy_listen - iw_cm destroy_listen: stop listening
 * @id: iw_cm id given to xiw_create_listen()
 *
 * Connections still waiting for their MPA Request are reset; those
 * already reported with CONNECT_REQUEST belong to iw_cm and live on.
 * No event reaches @id after this returns.
 *
 * Return: 0.
 */
int xiw_destroy_listen(struct iw_cm_id *id)
{
	struct xiw_cep *cep = id->provider_data;
	struct xiw_cep *child, *tmp;
	LIST_HEAD(pending);

	might_sleep();
	if (!cep)
		return 0;
	mutex_lock(&cep->mutex);
	if (cep->state == XIW_CEP_LISTEN) {
		xiw_cep_sock_release(cep, false);
		list_splice_init(&cep->children, &pending);
		cep->nr_children = 0;
		cep->state = XIW_CEP_CLOSED;
	}
	id->provider_data = NULL;
	xiw_cep_drop_cm_id(cep);
	cep->xdev = NULL;
	xiw_dbg_cep(cep, "listener destroyed\n");
	mutex_unlock(&cep->mutex);

	list_for_each_entry_safe(child, tmp, &pending, listen_entry) {
		mutex_lock(&child->mutex);
		list_del_init(&child->listen_entry);
		if (child->listener == cep) {
			child->listener = NULL;
			xiw_cep_put(cep);
		}
		if (child->state == XIW_CEP_AWAIT_REQ)
			xiw_cep_abort(child);
		mutex_unlock(&child->mutex);
		xiw_cep_put(child);	/* the list's reference */
	}
	xiw_cep_put(cep);	/* the iw_cm id's reference */
	return 0;
}

/**
 * xiw_qp_add_ref - iw_cm add_ref: take a QP reference
 * @base_qp: QP
 */
void xiw_qp_add_ref(struct ib_qp *base_qp)
{
	xiw_qp_get(to_xiw_qp(base_qp));
}

/**
 * xiw_qp_rem_ref - iw_cm rem_ref: drop a QP reference
 * @base_qp: QP
 */
void xiw_qp_rem_ref(struct ib_qp *base_qp)
{
	xiw_qp_put(to_xiw_qp(base_qp));
}

/**
 * xiw_get_base_qp - iw_cm get_qp: QP by number
 * @ibdev: device
 * @qpn: QP number
 *
 * Called under iw_cm's spinlock, in the context of the connect or accept
 * that named the QP; iw_cm takes its reference with xiw_qp_add_ref()
 * right after.
 *
 * Return: the QP, or NULL if there is none or the caller may not use it
 * (xiw_qp_lookup_cm()): iw_cm then fails the call with -EINVAL.
 */
struct ib_qp *xiw_get_base_qp(struct ib_device *ibdev, int qpn)
{
	struct xiw_qp *qp;

	if (qpn < 0)
		return NULL;
	qp = xiw_qp_lookup_cm(to_xiw_dev(ibdev), qpn);
	if (!qp)
		return NULL;
	xiw_qp_put(qp);
	return &qp->base_qp;
}

/* ---------------------------------------------------------------------- */
/* Module set-up                                                          */
/* ---------------------------------------------------------------------- */

/**
 * xiw_mpa_fill_res - the agreed MPA parameters as restrack driver details
 * @msg: netlink message, inside the driver nest
 * @mpa: the parameters
 *
 * Return: 0 or -EMSGSIZE.
 */
int xiw_mpa_fill_res(struct sk_buff *msg, const struct xiw_mpa_params *mpa)
{
	const char *rtr = xiw_rtr_name(mpa->p2p ? mpa->rtr : 0);

	if (rdma_nl_put_driver_u32(msg, "mpa_rev", mpa->rev) ||
	    rdma_nl_put_driver_u32(msg, "mpa_crc", mpa->crc) ||
	    rdma_nl_put_driver_u32(msg, "mpa_markers_tx", mpa->markers_tx) ||
	    rdma_nl_put_driver_u32(msg, "mpa_markers_rx", mpa->markers_rx) ||
	    rdma_nl_put_driver_u32(msg, "mpa_enhanced", mpa->enhanced) ||
	    rdma_nl_put_driver_string(msg, "mpa_p2p_rtr", rtr))
		return -EMSGSIZE;
	return 0;
}

/**
 * xiw_fill_res_cm_id_entry - driver details for `rdma res show cm_id -dd`
 * @msg: netlink message
 * @id: an rdma_cm id bound to an xiw device
 *
 * rdma_cm makes itself the context of the iw_cm ids it creates, and its
 * rdma_cm_id is the first member of that context: the endpoints whose
 * iw_cm id has @id as context are @id's.  Details of the endpoint: its
 * number, CM state, role and, once negotiated, the MPA parameters.
 *
 * Return: 0 or -EMSGSIZE.
 */
int xiw_fill_res_cm_id_entry(struct sk_buff *msg, struct rdma_cm_id *id)
{
	struct nlattr *nest;
	struct xiw_cep *cep;
	int rv = 0;

	nest = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	spin_lock_irq(&xiw_cep_all_lock);
	list_for_each_entry(cep, &xiw_cep_all, all_entry) {
		enum xiw_cep_state state = READ_ONCE(cep->state);

		if (READ_ONCE(cep->ulp_key) != (void *)id)
			continue;
		if (rdma_nl_put_driver_u32(msg, "cep", cep->id) ||
		    rdma_nl_put_driver_string(msg, "cep_state",
					      xiw_cep_state_name(state)) ||
		    rdma_nl_put_driver_string(msg, "cep_role",
					      state == XIW_CEP_LISTEN ? "listener" :
					      cep->active ? "active" : "passive")) {
			rv = -EMSGSIZE;
			break;
		}
		if (state == XIW_CEP_RDMA &&
		    xiw_mpa_fill_res(msg, &cep->agreed)) {
			rv = -EMSGSIZE;
			break;
		}
		break;
	}
	spin_unlock_irq(&xiw_cep_all_lock);
	if (rv) {
		nla_nest_cancel(msg, nest);
		return rv;
	}
	nla_nest_end(msg, nest);
	return 0;
}

/**
 * xiw_cm_dev_gone - fail the active connects of a device whose netdev goes
 * @xdev: the device; its netdev is already detached (xiw_sock_create()
 *	refuses new sockets), and the caller holds a device reference
 *
 * ib_core unregisters the device next, and that waits until every cm_id
 * on it is destroyed; iw_cm's destroy of an id waits for its connect's
 * CONNECT_REPLY.  A connect through the vanished netdev can only time out
 * (TCP connect 30 s, MPA Reply mpa_timeout_ms), and the netdev's removal
 * would wait that long for the reference ib_core holds on it.  So each is
 * failed now with -ENODEV (RDMA_CM_EVENT_CONNECT_ERROR) and reset.
 *
 * Process context, under rtnl_lock (the netdev notifier): endpoint mutexes
 * never wait for rtnl_lock.
 */
void xiw_cm_dev_gone(struct xiw_device *xdev)
{
	struct xiw_cep *cep, *held = NULL;
	int failed = 0;

	might_sleep();
	spin_lock_irq(&xiw_cep_all_lock);
	list_for_each_entry(cep, &xiw_cep_all, all_entry) {
		/*
		 * Only a hint, checked again under the mutex: @active is set
		 * once, and @xdev only ever changes to NULL.
		 */
		if (!data_race(cep->active && cep->xdev == xdev) ||
		    !kref_get_unless_zero(&cep->ref))
			continue;
		spin_unlock_irq(&xiw_cep_all_lock);
		if (held)
			xiw_cep_put(held);
		/* Our reference keeps @cep, and so the walk, on the list. */
		held = cep;
		mutex_lock(&cep->mutex);
		if (cep->xdev == xdev && (cep->state == XIW_CEP_CONNECTING ||
					  cep->state == XIW_CEP_AWAIT_REP)) {
			xiw_dbg_cep(cep, "device gone while connecting\n");
			xiw_cep_connect_failed(cep, -ENODEV);
			failed++;
		}
		mutex_unlock(&cep->mutex);
		spin_lock_irq(&xiw_cep_all_lock);
	}
	spin_unlock_irq(&xiw_cep_all_lock);
	if (held)
		xiw_cep_put(held);
	if (failed)
		ibdev_info(&xdev->base_dev,
			   "netdev gone: connects in progress failed: %d\n",
			   failed);
}

/**
 * xiw_cm_init - create the CM workqueue
 *
 * Return: 0 or -ENOMEM.
 */
int xiw_cm_init(void)
{
	xiw_cm_wq = alloc_workqueue("xiw_cm", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	return xiw_cm_wq ? 0 : -ENOMEM;
}

/**
 * xiw_cm_exit - wait for every endpoint to go, then destroy the workqueue
 *
 * Called after all devices are unregistered: what is left are endpoints
 * finishing a graceful close or a timeout.
 */
void xiw_cm_exit(void)
{
	struct xiw_cep *cep;

	while (!wait_event_timeout(xiw_cep_gone, list_empty_careful(&xiw_cep_all),
				   10 * HZ)) {
		spin_lock_irq(&xiw_cep_all_lock);
		list_for_each_entry(cep, &xiw_cep_all, all_entry)
			pr_info("waiting for cep %u (%s) of %s\n", cep->id,
				xiw_cep_state_name(cep->state), cep->ibname);
		spin_unlock_irq(&xiw_cep_all_lock);
	}
	destroy_workqueue(xiw_cm_wq);
}
