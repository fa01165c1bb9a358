/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xiw data path internals: the state of one connected QP, shared by
 * xiw_conn.c (life cycle, socket callbacks), xiw_qp_tx.c and xiw_qp_rx.c.
 */
#ifndef _XIW_DP_H
#define _XIW_DP_H

#include <linux/completion.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/sock.h>

#include "xiw.h"
#include "xiw_conn.h"
#include <linux/mutex.h>
#include <linux/bvec.h>
#include <linux/skbuff.h>

#include "xiw_mem.h"
#include "xiw_proto.h"

/*
 * The framing buffer: a batch of FPDUs, or one FPDU as large as fits
 * (ULPDU_Length, ULPDU, pad, CRC, markers).  It grows to 64 KiB at most,
 * and exactly that much: the slab rounds an allocation just past it up to
 * 128 KiB.  The largest ULPDU an MSS of 64 KiB would allow is cut down to
 * what fits, a few hundred octets less: MULPDU is an upper bound, not a
 * size every FPDU must have.
 */
#define XIW_TX_BUF_LEN		SZ_64K
/*
 * Its size when first allocated (a 1 KiB message fits, framed); it doubles
 * as FPDUs and batches need.
 */
#define XIW_TX_BUF_MIN		SZ_2K
/* The payload bounce buffer's first size, for small messages. */
#define XIW_TX_PAYLOAD_MIN	512

/**
 * struct xiw_orq_entry - one of our RDMA Read or Atomic Requests awaiting
 *	its response
 * @sqe: the READ or atomic work request (its sge[0] is the data sink)
 * @rtr: a zero-length Read sent as P2P RTR: completes nothing
 * @atomic: an Atomic Request, answered by an Atomic Response
 * @req_id: Atomic Request Identifier
 * @received: response octets placed so far
 */
struct xiw_orq_entry {
	struct xiw_ksqe sqe;
	bool rtr;
	bool atomic;
	u32 req_id;
	u32 received;
};

/**
 * struct xiw_irq_entry - a peer's RDMA Read or Atomic Request being served
 * @req: the Read Request as received; its source is looked up again for
 *	every response segment, no MR reference is held in between
 * @msn: its DDP MSN (queue 1), for the header a TERMINATE copies
 * @sent: response octets transmitted so far
 * @atomic: an Atomic Request, already executed: send its response
 * @req_id: Atomic Request Identifier to echo
 * @orig: the target's value before the atomic
 */
struct xiw_irq_entry {
	struct xiw_read_req req;
	u32 msn;
	u32 sent;
	bool atomic;
	u32 req_id;
	u64 orig;
};

/**
 * struct xiw_rx_untagged - receive state of one untagged DDP queue
 * @msn: MSN of the next message expected
 * @mo: octets of the current message placed
 * @active: @rqe is held for message @msn (Send queue only)
 * @rqe: the receive work request the current Send lands in
 * @buf_len: total length of @rqe's SGEs
 */
struct xiw_rx_untagged {
	u32 msn;
	u32 mo;
	bool active;
	struct xiw_krqe rqe;
	u32 buf_len;
};

/*
 * Transmitted send work requests whose completion may still wait: at most
 * this many per connection, at least XIW_TX_PEND_MIN, else the send queue
 * depth rounded up to a power of two.
 */
#define XIW_TX_PEND		128
#define XIW_TX_PEND_MIN		16

/* Page pieces of one FPDU payload framed from pages (64 KiB, a straddle). */
#define XIW_TX_ZC_VECS		20

/* Page pieces a piece of tx_buf may make (vmalloc: each page its own). */
#define XIW_TX_KMEM_VECS	(XIW_TX_BUF_LEN / PAGE_SIZE + 1)

/*
 * Pieces of one batch that TCP copies from (tx_buf's and the consumer's
 * pages), and so one sendmsg(): 2 KiB of bio_vecs per connection that
 * sends large messages.
 */
#define XIW_TX_VECS		128

/*
 * The sink and source STag of the zero-length Read sent as P2P RTR: any
 * non-zero value, since peers reject STag 0; never an xiw MR's (their
 * index is never 0, so their STags are 0x100 and up).
 */
#define XIW_RTR_READ_STAG	1

/* Smallest FPDU payload sent zero-copy; below it a copy is cheaper. */
#define XIW_TX_ZC_MIN		8192

