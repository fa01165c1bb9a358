// SPDX-License-Identifier: GPL-2.0
/*
 * Linux 6.14: the RDMA core turns NETDEV_UP, NETDEV_CHANGE and NETDEV_DOWN
 * of a device's netdev into IB_EVENT_PORT_ACTIVE/PORT_ERR itself, unless
 * the driver has ib_device_ops.report_port_event, which it calls instead.
 */
#include <rdma/ib_verbs.h>

static void probe_report(struct ib_device *ibdev, struct net_device *ndev,
			 unsigned long event)
{
}

static const struct ib_device_ops probe_ops __maybe_unused = {
	.report_port_event = probe_report,
};
