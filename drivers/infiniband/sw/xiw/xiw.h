/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xiw: software iWARP over kernel TCP sockets -- core objects.
 */
#ifndef _XIW_H
#define _XIW_H

#include <linux/completion.h>
#include <linux/if_ether.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include <rdma/xiw-abi.h>

#include "xiw_offload.h"
#include "xiw_proto.h"

#define XIW_DRV_NAME		"xiw"
#define XIW_LINK_TYPE		"xiw"
/* Vendor id reported by query_device: ASCII "xiw". */
#define XIW_VENDOR_ID		0x786977
#define XIW_PORT		1

/*
 * Device limits: what query_device reports is what the verbs enforce.
 * SGEs are the one split limit: the user ABI's ring elements hold
 * XIW_MAX_SGE_USER (6) of them, and the device attributes, which user and
 * kernel verbs share, advertise that portable value.  Kernel QPs and SRQs
 * accept up to XIW_MAX_SGE_KERNEL SGEs per WR on top of it (every in-tree
 * ULP sizes from the attributes: SMB Direct needs 6 send / 1 receive SGE).
 */
#define XIW_MAX_QP		(1024 * 64)
#define XIW_MAX_QP_WR		(1024 * 32)
#define XIW_MAX_ORD_QP		128
#define XIW_MAX_IRD_QP		128
#define XIW_MAX_SGE_KERNEL	16
#define XIW_MAX_SGE_RD		1
#define XIW_MAX_CQ		(1024 * 64)
#define XIW_MAX_CQE		(XIW_MAX_QP_WR * 100)
#define XIW_MAX_MR		(XIW_MAX_QP * 10)
#define XIW_MAX_PD		XIW_MAX_QP
#define XIW_MAX_SRQ		XIW_MAX_QP
#define XIW_MAX_SRQ_WR		(XIW_MAX_QP_WR * 10)
#define XIW_MAX_CONTEXT		XIW_MAX_PD
#define XIW_MAX_FR_PAGES	512
/* Inline data of kernel SQEs lives in the space of sge[1..]. */
#define XIW_MAX_INLINE_KERNEL	(sizeof(struct xiw_sge) * (XIW_MAX_SGE_KERNEL - 1))

/* QP numbers are 24 bits, 0 is never used. */
#define XIW_MAX_QPN		0xffffffU

/* STag = 24-bit index into xiw_device.mem_xa << 8 | 8-bit consumer key. */
#define XIW_STAG_KEY_MASK	0xffU
#define XIW_STAG_INDEX_MAX	0xffffffU

/*
 * Opcodes beyond the libsiw ABI (enum xiw_opcode), for kernel consumers
 * only: user SQEs carrying them are refused, and a user QP never produces
 * a CQE with them.
 */
#define XIW_OP_WRITE_WITH_IMM		(XIW_NUM_OPCODES + 0)
#define XIW_OP_RECV_RDMA_WITH_IMM	(XIW_NUM_OPCODES + 1)
#define XIW_OP_MASKED_FETCH_AND_ADD	(XIW_NUM_OPCODES + 2)
#define XIW_OP_MASKED_COMP_AND_SWAP	(XIW_NUM_OPCODES + 3)
#define XIW_NUM_KOPCODES		(XIW_NUM_OPCODES + 4)

/* CQE flag beyond the libsiw ABI: imm_data is valid (kernel CQs only). */
#define XIW_WQE_IMM			BIT(7)

/* TERMINATE layers counted apart: RDMAP, DDP, MPA (RFC 5040 sec 4.8). */
#define XIW_TERM_LAYERS			3

/* Operand length of RFC 7306 atomics and of a verbs atomic result. */
#define XIW_ATOMIC_LEN			8

struct xiw_mr;
struct xiw_qp;

/**
 * enum xiw_tx_zcopy - when the transmit engine sends payload zero-copy
 * @XIW_TX_ZCOPY_AUTO: until the network stack copies the pages of one of
 *	the connection's zero-copy FPDUs, which it does for every one it
 *	delivers to a local socket (loopback, veth), then by copy
 * @XIW_TX_ZCOPY_ON: every FPDU that qualifies, copied by the stack or not
 * @XIW_TX_ZCOPY_OFF: never
 */
enum xiw_tx_zcopy {
	XIW_TX_ZCOPY_AUTO,
	XIW_TX_ZCOPY_ON,
	XIW_TX_ZCOPY_OFF,
};

