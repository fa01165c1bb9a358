// SPDX-License-Identifier: GPL-2.0
/*
 * xiw: device, port, user context and protection domain verbs.
 */

#include <linux/ethtool.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "xiw.h"
#include "xiw_conn.h"
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
	attr->max_send_sge = XIW_MAX_SGE_USER;
	attr->max_recv_sge = XIW_MAX_SGE_USER;
	attr->max_sge_rd = XIW_MAX_SGE_RD;
	attr->max_cq = XIW_MAX_CQ;
	attr->max_cqe = XIW_MAX_CQE;
	attr->max_mr = XIW_MAX_MR;
	attr->max_pd = XIW_MAX_PD;
	attr->max_qp_rd_atom = XIW_MAX_ORD_QP;
	attr->max_qp_init_rd_atom = XIW_MAX_IRD_QP;
	attr->max_res_rd_atom = XIW_MAX_QP * XIW_MAX_IRD_QP;
	/*
	 * RFC 7306 atomics are carried for kernel consumers (and served to
	 * any peer); the libsiw ABI has no atomic work request, so a user
	 * context is told there are none.  ib_core caches the kernel view.
	 */
	attr->atomic_cap = udata ? IB_ATOMIC_NONE : IB_ATOMIC_HCA;
	attr->masked_atomic_cap = attr->atomic_cap;
	attr->max_srq = XIW_MAX_SRQ;
	attr->max_srq_wr = XIW_MAX_SRQ_WR;
	attr->max_srq_sge = XIW_MAX_SGE_USER;
	attr->max_fast_reg_page_list_len = XIW_MAX_FR_PAGES;
	return 0;
}

enum xiw_hw_stat {
	XIW_HW_TX_FPDUS,
	XIW_HW_TX_BYTES,
	XIW_HW_TX_ZC_FPDUS,
	XIW_HW_TX_ZC_BYTES,
	XIW_HW_TX_ZC_COPIED,
	XIW_HW_TX_PC_FPDUS,
	XIW_HW_TX_POSTER_RUNS,
	XIW_HW_RX_FPDUS,
	XIW_HW_RX_BYTES,
	XIW_HW_RX_CRC_ERRORS,
	XIW_HW_TERM_SENT,			/* one per layer */
	XIW_HW_TERM_RECV = XIW_HW_TERM_SENT + XIW_TERM_LAYERS,
	XIW_HW_MPA_REJ_SENT = XIW_HW_TERM_RECV + XIW_TERM_LAYERS,
	XIW_HW_MPA_REJ_RECV,
	XIW_HW_TCP_RETRANS,
	XIW_HW_SOFT_RNR_STALLS,
	XIW_HW_SOFT_RNR_TIMEOUTS,
	XIW_NUM_HW_STATS
};

static const struct rdma_stat_desc xiw_hw_stat_descs[XIW_NUM_HW_STATS] = {
	[XIW_HW_TX_FPDUS] = { .name = "tx_fpdus" },
	[XIW_HW_TX_BYTES] = { .name = "tx_bytes" },
	[XIW_HW_TX_ZC_FPDUS] = { .name = "tx_zcopy_fpdus" },
	[XIW_HW_TX_ZC_BYTES] = { .name = "tx_zcopy_bytes" },
	[XIW_HW_TX_ZC_COPIED] = { .name = "tx_zcopy_copied" },
	[XIW_HW_TX_PC_FPDUS] = { .name = "tx_page_copy_fpdus" },
	[XIW_HW_TX_POSTER_RUNS] = { .name = "tx_poster_runs" },
	[XIW_HW_RX_FPDUS] = { .name = "rx_fpdus" },
	[XIW_HW_RX_BYTES] = { .name = "rx_bytes" },
	[XIW_HW_RX_CRC_ERRORS] = { .name = "rx_crc_errors" },
	[XIW_HW_TERM_SENT + 0] = { .name = "term_sent_rdmap" },
	[XIW_HW_TERM_SENT + 1] = { .name = "term_sent_ddp" },
	[XIW_HW_TERM_SENT + 2] = { .name = "term_sent_mpa" },
	[XIW_HW_TERM_RECV + 0] = { .name = "term_recv_rdmap" },
	[XIW_HW_TERM_RECV + 1] = { .name = "term_recv_ddp" },
	[XIW_HW_TERM_RECV + 2] = { .name = "term_recv_mpa" },
	[XIW_HW_MPA_REJ_SENT] = { .name = "mpa_rejects_sent" },
	[XIW_HW_MPA_REJ_RECV] = { .name = "mpa_rejects_recv" },
	[XIW_HW_TCP_RETRANS] = { .name = "tcp_retransmits" },
	[XIW_HW_SOFT_RNR_STALLS] = { .name = "soft_rnr_stalls" },
	[XIW_HW_SOFT_RNR_TIMEOUTS] = { .name = "soft_rnr_timeouts" },
};

