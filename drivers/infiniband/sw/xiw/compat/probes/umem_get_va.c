// SPDX-License-Identifier: GPL-2.0
/*
 * Linux 7.x: ib_umem_get() is gone; a umem of a user virtual range comes
 * from ib_umem_get_va() (the same arguments), beside the attribute-based
 * ib_umem_get_attr*() getters.
 */
#include <rdma/ib_umem.h>

struct ib_umem *(*probe_get)(struct ib_device *, unsigned long, size_t, int)
	__maybe_unused = ib_umem_get_va;
