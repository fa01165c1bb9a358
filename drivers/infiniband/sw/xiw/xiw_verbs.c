// SPDX-License-Identifier: GPL-2.0
/*
 * xiw: device, port, user context and protection domain verbs.
 */

#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "xiw.h"
#include "xiw_verbs.h"

/**
 * xiw_query_device - report the device limits the verbs enforce
 * @ibdev: the device
 * @attr: filled in
 * @udata: must be empty: the ABI has no driver data for this verb
 *
 * Return: 0 or -EINVAL for unexpected driver data.
 */
int xiw_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		     struct ib_udata *udata)
{
	struct xiw_device *xdev = to_xiw_dev(ibdev);

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = 0;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = U64_MAX;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = XIW_VENDOR_ID;
	attr->vendor_part_id = xdev->dev_id;
	attr->hw_ver = 0;
	attr->max_qp = XIW_MAX_QP;
	attr->max_qp_wr = XIW_MAX_QP_WR;
	attr->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->max_send_sge = XIW_MAX_SGE_KERNEL;
	attr->max_recv_sge = XIW_MAX_SGE_KERNEL;
	attr->max_sge_rd = XIW_MAX_SGE_RD;
	attr->max_cq = XIW_MAX_CQ;
	attr->max_cqe = XIW_MAX_CQE;
	attr->max_mr = XIW_MAX_MR;
	attr->max_pd = XIW_MAX_PD;
	attr->max_qp_rd_atom = XIW_MAX_ORD_QP;
	attr->max_qp_init_rd_atom = XIW_MAX_IRD_QP;
	attr->max_res_rd_atom = XIW_MAX_QP * XIW_MAX_IRD_QP;
	attr->atomic_cap = IB_ATOMIC_NONE;
	attr->max_srq = XIW_MAX_SRQ;
	attr->max_srq_wr = XIW_MAX_SRQ_WR;
	attr->max_srq_sge = XIW_MAX_SGE_KERNEL;
	attr->max_fast_reg_page_list_len = XIW_MAX_FR_PAGES;
	return 0;
}

static enum ib_mtu xiw_mtu_enum(unsigned int mtu)
{
	/* The largest IB MTU enum not above @mtu, at least 256. */
	if (mtu >= 4096)
		return IB_MTU_4096;
	if (mtu >= 2048)
		return IB_MTU_2048;
	if (mtu >= 1024)
		return IB_MTU_1024;
	if (mtu >= 512)
		return IB_MTU_512;
	return IB_MTU_256;
}

/**
 * xiw_query_port - port state, MTU and speed from the bound netdev
 * @ibdev: the device
 * @port: port number (always 1)
 * @attr: filled in
 *
 * Return: 0.  A device whose netdev is gone reports a disabled port.
 */
int xiw_query_port(struct ib_device *ibdev, u32 port,
		   struct ib_port_attr *attr)
{
	struct xiw_device *xdev = to_xiw_dev(ibdev);
	struct net_device *ndev;
	bool up = false;

	memset(attr, 0, sizeof(*attr));
	attr->gid_tbl_len = 1;
	attr->max_msg_sz = U32_MAX;
	attr->port_cap_flags = IB_PORT_CM_SUP | IB_PORT_DEVICE_MGMT_SUP;
	attr->max_mtu = IB_MTU_256;
	attr->active_mtu = IB_MTU_256;

	rcu_read_lock();
	ndev = rcu_dereference(xdev->netdev);
	if (ndev) {
		unsigned int max = READ_ONCE(ndev->max_mtu);

		up = netif_running(ndev) && netif_carrier_ok(ndev);
		attr->active_mtu = xiw_mtu_enum(READ_ONCE(ndev->mtu));
		/* max_mtu 0 means the netdev sets no upper bound. */
		attr->max_mtu = max ? xiw_mtu_enum(max) : IB_MTU_4096;
	}
	rcu_read_unlock();

	attr->state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	attr->phys_state = up ? IB_PORT_PHYS_STATE_LINK_UP :
				IB_PORT_PHYS_STATE_DISABLED;
	if (ib_get_eth_speed(ibdev, port, &attr->active_speed,
			     &attr->active_width)) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

/**
 * xiw_get_port_immutable - port capabilities fixed at registration
 * @ibdev: the device
 * @port: port number
 * @immutable: filled in
 *
 * Return: 0.
 */
int xiw_get_port_immutable(struct ib_device *ibdev, u32 port,
			   struct ib_port_immutable *immutable)
{
	immutable->gid_tbl_len = 1;
	immutable->core_cap_flags = RDMA_CORE_PORT_IWARP;
	return 0;
}

/**
 * xiw_query_gid - the port's only GID
 * @ibdev: the device
 * @port: port number
 * @idx: GID index, must be 0
 * @gid: filled in
 *
 * The GID is the netdev's hardware address followed by zeros: rdma_cm
 * matches an iWARP device by comparing its GID with the hardware address
 * of the netdev an IP address resolves to.
 *
 * Return: 0 or -EINVAL for an index other than 0.
 */
int xiw_query_gid(struct ib_device *ibdev, u32 port, int idx,
		  union ib_gid *gid)
{
	struct xiw_device *xdev = to_xiw_dev(ibdev);

	if (idx != 0)
		return -EINVAL;
	memset(gid, 0, sizeof(*gid));
	memcpy(gid->raw, xdev->raw_gid, ETH_ALEN);
	return 0;
}

/**
 * xiw_alloc_ucontext - create a user context (libsiw ABI)
 * @base_ctx: core-allocated context
 * @udata: carries the alloc context response
 *
 * Return: 0, -ENOMEM over the context limit, -EINVAL for a short response
 * buffer, or the error of copying the response.
 */
int xiw_alloc_ucontext(struct ib_ucontext *base_ctx, struct ib_udata *udata)
{
	struct xiw_device *xdev = to_xiw_dev(base_ctx->device);
	struct xiw_ucontext *ctx = to_xiw_ctx(base_ctx);
	struct xiw_uresp_alloc_ctx uresp = {};
	int rv;

	if (udata->outlen < sizeof(uresp))
		return -EINVAL;
	if (atomic_inc_return(&xdev->num_ctx) > XIW_MAX_CONTEXT) {
		rv = -ENOMEM;
		goto err_count;
	}
	ctx->xdev = xdev;
	uresp.dev_id = xdev->dev_id;
	rv = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
	if (rv)
		goto err_count;
	return 0;

err_count:
	atomic_dec(&xdev->num_ctx);
	return rv;
}

/**
 * xiw_dealloc_ucontext - release a user context
 * @base_ctx: the context
 */
void xiw_dealloc_ucontext(struct ib_ucontext *base_ctx)
{
	struct xiw_ucontext *ctx = to_xiw_ctx(base_ctx);

	atomic_dec(&ctx->xdev->num_ctx);
}

/**
 * xiw_alloc_pd - create a protection domain
 * @pd: core-allocated PD
 * @udata: user data (the ABI has none for this verb)
 *
 * Return: 0 or -ENOMEM over the PD limit.
 */
int xiw_alloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	struct xiw_device *xdev = to_xiw_dev(pd->device);

	if (atomic_inc_return(&xdev->num_pd) > XIW_MAX_PD) {
		atomic_dec(&xdev->num_pd);
		return -ENOMEM;
	}
	return 0;
}

/**
 * xiw_dealloc_pd - destroy a protection domain
 * @pd: the PD
 * @udata: user data
 *
 * Return: 0.
 */
int xiw_dealloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	struct xiw_device *xdev = to_xiw_dev(pd->device);

	atomic_dec(&xdev->num_pd);
	return 0;
}
