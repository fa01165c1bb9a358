// SPDX-License-Identifier: GPL-2.0
/*
 * xiw: software iWARP over kernel TCP sockets.
 *
 * Module life cycle, rdma_link_ops ("rdma link add NAME type xiw netdev
 * DEV"), the netdev notifier and the device ops table.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/wait.h>
#include <net/addrconf.h>
#include <rdma/ib_verbs.h>
#include <rdma/iw_cm.h>
#include <rdma/rdma_netlink.h>
#include <rdma/uverbs_ioctl.h>

#include "xiw.h"
#include "xiw_cm.h"
#include "xiw_conn.h"
#include "xiw_mem.h"
#include "xiw_offload.h"
#include "xiw_verbs.h"

MODULE_AUTHOR("The xiw authors");
MODULE_DESCRIPTION("Software iWARP (RDMAP/DDP/MPA over TCP) RDMA driver");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK(XIW_LINK_TYPE);

/*
 * xiw_dev_lock guards xiw_dev_list, the @netdev pointers of all devices and
 * xiw_dev_ids.  Lock order: rtnl_lock (netdev notifier) -> xiw_dev_lock.
 * Nothing may take rtnl_lock or call into ib_register_device() while
 * holding it.
 */
static DEFINE_MUTEX(xiw_dev_lock);
static LIST_HEAD(xiw_dev_list);
static DEFINE_IDA(xiw_dev_ids);
/* Woken whenever a device leaves xiw_dev_list. */
static DECLARE_WAIT_QUEUE_HEAD(xiw_dev_gone);

/* Runs the deferred completion handlers and events of all CQs. */
struct workqueue_struct *xiw_cq_wq;

static void xiw_dealloc_driver(struct ib_device *ibdev);

/* create_cq's signature differs between kernels: see compat/. */
XIW_COMPAT_CREATE_CQ(xiw_create_cq, xiw_create_cq_impl)
/* So does reg_user_mr's. */
XIW_COMPAT_REG_USER_MR(xiw_reg_user_mr, xiw_reg_user_mr_impl)
/* Port events come from xiw_netdev_event() alone. */
XIW_COMPAT_REPORT_PORT_EVENT

static const struct ib_device_ops xiw_device_ops = {
	.owner = THIS_MODULE,
	.uverbs_abi_ver = XIW_ABI_VERSION,
	.driver_id = RDMA_DRIVER_SIW,

	.alloc_mr = xiw_alloc_mr,
	.alloc_pd = xiw_alloc_pd,
	.alloc_ucontext = xiw_alloc_ucontext,
	.iw_accept = xiw_accept,
	.iw_add_ref = xiw_qp_add_ref,
	.iw_connect = xiw_connect,
	.iw_create_listen = xiw_create_listen,
	.iw_destroy_listen = xiw_destroy_listen,
	.iw_get_qp = xiw_get_base_qp,
	.iw_reject = xiw_reject,
	.iw_rem_ref = xiw_qp_rem_ref,
	.create_cq = xiw_create_cq,
	.create_qp = xiw_create_qp,
	.create_srq = xiw_create_srq,
	.alloc_hw_port_stats = xiw_alloc_hw_port_stats,
	.dealloc_driver = xiw_dealloc_driver,
	.dealloc_pd = xiw_dealloc_pd,
	.dealloc_ucontext = xiw_dealloc_ucontext,
	.disassociate_ucontext = xiw_disassociate_ucontext,
	.dereg_mr = xiw_dereg_mr,
	.destroy_cq = xiw_destroy_cq,
	.destroy_qp = xiw_destroy_qp,
	.destroy_srq = xiw_destroy_srq,
	.device_group = &xiw_cfg_attr_group,
	.fill_res_cm_id_entry = xiw_fill_res_cm_id_entry,
	.fill_res_cq_entry = xiw_fill_res_cq_entry,
	.fill_res_mr_entry = xiw_fill_res_mr_entry,
	.fill_res_qp_entry = xiw_fill_res_qp_entry,
	.get_dma_mr = xiw_get_dma_mr,
	.get_hw_stats = xiw_get_hw_stats,
	.get_port_immutable = xiw_get_port_immutable,
	.map_mr_sg = xiw_map_mr_sg,
	.mmap = xiw_mmap,
	.mmap_free = xiw_mmap_free,
	.modify_qp = xiw_modify_qp,
	.modify_srq = xiw_modify_srq,
	.poll_cq = xiw_poll_cq,
	.post_recv = xiw_post_recv,
	.post_send = xiw_post_send,
	.post_srq_recv = xiw_post_srq_recv,
	.query_device = xiw_query_device,
	.query_gid = xiw_query_gid,
	.query_pkey = xiw_query_pkey,
	.query_port = xiw_query_port,
	.query_qp = xiw_query_qp,
	.query_srq = xiw_query_srq,
	.reg_user_mr = xiw_reg_user_mr,
	XIW_COMPAT_OP_REPORT_PORT_EVENT
	.req_notify_cq = xiw_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, xiw_cq, base_cq),
	INIT_RDMA_OBJ_SIZE(ib_pd, xiw_pd, base_pd),
	INIT_RDMA_OBJ_SIZE(ib_qp, xiw_qp, base_qp),
	INIT_RDMA_OBJ_SIZE(ib_srq, xiw_srq, base_srq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, xiw_ucontext, base_ucontext),
};