/**
 * xiw_alloc_hw_port_stats - the counter set of the port (rdma statistic)
 * @ibdev: the device
 * @port: the port
 *
 * Return: the set, or NULL without memory.
 */
struct rdma_hw_stats *xiw_alloc_hw_port_stats(struct ib_device *ibdev,
					      u32 port)
{
	return rdma_alloc_hw_stats_struct(xiw_hw_stat_descs, XIW_NUM_HW_STATS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/**
 * xiw_get_hw_stats - read the device's data path counters
 * @ibdev: the device
 * @stats: filled in
 * @port: the port (the counters are per device: it has one)
 * @index: counter asked for; all are read
 *
 * Return: the number of counters filled in.
 */
int xiw_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		     u32 port, int index)
{
	struct xiw_device *xdev = to_xiw_dev(ibdev);
	unsigned int i;

	stats->value[XIW_HW_TX_FPDUS] = atomic64_read(&xdev->stats.tx_fpdus);
	stats->value[XIW_HW_TX_BYTES] = atomic64_read(&xdev->stats.tx_bytes);
	stats->value[XIW_HW_TX_ZC_FPDUS] =
		atomic64_read(&xdev->stats.tx_zc_fpdus);
	stats->value[XIW_HW_TX_ZC_BYTES] =
		atomic64_read(&xdev->stats.tx_zc_bytes);
	stats->value[XIW_HW_TX_ZC_COPIED] =
		atomic64_read(&xdev->stats.tx_zc_copied);
	stats->value[XIW_HW_TX_PC_FPDUS] =
		atomic64_read(&xdev->stats.tx_pc_fpdus);
	stats->value[XIW_HW_TX_POSTER_RUNS] =
		atomic64_read(&xdev->stats.tx_poster_runs);
	stats->value[XIW_HW_RX_FPDUS] = atomic64_read(&xdev->stats.rx_fpdus);
	stats->value[XIW_HW_RX_BYTES] = atomic64_read(&xdev->stats.rx_bytes);
	stats->value[XIW_HW_RX_CRC_ERRORS] =
		atomic64_read(&xdev->stats.rx_crc_errors);
	for (i = 0; i < XIW_TERM_LAYERS; i++) {
		stats->value[XIW_HW_TERM_SENT + i] =
			atomic64_read(&xdev->stats.term_sent[i]);
		stats->value[XIW_HW_TERM_RECV + i] =
			atomic64_read(&xdev->stats.term_recv[i]);
	}
	stats->value[XIW_HW_MPA_REJ_SENT] =
		atomic64_read(&xdev->stats.mpa_rej_sent);
	stats->value[XIW_HW_MPA_REJ_RECV] =
		atomic64_read(&xdev->stats.mpa_rej_recv);
	stats->value[XIW_HW_TCP_RETRANS] = xiw_dev_tcp_retrans(xdev);
	stats->value[XIW_HW_SOFT_RNR_STALLS] =
		atomic64_read(&xdev->stats.soft_rnr_stalls);
	stats->value[XIW_HW_SOFT_RNR_TIMEOUTS] =
		atomic64_read(&xdev->stats.soft_rnr_timeouts);
	return XIW_NUM_HW_STATS;
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

/*
 * IB speed and width closest to the netdev's link speed.  Virtual netdevs
 * (dummy, veth, lo) report no speed: they are as fast as the CPU, say 10G.
 * Unlike ib_get_eth_speed() this logs nothing; it is called for every
 * query_port.
 */
static void xiw_port_speed(struct xiw_device *xdev, u16 *speed, u8 *width)
{
	static const struct {
		u32 mbps;
		u16 speed;
		u8 width;
	} map[] = {
		{ 2500, IB_SPEED_SDR, IB_WIDTH_1X },
		{ 5000, IB_SPEED_DDR, IB_WIDTH_1X },
		{ 10000, IB_SPEED_FDR10, IB_WIDTH_1X },
		{ 25000, IB_SPEED_EDR, IB_WIDTH_1X },
		{ 40000, IB_SPEED_FDR10, IB_WIDTH_4X },
		{ 50000, IB_SPEED_HDR, IB_WIDTH_1X },
		{ 100000, IB_SPEED_EDR, IB_WIDTH_4X },
	};
	struct ethtool_link_ksettings ks;
	struct net_device *ndev;
	u32 mbps = 0;
	unsigned int i;

	rcu_read_lock();
	ndev = rcu_dereference(xdev->netdev);
	if (ndev)
		dev_hold(ndev);
	rcu_read_unlock();
	if (ndev) {
		rtnl_lock();
		if (!__ethtool_get_link_ksettings(ndev, &ks) &&
		    ks.base.speed != (u32)SPEED_UNKNOWN)
			mbps = ks.base.speed;
		rtnl_unlock();
		dev_put(ndev);
	}
	if (!mbps)
		mbps = 10000;
	*speed = IB_SPEED_HDR;
	*width = IB_WIDTH_4X;
	for (i = 0; i < ARRAY_SIZE(map); i++) {
		if (mbps <= map[i].mbps) {
			*speed = map[i].speed;
			*width = map[i].width;
			break;
		}
	}
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
	attr->pkey_tbl_len = 1;
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
	xiw_port_speed(xdev, &attr->active_speed, &attr->active_width);
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
	immutable->pkey_tbl_len = 1;
	immutable->core_cap_flags = RDMA_CORE_PORT_IWARP;
	return 0;
}

/**
 * xiw_query_pkey - the port's only P_Key
 * @ibdev: the device
 * @port: port number
 * @idx: P_Key index, must be 0
 * @pkey: filled in with the default P_Key (full membership)
 *
 * iWARP has no partitions.  The one-entry table exists for rdma_cm, which
 * binds an id resolving a loopback address to the first active device it
 * finds and reads P_Key 0 of it (cma_bind_loopback()): without the entry
 * rping to 127.0.0.1 fails with EINVAL.
 *
 * Return: 0 or -EINVAL for an index other than 0.
 */
int xiw_query_pkey(struct ib_device *ibdev, u32 port, u16 idx, u16 *pkey)
{
	if (idx)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
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

/*
 * libsiw treats the key XIW_INVAL_UOBJ_KEY as "no mapping".  Keys are page
 * offsets handed out by ib_core per context, so a context with enough
 * queues would eventually be handed exactly that offset: occupy it with an
 * entry that can never be mapped.
 */
static int xiw_reserve_inval_key(struct xiw_ucontext *ctx)
{
	struct xiw_user_mmap_entry *entry;
	int rv;

	if (XIW_INVAL_UOBJ_KEY % PAGE_SIZE)
		return 0;	/* never a page offset, never a key */
	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;
	rv = rdma_user_mmap_entry_insert_exact(&ctx->base_ucontext,
					       &entry->rdma_entry, PAGE_SIZE,
					       XIW_INVAL_UOBJ_KEY >> PAGE_SHIFT);
	if (rv) {
		kfree(entry);
		return rv;
	}
	ctx->key_guard = &entry->rdma_entry;
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
	rv = xiw_reserve_inval_key(ctx);
	if (rv)
		goto err_count;
	uresp.dev_id = xdev->dev_id;
	rv = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
	if (rv)
		goto err_guard;
	return 0;

err_guard:
	if (ctx->key_guard)
		rdma_user_mmap_entry_remove(ctx->key_guard);
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

	if (ctx->key_guard)
		rdma_user_mmap_entry_remove(ctx->key_guard);
	atomic_dec(&ctx->xdev->num_ctx);
}

/**
 * xiw_disassociate_ucontext - the device goes away while a process uses it
 * @base_ctx: the context
 *
 * On device removal (rdma link del, netdev unregister, rmmod) ib_uverbs
 * destroys every object of a context itself, in the usual reverse order
 * through the usual destroy verbs, and revokes the context's mmaps: all
 * of xiw's user queues are rdma_user_mmap entries, so nothing is left to
 * do here.  Having the op is what lets unregistration go ahead at once
 * instead of waiting until the process closes its device file; the
 * process sees EIO from then on.
 */
void xiw_disassociate_ucontext(struct ib_ucontext *base_ctx)
{
}

/*
 * The pages of a user queue, zeroed and charged to the caller's memory
 * cgroup (a process could otherwise pin up to a gigabyte per queue outside
 * its limit), and their kernel mapping.  vmalloc_user() charges nothing,
 * and the calls that take GFP flags (__vmalloc()) do not set VM_USERMAP,
 * which remap_vmalloc_range() insists on; on 6.1 and 6.12 alike the one
 * exported way to both is our own pages under vmap().  The pages stay ours
 * (no VM_MAP_PUT_PAGES: 6.1's vfree() would then take vmalloc statistics
 * down that were never raised for them) and go in xiw_mmap_pages_free().
 */
static int xiw_mmap_pages_alloc(struct xiw_user_mmap_entry *xentry,
				size_t size)
{
	unsigned int i, n = size >> PAGE_SHIFT;

	xentry->pages = kvcalloc(n, sizeof(*xentry->pages),
				 GFP_KERNEL_ACCOUNT);
	if (!xentry->pages)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		xentry->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!xentry->pages[i])
			goto err_pages;
		xentry->npages = i + 1;
	}
	xentry->address = vmap(xentry->pages, n, VM_MAP | VM_USERMAP,
			       PAGE_KERNEL);
	if (!xentry->address)
		goto err_pages;
	return 0;

err_pages:
	while (xentry->npages)
		__free_page(xentry->pages[--xentry->npages]);
	kvfree(xentry->pages);
	xentry->pages = NULL;
	return -ENOMEM;
}

static void xiw_mmap_pages_free(struct xiw_user_mmap_entry *xentry)
{
	unsigned int i;

	if (!xentry->address)
		return;
	vunmap(xentry->address);
	for (i = 0; i < xentry->npages; i++)
		__free_page(xentry->pages[i]);
	kvfree(xentry->pages);
}

/**
 * xiw_mmap_alloc - allocate a user-mappable queue and its mmap key
 * @udata: user data of the verb creating the queue
 * @size: bytes needed (rounded up to pages)
 * @entry: receives the mmap entry, to be removed with xiw_mmap_remove()
 * @key: receives the key (mmap offset) for the response; never 0 and
 *	never XIW_INVAL_UOBJ_KEY
 *
 * The memory belongs to the entry from now on: xiw_mmap_remove() hands it
 * back and it is freed once userspace unmapped it as well.
 *
 * Return: the zeroed memory, or NULL.
 */
void *xiw_mmap_alloc(struct ib_udata *udata, size_t size,
		     struct rdma_user_mmap_entry **entry, u64 *key)
{
	struct xiw_ucontext *ctx =
		rdma_udata_to_drv_context(udata, struct xiw_ucontext,
					  base_ucontext);
	struct xiw_user_mmap_entry *xentry;

	if (!ctx || !size || size > SZ_1G)
		return NULL;
	size = PAGE_ALIGN(size);
	xentry = kzalloc(sizeof(*xentry), GFP_KERNEL_ACCOUNT);
	if (!xentry)
		return NULL;
	if (xiw_mmap_pages_alloc(xentry, size))
		goto err_entry;
	/* Page offset 0 is skipped: a key of 0 means "no queue" (SRQ QPs). */
	if (rdma_user_mmap_entry_insert_range(&ctx->base_ucontext,
					      &xentry->rdma_entry, size, 1,
					      U32_MAX))
		goto err_pages;
	*entry = &xentry->rdma_entry;
	*key = rdma_user_mmap_get_offset(*entry);
	return xentry->address;

err_pages:
	xiw_mmap_pages_free(xentry);
err_entry:
	kfree(xentry);
	return NULL;
}

/**
 * xiw_mmap_remove - withdraw a queue from userspace
 * @entry: entry from xiw_mmap_alloc()
 *
 * New mmap() calls fail from now on; the memory is freed by
 * xiw_mmap_free() when the last mapping is gone.
 */
void xiw_mmap_remove(struct rdma_user_mmap_entry *entry)
{
	rdma_user_mmap_entry_remove(entry);
}

/**
 * xiw_mmap - map a queue into userspace (libsiw mmaps the returned keys)
 * @base_ctx: the user context
 * @vma: the mapping; its offset is the key, its size the queue's
 *
 * Return: 0, or -EINVAL for an unknown key, a wrong size or the key guard.
 */
int xiw_mmap(struct ib_ucontext *base_ctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct xiw_user_mmap_entry *entry;
	int rv = -EINVAL;

	rdma_entry = rdma_user_mmap_entry_get(base_ctx, vma);
	if (!rdma_entry)
		return -EINVAL;
	entry = to_xiw_mmap_entry(rdma_entry);
	if (entry->address)
		rv = remap_vmalloc_range(vma, entry->address, 0);
	rdma_user_mmap_entry_put(rdma_entry);
	return rv;
}

/**
 * xiw_mmap_free - free a removed and unmapped queue
 * @rdma_entry: the entry
 */
void xiw_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct xiw_user_mmap_entry *entry = to_xiw_mmap_entry(rdma_entry);

	xiw_mmap_pages_free(entry);
	kfree(entry);
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
