// SPDX-License-Identifier: GPL-2.0
/*
 * Linux 6.17: ib_device_ops.reg_user_mr takes a struct ib_dmah * (a DMA
 * handle from the user, NULL when none was given) before the udata.
 */
#include <rdma/ib_verbs.h>

static struct ib_mr *probe_reg_user_mr(struct ib_pd *pd, u64 start, u64 len,
				       u64 virt, int access,
				       struct ib_dmah *dmah,
				       struct ib_udata *udata)
{
	return NULL;
}

static const struct ib_device_ops probe_ops __maybe_unused = {
	.reg_user_mr = probe_reg_user_mr,
};
