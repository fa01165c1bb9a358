/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xiw: software iWARP over kernel TCP sockets -- core objects.
 */
#ifndef _XIW_H
#define _XIW_H

#include <linux/if_ether.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include <rdma/xiw-abi.h>

#define XIW_DRV_NAME		"xiw"
#define XIW_LINK_TYPE		"xiw"
/* Vendor id reported by query_device: ASCII "xiw". */
#define XIW_VENDOR_ID		0x786977
#define XIW_PORT		1

/* Device limits: what query_device reports is what the verbs enforce. */
#define XIW_MAX_QP		(1024 * 64)
#define XIW_MAX_QP_WR		(1024 * 32)
#define XIW_MAX_ORD_QP		128
#define XIW_MAX_IRD_QP		128
#define XIW_MAX_SGE_KERNEL	16
#define XIW_MAX_SGE_RD		1
#define XIW_MAX_CQ		(1024 * 64)
#define XIW_MAX_CQE		(XIW_MAX_QP_WR * 100)
#define XIW_MAX_MR		(XIW_MAX_QP * 10)
#define XIW_MAX_PD		XIW_MAX_QP
#define XIW_MAX_SRQ		XIW_MAX_QP
#define XIW_MAX_SRQ_WR		(XIW_MAX_QP_WR * 10)
#define XIW_MAX_CONTEXT		XIW_MAX_PD
#define XIW_MAX_FR_PAGES	512

/**
 * struct xiw_device - one xiw RDMA device, bound to one netdev
 * @base_dev: the ib_core device; must stay first
 * @netdev: the bound netdev, with a reference (@netdev_tracker); cleared
 *	on NETDEV_UNREGISTER.  Readers use rcu_read_lock(); writers hold
 *	xiw_dev_lock.
 * @netdev_tracker: reference tracker of @netdev
 * @raw_gid: hardware address the GID and GUIDs are derived from; written
 *	under xiw_dev_lock, read without it (a torn read can only mix two
 *	valid addresses during an address change, which is reported anyway)
 * @list: entry in xiw_dev_list, under xiw_dev_lock
 * @dev_id: small unique number (vendor part id, user context dev_id)
 * @numa_node: NUMA node of the netdev, for placing per-QP work
 * @num_ctx: user contexts in use
 * @num_pd: protection domains in use
 */
struct xiw_device {
	struct ib_device base_dev;
	struct net_device __rcu *netdev;
	netdevice_tracker netdev_tracker;
	u8 raw_gid[ETH_ALEN];
	struct list_head list;
	u32 dev_id;
	int numa_node;

	atomic_t num_ctx;
	atomic_t num_pd;
};

/**
 * struct xiw_ucontext - user verbs context
 * @base_ucontext: the ib_core context; must stay first
 * @xdev: owning device
 */
struct xiw_ucontext {
	struct ib_ucontext base_ucontext;
	struct xiw_device *xdev;
};

/**
 * struct xiw_pd - protection domain
 * @base_pd: the ib_core PD; must stay first
 */
struct xiw_pd {
	struct ib_pd base_pd;
};

static inline struct xiw_device *to_xiw_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct xiw_device, base_dev);
}

static inline struct xiw_ucontext *to_xiw_ctx(struct ib_ucontext *ctx)
{
	return container_of(ctx, struct xiw_ucontext, base_ucontext);
}

static inline struct xiw_pd *to_xiw_pd(struct ib_pd *pd)
{
	return container_of(pd, struct xiw_pd, base_pd);
}

#endif /* _XIW_H */