/*
 * Netdevs xiw can run on: Ethernet-like devices with a MAC, loopback, and
 * devices without a link-layer header (tunnels, ARPHRD_NONE).
 */
static bool xiw_netdev_qualified(const struct net_device *ndev)
{
	switch (ndev->type) {
	case ARPHRD_ETHER:
	case ARPHRD_IEEE802:
	case ARPHRD_LOOPBACK:
	case ARPHRD_NONE:
		return true;
	default:
		return false;
	}
}

/* Caller holds xiw_dev_lock. */
static struct xiw_device *xiw_dev_find_locked(const struct net_device *ndev)
{
	struct xiw_device *xdev;

	lockdep_assert_held(&xiw_dev_lock);
	list_for_each_entry(xdev, &xiw_dev_list, list) {
		if (rcu_access_pointer(xdev->netdev) == ndev)
			return xdev;
	}
	return NULL;
}

/* Derive the hardware address the GID is made of; caller holds xiw_dev_lock. */
static void xiw_dev_set_hwaddr(struct xiw_device *xdev,
			       const struct net_device *ndev)
{
	struct ib_device *ibdev = &xdev->base_dev;

	if (ndev->addr_len >= ETH_ALEN && !is_zero_ether_addr(ndev->dev_addr))
		ether_addr_copy(xdev->raw_gid, ndev->dev_addr);
	else if (is_zero_ether_addr(xdev->raw_gid))
		/* No usable address (tunnels): a stable random one. */
		eth_random_addr(xdev->raw_gid);
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, xdev->raw_gid);
}

static struct lock_class_key xiw_qp_xa_key;
static struct lock_class_key xiw_cq_xa_key;
static struct lock_class_key xiw_mem_xa_key;

static struct xiw_device *xiw_dev_alloc(struct net_device *ndev)
{
	struct xiw_device *xdev;
	struct ib_device *ibdev;
	int id;

	xdev = ib_alloc_device(xiw_device, base_dev);
	if (!xdev)
		return ERR_PTR(-ENOMEM);
	ibdev = &xdev->base_dev;

