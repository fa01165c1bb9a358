/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xiw compatibility layer.
 *
 * Force-included into every xiw object.  It maps the results of the compile
 * probes (generated/xiw_compat_autoconf.h, written by gen-compat.sh against
 * the target kernel) onto the few stable helpers the driver calls, so that no
 * .c file ever tests a kernel version or a probe result itself.
 */
#ifndef _XIW_COMPAT_H
#define _XIW_COMPAT_H

#include "generated/xiw_compat_autoconf.h"

#ifdef XIW_HAVE_LINUX_UNALIGNED
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * Verbs helpers.  These are macros only; they expand in files that include
 * <rdma/ib_verbs.h> and <rdma/uverbs_ioctl.h> themselves, so this header
 * stays cheap for the objects that do not.
 */

/*
 * XIW_COMPAT_CREATE_CQ(name, impl): define the create_cq op @name with the
 * target kernel's signature, calling
 *	int impl(struct ib_cq *, const struct ib_cq_init_attr *, struct ib_udata *)
 */
#ifdef XIW_HAVE_CREATE_CQ_ATTRS
#define XIW_COMPAT_CREATE_CQ(name, impl)					\
static int name(struct ib_cq *cq, const struct ib_cq_init_attr *attr,		\
		struct uverbs_attr_bundle *attrs)				\
{										\
	return impl(cq, attr, attrs ? &attrs->driver_udata : NULL);		\
}
#else
#define XIW_COMPAT_CREATE_CQ(name, impl)					\
static int name(struct ib_cq *cq, const struct ib_cq_init_attr *attr,		\
		struct ib_udata *udata)						\
{										\
	return impl(cq, attr, udata);						\
}
#endif

/*
 * Zero-copy notification of a kernel sender (struct ubuf_info passed as
 * msghdr.msg_ubuf with MSG_ZEROCOPY).  XIW_COMPAT_UBUF_OPS(name, fn)
 * defines the notifier table for fn(skb, ubuf, zerocopy_success), which
 * is called on every reference put (skb NULL for the owner's own put);
 * xiw_ubuf_init(u, &name) readies a ubuf with one reference, the owner's;
 * xiw_ubuf_put(u) drops a reference.  Macros: they expand where
 * <linux/skbuff.h> is included.
 */
#ifdef XIW_HAVE_UBUF_INFO_OPS
#define XIW_COMPAT_UBUF_OPS(name, fn)					\
static const struct ubuf_info_ops name = { .complete = fn }
#define xiw_ubuf_set_ops(u, tbl)	((u)->ops = (tbl))
#define xiw_ubuf_put(u)			((u)->ops->complete(NULL, (u), true))
#else
#define XIW_COMPAT_UBUF_OPS(name, fn)					\
static const struct { void (*complete)(struct sk_buff *,		\
				       struct ubuf_info *, bool); }	\
name = { .complete = fn }
#define xiw_ubuf_set_ops(u, tbl)	((u)->callback = (tbl)->complete)
#define xiw_ubuf_put(u)			((u)->callback(NULL, (u), true))
#endif

#define xiw_ubuf_init(u, tbl)						\
do {									\
	xiw_ubuf_set_ops(u, tbl);					\
	(u)->flags = SKBFL_ZEROCOPY_FRAG | SKBFL_DONT_ORPHAN;		\
	refcount_set(&(u)->refcnt, 1);					\
} while (0)

#endif /* _XIW_COMPAT_H */