/*
 * Smallest FPDU payload of a kernel QP framed around the consumer's pages
 * in a pages batch (TCP copies it from them); below it, and below
 * XIW_TX_ZC_MIN for a user QP, the engine copies it into tx_buf.
 */
#define XIW_TX_PC_MIN		4096

struct xiw_tx_pq;

/**
 * struct xiw_tx_pend - a send work request that left the transmit engine
 *	(or is being framed zero-copy) and may not complete yet
 * @ubuf: zero-copy notification: its reference count is one per skb that
 *	holds the request's pages plus one while the engine frames it; the
 *	last put calls xiw_tx_zc_put()
 * @pq: the queue this entry belongs to
 * @id: work request id
 * @opcode: XIW_OP_* of the work request
 * @flags: XIW_WQE_* of the work request
 * @bytes: payload octets
 * @status: completion status, once @framed
 * @framed: the engine is done with the request
 * @zc: @ubuf is live; the entry stays until its last reference is put
 * @held: done while a pages batch was open, which may hold the request's
 *	pages: the entry stays until the batch is in the socket
 * @flushed: a flush already wrote the completion
 */
struct xiw_tx_pend {
	struct ubuf_info ubuf;
	struct xiw_tx_pq *pq;
	u64 id;
	u8 opcode;
	u16 flags;
	u32 bytes;
	enum xiw_wc_status status;
	bool framed;
	bool zc;
	bool held;
	bool flushed;
};

/**
 * struct xiw_tx_pq - completions of transmitted send work requests, kept
 *	in posting order while zero-copy requests wait for the stack to let
 *	go of their pages
 * @ref: one for the connection, one per live zero-copy notification (skbs
 *	can outlive the connection)
 * @lock: guards the fields below and the entries; irqsave, any context;
 *	nests inside xiw_conn.lock and outside the CQ lock
 * @qp: the QP completions go to; NULL once detached
 * @conn: the connection to kick when an entry frees; NULL once detached
 * @head: oldest entry
 * @count: entries in use; written under @lock, and read without it by
 *	the transmit engine, its only adder (see xiw_tx_sqe_done())
 * @stalled: the engine waits for a free entry
 * @copied: the stack copied the pages of a zero-copy FPDU (it copies
 *	what it delivers to a local socket); set by the notifier, read by
 *	the engine, never cleared (WRITE_ONCE/READ_ONCE)
 * @nslots: entries in @slot (constant)
 * @slot: the ring
 */
struct xiw_tx_pq {
	struct kref ref;
	spinlock_t lock;		/* the entries, counts */
	struct xiw_qp *qp;
	struct xiw_conn *conn;
	u32 head;
	u32 count;
	bool stalled;
	bool copied;
	u32 nslots;
	struct xiw_tx_pend slot[] __counted_by(nslots);
};

/**
 * enum xiw_conn_state - where a connection is in its life
 * @XIW_CONN_STARTING: the socket's callbacks are taken, the start has
 *	not finished: they read nothing and kick nothing
 * @XIW_CONN_RUNNING: both engines run
 * @XIW_CONN_PEER_FIN: the peer's FIN came while soft-RNR holds a Send:
 *	the receive engine settles it and reads what follows, then the
 *	connection closes in order
 * @XIW_CONN_TERM_QUEUED: the first error is recorded; the transmit engine
 *	finishes the FPDU it is in and sends our TERMINATE next
 * @XIW_CONN_TERM_OUT: our TERMINATE is built and going into the socket;
 *	nothing else is sent
 * @XIW_CONN_CLOSE_FIN: close decided, the stream ends with a FIN;
 *	close_work is queued
 * @XIW_CONN_CLOSE_RST: close decided, the stream ends with a reset;
 *	close_work is queued
 * @XIW_CONN_CLOSED: close_work has stopped the engines and decided how
 *	the stream ends; llp_close follows
 *
 * Design.rst, "A connection's life", has the transitions.
 */
enum xiw_conn_state {
	XIW_CONN_STARTING,
	XIW_CONN_RUNNING,
	XIW_CONN_PEER_FIN,
	XIW_CONN_TERM_QUEUED,
	XIW_CONN_TERM_OUT,
	XIW_CONN_CLOSE_FIN,
	XIW_CONN_CLOSE_RST,
	XIW_CONN_CLOSED,
	XIW_CONN_NUM_STATES
};

