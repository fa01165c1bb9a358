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

#endif /* _XIW_COMPAT_H */
