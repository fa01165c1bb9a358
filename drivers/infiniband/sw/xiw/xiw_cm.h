/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xiw: the iWARP connection manager -- iw_cm device ops, TCP connection
 * setup and the MPA exchange (see Documentation/cm.rst).
 */
#ifndef _XIW_CM_H
#define _XIW_CM_H

#include <rdma/ib_verbs.h>
#include <rdma/iw_cm.h>

#include "xiw.h"
#include "xiw_proto.h"

/* How long the TCP handshake of an active connection may take. */
#define XIW_CM_CONNECT_TIMEOUT	(30 * HZ)
/* How long a graceful close waits for the peer's FIN. */
#define XIW_CM_DRAIN_TIMEOUT	(5 * HZ)

/* Module life cycle (xiw_main.c). */
int xiw_cm_init(void);
void xiw_cm_exit(void);
void xiw_cm_dev_gone(struct xiw_device *xdev);

/* iw_cm device ops */
int xiw_connect(struct iw_cm_id *id, struct iw_cm_conn_param *params);
int xiw_accept(struct iw_cm_id *id, struct iw_cm_conn_param *params);
int xiw_reject(struct iw_cm_id *id, const void *pdata, u8 pdata_len);
int xiw_create_listen(struct iw_cm_id *id, int backlog);
int xiw_destroy_listen(struct iw_cm_id *id);
void xiw_qp_add_ref(struct ib_qp *base_qp);
void xiw_qp_rem_ref(struct ib_qp *base_qp);
struct ib_qp *xiw_get_base_qp(struct ib_device *ibdev, int qpn);

/* restrack details */
struct rdma_cm_id;
int xiw_fill_res_cm_id_entry(struct sk_buff *msg, struct rdma_cm_id *id);
int xiw_mpa_fill_res(struct sk_buff *msg, const struct xiw_mpa_params *mpa);

#endif /* _XIW_CM_H */