/**
 * enum xiw_conn_ev - what moves a connection (xiw_conn_event())
 * @XIW_CEV_STARTED: xiw_conn_start() has published it
 * @XIW_CEV_QP_CLOSING: the QP moved to CLOSING (verbs, iw_cm, the CM),
 *	or from CLOSING to ERROR
 * @XIW_CEV_QP_ERROR: the QP moved to ERROR from RTS or TERMINATE
 * @XIW_CEV_DESTROY: destroy_qp withdrew it
 * @XIW_CEV_PEER_FIN: the peer's FIN (the QP in RTS or CLOSING)
 * @XIW_CEV_LLP_ERR: the socket failed (the CM, the transmit engine)
 * @XIW_CEV_LOCAL_ERR: a work request failed locally (a completion in
 *	error, the engine could not build an FPDU), or the QP could not
 *	enter TERMINATE for a TERMINATE due
 * @XIW_CEV_TERMINATE: a TERMINATE is due: a protocol error of either
 *	engine, or verbs moved the QP to TERMINATE (xiw_conn_fail())
 * @XIW_CEV_TERM_BUILT: the transmit engine built our TERMINATE
 * @XIW_CEV_TERM_SENT: our TERMINATE is wholly in the socket
 * @XIW_CEV_TERM_TIMEOUT: term_work: our TERMINATE is not wholly in the
 *	socket XIW_CONN_TERM_TIMEOUT after the error
 * @XIW_CEV_PEER_TERM: the peer's TERMINATE arrived
 * @XIW_CEV_RX_RESUMED: rnr_work: no Send is held any more
 * @XIW_CEV_COMMIT: close_work has stopped the engines
 * @XIW_CEV_NUM: number of events
 */
enum xiw_conn_ev {
	XIW_CEV_STARTED,
	XIW_CEV_QP_CLOSING,
	XIW_CEV_QP_ERROR,
	XIW_CEV_DESTROY,
	XIW_CEV_PEER_FIN,
	XIW_CEV_LLP_ERR,
	XIW_CEV_LOCAL_ERR,
	XIW_CEV_TERMINATE,
	XIW_CEV_TERM_BUILT,
	XIW_CEV_TERM_SENT,
	XIW_CEV_TERM_TIMEOUT,
	XIW_CEV_PEER_TERM,
	XIW_CEV_RX_RESUMED,
	XIW_CEV_COMMIT,
	XIW_CEV_NUM
};

/*
 * What an edge of the table asks for.  xiw_conn_event() does the first
 * four inside conn->lock and the next five after it; the last two are
 * for its caller.
 */
#define XIW_CA_CLOSE		BIT(0)	/* queue close_work */
#define XIW_CA_RECORD		BIT(1)	/* record the TERMINATE's cause */
#define XIW_CA_TERM_TIMER	BIT(2)	/* arm term_work */
#define XIW_CA_RNR_NOW		BIT(3)	/* run rnr_work now */
#define XIW_CA_RAISE		BIT(4)	/* the QP's asynchronous error event */
#define XIW_CA_QP_TERMINATE	BIT(5)	/* move the QP to TERMINATE */
#define XIW_CA_QP_CLOSING	BIT(6)	/* move the QP to CLOSING */
#define XIW_CA_QP_ERROR		BIT(7)	/* move the QP to ERROR (flush) */
#define XIW_CA_KICK		BIT(8)	/* run the transmit engine */
#define XIW_CA_SEND_TERM	BIT(9)	/* the engine sends the TERMINATE built */
#define XIW_CA_ABRUPT		BIT(10)	/* the stream ends with a reset */

/* The actions of the edge into TERM_QUEUED. */
#define XIW_CA_TERM_QUEUE	(XIW_CA_RECORD | XIW_CA_TERM_TIMER | \
				 XIW_CA_RAISE | XIW_CA_QP_TERMINATE | \
				 XIW_CA_KICK)

/**
 * struct xiw_conn_cause - why a TERMINATE is due (XIW_CEV_TERMINATE)
 * @err: the error; its TERMINATE triplet is sent
 * @hdr: octets of the offending FPDU from ULPDU_Length on, or NULL
 * @hdr_len: octets at @hdr
 */