/**
 * struct xiw_dev_cfg - protocol settings of a device (xiw_config.c)
 * @mpa_rev: MPA revision requested, 1 or 2
 * @mpa_crc: enum xiw_mpa_crc_policy
 * @mpa_markers: enum xiw_mpa_marker_policy
 * @mpa_p2p: request peer-to-peer mode as initiator (revision 2)
 * @mpa_p2p_rtr: RTR type offered as initiator: bit number of XIW_MPA_RTR_*
 * @tx_batch: most FPDUs the transmit engine hands TCP in one call
 * @nagle: leave Nagle's algorithm on (no TCP_NODELAY)
 * @soft_rnr_ms: how long a Send without a posted receive may hold the
 *	receive engine before the TERMINATE; 0: TERMINATE at once
 * @tx_zcopy: enum xiw_tx_zcopy
 * @mpa_timeout_ms: how long the peer's MPA Request or Reply may take to
 *	arrive once TCP is connected
 * @offload: name of the offload backend (xiw_offload.h)
 */
struct xiw_dev_cfg {
	u8 mpa_rev;
	u8 mpa_crc;
	u8 mpa_markers;
	bool mpa_p2p;
	u8 mpa_p2p_rtr;
	u8 tx_batch;
	bool nagle;
	u16 soft_rnr_ms;
	u8 tx_zcopy;
	u32 mpa_timeout_ms;
	char offload[XIW_OFFLOAD_NAME_MAX];
};

/**
 * struct xiw_device - one xiw RDMA device, bound to one netdev
 * @base_dev: the ib_core device; must stay first
 * @netdev: the bound netdev, with a reference (@netdev_tracker); cleared
 *	on NETDEV_UNREGISTER.  Readers use rcu_read_lock(); writers hold
 *	xiw_dev_lock.
 * @netdev_tracker: reference tracker of @netdev
 * @raw_gid: hardware address the GID and GUIDs are derived from; written
 *	under xiw_dev_lock, read without it (a torn read can only mix two
 *	valid addresses during an address change, which is reported anyway)
 * @list: entry in xiw_dev_list, under xiw_dev_lock
 * @dev_id: small unique number (vendor part id, user context dev_id)
 * @numa_node: NUMA node of the netdev, for placing per-QP work
 * @num_ctx: user contexts in use
 * @num_pd: protection domains in use
 * @num_cq: completion queues in use
 * @num_qp: queue pairs in use
 * @num_srq: shared receive queues in use
 * @num_mr: memory regions in use (all kinds)
 * @qp_xa: QP number -> struct xiw_qp (xarray lock, irq-safe; lookups take
 *	a QP reference with xiw_qp_get_unless_zero())
 * @cq_xa: CQ id -> struct xiw_cq (ids only; never dereferenced from it;
 *	its lock is taken in process context only)
 * @mem_xa: STag index -> struct xiw_mr (xarray lock, irq-safe: the data
 *	path looks STags up in any context)
 * @next_qpn: cursor of xa_alloc_cyclic() for @qp_xa
 * @next_cq_id: cursor of xa_alloc_cyclic() for @cq_xa
 * @next_stag_idx: cursor of xa_alloc_cyclic() for @mem_xa
 * @cfg_lock: guards @cfg; taken by sysfs and the CM in process context,
 *	innermost (nothing is taken under it)
 * @cfg: protocol settings of new connections (xiw_config.c)
 * @conn_lock: guards @conn_list; taken with bottom halves off, innermost
 * @conn_list: connected data paths (struct xiw_conn), for the counters
 *	read from their sockets
 * @atomic_lock: serializes the read-modify-write of every Atomic Request
 *	the device's QPs execute, so they are atomic with respect to each
 *	other (IB_ATOMIC_HCA: the device is the unit of atomicity, even for
 *	MRs over the same memory); taken by the receive engines only, in
 *	softirq or process context, with bottom halves off; innermost
 * @stats: data path counters, reported by xiw_get_hw_stats()
 * @stats.tx_fpdus: FPDUs handed to TCP
 * @stats.tx_bytes: octets of those FPDUs
 * @stats.tx_zc_fpdus: FPDUs whose payload went out zero-copy
 * @stats.tx_zc_bytes: payload octets sent zero-copy
 * @stats.tx_zc_copied: connections that stopped sending zero-copy because
 *	the stack copied their pages (XIW_TX_ZCOPY_AUTO)
 * @stats.tx_pc_fpdus: FPDUs TCP copied straight from the consumer's pages
 * @stats.tx_poster_runs: transmit engine runs that a user QP's doorbell
 *	took over from the worker, in the poster's system call, when its own
 *	sendmsg() kicked them on this host (xiw_tx_defer_end())
 * @stats.rx_fpdus: DDP segments received whole (CRC checked when agreed)
 * @stats.rx_bytes: stream octets the receive engine took from TCP
 * @stats.rx_crc_errors: FPDUs whose CRC32c did not match
 * @stats.term_sent: TERMINATE messages sent, by layer (RDMAP, DDP, MPA)
 * @stats.term_recv: TERMINATE messages received, by layer
 * @stats.mpa_rej_sent: MPA Requests refused (Reply with the R flag)
 * @stats.mpa_rej_recv: MPA Replies with the R flag received
 * @stats.tcp_retrans: TCP segments retransmitted by connection sockets
 *	that have closed (live ones are read from the socket)
 * @stats.soft_rnr_stalls: Sends that found no posted receive and held the
 *	receive engine (soft-RNR)
 * @stats.soft_rnr_timeouts: soft-RNR waits that ended in a TERMINATE
 */
