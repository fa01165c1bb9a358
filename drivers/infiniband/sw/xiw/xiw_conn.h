/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xiw: the contract between the connection manager (xiw_cm.c) and the data
 * path of a connected QP (xiw_conn.c, xiw_qp_tx.c, xiw_qp_rx.c).
 *
 * The CM owns the TCP socket for its whole life: it creates or accepts it,
 * runs the MPA exchange on it, keeps the socket's sk_state_change and
 * sk_error_report callbacks, and releases it.  Once MPA negotiation has
 * succeeded it calls xiw_conn_start(), which takes over sk_data_ready and
 * sk_write_space, attaches the data path to the QP (xiw_qp_connect()) and
 * moves the QP to RTS.  The CM must have read exactly the MPA frame from the
 * socket: every byte after it belongs to the data path.
 *
 * While the CM owns the socket, sk->sk_user_data points to a struct
 * xiw_sk_user embedded in the CM's endpoint; the data path finds its state
 * through it (@conn, set by xiw_conn_start() and cleared before
 * @llp_close, both under write_lock_bh(&sk->sk_callback_lock)).
 *
 * Teardown, whoever starts it, ends in the CM's @llp_close hook, called
 * exactly once per xiw_conn_start(), from process context, after the data
 * path has restored the socket callbacks it took and stopped using the
 * socket:
 *  - verbs (iw_cm) move the QP to CLOSING (graceful) or ERROR/TERMINATE
 *    (abrupt); a protocol error moves it to TERMINATE and ERROR;
 *  - the CM sees the TCP connection go down (peer FIN or RST, its
 *    sk_state_change) and calls xiw_conn_llp_down();
 *  - the QP is destroyed (its transport detach hook).
 */
#ifndef _XIW_CONN_H
#define _XIW_CONN_H

#include <linux/net.h>
#include <linux/types.h>
#include <net/sock.h>

#include "xiw.h"
#include "xiw_proto.h"

struct xiw_conn;

/**
 * struct xiw_sk_user - what sk_user_data of an xiw TCP socket points to
 * @conn: the data path of the connected QP, NULL before xiw_conn_start()
 *	and after teardown; read and written under sk->sk_callback_lock
 */
struct xiw_sk_user {
	struct xiw_conn *conn;
};

/*
 * The struct xiw_sk_user of @sk, or NULL.  The caller holds
 * sk->sk_callback_lock, either side (lockdep checks it): the CM attaches
 * and detaches it, and the data path sets its @conn, under the write side;
 * the socket callbacks read it under the read side.  The flag bits of a
 * listener's pointer (SK_USER_DATA_NOCOPY) are masked off.
 */
static inline struct xiw_sk_user *xiw_sk_user(const struct sock *sk)
{
	return __locked_read_sk_user_data_with_flags(sk, 0);
}

/**
 * struct xiw_conn_cm_ops - hooks the CM gives the data path
 * @llp_close: the data path is done with the socket.  @abrupt: the QP went
 *	to ERROR (reset the connection: SO_LINGER 0, then release) rather
 *	than CLOSING (orderly shutdown after the send queue drained).  The
 *	CM then raises IW_CM_EVENT_CLOSE (and DISCONNECT if it has not yet)
 *	and drops the references it holds.  Process context; may sleep.
 */
struct xiw_conn_cm_ops {
	void (*llp_close)(void *cm_ctx, bool abrupt);
};

/**
 * struct xiw_conn_start_args - what the CM hands the data path
 * @sock: connected TCP socket, MPA exchange done
 * @mpa: the agreed MPA parameters (CRC, markers, revision, P2P/RTR, IRD/ORD)
 * @initiator: true on the active side
 * @stream_pos_tx: marker-inclusive stream position of the first FPDU we
 *	send; RFC 5044 counts marker positions from the first octet after
 *	the MPA Request/Reply, so this is 0
 * @stream_pos_rx: the same for the first FPDU we receive, also 0
 * @tx_batch: most FPDUs the transmit engine hands TCP in one call
 * @soft_rnr_ms: how long a Send without a posted receive may hold the
 *	receive engine (0: TERMINATE at once)
 * @tx_zcopy: enum xiw_tx_zcopy
 * @offload: name of the offload backend to hand the connection to
 * @cm_ops: CM hooks
 * @cm_ctx: argument of the CM hooks (the endpoint)
 */
struct xiw_conn_start_args {
	struct socket *sock;
	struct xiw_mpa_params mpa;
	bool initiator;
	u32 stream_pos_tx;
	u32 stream_pos_rx;
	u32 tx_batch;
	u32 soft_rnr_ms;
	u8 tx_zcopy;
	const char *offload;
	const struct xiw_conn_cm_ops *cm_ops;
	void *cm_ctx;
};

/*
 * xiw_conn.c: start and stop the data path of a connected QP.
 *
 * xiw_conn_start() sends the initiator's RTR message first when P2P was
 * agreed (a zero-length RDMA Write, a zero-length RDMA Read with a non-zero
 * STag, or a zero-length Send, as negotiated); on the responder, nothing is
 * transmitted before the initiator's RTR has arrived.  RTR messages are not
 * reported to the ULP.  Process context.  Return: 0, or -errno with nothing
 * taken over (the CM still owns every callback).
 */
int xiw_conn_start(struct xiw_qp *qp, const struct xiw_conn_start_args *args);

/*
 * The CM's sk_state_change saw the TCP connection close or fail: @err 0 for
 * an orderly close by the peer, -ECONNRESET etc. otherwise.  The QP moves
 * to ERROR (or from CLOSING to IDLE), then @llp_close follows.  Any
 * context.
 */
void xiw_conn_llp_down(struct xiw_qp *qp, int err);

u64 xiw_dev_tcp_retrans(struct xiw_device *xdev);
int xiw_conn_fill_res(struct sk_buff *msg, struct xiw_qp *qp);

/* Module init and exit: the data path's workqueues. */
int xiw_conn_init(void);
void xiw_conn_exit(void);

#endif /* _XIW_CONN_H */