struct xiw_conn_cause {
	enum xiw_proto_err err;
	const u8 *hdr;
	size_t hdr_len;
};

/**
 * struct xiw_conn_step - one cell of the connection's table
 * @state: the state after the event
 * @act: XIW_CA_* actions
 */
struct xiw_conn_step {
	enum xiw_conn_state state;
	u32 act;
};

/*
 * How long a TERMINATE may wait for room in the socket (behind an FPDU
 * the peer's closed window holds back) before the connection is reset.
 */
#define XIW_CONN_TERM_TIMEOUT	(5 * HZ)

/**
 * struct xiw_conn - the data path of one connected QP
 * @qp: the QP (its tctx points back here)
 * @sock: the TCP socket, owned by the CM
 * @sku: the CM's sk_user_data, through which callbacks find us
 * @mpa: agreed MPA parameters
 * @initiator: active side of the connection
 * @ord: outbound Read depth in use
 * @ird: inbound Read depth in use
 * @cm_ops: CM hooks
 * @cm_ctx: argument of @cm_ops
 * @saved_data_ready: socket callback replaced by xiw_conn_start()
 * @saved_write_space: socket callback replaced by xiw_conn_start()
 * @state: enum xiw_conn_state; written by xiw_conn_event() only, under
 *	@lock, read anywhere with READ_ONCE()
 * @tx_cpu: CPU @tx_work runs on; a streaming doorbell may move it away
 *	from the poster's CPU, a kernel consumer that waits for each post
 *	brings it to the poster's (READ_ONCE/WRITE_ONCE)
 * @tx_kposts: a kernel QP's posts since its worker last ran
 * @tx_kstream: the worker's last run took more than one post of a kernel
 *	QP: its consumer streams (xiw_conn_kick_tx_kernel())
 * @tx_work: transmit engine (xiw_qp_tx.c)
 * @tx_mutex: held while the transmit engine runs, by @tx_work or by the
 *	doorbell of a user QP running it in the caller's context; guards the
 *	transmit state below
 * @tx_deferred: bit 0 set while a kick of the engine waits in a CPU's
 *	deferral list (xiw_conn_tx_defer()), which holds a @users reference
 * @tx_defer_entry: entry in that list; only its CPU touches it
 * @close_work: teardown, ends in @cm_ops->llp_close
 * @dev_entry: entry in the device's @conn_list, from xiw_conn_start()
 *	until teardown gives the socket back
 * @rnr_work: soft-RNR: retries the Send that holds the receive engine
 * @term_work: resets the connection when our TERMINATE is not wholly in
 *	the socket XIW_CONN_TERM_TIMEOUT after the error
 * @offload: the offload backend (its module referenced); never NULL
 * @oc: what @offload knows of the connection
 * @offload_started: @offload->conn_start took the connection and
 *	@offload->conn_stop is still due
 * @users: the published pointer's reference, xiw_conn_start()'s until it
 *	returns, and one per hook running on the connection through a QP
 *	reference (xiw_conn_from_qp())
 * @users_gone: completed when @users drops to zero; detach waits for it
 * @rcu: frees the structure a grace period after detach: a hook may be
 *	looking at @users of a connection just withdrawn
 *
 * @copy_lock: held by an engine around every copy into or out of the
 *	buffers of a work request it owns -- a Send into its receive, a Read
 *	or Atomic Response into the sink of the ORQ's head, the gather or
 *	zero-copy walk of @tx_sqe -- and by the two that complete such a
 *	request from outside the engine: the flush hook and the ORQ flush of
 *	xiw_tx_sqe_fail().  So no work request completes while it is being
 *	copied.  The engine tests that it still owns the request inside the
 *	section (@rx_ut's active, @orq_count, @tx_sqe_active); those two
 *	withdraw ownership inside theirs, of the last two under @lock too.
 *	The receive of a Send is owned under this lock alone: @rx_ut[0]'s
 *	active and rqe change only inside it, where the engine takes the
 *	receive off its ring and completes it.  Bottom halves off,
 *	interrupts on: taken in process and softirq context only, never
 *	with interrupts off; nests outside @lock, the QP's @rq_lock and the
 *	SRQ lock
 * @lock: guards @orq*, @irq*, @term_*, @rtr_*, the ownership of @tx_sqe
 *	(@tx_sqe_active, @tx_pend); held for bookkeeping only, never over a
 *	payload copy; irqsave, any context (a kernel post_recv may take it
 *	in hard irq through xiw_conn_rnr_kick()); nests outside the QP's
 *	@sq_lock: a send request leaves its ring and becomes the engine's
 *	in one section
 * @orq: ring of @ord outstanding Read Requests
 * @orq_head: oldest entry
 * @orq_count: entries in use
 * @irq: ring of @ird inbound Read Requests
 * @irq_head: oldest entry
 * @irq_count: entries in use
 * @term_err: error to report in a TERMINATE, XIW_OK if none; these three
 *	are written once, on the edge into TERM_QUEUED
 * @term_hdr: octets of the offending FPDU (ULPDU_Length and headers)
 * @term_hdr_len: octets in @term_hdr
 * @rtr_tx: P2P RTR still to be sent (initiator)
 * @rtr_rx: waiting for the initiator's RTR (responder); transmit holds
 * @tx_pq: ordered completions of transmitted work requests
 * @tx_pend: @tx_sqe's entry in @tx_pq, if it has one
 *
 * Transmit state, used by the transmit engine under @tx_mutex only:
 * @tx: FPDU framing state
 * @tx_buf: the FPDU being handed to TCP (allocated on first use, as is
 *	@tx_payload; grown from XIW_TX_BUF_MIN up to XIW_TX_BUF_LEN as the
 *	FPDUs and batches framed need it)
 * @tx_buf_cap: size of @tx_buf
 * @tx_len: octets in @tx_buf: one FPDU, or a batch of them
 * @tx_off: octets of @tx_buf TCP took
 * @tx_last_len: length of the FPDU built last
 * @tx_hdr: header of the segment xiw_tx_build_sqe() builds: here, not on
 *	its stack, which the kernel clears on every call where it is built
 *	with CONFIG_INIT_STACK_ALL_ZERO; only the fields of the segment's
 *	opcode are set
 * @tx_mss: the TCP MSS @tx_mulpdu was derived from (software MULPDU only)
 * @tx_mulpdu: MULPDU of @tx_mss, derived again when the MSS changes
 * @tx_more: the message of the FPDU built last goes on (batching)
 * @tx_payload: bounce buffer for one segment's payload when markers are
 *	on (grown to the largest segment framed so far); without markers the
 *	payload is copied straight into @tx_buf
 * @tx_payload_cap: size of @tx_payload
 * @tx_sqe: the send work request in progress
 * @tx_sqe_active: @tx_sqe is owned by the transmit engine
 * @tx_sqe_len: total payload of @tx_sqe
 * @tx_sqe_off: payload octets of @tx_sqe framed so far
 * @tx_vec: XIW_TX_VECS pieces, allocated by the first FPDU framed from the
 *	consumer's pages: a zero-copy FPDU's payload (@tx_zc_n), or a batch
 *	that TCP copies from (@tx_pc_n)
 * @tx_zc_n: payload pieces of a zero-copy FPDU in @tx_vec, sent after
 *	@tx_buf (which then holds ULPDU_Length and the headers only), each
 *	page referenced until TCP has taken the whole payload; 0 for none
 * @tx_zc_len: payload octets of the zero-copy FPDU
 * @tx_zc_off: payload octets TCP took
 * @tx_pc_n: pieces of @tx_vec in a batch with FPDUs framed around the
 *	consumer's pages, which TCP copies from in one call: the pages
 *	(each referenced until the batch is in the socket) and, in stream
 *	order between them, pieces of @tx_buf (headers, trailers, copied
 *	FPDUs), flagged in @tx_pc_kmem; 0 for a batch wholly in @tx_buf
 * @tx_pc_kmem: which pieces of @tx_vec are @tx_buf's (no page reference)
 * @tx_pc_kstart: @tx_buf octets before this are described in @tx_vec
 * @tx_pc_len: octets the @tx_pc_n pieces describe
 * @tx_pc_off: octets of them TCP took
 * @tx_pc_fpdus: FPDUs of the batch framed around pages
 * @tx_pc_closed: the batch's last pieces are in @tx_vec; nothing joins it
 * @tx_pc_held: entries of @tx_pq wait for the batch (xiw_tx_pend.held)
 * @tx_trl: pad and CRC of a zero-copy FPDU, sent last
 * @tx_trl_len: octets in @tx_trl
 * @tx_trl_off: octets of @tx_trl TCP took
 * @tx_complete: complete @tx_sqe once @tx_buf is out
 * @tx_imm: the Immediate Data message of a WRITE_WITH_IMM @tx_sqe is next
 * @tx_atomic_id: Request Identifier of our next Atomic Request
 * @tx_msn: next MSN per untagged queue we send on (QN 0 to 3)
 * @tx_batch: most FPDUs handed to TCP in one call (device setting)
 * @tx_zcopy: enum xiw_tx_zcopy, from the device setting; AUTO turns OFF
 *	once @tx_pq's @copied is seen
 *
 * Receive state, used under the socket lock by the data_ready path:
 * @rx: deframer
 * @rx_ut: untagged queues 0 (Send) and 1 (Read Request)
 * @rx_term_msn: next expected MSN of the Terminate queue
 * @rx_atomic_msn: next expected MSN of the Atomic Response queue
 * @rx_term_body: body of a TERMINATE being received
 * @rx_unused: octets of the stream piece being fed that the deframer did
 *	not take because the engine stalled
 * @rx_stalled: soft-RNR: a Send found no posted receive; the deframer
 *	holds its header and the socket is not read until @rnr_work lets
 *	it go on (written under the socket lock, read anywhere)
 * @rnr_ms: soft-RNR wait allowed (device setting), 0: none
 * @rnr_deadline: jiffies when the current stall turns into a TERMINATE
 */