struct xiw_device {
	struct ib_device base_dev;
	struct net_device __rcu *netdev;
	netdevice_tracker netdev_tracker;
	u8 raw_gid[ETH_ALEN];
	struct list_head list;
	u32 dev_id;
	int numa_node;

	atomic_t num_ctx;
	atomic_t num_pd;
	atomic_t num_cq;
	atomic_t num_qp;
	atomic_t num_srq;
	atomic_t num_mr;

	struct xarray qp_xa;
	struct xarray cq_xa;
	struct xarray mem_xa;
	u32 next_qpn;
	u32 next_cq_id;
	u32 next_stag_idx;

	spinlock_t cfg_lock;		/* guards cfg */
	struct xiw_dev_cfg cfg;
	spinlock_t conn_lock;		/* guards conn_list */
	struct list_head conn_list;
	spinlock_t atomic_lock;		/* serializes atomics */

	struct {
		atomic64_t tx_fpdus;
		atomic64_t tx_bytes;
		atomic64_t tx_zc_fpdus;
		atomic64_t tx_zc_bytes;
		atomic64_t tx_zc_copied;
		atomic64_t tx_pc_fpdus;
		atomic64_t tx_poster_runs;
		atomic64_t rx_fpdus;
		atomic64_t rx_bytes;
		atomic64_t rx_crc_errors;
		atomic64_t term_sent[XIW_TERM_LAYERS];
		atomic64_t term_recv[XIW_TERM_LAYERS];
		atomic64_t mpa_rej_sent;
		atomic64_t mpa_rej_recv;
		atomic64_t tcp_retrans;
		atomic64_t soft_rnr_stalls;
		atomic64_t soft_rnr_timeouts;
	} stats;
};

/**
 * struct xiw_ucontext - user verbs context
 * @base_ucontext: the ib_core context; must stay first
 * @xdev: owning device
 * @key_guard: mmap entry that occupies the offset XIW_INVAL_UOBJ_KEY, so
 *	that no queue is ever handed that key (libsiw reads it as "failed");
 *	NULL when PAGE_SIZE makes that offset impossible anyway
 */
struct xiw_ucontext {
	struct ib_ucontext base_ucontext;
	struct xiw_device *xdev;
	struct rdma_user_mmap_entry *key_guard;
};

/**
 * struct xiw_user_mmap_entry - a user-mappable queue
 * @rdma_entry: the ib_core entry; its offset is the key userspace mmaps
 * @address: the queue's memory, mapped into the kernel with vmap() (as
 *	VM_USERMAP, so that remap_vmalloc_range() takes it), owned by the
 *	entry and freed by xiw_mmap_free() once the entry is removed and
 *	unmapped; NULL for a key guard, which can never be mapped
 * @pages: the pages behind @address, charged to the memory cgroup of the
 *	process that created the queue
 * @npages: entries of @pages
 */
struct xiw_user_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	void *address;
	struct page **pages;
	unsigned int npages;
};

