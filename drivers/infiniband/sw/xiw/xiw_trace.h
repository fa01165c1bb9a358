/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xiw: tracepoints (events/xiw/ in tracefs).
 *
 *   xiw_cm_event	an iw_cm upcall: connection request, reply,
 *			established, disconnect, close
 *   xiw_fpdu_tx	a DDP segment framed for TCP
 *   xiw_fpdu_rx	a DDP segment received whole
 *   xiw_term		a TERMINATE sent or received, with its triplet
 *   xiw_soft_rnr	a Send held for want of a receive, let go, or
 *			timed out
 *   xiw_conn_state	an event of a connection's life, and the state it
 *			moved the connection from and to
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM xiw

#if !defined(_XIW_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _XIW_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

#include "xiw_dp.h"
#include "xiw_proto.h"

TRACE_EVENT(xiw_cm_event,
	TP_PROTO(const char *ibdev, u32 cep, int event, int status),
	TP_ARGS(ibdev, cep, event, status),
	TP_STRUCT__entry(
		__array(char, ibdev, IB_DEVICE_NAME_MAX)
		__field(u32, cep)
		__field(int, event)
		__field(int, status)
	),
	TP_fast_assign(
		strscpy(__entry->ibdev, ibdev, IB_DEVICE_NAME_MAX);
		__entry->cep = cep;
		__entry->event = event;
		__entry->status = status;
	),
	TP_printk("%s cep %u %s status %d", __entry->ibdev, __entry->cep,
		  __print_symbolic(__entry->event,
				   { 1, "CONNECT_REQUEST" },
				   { 2, "CONNECT_REPLY" },
				   { 3, "ESTABLISHED" },
				   { 4, "DISCONNECT" },
				   { 5, "CLOSE" }),
		  __entry->status)
);

DECLARE_EVENT_CLASS(xiw_fpdu_class,
	TP_PROTO(u32 qpn, const struct xiw_rdmap_hdr *h, u32 len),
	TP_ARGS(qpn, h, len),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u8, opcode)
		__field(bool, tagged)
		__field(bool, last)
		__field(u32, stag)
		__field(u64, to)
		__field(u32, qn)
		__field(u32, msn)
		__field(u32, mo)
		__field(u32, len)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->opcode = h->opcode;
		__entry->tagged = h->tagged;
		__entry->last = h->last;
		__entry->stag = h->tagged ? h->stag : 0;
		__entry->to = h->tagged ? h->to : 0;
		__entry->qn = h->tagged ? 0 : h->qn;
		__entry->msn = h->tagged ? 0 : h->msn;
		__entry->mo = h->tagged ? 0 : h->mo;
		__entry->len = len;
	),
	TP_printk("qp %u opcode %u %s stag 0x%08x to 0x%llx qn %u msn %u mo %u len %u%s",
		  __entry->qpn, __entry->opcode,
		  __entry->tagged ? "tagged" : "untagged", __entry->stag,
		  (unsigned long long)__entry->to, __entry->qn, __entry->msn,
		  __entry->mo, __entry->len, __entry->last ? " last" : "")
);

DEFINE_EVENT(xiw_fpdu_class, xiw_fpdu_tx,
	TP_PROTO(u32 qpn, const struct xiw_rdmap_hdr *h, u32 len),
	TP_ARGS(qpn, h, len));

DEFINE_EVENT(xiw_fpdu_class, xiw_fpdu_rx,
	TP_PROTO(u32 qpn, const struct xiw_rdmap_hdr *h, u32 len),
	TP_ARGS(qpn, h, len));

TRACE_EVENT(xiw_term,
	TP_PROTO(u32 qpn, bool sent, u8 layer, u8 etype, u8 ecode),
	TP_ARGS(qpn, sent, layer, etype, ecode),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(bool, sent)
		__field(u8, layer)
		__field(u8, etype)
		__field(u8, ecode)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->sent = sent;
		__entry->layer = layer;
		__entry->etype = etype;
		__entry->ecode = ecode;
	),
	TP_printk("qp %u %s layer %s type %u code 0x%02x", __entry->qpn,
		  __entry->sent ? "sent" : "received",
		  __print_symbolic(__entry->layer, { 0, "RDMAP" }, { 1, "DDP" },
				   { 2, "LLP" }),
		  __entry->etype, __entry->ecode)
);

TRACE_EVENT(xiw_soft_rnr,
	TP_PROTO(u32 qpn, u32 msn, int what),
	TP_ARGS(qpn, msn, what),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, msn)
		__field(int, what)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->msn = msn;
		__entry->what = what;
	),
	TP_printk("qp %u msn %u %s", __entry->qpn, __entry->msn,
		  __print_symbolic(__entry->what, { 0, "held" },
				   { 1, "released" }, { 2, "timed out" }))
);

