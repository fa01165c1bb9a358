/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xiw verbs entry points, grouped by the file that defines them.
 */
#ifndef _XIW_VERBS_H
#define _XIW_VERBS_H

#include <rdma/ib_verbs.h>

/* xiw_verbs.c: device, port, context and PD verbs */
int xiw_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		     struct ib_udata *udata);
int xiw_query_pkey(struct ib_device *ibdev, u32 port, u16 idx, u16 *pkey);
int xiw_query_port(struct ib_device *ibdev, u32 port,
		   struct ib_port_attr *attr);
int xiw_get_port_immutable(struct ib_device *ibdev, u32 port,
			   struct ib_port_immutable *immutable);
int xiw_query_gid(struct ib_device *ibdev, u32 port, int idx,
		  union ib_gid *gid);
int xiw_alloc_ucontext(struct ib_ucontext *ctx, struct ib_udata *udata);
void xiw_dealloc_ucontext(struct ib_ucontext *ctx);
void xiw_disassociate_ucontext(struct ib_ucontext *ctx);
int xiw_alloc_pd(struct ib_pd *pd, struct ib_udata *udata);
int xiw_dealloc_pd(struct ib_pd *pd, struct ib_udata *udata);
int xiw_mmap(struct ib_ucontext *ctx, struct vm_area_struct *vma);
void xiw_mmap_free(struct rdma_user_mmap_entry *entry);
struct rdma_hw_stats *xiw_alloc_hw_port_stats(struct ib_device *ibdev,
					      u32 port);
int xiw_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		     u32 port, int index);

/* xiw_cq.c */
int xiw_create_cq_impl(struct ib_cq *cq, const struct ib_cq_init_attr *attr,
		       struct ib_udata *udata);
int xiw_destroy_cq(struct ib_cq *cq, struct ib_udata *udata);
int xiw_poll_cq(struct ib_cq *cq, int num_entries, struct ib_wc *wc);
int xiw_req_notify_cq(struct ib_cq *cq, enum ib_cq_notify_flags flags);
int xiw_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *cq);

/* xiw_qp.c */
int xiw_create_qp(struct ib_qp *qp, struct ib_qp_init_attr *attrs,
		  struct ib_udata *udata);
int xiw_destroy_qp(struct ib_qp *qp, struct ib_udata *udata);
int xiw_modify_qp(struct ib_qp *qp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata);
int xiw_query_qp(struct ib_qp *qp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init_attr);
int xiw_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr);
int xiw_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr);
int xiw_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *qp);

/* xiw_srq.c */
int xiw_create_srq(struct ib_srq *srq, struct ib_srq_init_attr *init_attr,
		   struct ib_udata *udata);
int xiw_modify_srq(struct ib_srq *srq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata);
int xiw_query_srq(struct ib_srq *srq, struct ib_srq_attr *attr);
int xiw_destroy_srq(struct ib_srq *srq, struct ib_udata *udata);
int xiw_post_srq_recv(struct ib_srq *srq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);

#endif /* _XIW_VERBS_H */