/**
 * struct xiw_cq - completion queue
 * @base_cq: the ib_core CQ; must stay first
 * @xdev: owning device
 * @lock: guards @cq_put, @cq_get, the ring slots' contents while they are
 *	not VALID, and @overflow; taken with irqsave from any context
 * @queue: ring of @num_cqe CQEs followed by @notify (one allocation; for a
 *	user CQ the same memory is mapped by libsiw)
 * @notify: notification word; userspace (libsiw's req_notify) or
 *	xiw_req_notify_cq() arm it, xiw_cqe_add() disarms it with cmpxchg
 * @num_cqe: ring size
 * @cq_put: producer index (kernel), modulo @num_cqe
 * @cq_get: consumer index of kernel CQs (user CQs are polled by libsiw)
 * @id: CQ id reported to userspace
 * @kernel_verbs: true for kernel consumers
 * @mmap_entry: user mapping of @queue (user CQs only)
 * @comp_work: runs CQ error events, and the completion handler of a
 *	kernel CQ, outside the call chain that produced the completion; a
 *	work item never runs concurrently with itself, so at most one
 *	handler runs per kernel CQ
 * @events: XIW_CQ_EV_* bits consumed by @comp_work
 * @overflow: number of CQEs lost because the ring was full
 * @completions: number of CQEs written
 */
struct xiw_cq {
	struct ib_cq base_cq;
	struct xiw_device *xdev;
	spinlock_t lock;		/* ring indexes and slots */
	struct xiw_cqe *queue;
	struct xiw_cq_ctrl *notify;
	u32 num_cqe;
	u32 cq_put;
	u32 cq_get;
	u32 id;
	bool kernel_verbs;
	struct rdma_user_mmap_entry *mmap_entry;
	struct work_struct comp_work;
	unsigned long events;
	u64 overflow;
	u64 completions;
};

#define XIW_CQ_EV_COMP		0	/* call the completion handler */
#define XIW_CQ_EV_ERR		1	/* dispatch IB_EVENT_CQ_ERR */

/**
 * struct xiw_krqe - receive queue element of kernel queues
 * @id: work request id
 * @flags: XIW_WQE_* flags; VALID marks a posted element
 * @num_sge: number of valid entries of @sge
 * @opcode: XIW_OP_RECEIVE
 * @sge: scatter list
 *
 * The header is the one of struct xiw_rqe; only the SGE array is larger.
 * xiw_rqe_fetch() returns user RQEs in this form too.
 */
struct xiw_krqe {
	u64 id;
	u16 flags;
	u8 num_sge;
	u8 opcode;
	u32 unused;
	struct xiw_sge sge[XIW_MAX_SGE_KERNEL];
};

/**
 * struct xiw_ksqe - send queue element of kernel queues
 * @id: work request id
 * @flags: XIW_WQE_* flags; VALID marks a posted element
 * @num_sge: number of SGEs (for INLINE: 1, and sge[0].length is the length
 *	of the inline data stored from sge[1] on)
 * @opcode: enum xiw_opcode
 * @rkey: remote STag (WRITE, READ), STag to invalidate (SEND_REMOTE_INV,
 *	INVAL_STAG, READ_LOCAL_INV), or the new STag (REG_MR)
 * @raddr: remote address (WRITE, READ)
 * @reg_mr: REG_MR: the memory region to (re)register
 * @access: REG_MR: IB_ACCESS_* flags to register with
 * @imm: WRITE_WITH_IMM: the immediate data, in network order as posted
 * @add_swap: atomics: Add Data or Swap Data
 * @add_swap_mask: atomics: Add Mask (field boundaries) or Swap Mask
 * @cmp: compare and swap: Compare Data
 * @cmp_mask: compare and swap: Compare Mask
 * @sge: gather list, or inline data from sge[1] on; the 8 octet result
 *	buffer of an atomic
 *
 * The header is the one of struct xiw_sqe; xiw_sqe_fetch() returns user
 * SQEs in this form too.
 */
struct xiw_ksqe {
	u64 id;
	u16 flags;
	u8 num_sge;
	u8 opcode;
	u32 rkey;
	union {
		u64 raddr;
		struct xiw_mr *reg_mr;
	};
	u32 access;
	u32 imm;
	u64 add_swap;
	u64 add_swap_mask;
	u64 cmp;
	u64 cmp_mask;
	struct xiw_sge sge[XIW_MAX_SGE_KERNEL];
};