TRACE_DEFINE_ENUM(XIW_CONN_STARTING);
TRACE_DEFINE_ENUM(XIW_CONN_RUNNING);
TRACE_DEFINE_ENUM(XIW_CONN_PEER_FIN);
TRACE_DEFINE_ENUM(XIW_CONN_TERM_QUEUED);
TRACE_DEFINE_ENUM(XIW_CONN_TERM_OUT);
TRACE_DEFINE_ENUM(XIW_CONN_CLOSE_FIN);
TRACE_DEFINE_ENUM(XIW_CONN_CLOSE_RST);
TRACE_DEFINE_ENUM(XIW_CONN_CLOSED);
TRACE_DEFINE_ENUM(XIW_CEV_STARTED);
TRACE_DEFINE_ENUM(XIW_CEV_QP_CLOSING);
TRACE_DEFINE_ENUM(XIW_CEV_QP_ERROR);
TRACE_DEFINE_ENUM(XIW_CEV_DESTROY);
TRACE_DEFINE_ENUM(XIW_CEV_PEER_FIN);
TRACE_DEFINE_ENUM(XIW_CEV_LLP_ERR);
TRACE_DEFINE_ENUM(XIW_CEV_LOCAL_ERR);
TRACE_DEFINE_ENUM(XIW_CEV_TERMINATE);
TRACE_DEFINE_ENUM(XIW_CEV_TERM_BUILT);
TRACE_DEFINE_ENUM(XIW_CEV_TERM_SENT);
TRACE_DEFINE_ENUM(XIW_CEV_TERM_TIMEOUT);
TRACE_DEFINE_ENUM(XIW_CEV_PEER_TERM);
TRACE_DEFINE_ENUM(XIW_CEV_RX_RESUMED);
TRACE_DEFINE_ENUM(XIW_CEV_COMMIT);

#define xiw_show_conn_state(s)					\
	__print_symbolic(s, { XIW_CONN_STARTING, "STARTING" },	\
			 { XIW_CONN_RUNNING, "RUNNING" },		\
			 { XIW_CONN_PEER_FIN, "PEER_FIN" },		\
			 { XIW_CONN_TERM_QUEUED, "TERM_QUEUED" },	\
			 { XIW_CONN_TERM_OUT, "TERM_OUT" },		\
			 { XIW_CONN_CLOSE_FIN, "CLOSE_FIN" },		\
			 { XIW_CONN_CLOSE_RST, "CLOSE_RST" },		\
			 { XIW_CONN_CLOSED, "CLOSED" })

TRACE_EVENT(xiw_conn_state,
	TP_PROTO(u32 qpn, enum xiw_conn_ev ev, enum xiw_conn_state from,
		 enum xiw_conn_state to),
	TP_ARGS(qpn, ev, from, to),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(int, ev)
		__field(int, from)
		__field(int, to)
	),
	TP_fast_assign(
		__entry->qpn = qpn;
		__entry->ev = ev;
		__entry->from = from;
		__entry->to = to;
	),
	TP_printk("qp %u %s: %s -> %s", __entry->qpn,
		  __print_symbolic(__entry->ev,
				   { XIW_CEV_STARTED, "STARTED" },
				   { XIW_CEV_QP_CLOSING, "QP_CLOSING" },
				   { XIW_CEV_QP_ERROR, "QP_ERROR" },
				   { XIW_CEV_DESTROY, "DESTROY" },
				   { XIW_CEV_PEER_FIN, "PEER_FIN" },
				   { XIW_CEV_LLP_ERR, "LLP_ERR" },
				   { XIW_CEV_LOCAL_ERR, "LOCAL_ERR" },
				   { XIW_CEV_TERMINATE, "TERMINATE" },
				   { XIW_CEV_TERM_BUILT, "TERM_BUILT" },
				   { XIW_CEV_TERM_SENT, "TERM_SENT" },
				   { XIW_CEV_TERM_TIMEOUT, "TERM_TIMEOUT" },
				   { XIW_CEV_PEER_TERM, "PEER_TERM" },
				   { XIW_CEV_RX_RESUMED, "RX_RESUMED" },
				   { XIW_CEV_COMMIT, "COMMIT" }),
		  xiw_show_conn_state(__entry->from),
		  xiw_show_conn_state(__entry->to))
);

#endif /* _XIW_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE xiw_trace
#include <trace/define_trace.h>