struct xiw_conn {
	struct xiw_qp *qp;
	struct socket *sock;
	struct xiw_sk_user *sku;
	struct xiw_mpa_params mpa;
	bool initiator;
	u32 ord;
	u32 ird;
	const struct xiw_conn_cm_ops *cm_ops;
	void *cm_ctx;
	void (*saved_data_ready)(struct sock *sk);
	void (*saved_write_space)(struct sock *sk);
	enum xiw_conn_state state;
	int tx_cpu;
	atomic_t tx_kposts;
	bool tx_kstream;
	struct work_struct tx_work;
	struct mutex tx_mutex;		/* the transmit engine */
	unsigned long tx_deferred;
	struct list_head tx_defer_entry;
	struct work_struct close_work;
	struct list_head dev_entry;
	struct delayed_work rnr_work;
	struct delayed_work term_work;
	const struct xiw_offload_ops *offload;
	struct xiw_offload_conn oc;
	bool offload_started;
	refcount_t users;
	struct completion users_gone;
	struct rcu_head rcu;

	spinlock_t copy_lock;		/* copies of owned work requests */
	spinlock_t lock;		/* ORQ, IRQ, TERMINATE, ownership */
	struct xiw_orq_entry *orq;
	u32 orq_head;
	u32 orq_count;
	struct xiw_irq_entry *irq;
	u32 irq_head;
	u32 irq_count;
	enum xiw_proto_err term_err;
	u8 term_hdr[XIW_RX_HDR_BUF];
	u32 term_hdr_len;
	bool rtr_tx;
	bool rtr_rx;
	struct xiw_tx_pq *tx_pq;
	struct xiw_tx_pend *tx_pend;