/**
 * struct xiw_srq - shared receive queue
 * @base_srq: the ib_core SRQ; must stay first
 * @xdev: owning device
 * @lock: guards @rq_put, @rq_get, @limit, @armed and the kernel ring
 * @recvq: ring of @num_rqe elements: struct xiw_krqe for kernel SRQs,
 *	struct xiw_rqe (shared with libsiw) for user SRQs
 * @num_rqe: ring size
 * @rq_put: producer index of kernel SRQs
 * @rq_get: consumer index
 * @max_sge: SGE limit of posted receives
 * @limit: srq_limit armed by modify_srq
 * @armed: IB_EVENT_SRQ_LIMIT_REACHED pending once fewer than @limit
 *	receives remain posted
 * @kernel_verbs: true for kernel consumers
 * @mmap_entry: user mapping of @recvq (user SRQs only)
 * @limit_event: IB_EVENT_SRQ_LIMIT_REACHED raised and not delivered yet
 * @event_work: delivers it on xiw_cq_wq, off the data path's locks
 */
struct xiw_srq {
	struct ib_srq base_srq;
	struct xiw_device *xdev;
	spinlock_t lock;		/* ring indexes, limit */
	void *recvq;
	u32 num_rqe;
	u32 rq_put;
	u32 rq_get;
	u32 max_sge;
	u32 limit;
	bool armed;
	bool kernel_verbs;
	struct rdma_user_mmap_entry *mmap_entry;
	unsigned long limit_event;
	struct work_struct event_work;
};

/**
 * enum xiw_qp_state - iWARP QP states (RDMAC verbs / RFC 5040 sec. 6)
 * @XIW_QP_IDLE: created or reset; WRs may be posted and stay queued
 * @XIW_QP_RTS: connected, the data path processes the queues
 * @XIW_QP_CLOSING: graceful close in progress, no new work
 * @XIW_QP_TERMINATE: a TERMINATE message is being sent
 * @XIW_QP_ERROR: queues flushed, every WR completes with WR_FLUSH_ERR
 * @XIW_QP_NUM_STATES: number of states
 */
enum xiw_qp_state {
	XIW_QP_IDLE,
	XIW_QP_RTS,
	XIW_QP_CLOSING,
	XIW_QP_TERMINATE,
	XIW_QP_ERROR,
	XIW_QP_NUM_STATES
};

/**
 * struct xiw_qp_transport_ops - hooks of the data path / connection
 *
 * Installed by the connection manager with xiw_qp_connect().  No hook
 * sleeps but @detach; a hook that needs to sleep defers the work itself.
 * @sq_kick and @rq_kick may be called from any context; @state_change and
 * @flush, which follow a move of the QP (xiw_qp_modify(),
 * xiw_qp_transport_move(), verbs), only with interrupts on and never in
 * hard irq: @flush waits for a copy the data path has in progress, under
 * a lock that disables bottom halves only.
 *
 * @sq_kick: new SQEs were posted (or the QP just entered RTS): process the
 *	send queue.  Called without QP locks held.
 * @state_change: the QP moved from @old to @new (new is CLOSING, TERMINATE
 *	or ERROR, or IDLE after a graceful close).  Called without QP locks
 *	held, after the state was changed and before queues are flushed.
 * @rq_kick: a kernel consumer posted receives (user QPs post theirs
 *	without a system call and have none)
 * @flush: complete every work element the data path has already fetched
 *	(active SQE, ORQ, IRQ, partially received RQE) with WR_FLUSH_ERR via
 *	xiw_sqe_complete()/xiw_rqe_complete().  Called on entering ERROR,
 *	before the rings are flushed, so that completion order is kept.
 * @detach: the QP is being destroyed.  destroy_qp has moved it to ERROR
 *	and withdrawn @tctx in one @state_lock section, so no hook finds the
 *	transport any more; @tctx is what xiw_qp_connect() published.  Close
 *	the connection, wait for the hooks that found it before, and free it.
 *	Called in process context; may sleep.
 */
struct xiw_qp_transport_ops {
	void (*sq_kick)(struct xiw_qp *qp);
	void (*rq_kick)(struct xiw_qp *qp);
	void (*state_change)(struct xiw_qp *qp, enum xiw_qp_state old,
			     enum xiw_qp_state new);
	void (*flush)(struct xiw_qp *qp);
	void (*detach)(struct xiw_qp *qp, void *tctx);
};

