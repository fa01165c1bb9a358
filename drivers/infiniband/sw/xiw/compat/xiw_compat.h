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
 * The address argument of kernel_bind() and kernel_connect():
 * xiw_sockaddr(a) converts a struct sockaddr_storage * (or sockaddr_in*)
 * to the pointer type the target kernel's prototypes take.
 */
#ifdef XIW_HAVE_SOCKADDR_UNSIZED
#define xiw_sockaddr(a)		((struct sockaddr_unsized *)(a))
#else
#define xiw_sockaddr(a)		((struct sockaddr *)(a))
#endif

/*
 * XIW_WQ_PERCPU: the flag of a per-CPU workqueue where kernels have one
 * (without it or WQ_UNBOUND, 7.x's alloc_workqueue() warns); 0 where a
 * workqueue is per-CPU unless WQ_UNBOUND.
 */
#ifdef XIW_HAVE_WQ_PERCPU
#define XIW_WQ_PERCPU		WQ_PERCPU
#else
#define XIW_WQ_PERCPU		0
#endif

/*
 * XIW_IMPORT_KUNIT_NS: the MODULE_IMPORT_NS() of xiw.ko's
 * EXPORT_SYMBOL_IF_KUNIT() namespace, an identifier before 6.13 and a
 * string literal since.
 */
#ifdef XIW_HAVE_IMPORT_NS_IDENT
#define XIW_IMPORT_KUNIT_NS	MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING)
#else
#define XIW_IMPORT_KUNIT_NS	MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING")
#endif

/*
 * XIW_KUNIT_GEN_ARGS: the parameter list of a KUnit parameter generator
 * (kunit_case.generate_params) on the target kernel, as in
 *	static const void *gen(XIW_KUNIT_GEN_ARGS)
 * Its body sees @prev (the previous parameter, NULL at first) and @desc
 * (KUNIT_PARAM_DESC_SIZE bytes) on every kernel; since 6.18 the test's
 * struct kunit * comes first.
 */
#ifdef XIW_HAVE_KUNIT_GEN_PARAMS_TEST
#define XIW_KUNIT_GEN_ARGS	struct kunit *test, const void *prev, char *desc
#else
#define XIW_KUNIT_GEN_ARGS	const void *prev, char *desc
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
 * XIW_COMPAT_REG_USER_MR(name, impl): define the reg_user_mr op @name with
 * the target kernel's signature, calling
 *	struct ib_mr *impl(struct ib_pd *, u64 start, u64 len, u64 virt,
 *			   int access, struct ib_udata *)
 * xiw has no use for a DMA handle (it does no DMA); one given is refused.
 */
#ifdef XIW_HAVE_REG_USER_MR_DMAH
#define XIW_COMPAT_REG_USER_MR(name, impl)					\
static struct ib_mr *name(struct ib_pd *pd, u64 start, u64 len, u64 virt,	\
			  int access, struct ib_dmah *dmah,			\
			  struct ib_udata *udata)				\
{										\
	if (dmah)								\
		return ERR_PTR(-EOPNOTSUPP);					\
	return impl(pd, start, len, virt, access, udata);			\
}
#else
#define XIW_COMPAT_REG_USER_MR(name, impl)					\
static struct ib_mr *name(struct ib_pd *pd, u64 start, u64 len, u64 virt,	\
			  int access, struct ib_udata *udata)			\
{										\
	return impl(pd, start, len, virt, access, udata);			\
}
#endif

/*
 * Port events.  xiw raises IB_EVENT_PORT_ACTIVE/PORT_ERR from its own
 * netdev notifier on every kernel.  A core that raises them itself for
 * drivers without report_port_event gets one that does nothing, so that
 * each change is reported once.  XIW_COMPAT_REPORT_PORT_EVENT defines it
 * (xiw_compat_report_port_event); XIW_COMPAT_OP_REPORT_PORT_EVENT is its
 * ib_device_ops initializer.  Both are empty where the op does not exist.
 */
#ifdef XIW_HAVE_REPORT_PORT_EVENT
#define XIW_COMPAT_REPORT_PORT_EVENT						\
static void xiw_compat_report_port_event(struct ib_device *ibdev,		\
					 struct net_device *ndev,		\
					 unsigned long event)			\
{										\
}

#define XIW_COMPAT_OP_REPORT_PORT_EVENT						\
	.report_port_event = xiw_compat_report_port_event,
#else
#define XIW_COMPAT_REPORT_PORT_EVENT
#define XIW_COMPAT_OP_REPORT_PORT_EVENT
#endif

/*
 * xiw_mark_name_assigned_by_user(ibdev): say that the device's name is the
 * one the user gave to `rdma link add`, so that nldev reports it as such
 * and rdma-core's udev rule (rdma_rename) does not rename the device.
 * Kernels before 6.11 have no name assign type: nldev reports none, and
 * every name looks kernel-assigned to rdma_rename.
 */
#ifdef XIW_HAVE_MARK_NAME_ASSIGNED_BY_USER
#define xiw_mark_name_assigned_by_user(ibdev)	ib_mark_name_assigned_by_user(ibdev)
#else
#define xiw_mark_name_assigned_by_user(ibdev)	((void)(ibdev))
#endif

/* xiw_umem_get(): pin a user virtual range (<rdma/ib_umem.h>). */
#ifdef XIW_HAVE_UMEM_GET_VA
#define xiw_umem_get(dev, addr, size, access)	ib_umem_get_va(dev, addr, size, access)
#else
#define xiw_umem_get(dev, addr, size, access)	ib_umem_get(dev, addr, size, access)
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

/*
 * Can the CPU read the skb's page fragments?  Before devmem TCP they are
 * always memory it can.  A macro: it expands where <linux/skbuff.h> is
 * included.
 */
#ifdef XIW_HAVE_SKB_FRAGS_READABLE
#define xiw_skb_frags_readable(skb)	skb_frags_readable(skb)
#else
#define xiw_skb_frags_readable(skb)	((void)(skb), true)
#endif

#endif /* _XIW_COMPAT_H */