	struct xiw_tx tx;
	u8 *tx_buf;
	u32 tx_buf_cap;
	size_t tx_len;
	size_t tx_off;
	u32 tx_last_len;
	struct xiw_rdmap_hdr tx_hdr;
	u32 tx_mss;
	u32 tx_mulpdu;
	bool tx_more;
	struct bio_vec *tx_vec;
	unsigned int tx_zc_n;
	u32 tx_zc_len;
	size_t tx_zc_off;
	unsigned int tx_pc_n;
	DECLARE_BITMAP(tx_pc_kmem, XIW_TX_VECS);
	size_t tx_pc_kstart;
	size_t tx_pc_len;
	size_t tx_pc_off;
	u32 tx_pc_fpdus;
	bool tx_pc_closed;
	bool tx_pc_held;
	u8 tx_trl[MPA_ALIGN + MPA_CRC_LEN];
	u8 tx_trl_len;
	u8 tx_trl_off;
	u8 *tx_payload;
	u32 tx_payload_cap;
	struct xiw_ksqe tx_sqe;
	bool tx_sqe_active;
	u32 tx_sqe_len;
	u32 tx_sqe_off;
	bool tx_complete;
	bool tx_imm;
	u32 tx_atomic_id;
	u32 tx_msn[4];
	u32 tx_batch;
	u8 tx_zcopy;

