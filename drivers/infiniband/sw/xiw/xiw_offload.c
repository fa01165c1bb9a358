// SPDX-License-Identifier: GPL-2.0
/*
 * xiw: offload backends and the hardware-iWARP check.
 *
 * The registry holds the backends a device can select (its "offload"
 * attribute); "software" is always there and leaves everything to the
 * CPU.  A connection takes a reference on its backend's module when it
 * starts and drops it when it is freed, so a backend module cannot go
 * while a connection uses it.
 *
 * Intel X722 (i40e) and E810 (ice) adapters run iWARP in hardware through
 * irdma.  A port whose netdev belongs to such a driver and already has an
 * RDMA device of another driver bound to it is served by hardware: xiw
 * warns when a device is added there, or refuses (hw_iwarp_policy).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

#include "xiw_offload.h"

/* Guards xiw_offload_list; innermost, any process context. */
static DEFINE_SPINLOCK(xiw_offload_lock);
static LIST_HEAD(xiw_offload_list);

/*
 * The default: every hook NULL, the CPU does it all.  No owner: a
 * connection of xiw's own must not pin xiw (rmmod ends connections).
 */
static struct xiw_offload_ops xiw_offload_software = {
	.name = "software",
};

static struct xiw_offload_ops *xiw_offload_find_locked(const char *name)
{
	struct xiw_offload_ops *ops;

	lockdep_assert_held(&xiw_offload_lock);
	list_for_each_entry(ops, &xiw_offload_list, list)
		if (!strcmp(ops->name, name))
			return ops;
	return NULL;
}

/**
 * xiw_offload_register - offer a backend to every xiw device
 * @ops: the backend; its name must be unique, shorter than
 *	XIW_OFFLOAD_NAME_MAX and free of white space
 *
 * Return: 0, -EINVAL for a bad name, -EEXIST if the name is taken.
 */
int xiw_offload_register(struct xiw_offload_ops *ops)
{
	size_t len = ops->name ? strlen(ops->name) : 0;
	size_t i;
	int rv = 0;

	if (!len || len >= XIW_OFFLOAD_NAME_MAX)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (ops->name[i] <= ' ')
			return -EINVAL;
	spin_lock(&xiw_offload_lock);
	if (xiw_offload_find_locked(ops->name))
		rv = -EEXIST;
	else
		list_add_tail(&ops->list, &xiw_offload_list);
	spin_unlock(&xiw_offload_lock);
	if (!rv)
		pr_info("offload backend %s registered\n", ops->name);
	return rv;
}
EXPORT_SYMBOL_GPL(xiw_offload_register);

/**
 * xiw_offload_unregister - withdraw a backend
 * @ops: a registered backend
 *
 * Connections that use it keep it (they hold its module); devices that
 * select it start new connections in software.
 */
void xiw_offload_unregister(struct xiw_offload_ops *ops)
{
	spin_lock(&xiw_offload_lock);
	list_del_init(&ops->list);
	spin_unlock(&xiw_offload_lock);
	pr_info("offload backend %s unregistered\n", ops->name);
}
EXPORT_SYMBOL_GPL(xiw_offload_unregister);

/**
 * xiw_offload_get - the backend of a new connection, with a reference
 * @name: the device's selection
 *
 * Return: that backend, or the software one when it is gone.
 */
const struct xiw_offload_ops *xiw_offload_get(const char *name)
{
	struct xiw_offload_ops *ops;

	spin_lock(&xiw_offload_lock);
	ops = xiw_offload_find_locked(name);
	if (ops && !try_module_get(ops->owner))
		ops = NULL;
	spin_unlock(&xiw_offload_lock);
	if (!ops) {
		pr_warn_ratelimited("offload backend %s is not registered: software\n",
				    name);
		ops = &xiw_offload_software;
	}
	return ops;
}

/**
 * xiw_offload_put - drop a connection's reference on its backend
 * @ops: from xiw_offload_get()
 */
void xiw_offload_put(const struct xiw_offload_ops *ops)
{
	module_put(ops->owner);
}

/**
 * xiw_offload_exists - is a backend of that name registered?
 * @name: name
 *
 * Return: true if so.
 */
bool xiw_offload_exists(const char *name)
{
	bool found;

	spin_lock(&xiw_offload_lock);
	found = xiw_offload_find_locked(name);
	spin_unlock(&xiw_offload_lock);
	return found;
}

/* ---------------------------------------------------------------------- */
/* Another RDMA device on the port                                       */
/* ---------------------------------------------------------------------- */

static const char * const xiw_hw_policy_names[] = { "warn", "refuse" };
static int xiw_hw_policy;	/* index into xiw_hw_policy_names */

static int xiw_hw_policy_set(const char *val, const struct kernel_param *kp)
{
	int i = __sysfs_match_string(xiw_hw_policy_names,
				     ARRAY_SIZE(xiw_hw_policy_names), val);

	if (i < 0) {
		pr_warn_ratelimited("module: hw_iwarp_policy: invalid value, expected warn or refuse\n");
		return -EINVAL;
	}
	WRITE_ONCE(xiw_hw_policy, i);
	return 0;
}

static int xiw_hw_policy_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  xiw_hw_policy_names[READ_ONCE(xiw_hw_policy)]);
}

static const struct kernel_param_ops xiw_hw_policy_ops = {
	.set = xiw_hw_policy_set,
	.get = xiw_hw_policy_get,
};
module_param_cb(hw_iwarp_policy, &xiw_hw_policy_ops, NULL, 0644);
MODULE_PARM_DESC(hw_iwarp_policy,
		 "When another RDMA device serves the netdev already: warn (default) or refuse");

/**
 * xiw_offload_check_netdev - may xiw add a device on @ndev?
 * @ndev: the netdev of `rdma link add`, referenced by the caller
 *
 * An RDMA device of another driver bound to @ndev already (irdma, which
 * serves iWARP in hardware on Intel X722 and E810 ports, or a RoCE
 * device) means rdma_cm would map the netdev's addresses to one of two
 * devices, and a ULP could end up on either.  Logged either way; refused
 * when hw_iwarp_policy says so.  siw and xiw devices are refused before
 * this (xiw_newlink()).  ib_core finds one device per call: with several
 * bound, the first is named.  Process context, rtnl not held.
 *
 * Return: 0, or -EBUSY when refused.
 */
int xiw_offload_check_netdev(struct net_device *ndev)
{
	struct ib_device *other;
	bool refuse;

	other = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);
	if (!other)
		return 0;
	refuse = READ_ONCE(xiw_hw_policy) == 1;
	pr_warn_ratelimited("netdev %s is served by RDMA device %s (driver id %u) already%s\n",
			    ndev->name, dev_name(&other->dev),
			    other->ops.driver_id,
			    refuse ? ": refused (hw_iwarp_policy=refuse)" :
				     "; xiw shares the port");
	ib_device_put(other);
	return refuse ? -EBUSY : 0;
}

/**
 * xiw_offload_init - register the software backend
 *
 * Return: 0.
 */
int xiw_offload_init(void)
{
	return xiw_offload_register(&xiw_offload_software);
}
