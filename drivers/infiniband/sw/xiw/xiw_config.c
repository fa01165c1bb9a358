// SPDX-License-Identifier: GPL-2.0
/*
 * xiw: protocol settings.  Every device carries its own set, read and
 * written through sysfs attributes of the ib_device
 * (/sys/class/infiniband/DEV/mpa_crc, ...); the module parameters of the
 * same names are only the set a new device starts with.  A connection takes
 * a snapshot of its device's settings when its endpoint is created, so a
 * change applies to connections set up after it and never to one in
 * progress.
 *
 * sysfs rather than configfs: the settings belong to one ib_device and
 * live exactly as long as it does, which ib_core's device attribute group
 * gives for free (created on registration, gone on unregistration); with
 * configfs the administrator would create and remove a second object and
 * keep it in step with rdma link add/delete.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <rdma/ib_verbs.h>

#include "xiw.h"
#include "xiw_offload.h"

/* Most FPDUs the transmit engine gathers into one hand-off to TCP. */
#define XIW_TX_BATCH_MAX	64
#define XIW_TX_BATCH_DEFAULT	32
/* Longest soft-RNR wait, in milliseconds. */
#define XIW_SOFT_RNR_MAX_MS	10000
/* Bounds and default of the MPA Request/Reply wait, in milliseconds. */
#define XIW_MPA_TIMEOUT_MIN_MS	100
#define XIW_MPA_TIMEOUT_MAX_MS	300000
#define XIW_MPA_TIMEOUT_DEF_MS	10000

enum xiw_knob_id {
	XIW_KNOB_MPA_REV,
	XIW_KNOB_MPA_CRC,
	XIW_KNOB_MPA_MARKERS,
	XIW_KNOB_MPA_P2P,
	XIW_KNOB_MPA_P2P_RTR,
	XIW_KNOB_TX_BATCH,
	XIW_KNOB_NAGLE,
	XIW_KNOB_SOFT_RNR_MS,
	XIW_KNOB_TX_ZCOPY,
	XIW_KNOB_MPA_TIMEOUT_MS,
	XIW_NUM_KNOBS
};

static const char * const xiw_crc_names[] = {
	[XIW_MPA_CRC_OFF] = "off",
	[XIW_MPA_CRC_PREFER] = "prefer",
	[XIW_MPA_CRC_REQUIRE] = "require",
	[XIW_MPA_CRC_STRICT] = "strict",
};

static const char * const xiw_marker_names[] = {
	[XIW_MPA_MARKERS_OFF] = "off",
	[XIW_MPA_MARKERS_PREFER] = "prefer",
	[XIW_MPA_MARKERS_REQUIRE] = "require",
};

static const char * const xiw_zcopy_names[] = {
	[XIW_TX_ZCOPY_AUTO] = "auto",
	[XIW_TX_ZCOPY_ON] = "on",
	[XIW_TX_ZCOPY_OFF] = "off",
};

/* Index i stands for the RTR type bit 1 << i (XIW_MPA_RTR_*). */
static const char * const xiw_rtr_names[] = { "write", "read", "send" };

/**
 * xiw_rtr_name - the name of an RTR type, as the settings spell it
 * @rtr: one XIW_MPA_RTR_* bit, or 0
 *
 * Return: "write", "read", "send", or "none".
 */
const char *xiw_rtr_name(u8 rtr)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(xiw_rtr_names); i++)
		if (rtr == 1U << i)
			return xiw_rtr_names[i];
	return "none";
}

/**
 * xiw_tx_zcopy_name - the name of a zero-copy mode, as the settings spell it
 * @mode: enum xiw_tx_zcopy
 *
 * Return: "auto", "on", "off", or "?".
 */
const char *xiw_tx_zcopy_name(u8 mode)
{
	return mode < ARRAY_SIZE(xiw_zcopy_names) ? xiw_zcopy_names[mode] : "?";
}

/**
 * struct xiw_knob - one setting
 * @name: attribute and module parameter name
 * @names: value names of a setting chosen by name, else NULL
 * @count: entries of @names
 * @min: smallest number a numeric setting takes
 * @max: largest number a numeric setting takes
 * @help: what the accepted values are, for the log line of a bad write
 */