	id = ida_alloc_min(&xiw_dev_ids, 1, GFP_KERNEL);
	if (id < 0) {
		ib_dealloc_device(ibdev);
		return ERR_PTR(id);
	}
	xdev->dev_id = id;
	INIT_LIST_HEAD(&xdev->list);
	atomic_set(&xdev->num_ctx, 0);
	atomic_set(&xdev->num_pd, 0);
	atomic_set(&xdev->num_cq, 0);
	atomic_set(&xdev->num_qp, 0);
	atomic_set(&xdev->num_srq, 0);
	atomic_set(&xdev->num_mr, 0);
	xa_init_flags(&xdev->qp_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&xdev->cq_xa, XA_FLAGS_ALLOC);
	xa_init_flags(&xdev->mem_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	/*
	 * xa_init_flags() is inline: all three locks would share one lockdep
	 * class, and the process-context-only lock of @cq_xa would look like
	 * the irq-safe ones of @qp_xa and @mem_xa, which the data path takes
	 * under its own irq-safe locks.
	 */
	lockdep_set_class(&xdev->qp_xa.xa_lock, &xiw_qp_xa_key);
	lockdep_set_class(&xdev->cq_xa.xa_lock, &xiw_cq_xa_key);
	lockdep_set_class(&xdev->mem_xa.xa_lock, &xiw_mem_xa_key);
	xdev->numa_node = dev_to_node(&ndev->dev);

	ib_set_device_ops(ibdev, &xiw_device_ops);
	ibdev->node_type = RDMA_NODE_RNIC;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->iw_driver_flags = IW_F_NO_PORT_MAP;
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND);
	memcpy(ibdev->node_desc, XIW_NODE_DESC_COMMON,
	       sizeof(XIW_NODE_DESC_COMMON));
	strscpy(ibdev->iw_ifname, ndev->name, sizeof(ibdev->iw_ifname));
	/*
	 * Sit under the netdev's bus device (a NIC's PCI function), so that
	 * sysfs links the two (/sys/class/infiniband/DEV/device/net/) as for
	 * a hardware RNIC; virtual netdevs have no parent.  Only the device
	 * model reference: DMA stays virtual (ib_register_device() gets no
	 * DMA device).
	 */
	ibdev->dev.parent = ndev->dev.parent;
	xiw_dev_cfg_init(xdev);
	spin_lock_init(&xdev->conn_lock);
	INIT_LIST_HEAD(&xdev->conn_list);
	spin_lock_init(&xdev->atomic_lock);
	xiw_dev_set_hwaddr(xdev, ndev);
	return xdev;
}

/*
 * Detach @xdev from its netdev and drop the reference.  Done under
 * xiw_dev_lock, which also keeps @xdev alive (xiw_dealloc_driver() takes it).
 */
static void xiw_dev_detach_locked(struct xiw_device *xdev)
{
	struct net_device *ndev;

	lockdep_assert_held(&xiw_dev_lock);
	ndev = rcu_dereference_protected(xdev->netdev,
					 lockdep_is_held(&xiw_dev_lock));
	if (!ndev)
		return;
	RCU_INIT_POINTER(xdev->netdev, NULL);
	/* Readers of xdev->netdev run under rcu_read_lock(). */
	synchronize_rcu();
	netdev_put(ndev, &xdev->netdev_tracker);
}

/*
 * Start unregistering a registered device from a context that must not wait
 * for it (the netdev notifier runs under rtnl_lock).  A device whose
 * registration has not completed yet holds no reference and is left to
 * xiw_newlink(), which checks for a lost netdev after registering.
 */
static void xiw_dev_unregister_async(struct xiw_device *xdev)
{
	if (ib_device_try_get(&xdev->base_dev)) {
		ib_unregister_device_queued(&xdev->base_dev);
		ib_device_put(&xdev->base_dev);
	}
}

/* ops.dealloc_driver: the last call ib_core makes for a device. */
static void xiw_dealloc_driver(struct ib_device *ibdev)
{
	struct xiw_device *xdev = to_xiw_dev(ibdev);

	mutex_lock(&xiw_dev_lock);
	xiw_dev_detach_locked(xdev);
	list_del_init(&xdev->list);
	ida_free(&xiw_dev_ids, xdev->dev_id);
	mutex_unlock(&xiw_dev_lock);

	/* ib_core destroyed every object before: anything left is a leak. */
	WARN_ON_ONCE(atomic_read(&xdev->num_ctx) || atomic_read(&xdev->num_pd) ||
		     atomic_read(&xdev->num_cq) || atomic_read(&xdev->num_qp) ||
		     atomic_read(&xdev->num_srq) ||
		     atomic_read(&xdev->num_mr));
	WARN_ON_ONCE(!xa_empty(&xdev->qp_xa) || !xa_empty(&xdev->cq_xa) ||
		     !xa_empty(&xdev->mem_xa));
	xa_destroy(&xdev->qp_xa);
	xa_destroy(&xdev->cq_xa);
	xa_destroy(&xdev->mem_xa);
	wake_up_all(&xiw_dev_gone);
}

