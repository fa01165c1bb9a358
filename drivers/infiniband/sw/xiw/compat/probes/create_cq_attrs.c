// SPDX-License-Identifier: GPL-2.0
/*
 * Linux 6.11: ib_device_ops.create_cq takes a struct uverbs_attr_bundle
 * instead of a struct ib_udata.
 */
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

static int probe_create_cq(struct ib_cq *cq, const struct ib_cq_init_attr *attr,
			   struct uverbs_attr_bundle *attrs)
{
	return 0;
}

static const struct ib_device_ops probe_ops __maybe_unused = {
	.create_cq = probe_create_cq,
};