	struct xiw_rx rx;
	struct xiw_rx_untagged rx_ut[2];
	u32 rx_term_msn;
	u32 rx_atomic_msn;
	u8 rx_term_body[RDMAP_TERM_MAX_LEN];
	u32 rx_unused;
	bool rx_stalled;
	u32 rnr_ms;
	unsigned long rnr_deadline;
};

/* Not closing yet: an event may still decide how the stream ends. */
static inline bool xiw_conn_open(enum xiw_conn_state state)
{
	return state < XIW_CONN_CLOSE_FIN;
}

/*
 * The receive engine reads the socket only while the connection runs
 * (in PEER_FIN too: it settles a held Send and reads what the peer sent
 * before its FIN): from the first error on (our TERMINATE is due) and
 * once a close is decided, what arrives is dropped.
 */
static inline bool xiw_conn_rx_live(const struct xiw_conn *conn)
{
	enum xiw_conn_state state = READ_ONCE(conn->state);

	return state == XIW_CONN_RUNNING || state == XIW_CONN_PEER_FIN;
}

/*
 * The transmit engine frames until a close is decided: in TERM_QUEUED it
 * finishes its FPDU and sends our TERMINATE, in TERM_OUT the rest of it.
 */
static inline bool xiw_conn_tx_live(const struct xiw_conn *conn)
{
	return xiw_conn_open(READ_ONCE(conn->state));
}

/*
 * Kicks run the engine until the close is committed or is a reset: in
 * CLOSE_FIN it pushes what it framed, ahead of the FIN.
 */
static inline bool xiw_conn_tx_kickable(const struct xiw_conn *conn)
{
	return READ_ONCE(conn->state) <= XIW_CONN_CLOSE_FIN;
}

/* xiw_conn.c */
#if IS_ENABLED(CONFIG_KUNIT)
/* static unless KUnit is built: the conn suite walks the table */
struct xiw_conn_step xiw_conn_next(enum xiw_conn_state state,
				   enum xiw_conn_ev ev, bool rx_held);
const char *xiw_conn_state_name(enum xiw_conn_state state);
#endif
u32 xiw_conn_event(struct xiw_conn *conn, enum xiw_conn_ev ev,
		   const struct xiw_conn_cause *cause);
void xiw_conn_kick_tx(struct xiw_conn *conn);
void xiw_conn_rnr_hold(struct xiw_conn *conn);
void xiw_conn_fail(struct xiw_conn *conn, enum xiw_proto_err err,
		   const u8 *hdr, size_t hdr_len);

/* xiw_qp_tx.c */
void xiw_qp_tx_work(struct work_struct *work);
void xiw_qp_tx_run(struct xiw_conn *conn);
void xiw_qp_tx_flush(struct xiw_conn *conn);
void xiw_tx_zc_drop(struct xiw_conn *conn);
struct xiw_tx_pq *xiw_tx_pq_create(struct xiw_conn *conn);
void xiw_tx_pq_detach(struct xiw_conn *conn);
void xiw_tx_pq_wait_all(void);
#if IS_ENABLED(CONFIG_KUNIT)
/* static unless KUnit is built: the pieces a pages batch makes of tx_buf */
unsigned int xiw_tx_kmem_vec(struct bio_vec *bv, const u8 *p, size_t len);
unsigned int xiw_tx_kmem_pieces(const u8 *p, size_t len);
#endif

/* xiw_qp_rx.c */
#if IS_ENABLED(CONFIG_KUNIT)
/* static unless KUnit is built: the skb suite walks real skb chains */
size_t xiw_skb_walk(struct sk_buff *skb, unsigned int off, size_t len,
		    bool (*fn)(void *priv, const u8 *p, unsigned int n),
		    void *priv);
#endif
int xiw_qp_rx_actor(read_descriptor_t *rd, struct sk_buff *skb,
		    unsigned int off, size_t len);
void xiw_qp_rx_flush(struct xiw_conn *conn);
bool xiw_qp_rx_resume(struct xiw_conn *conn);
enum xiw_proto_err xiw_read_src_err(enum xiw_access_result res);

#endif /* _XIW_DP_H */