/**
 * struct xiw_qp - RC queue pair
 * @base_qp: the ib_core QP; must stay first
 * @xdev: owning device
 * @ref: references of the CM and of lookups (xiw_qp_get/put); the
 *	verbs owner holds the initial one, dropped in destroy_qp, which then
 *	waits for @released
 * @released: completed when @ref drops to zero
 * @state_lock: guards @state, @tops and the publication and withdrawal of
 *	@tctx; irqsave, any context; never held while calling a hook or
 *	taking @sq_lock/@rq_lock
 * @state: current enum xiw_qp_state; written under @state_lock, read with
 *	READ_ONCE() by post paths (see xiw_post_send()) and by the engines
 *	under their connection's lock before they take a work request
 * @ib_idle_state: IB_QPS_RESET, _INIT or _RTR: which verbs state IDLE was
 *	last entered as, for query_qp (under @state_lock)
 * @tops: transport hooks, NULL until connected
 * @tctx: transport private data; published by xiw_qp_connect() and
 *	withdrawn by destroy_qp, both under @state_lock; looked up by the
 *	hooks under rcu_read_lock() (the transport takes a reference there)
 * @scq: send CQ
 * @rcq: receive CQ
 * @srq: SRQ the receives come from, or NULL
 * @kernel_verbs: true for kernel consumers
 * @owner_uid: effective uid of the process that created a user QP
 * @owner_tgid: its thread group (reference held); NULL for kernel QPs
 * @sig_all: every SQE generates a completion (IB_SIGNAL_ALL_WR)
 * @access: IB_ACCESS_REMOTE_* rights of the QP (modify_qp)
 * @ord: outbound RDMA Read depth (max_rd_atomic)
 * @ird: inbound RDMA Read depth (max_dest_rd_atomic)
 * @sq_lock: guards @sq_put and kernel SQ slots against each other's
 *	posters, and the flushes' use of @sq_get; irqsave.  The transmit
 *	engine's fetch takes no lock (xiw_sqe_fetch())
 * @sendq: ring of @num_sqe elements: struct xiw_ksqe (kernel) or struct
 *	xiw_sqe (user, shared with libsiw)
 * @num_sqe: SQ size (power of two)
 * @sq_put: producer index of kernel SQs
 * @sq_get: consumer index: the transmit engine's or a flush's, never
 *	both at once (xiw_sqe_fetch())
 * @max_send_sge: SGE limit of send WRs
 * @max_inline: inline data limit
 * @rq_lock: guards @rq_put and kernel RQ slots against each other's
 *	posters, and the flushes' use of @rq_get; irqsave.  The receive
 *	engine's fetch takes no lock (xiw_rqe_fetch())
 * @recvq: ring of @num_rqe elements (struct xiw_krqe or struct xiw_rqe);
 *	NULL with an SRQ
 * @num_rqe: RQ size (power of two), 0 with an SRQ
 * @rq_put: producer index of kernel RQs
 * @rq_get: consumer index: the receive engine's or a flush's, never both
 *	at once (xiw_rqe_fetch())
 * @max_recv_sge: SGE limit of receive WRs
 * @sq_entry: user mapping of @sendq
 * @rq_entry: user mapping of @recvq
 * @stats: counters for restrack and debugging
 * @events: BIT(enum ib_event_type) of the asynchronous events raised and
 *	not delivered yet (atomic bit operations)
 * @event_work: delivers @events on xiw_cq_wq, so the consumer's handler
 *	never runs on the call chain that raised them, under its locks
 */
struct xiw_qp {
	struct ib_qp base_qp;
	struct xiw_device *xdev;
	struct kref ref;
	struct completion released;

	spinlock_t state_lock;		/* state, tops, tctx */
	enum xiw_qp_state state;
	enum ib_qp_state ib_idle_state;
	const struct xiw_qp_transport_ops *tops;
	void __rcu *tctx;

	struct xiw_cq *scq;
	struct xiw_cq *rcq;
	struct xiw_srq *srq;
	bool kernel_verbs;
	kuid_t owner_uid;
	struct pid *owner_tgid;
	bool sig_all;
	int access;
	u32 ord;
	u32 ird;

	spinlock_t sq_lock;		/* SQ indexes and slots */
	void *sendq;
	u32 num_sqe;
	u32 sq_put;
	u32 sq_get;
	u32 max_send_sge;
	u32 max_inline;

	spinlock_t rq_lock;		/* RQ indexes and slots */
	void *recvq;
	u32 num_rqe;
	u32 rq_put;
	u32 rq_get;
	u32 max_recv_sge;

	struct rdma_user_mmap_entry *sq_entry;
	struct rdma_user_mmap_entry *rq_entry;

	struct {
		atomic64_t sq_posted;
		atomic64_t sq_completed;
		atomic64_t rq_posted;
		atomic64_t rq_completed;
		atomic64_t flushed;
	} stats;