struct xiw_knob {
	const char *name;
	const char * const *names;
	unsigned int count;
	unsigned int min;
	unsigned int max;
	const char *help;
};

static const struct xiw_knob xiw_knobs[XIW_NUM_KNOBS] = {
	[XIW_KNOB_MPA_REV] = { "mpa_rev", NULL, 0, MPA_REV_1, MPA_REV_2,
			       "1 or 2" },
	[XIW_KNOB_MPA_CRC] = { "mpa_crc", xiw_crc_names,
			       ARRAY_SIZE(xiw_crc_names), 0, 0,
			       "off, prefer, require or strict" },
	[XIW_KNOB_MPA_MARKERS] = { "mpa_markers", xiw_marker_names,
				   ARRAY_SIZE(xiw_marker_names), 0, 0,
				   "off, prefer or require" },
	[XIW_KNOB_MPA_P2P] = { "mpa_p2p", NULL, 0, 0, 1, "0 or 1" },
	[XIW_KNOB_MPA_P2P_RTR] = { "mpa_p2p_rtr", xiw_rtr_names,
				   ARRAY_SIZE(xiw_rtr_names), 0, 0,
				   "write, read or send" },
	[XIW_KNOB_TX_BATCH] = { "tx_batch", NULL, 0, 1, XIW_TX_BATCH_MAX,
				"1 to 64" },
	[XIW_KNOB_NAGLE] = { "nagle", NULL, 0, 0, 1, "0 or 1" },
	[XIW_KNOB_SOFT_RNR_MS] = { "soft_rnr_ms", NULL, 0, 0,
				   XIW_SOFT_RNR_MAX_MS, "0 to 10000" },
	[XIW_KNOB_TX_ZCOPY] = { "tx_zcopy", xiw_zcopy_names,
				ARRAY_SIZE(xiw_zcopy_names), 0, 0,
				"auto, on or off" },
	[XIW_KNOB_MPA_TIMEOUT_MS] = { "mpa_timeout_ms", NULL, 0,
				      XIW_MPA_TIMEOUT_MIN_MS,
				      XIW_MPA_TIMEOUT_MAX_MS,
				      "100 to 300000" },
};

/* The settings of new devices (module parameters); guarded by the lock. */
static DEFINE_SPINLOCK(xiw_cfg_defaults_lock);
static struct xiw_dev_cfg xiw_cfg_defaults = {
	.mpa_rev = MPA_REV_2,
	.mpa_crc = XIW_MPA_CRC_OFF,
	.mpa_markers = XIW_MPA_MARKERS_OFF,
	.mpa_p2p = false,
	.mpa_p2p_rtr = 0,
	.tx_batch = XIW_TX_BATCH_DEFAULT,
	.nagle = false,
	.soft_rnr_ms = 0,
	.tx_zcopy = XIW_TX_ZCOPY_AUTO,
	.mpa_timeout_ms = XIW_MPA_TIMEOUT_DEF_MS,
	.offload = "software",
};

static unsigned int xiw_knob_load(const struct xiw_dev_cfg *cfg,
				  enum xiw_knob_id id)
{
	switch (id) {
	case XIW_KNOB_MPA_REV:
		return cfg->mpa_rev;
	case XIW_KNOB_MPA_CRC:
		return cfg->mpa_crc;
	case XIW_KNOB_MPA_MARKERS:
		return cfg->mpa_markers;
	case XIW_KNOB_MPA_P2P:
		return cfg->mpa_p2p;
	case XIW_KNOB_MPA_P2P_RTR:
		return cfg->mpa_p2p_rtr;
	case XIW_KNOB_TX_BATCH:
		return cfg->tx_batch;
	case XIW_KNOB_NAGLE:
		return cfg->nagle;
	case XIW_KNOB_SOFT_RNR_MS:
		return cfg->soft_rnr_ms;
	case XIW_KNOB_TX_ZCOPY:
		return cfg->tx_zcopy;
	case XIW_KNOB_MPA_TIMEOUT_MS:
		return cfg->mpa_timeout_ms;
	default:
		return 0;
	}
}