/* rdma_link_ops.newlink: called by nldev without rtnl_lock. */
static int xiw_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct ib_device *other;
	struct xiw_device *xdev;
	bool lost;
	int rv;

	if (!xiw_netdev_qualified(ndev)) {
		pr_warn_ratelimited("%s: netdev %s has unsupported type %u\n",
				    ibdev_name, ndev->name, ndev->type);
		return -EINVAL;
	}
	/*
	 * A name another device has is refused by ib_register_device()
	 * (-ENFILE, returned as -EEXIST below).  This catches xiw and in-tree
	 * siw devices alike (same driver id).
	 */
	other = ib_device_get_by_netdev(ndev, RDMA_DRIVER_SIW);
	if (other) {
		pr_warn_ratelimited("%s: netdev %s already has the iWARP device %s\n",
				    ibdev_name, ndev->name,
				    dev_name(&other->dev));
		ib_device_put(other);
		return -EEXIST;
	}

	rv = xiw_offload_check_netdev(ndev);
	if (rv)
		return rv;

	xdev = xiw_dev_alloc(ndev);
	if (IS_ERR(xdev))
		return PTR_ERR(xdev);

	/*
	 * Publish the device on the list (with its netdev reference) before
	 * registering, so that a racing newlink on the same netdev fails and
	 * the notifier sees an unregistering netdev; xiw_dealloc_driver()
	 * undoes both on every path, including failed registration.
	 */
	mutex_lock(&xiw_dev_lock);
	if (xiw_dev_find_locked(ndev)) {
		mutex_unlock(&xiw_dev_lock);
		pr_warn_ratelimited("%s: netdev %s already has an xiw device\n",
				    ibdev_name, ndev->name);
		rv = -EEXIST;
		goto err_dealloc;
	}
	netdev_hold(ndev, &xdev->netdev_tracker, GFP_KERNEL);
	rcu_assign_pointer(xdev->netdev, ndev);
	list_add_tail(&xdev->list, &xiw_dev_list);
	mutex_unlock(&xiw_dev_lock);

	rv = ib_device_set_netdev(&xdev->base_dev, ndev, XIW_PORT);
	if (rv)
		goto err_dealloc;

	/*
	 * The name is the user's (rdma link add NAME): nldev says so, and
	 * rdma-core's udev rule (rdma_rename %k NAME_FALLBACK) leaves it.
	 */
	xiw_mark_name_assigned_by_user(&xdev->base_dev);
	rv = ib_register_device(&xdev->base_dev, ibdev_name, NULL);
	if (rv == -ENFILE) {
		pr_warn_ratelimited("device name %s is already in use\n",
				    ibdev_name);
		rv = -EEXIST;
		goto err_dealloc;
	}
	if (rv) {
		pr_warn_ratelimited("%s: registration failed: %d\n",
				    ibdev_name, rv);
		goto err_dealloc;
	}

	/* The netdev may have been unregistered while we registered. */
	mutex_lock(&xiw_dev_lock);
	lost = !rcu_access_pointer(xdev->netdev);
	mutex_unlock(&xiw_dev_lock);
	if (lost) {
		xiw_dev_unregister_async(xdev);
		return -ENODEV;
	}
	ibdev_info(&xdev->base_dev, "attached to %s (%pM)\n", ndev->name,
		   xdev->raw_gid);
	return 0;

err_dealloc:
	ib_dealloc_device(&xdev->base_dev);
	return rv;
}

static struct rdma_link_ops xiw_link_ops = {
	.type = XIW_LINK_TYPE,
	.newlink = xiw_newlink,
};

static void xiw_port_event(struct xiw_device *xdev, enum ib_event_type type)
{
	struct ib_event event = {
		.device = &xdev->base_dev,
		.event = type,
		.element.port_num = XIW_PORT,
	};

	ib_dispatch_event(&event);
}