	unsigned long events;
	struct work_struct event_work;
};

/**
 * struct xiw_pd - protection domain
 * @base_pd: the ib_core PD; must stay first
 */
struct xiw_pd {
	struct ib_pd base_pd;
};

static inline struct xiw_device *to_xiw_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct xiw_device, base_dev);
}

static inline struct xiw_ucontext *to_xiw_ctx(struct ib_ucontext *ctx)
{
	return container_of(ctx, struct xiw_ucontext, base_ucontext);
}

static inline struct xiw_pd *to_xiw_pd(struct ib_pd *pd)
{
	return container_of(pd, struct xiw_pd, base_pd);
}

static inline struct xiw_cq *to_xiw_cq(struct ib_cq *cq)
{
	return container_of(cq, struct xiw_cq, base_cq);
}

static inline struct xiw_qp *to_xiw_qp(struct ib_qp *qp)
{
	return container_of(qp, struct xiw_qp, base_qp);
}

static inline struct xiw_srq *to_xiw_srq(struct ib_srq *srq)
{
	return container_of(srq, struct xiw_srq, base_srq);
}

static inline struct xiw_user_mmap_entry *
to_xiw_mmap_entry(struct rdma_user_mmap_entry *entry)
{
	return container_of(entry, struct xiw_user_mmap_entry, rdma_entry);
}

static inline u32 xiw_qp_id(const struct xiw_qp *qp)
{
	return qp->base_qp.qp_num;
}

/* xiw_qp.c's send queue peeks, inline: every doorbell and engine step asks */

/**
 * xiw_sqe_next_valid - is a posted SQE waiting to be taken?
 * @qp: the QP
 *
 * A peek for the transmit engine's choice of ending a batch: a stale
 * answer only moves a batch boundary.  Any context.
 */
static inline bool xiw_sqe_next_valid(struct xiw_qp *qp)
{
	u32 idx = READ_ONCE(qp->sq_get) % qp->num_sqe;

	if (qp->kernel_verbs)
		return READ_ONCE(((struct xiw_ksqe *)qp->sendq)[idx].flags) &
		       XIW_WQE_VALID;
	return READ_ONCE(((struct xiw_sqe *)qp->sendq)[idx].flags) &
	       XIW_WQE_VALID;
}

/**
 * xiw_sqe_next_unsignalled - is the oldest posted SQE an unsignalled one?
 * @qp: a user QP
 *
 * A peek for the doorbell's choice of who runs the transmit engine: the
 * answer may be stale by the time it is used, and nothing is consumed.
 * Any context.
 */
static inline bool xiw_sqe_next_unsignalled(struct xiw_qp *qp)
{
	const struct xiw_sqe *sqe;
	u16 flags;

	if (qp->kernel_verbs || qp->sig_all)
		return false;
	sqe = &((const struct xiw_sqe *)qp->sendq)[READ_ONCE(qp->sq_get) %
						   qp->num_sqe];
	flags = READ_ONCE(sqe->flags);
	return (flags & XIW_WQE_VALID) && !(flags & XIW_WQE_SIGNALLED);
}

/**
 * xiw_sqe_pending - may the transmit engine find a posted SQE?
 * @qp: the QP
 *
 * libsiw stores a user SQE's flags atomically, VALID last, and rings only
 * if it finds the SQE before its new one taken (its seq_cst store, then
 * load): a slot seen empty is looked at once more after a full barrier,
 * or both sides could miss the other and the queue stall while the
 * transmit engine runs beside the poster.  The fetch's look, and the
 * engine's before it takes any lock: for the engine, which alone moves
 * sq_get while the QP runs, a flush moving it meanwhile only makes the
 * answer stale, and the fetch under the engine's lock decides.
 */
static inline bool xiw_sqe_pending(struct xiw_qp *qp)
{
	u32 idx = READ_ONCE(qp->sq_get) % qp->num_sqe;
	struct xiw_sqe *sqe;

	if (qp->kernel_verbs)
		/* Pairs with the release of VALID in xiw_post_send(). */
		return smp_load_acquire(&((struct xiw_ksqe *)qp->sendq)[idx].flags) &
		       XIW_WQE_VALID;
	sqe = &((struct xiw_sqe *)qp->sendq)[idx];
	/* Pairs with libsiw's store of VALID. */
	if (smp_load_acquire(&sqe->flags) & XIW_WQE_VALID)
		return true;
	/* Our release of the previous SQE before the second look. */
	smp_mb();
	/* The second look, after the barrier. */
	return smp_load_acquire(&sqe->flags) & XIW_WQE_VALID;
}