static void xiw_knob_store(struct xiw_dev_cfg *cfg, enum xiw_knob_id id,
			   unsigned int val)
{
	switch (id) {
	case XIW_KNOB_MPA_REV:
		cfg->mpa_rev = val;
		break;
	case XIW_KNOB_MPA_CRC:
		cfg->mpa_crc = val;
		break;
	case XIW_KNOB_MPA_MARKERS:
		cfg->mpa_markers = val;
		break;
	case XIW_KNOB_MPA_P2P:
		cfg->mpa_p2p = val;
		break;
	case XIW_KNOB_MPA_P2P_RTR:
		cfg->mpa_p2p_rtr = val;
		break;
	case XIW_KNOB_TX_BATCH:
		cfg->tx_batch = val;
		break;
	case XIW_KNOB_NAGLE:
		cfg->nagle = val;
		break;
	case XIW_KNOB_SOFT_RNR_MS:
		cfg->soft_rnr_ms = val;
		break;
	case XIW_KNOB_TX_ZCOPY:
		cfg->tx_zcopy = val;
		break;
	case XIW_KNOB_MPA_TIMEOUT_MS:
		cfg->mpa_timeout_ms = val;
		break;
	default:
		break;
	}
}

/*
 * Parse a written value.  A value name, a number in range, or for 0/1
 * settings also the usual boolean spellings; a trailing newline is fine.
 * @who names the device (or "module") in the log line of a bad value.
 */
static int xiw_knob_parse(enum xiw_knob_id id, const char *buf,
			  const char *who, unsigned int *val)
{
	const struct xiw_knob *k = &xiw_knobs[id];
	int i;

	if (k->names) {
		i = __sysfs_match_string(k->names, k->count, buf);
		if (i >= 0) {
			*val = i;
			return 0;
		}
	} else if (k->min == 0 && k->max == 1) {
		bool b;

		if (!kstrtobool(buf, &b)) {
			*val = b;
			return 0;
		}
	} else if (!kstrtouint(buf, 0, val) && *val >= k->min &&
		   *val <= k->max) {
		return 0;
	}
	pr_warn_ratelimited("%s: %s: invalid value, expected %s\n", who,
			    k->name, k->help);
	return -EINVAL;
}

static int xiw_knob_format(enum xiw_knob_id id, unsigned int val, char *buf)
{
	const struct xiw_knob *k = &xiw_knobs[id];

	if (k->names)
		return sysfs_emit(buf, "%s\n",
				  val < k->count ? k->names[val] : "?");
	return sysfs_emit(buf, "%u\n", val);
}

/* ---------------------------------------------------------------------- */
/* Module parameters: the settings of devices created after they are set  */
/* ---------------------------------------------------------------------- */

static int xiw_param_set(const char *val, const struct kernel_param *kp)
{
	enum xiw_knob_id id = (uintptr_t)kp->arg;
	unsigned int v;
	int rv;

	rv = xiw_knob_parse(id, val, "module", &v);
	if (rv)
		return rv;
	spin_lock_bh(&xiw_cfg_defaults_lock);
	xiw_knob_store(&xiw_cfg_defaults, id, v);
	spin_unlock_bh(&xiw_cfg_defaults_lock);
	return 0;
}

static int xiw_param_get(char *buf, const struct kernel_param *kp)
{
	enum xiw_knob_id id = (uintptr_t)kp->arg;
	unsigned int v;

	spin_lock_bh(&xiw_cfg_defaults_lock);
	v = xiw_knob_load(&xiw_cfg_defaults, id);
	spin_unlock_bh(&xiw_cfg_defaults_lock);
	return xiw_knob_format(id, v, buf);
}

static const struct kernel_param_ops xiw_param_ops = {
	.set = xiw_param_set,
	.get = xiw_param_get,
};

#define XIW_PARAM(_name, _id, _desc)					\
	module_param_cb(_name, &xiw_param_ops, (void *)(uintptr_t)(_id), 0644); \
	MODULE_PARM_DESC(_name, _desc)

XIW_PARAM(mpa_rev, XIW_KNOB_MPA_REV,
	  "MPA revision new devices request: 1 or 2 (default 2)");
XIW_PARAM(mpa_crc, XIW_KNOB_MPA_CRC,
	  "MPA CRC policy of new devices: off (use CRC if the peer asks), prefer, require, strict (never CRC)");
XIW_PARAM(mpa_markers, XIW_KNOB_MPA_MARKERS,
	  "MPA marker policy of new devices: off, prefer, require");
