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
int xiw_query_port(struct ib_device *ibdev, u32 port,
		   struct ib_port_attr *attr);
int xiw_get_port_immutable(struct ib_device *ibdev, u32 port,
			   struct ib_port_immutable *immutable);
int xiw_query_gid(struct ib_device *ibdev, u32 port, int idx,
		  union ib_gid *gid);
int xiw_alloc_ucontext(struct ib_ucontext *ctx, struct ib_udata *udata);
void xiw_dealloc_ucontext(struct ib_ucontext *ctx);
int xiw_alloc_pd(struct ib_pd *pd, struct ib_udata *udata);
int xiw_dealloc_pd(struct ib_pd *pd, struct ib_udata *udata);

#endif /* _XIW_VERBS_H */