/* xiw_main.c */
extern struct workqueue_struct *xiw_cq_wq;

/* xiw_verbs.c: user mappings */
void *xiw_mmap_alloc(struct ib_udata *udata, size_t size,
		     struct rdma_user_mmap_entry **entry, u64 *key);
void xiw_mmap_remove(struct rdma_user_mmap_entry *entry);

/* xiw_cq.c: the completion interface of the data path */
#if IS_ENABLED(CONFIG_KUNIT)
/* static unless KUnit is built: the CQ suite drives bare rings */
void xiw_cq_init(struct xiw_cq *cq, u32 num_cqe, struct xiw_cqe *queue,
		 bool kernel_verbs);
#endif
/* Count a TERMINATE of @layer sent (@sent) or received. */
static inline void xiw_count_term(struct xiw_device *xdev, u8 layer, bool sent)
{
	if (layer < XIW_TERM_LAYERS)
		atomic64_inc(sent ? &xdev->stats.term_sent[layer] :
				    &xdev->stats.term_recv[layer]);
}

int xiw_cqe_add(struct xiw_cq *cq, u64 wr_id, u8 opcode,
		enum xiw_wc_status status, u32 bytes, u32 inval_stag,
		struct xiw_qp *qp, bool solicited);
int xiw_cqe_add_imm(struct xiw_cq *cq, u64 wr_id, u8 opcode, u32 bytes,
		    u32 imm, struct xiw_qp *qp, bool solicited);

/* xiw_qp.c: the QP interface of the data path and the CM */
const char *xiw_qp_state_name(enum xiw_qp_state state);
struct xiw_qp *xiw_qp_lookup(struct xiw_device *xdev, u32 qpn);
struct xiw_qp *xiw_qp_lookup_cm(struct xiw_device *xdev, u32 qpn);
void xiw_qp_get(struct xiw_qp *qp);
void xiw_qp_put(struct xiw_qp *qp);
int xiw_qp_modify(struct xiw_qp *qp, enum xiw_qp_state new);
int xiw_qp_transport_move(struct xiw_qp *qp, enum xiw_qp_state new);
int xiw_qp_connect(struct xiw_qp *qp, const struct xiw_qp_transport_ops *tops,
		   void *tctx, u32 ord, u32 ird);
int xiw_sqe_fetch(struct xiw_qp *qp, struct xiw_ksqe *sqe);
int xiw_sqe_complete(struct xiw_qp *qp, const struct xiw_ksqe *sqe,
		     u32 bytes, enum xiw_wc_status status);
int xiw_sqe_complete_id(struct xiw_qp *qp, u64 id, u8 opcode, u16 flags,
			u32 bytes, enum xiw_wc_status status);
enum xiw_wc_status xiw_sqe_local_exec(struct xiw_qp *qp,
				      const struct xiw_ksqe *sqe);
int xiw_rqe_fetch(struct xiw_qp *qp, struct xiw_krqe *rqe);
int xiw_ring_take_rqe(void *ring, u32 idx, bool kernel_ring, u32 max_sge,
		      struct xiw_krqe *out, u32 *get);
int xiw_rqe_complete(struct xiw_qp *qp, const struct xiw_krqe *rqe,
		     u32 bytes, u32 inval_stag, enum xiw_wc_status status);
int xiw_rqe_complete_imm(struct xiw_qp *qp, const struct xiw_krqe *rqe,
			 u32 bytes, u32 imm);
void xiw_qp_flush(struct xiw_qp *qp);
void xiw_qp_event(struct xiw_qp *qp, u8 layer, u8 etype);

/* xiw_srq.c */
int xiw_srq_fetch(struct xiw_srq *srq, struct xiw_krqe *rqe);

/* xiw_config.c */
extern const struct attribute_group xiw_cfg_attr_group;
void xiw_dev_cfg_init(struct xiw_device *xdev);
const char *xiw_rtr_name(u8 rtr);
const char *xiw_tx_zcopy_name(u8 mode);
void xiw_dev_cfg_get(struct xiw_device *xdev, struct xiw_dev_cfg *cfg);
void xiw_dev_cfg_policy(const struct xiw_dev_cfg *cfg, bool initiator,
			struct xiw_mpa_policy *pol);

#endif /* _XIW_H */