XIW_PARAM(mpa_p2p, XIW_KNOB_MPA_P2P,
	  "New devices request peer-to-peer mode (RTR) as initiator: 0 or 1");
XIW_PARAM(mpa_p2p_rtr, XIW_KNOB_MPA_P2P_RTR,
	  "RTR message new devices send as P2P initiator: write, read, send");
XIW_PARAM(tx_batch, XIW_KNOB_TX_BATCH,
	  "Most FPDUs new devices hand TCP in one call: 1 to 64 (default 32)");
XIW_PARAM(nagle, XIW_KNOB_NAGLE,
	  "New devices leave Nagle's algorithm on: 0 or 1 (default 0, TCP_NODELAY)");
XIW_PARAM(soft_rnr_ms, XIW_KNOB_SOFT_RNR_MS,
	  "New devices let a Send without a posted receive wait this long (ms, 0 to 10000, default 0: TERMINATE at once)");
XIW_PARAM(tx_zcopy, XIW_KNOB_TX_ZCOPY,
	  "Zero-copy transmit of new devices: auto (until the stack copies a connection's pages, as on loopback and veth), on, off");
XIW_PARAM(mpa_timeout_ms, XIW_KNOB_MPA_TIMEOUT_MS,
	  "How long new devices wait for the peer's MPA Request or Reply (ms, 100 to 300000, default 10000)");

/* ---------------------------------------------------------------------- */
/* Per-device settings                                                     */
/* ---------------------------------------------------------------------- */

/**
 * xiw_dev_cfg_init - a new device starts with the module parameters
 * @xdev: device, not yet registered
 */
void xiw_dev_cfg_init(struct xiw_device *xdev)
{
	spin_lock_init(&xdev->cfg_lock);
	spin_lock_bh(&xiw_cfg_defaults_lock);
	xdev->cfg = xiw_cfg_defaults;
	spin_unlock_bh(&xiw_cfg_defaults_lock);
}

/**
 * xiw_dev_cfg_get - snapshot of a device's settings
 * @xdev: device
 * @cfg: filled in
 */
void xiw_dev_cfg_get(struct xiw_device *xdev, struct xiw_dev_cfg *cfg)
{
	spin_lock_bh(&xdev->cfg_lock);
	*cfg = xdev->cfg;
	spin_unlock_bh(&xdev->cfg_lock);
}

/**
 * xiw_dev_cfg_policy - the MPA policy a connection negotiates with
 * @cfg: the settings
 * @initiator: for the active side (else the responder's)
 * @pol: filled in
 *
 * Revision 2 (a rev 1 peer is accepted, an initiator retries with rev 1),
 * CRC and markers as set, IRD and ORD up to the device limits (the ULP's
 * values replace them).  Peer-to-peer mode (RFC 6581, revision 2 only) is
 * always accepted as responder, with any of the three RTR types; as
 * initiator it is requested when @cfg says so, offering the one RTR type
 * chosen.
 */
void xiw_dev_cfg_policy(const struct xiw_dev_cfg *cfg, bool initiator,
			struct xiw_mpa_policy *pol)
{
	memset(pol, 0, sizeof(*pol));
	pol->crc = cfg->mpa_crc;
	pol->markers = cfg->mpa_markers;
	pol->rev = cfg->mpa_rev;
	pol->p2p = pol->rev == MPA_REV_2;
	pol->rtr = XIW_MPA_RTR_ALL;
	pol->ird = XIW_MAX_IRD_QP;
	pol->ord = XIW_MAX_ORD_QP;
	if (initiator) {
		pol->p2p = pol->p2p && cfg->mpa_p2p;
		pol->rtr = pol->p2p ? 1U << cfg->mpa_p2p_rtr : 0;
	}
}

static struct xiw_device *xiw_attr_dev(struct device *dev)
{
	return container_of(rdma_device_to_ibdev(dev), struct xiw_device,
			    base_dev);
}

static ssize_t xiw_knob_show(struct device *dev, enum xiw_knob_id id,
			     char *buf)
{
	struct xiw_device *xdev = xiw_attr_dev(dev);
	unsigned int v;

	spin_lock_bh(&xdev->cfg_lock);
	v = xiw_knob_load(&xdev->cfg, id);
	spin_unlock_bh(&xdev->cfg_lock);
	return xiw_knob_format(id, v, buf);
}