static int xiw_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *arg)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(arg);
	struct xiw_device *xdev, *gone = NULL;

	ASSERT_RTNL();

	mutex_lock(&xiw_dev_lock);
	xdev = xiw_dev_find_locked(ndev);
	if (!xdev)
		goto out;

	switch (event) {
	case NETDEV_UP:
	case NETDEV_CHANGE:
		if (netif_running(ndev) && netif_carrier_ok(ndev))
			xiw_port_event(xdev, IB_EVENT_PORT_ACTIVE);
		else
			xiw_port_event(xdev, IB_EVENT_PORT_ERR);
		break;
	case NETDEV_DOWN:
		xiw_port_event(xdev, IB_EVENT_PORT_ERR);
		break;
	case NETDEV_CHANGEMTU:
		/* Connections pick the new MSS up from TCP; tell consumers. */
		xiw_port_event(xdev, IB_EVENT_PORT_ACTIVE);
		break;
	case NETDEV_CHANGEADDR:
		xiw_dev_set_hwaddr(xdev, ndev);
		xiw_port_event(xdev, IB_EVENT_GID_CHANGE);
		break;
	case NETDEV_CHANGENAME:
		strscpy(xdev->base_dev.iw_ifname, ndev->name,
			sizeof(xdev->base_dev.iw_ifname));
		break;
	case NETDEV_UNREGISTER:
		/*
		 * The device goes away with its netdev.  Our netdev reference
		 * is dropped now so the netdev can go.  Below, outside
		 * xiw_dev_lock, the connects in progress fail (that takes
		 * endpoint mutexes and resets sockets) and unregistration of
		 * the ib_device is queued: it must not run under rtnl_lock.
		 * A device whose registration has not completed has no
		 * connects and is left to xiw_newlink().
		 */
		xiw_dev_detach_locked(xdev);
		if (ib_device_try_get(&xdev->base_dev))
			gone = xdev;
		break;
	default:
		break;
	}
out:
	mutex_unlock(&xiw_dev_lock);
	if (gone) {
		xiw_cm_dev_gone(gone);
		ib_unregister_device_queued(&gone->base_dev);
		ib_device_put(&gone->base_dev);
	}
	return NOTIFY_OK;
}

static struct notifier_block xiw_netdev_nb = {
	.notifier_call = xiw_netdev_event,
};

/* Unregister every xiw device and wait until ib_core has freed them all. */
static void xiw_unregister_all(void)
{
	struct xiw_device *xdev;
	struct ib_device *ibdev;

	for (;;) {
		ibdev = NULL;
		mutex_lock(&xiw_dev_lock);
		list_for_each_entry(xdev, &xiw_dev_list, list) {
			if (ib_device_try_get(&xdev->base_dev)) {
				ibdev = &xdev->base_dev;
				break;
			}
		}
		mutex_unlock(&xiw_dev_lock);
		if (!ibdev)
			break;
		ib_unregister_device_and_put(ibdev);
	}
	/* Devices whose unregistration was already under way. */
	wait_event(xiw_dev_gone, list_empty_careful(&xiw_dev_list));
}

static int __init xiw_init(void)
{
	int rv;

	rv = xiw_offload_init();
	if (rv)
		return rv;
	xiw_cq_wq = alloc_workqueue("xiw_cq",
				    WQ_HIGHPRI | WQ_MEM_RECLAIM | XIW_WQ_PERCPU, 0);
	if (!xiw_cq_wq)
		return -ENOMEM;
	rv = xiw_conn_init();
	if (rv)
		goto err_wq;
	rv = xiw_cm_init();
	if (rv)
		goto err_conn;
	rv = register_netdevice_notifier(&xiw_netdev_nb);
	if (rv)
		goto err_cm;
	rdma_link_register(&xiw_link_ops);
	pr_info("software iWARP driver loaded\n");
	return 0;

err_cm:
	xiw_cm_exit();
err_conn:
	xiw_conn_exit();
err_wq:
	destroy_workqueue(xiw_cq_wq);
	return rv;
}

static void __exit xiw_exit(void)
{
	rdma_link_unregister(&xiw_link_ops);
	xiw_unregister_all();
	unregister_netdevice_notifier(&xiw_netdev_nb);
	xiw_cm_exit();
	xiw_conn_exit();
	destroy_workqueue(xiw_cq_wq);
	ida_destroy(&xiw_dev_ids);
	pr_info("unloaded\n");
}

module_init(xiw_init);
module_exit(xiw_exit);
