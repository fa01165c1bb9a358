// SPDX-License-Identifier: GPL-2.0
/*
 * Linux 6.11: struct ib_device has a name_assign_type, which nldev reports
 * as RDMA_NLDEV_ATTR_NAME_ASSIGN_TYPE; ib_mark_name_assigned_by_user()
 * marks a name the user gave (rdma link add), which rdma-core's udev rule
 * (rdma_rename) then leaves alone.
 */
#include <rdma/ib_verbs.h>

static void (*probe_mark)(struct ib_device *) __maybe_unused =
	ib_mark_name_assigned_by_user;