static ssize_t xiw_knob_set(struct device *dev, enum xiw_knob_id id,
			    const char *buf, size_t count)
{
	struct xiw_device *xdev = xiw_attr_dev(dev);
	unsigned int v;
	int rv;

	rv = xiw_knob_parse(id, buf, dev_name(&xdev->base_dev.dev), &v);
	if (rv)
		return rv;
	spin_lock_bh(&xdev->cfg_lock);
	xiw_knob_store(&xdev->cfg, id, v);
	spin_unlock_bh(&xdev->cfg_lock);
	return count;
}

#define XIW_KNOB_ATTR(_name, _id)					\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	return xiw_knob_show(dev, _id, buf);				\
}									\
static ssize_t _name##_store(struct device *dev,			\
			     struct device_attribute *attr,		\
			     const char *buf, size_t count)		\
{									\
	return xiw_knob_set(dev, _id, buf, count);			\
}									\
static DEVICE_ATTR_RW(_name)

XIW_KNOB_ATTR(mpa_rev, XIW_KNOB_MPA_REV);
XIW_KNOB_ATTR(mpa_crc, XIW_KNOB_MPA_CRC);
XIW_KNOB_ATTR(mpa_markers, XIW_KNOB_MPA_MARKERS);
XIW_KNOB_ATTR(mpa_p2p, XIW_KNOB_MPA_P2P);
XIW_KNOB_ATTR(mpa_p2p_rtr, XIW_KNOB_MPA_P2P_RTR);
XIW_KNOB_ATTR(tx_batch, XIW_KNOB_TX_BATCH);
XIW_KNOB_ATTR(nagle, XIW_KNOB_NAGLE);
XIW_KNOB_ATTR(soft_rnr_ms, XIW_KNOB_SOFT_RNR_MS);
XIW_KNOB_ATTR(tx_zcopy, XIW_KNOB_TX_ZCOPY);
XIW_KNOB_ATTR(mpa_timeout_ms, XIW_KNOB_MPA_TIMEOUT_MS);

static ssize_t offload_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct xiw_device *xdev = xiw_attr_dev(dev);
	char name[sizeof(xdev->cfg.offload)];

	spin_lock_bh(&xdev->cfg_lock);
	strscpy(name, xdev->cfg.offload, sizeof(name));
	spin_unlock_bh(&xdev->cfg_lock);
	return sysfs_emit(buf, "%s\n", name);
}

/* The name of a registered offload backend (xiw_offload.c). */
static ssize_t offload_store(struct device *dev, struct device_attribute *attr,
			     const char *buf, size_t count)
{
	struct xiw_device *xdev = xiw_attr_dev(dev);
	char name[sizeof(xdev->cfg.offload)];

	if (count >= sizeof(name) + 1 ||
	    strscpy(name, buf, sizeof(name)) < 0 ||
	    !*strim(name) || !xiw_offload_exists(strim(name))) {
		pr_warn_ratelimited("%s: offload: invalid value, expected the name of a registered backend\n",
				    dev_name(&xdev->base_dev.dev));
		return -EINVAL;
	}
	spin_lock_bh(&xdev->cfg_lock);
	strscpy(xdev->cfg.offload, strim(name), sizeof(xdev->cfg.offload));
	spin_unlock_bh(&xdev->cfg_lock);
	return count;
}
static DEVICE_ATTR_RW(offload);

static struct attribute *xiw_cfg_attrs[] = {
	&dev_attr_mpa_rev.attr,
	&dev_attr_mpa_crc.attr,
	&dev_attr_mpa_markers.attr,
	&dev_attr_mpa_p2p.attr,
	&dev_attr_mpa_p2p_rtr.attr,
	&dev_attr_tx_batch.attr,
	&dev_attr_nagle.attr,
	&dev_attr_soft_rnr_ms.attr,
	&dev_attr_tx_zcopy.attr,
	&dev_attr_mpa_timeout_ms.attr,
	&dev_attr_offload.attr,
	NULL
};

/* The device's attribute group, ib_device_ops.device_group. */
const struct attribute_group xiw_cfg_attr_group = {
	.attrs = xiw_cfg_attrs,
};
