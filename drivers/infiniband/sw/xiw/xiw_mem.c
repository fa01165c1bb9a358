// SPDX-License-Identifier: GPL-2.0
/*
 * xiw memory regions.
 *
 * Every MR has an STag: a 24-bit index into xiw_device.mem_xa (never 0)
 * and an 8-bit consumer key.  Lookups run under RCU, without the xarray's
 * lock, and take a reference on the MR unless it is already going, so
 * that deregistration, which removes the index first and then waits for
 * the references to go, can never free an MR the data path is still
 * copying into; the struct itself is freed after a grace period, so a
 * lookup that found the index before the removal still reads a live
 * reference count.
 *
 * Addresses are resolved per kind: DMA MRs take kernel virtual addresses
 * (the device uses ib_core's virtual DMA mapping, so a "DMA address" is a
 * kernel virtual address), user MRs go through the pinned pages of their
 * ib_umem, and fast-reg MRs through the page list map_mr_sg built.
 */

#include <linux/highmem.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <kunit/visibility.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <net/netlink.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>
#include <rdma/uverbs_ioctl.h>

#include "xiw.h"
#include "xiw_mem.h"

/*
 * IB_ACCESS_* flags an MR may carry.  MW_BIND only allows memory windows
 * to be bound to the MR; xiw has no windows (no IB_DEVICE_MEM_WINDOW), so
 * the right can never be used, and it is accepted so that registrations
 * written for window-capable devices work (alloc_mw is what refuses).
 */
#define XIW_MR_ACCESS_SUPPORTED (IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_MW_BIND | \
				 IB_ACCESS_RELAXED_ORDERING)

static const char * const xiw_mr_kind_name[] = {
	[XIW_MR_DMA] = "dma",
	[XIW_MR_USER] = "user",
	[XIW_MR_FAST] = "fast_reg",
};

static int xiw_mr_access_ok(int access)
{
	/* Optional flags are hints a driver may ignore, never reject. */
	access &= ~IB_ACCESS_OPTIONAL;
	if (access & ~XIW_MR_ACCESS_SUPPORTED)
		return -EINVAL;
	/* Remote write (and atomics) need local write: IB spec 10.6.3.1. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/* The last lookup reference is gone (xiw_mr_put()): the owner may free. */
void xiw_mr_release(struct kref *ref)
{
	struct xiw_mr *mr = container_of(ref, struct xiw_mr, ref);

	complete(&mr->released);
}

/*
 * Allocate an MR with its STag index and account it.  The MR is not
 * findable before xiw_mr_publish().
 */
static struct xiw_mr *xiw_mr_alloc(struct ib_pd *pd, enum xiw_mr_kind kind,
				   int access, u8 key)
{
	struct xiw_device *xdev = to_xiw_dev(pd->device);
	struct xiw_mr *mr;
	u32 idx;
	int rv;

	if (atomic_inc_return(&xdev->num_mr) > XIW_MAX_MR) {
		rv = -ENOMEM;
		goto err_count;
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		rv = -ENOMEM;
		goto err_count;
	}
	mr->xdev = xdev;
	mr->pd = pd;
	mr->kind = kind;
	mr->access = access;
	kref_init(&mr->ref);
	init_completion(&mr->released);

	/* Reserve the index now; the entry stays NULL until published. */
	rv = xa_alloc_cyclic_irq(&xdev->mem_xa, &idx, NULL,
				 XA_LIMIT(1, XIW_STAG_INDEX_MAX),
				 &xdev->next_stag_idx, GFP_KERNEL);
	if (rv < 0)
		goto err_free;
	mr->stag = idx << 8 | key;
	mr->base_mr.lkey = mr->stag;
	mr->base_mr.rkey = mr->stag;
	return mr;

err_free:
	kfree(mr);
err_count:
	atomic_dec(&xdev->num_mr);
	return ERR_PTR(rv);
}

static void xiw_mr_publish(struct xiw_mr *mr)
{
	xa_store_irq(&mr->xdev->mem_xa, mr->stag >> 8, mr, GFP_KERNEL);
}

/* Undo xiw_mr_alloc() (and xiw_mr_publish()); may sleep. */
static void xiw_mr_free(struct xiw_mr *mr)
{
	struct xiw_device *xdev = mr->xdev;

	might_sleep();
	xa_erase_irq(&xdev->mem_xa, mr->stag >> 8);
	/* No new lookups now; wait for the data path to let go. */
	kref_put(&mr->ref, xiw_mr_release);
	wait_for_completion(&mr->released);

	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kfree(mr->page_list);
	/* A lookup may still be about to find the count at zero. */
	kfree_rcu(mr, rcu);
	atomic_dec(&xdev->num_mr);
}

/**
 * xiw_get_dma_mr - MR covering all kernel memory (for pd->local_dma_lkey)
 * @pd: protection domain
 * @access: IB_ACCESS_* flags
 *
 * Return: the MR or an ERR_PTR (-EINVAL for bad flags, -ENOMEM).
 */
struct ib_mr *xiw_get_dma_mr(struct ib_pd *pd, int access)
{
	struct xiw_mr *mr;

	if (xiw_mr_access_ok(access))
		return ERR_PTR(-EINVAL);
	mr = xiw_mr_alloc(pd, XIW_MR_DMA, access, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->va = 0;
	mr->length = U64_MAX;
	mr->valid = true;
	xiw_mr_publish(mr);
	return &mr->base_mr;
}

/* Build the page array behind a user MR. */
static int xiw_mr_umem_pages(struct xiw_mr *mr)
{
	struct ib_umem *umem = mr->umem;
	struct sg_page_iter piter;
	size_t n = ib_umem_num_pages(umem);
	u32 i = 0;

	if (n > U32_MAX)
		return -EINVAL;
	mr->pages = kvcalloc(n, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&umem->sgt_append.sgt, &piter, 0) {
		if (i == n)
			break;
		mr->pages[i++] = sg_page_iter_page(&piter);
	}
	if (i != n)
		return -EFAULT;
	mr->num_pages = n;
	mr->page_offset = ib_umem_offset(umem);
	return 0;
}

/**
 * xiw_reg_user_mr_impl - register user memory (libsiw reg_mr ABI)
 * @pd: protection domain
 * @start: user address of the memory
 * @len: length in bytes
 * @va: I/O virtual address the peer uses for it
 * @access: IB_ACCESS_* flags
 * @udata: struct xiw_ureq_reg_mr in (stag_key), struct xiw_uresp_reg_mr out
 *
 * Called through the compat adapter XIW_COMPAT_REG_USER_MR (xiw_main.c).
 *
 * Return: the MR or an ERR_PTR: -EINVAL for a bad length or flags,
 * -ENOMEM over the MR limit, or the error of pinning the pages.
 */
struct ib_mr *xiw_reg_user_mr_impl(struct ib_pd *pd, u64 start, u64 len,
				   u64 va, int access, struct ib_udata *udata)
{
	struct xiw_ureq_reg_mr ureq = {};
	struct xiw_uresp_reg_mr uresp = {};
	struct ib_umem *umem;
	struct xiw_mr *mr;
	u64 end;
	int rv;

	might_sleep();
	if (!len || check_add_overflow(va, len, &end) ||
	    check_add_overflow(start, len, &end))
		return ERR_PTR(-EINVAL);
	rv = xiw_mr_access_ok(access);
	if (rv)
		return ERR_PTR(rv);
	if (udata && udata->inlen) {
		rv = ib_copy_from_udata(&ureq, udata,
					min(sizeof(ureq), udata->inlen));
		if (rv)
			return ERR_PTR(rv);
	}
	if (udata && udata->outlen && udata->outlen < sizeof(uresp))
		return ERR_PTR(-EINVAL);

	umem = xiw_umem_get(pd->device, start, len, access);
	if (IS_ERR(umem))
		return ERR_CAST(umem);

	mr = xiw_mr_alloc(pd, XIW_MR_USER, access, ureq.stag_key);
	if (IS_ERR(mr)) {
		ib_umem_release(umem);
		return ERR_CAST(mr);
	}
	mr->umem = umem;
	mr->va = va;
	mr->length = len;
	rv = xiw_mr_umem_pages(mr);
	if (rv)
		goto err_free;

	if (udata && udata->outlen) {
		uresp.stag = mr->stag;
		rv = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
		if (rv)
			goto err_free;
	}
	mr->valid = true;
	xiw_mr_publish(mr);
	return &mr->base_mr;

err_free:
	xiw_mr_free(mr);
	return ERR_PTR(rv);
}

/**
 * xiw_alloc_mr - allocate a fast-register MR
 * @pd: protection domain
 * @type: must be IB_MR_TYPE_MEM_REG
 * @max_num_sg: page list capacity, at most XIW_MAX_FR_PAGES
 *
 * Return: the MR (invalid until IB_WR_REG_MR) or an ERR_PTR: -EOPNOTSUPP
 * for other types, -EINVAL for a too long list, -ENOMEM.
 */
struct ib_mr *xiw_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			   u32 max_num_sg)
{
	struct xiw_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > XIW_MAX_FR_PAGES)
		return ERR_PTR(-EINVAL);
	mr = xiw_mr_alloc(pd, XIW_MR_FAST, 0, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->page_list = kcalloc(max_num_sg, sizeof(*mr->page_list),
				GFP_KERNEL);
	if (!mr->page_list) {
		xiw_mr_free(mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->max_pages = max_num_sg;
	xiw_mr_publish(mr);
	return &mr->base_mr;
}

static int xiw_mr_set_page(struct ib_mr *base_mr, u64 addr)
{
	struct xiw_mr *mr = to_xiw_mr(base_mr);

	if (mr->num_fr_pages == mr->max_pages)
		return -ENOMEM;
	mr->page_list[mr->num_fr_pages++] = addr;
	return 0;
}

/**
 * xiw_map_mr_sg - load a fast-reg MR's page list from a scatterlist
 * @base_mr: fast-reg MR
 * @sg: DMA-mapped scatterlist
 * @sg_nents: entries of @sg
 * @sg_offset: offset into the first entry, updated as ib_sg_to_pages does
 *
 * Return: the number of entries mapped, or -EINVAL for a non fast-reg MR.
 */
int xiw_map_mr_sg(struct ib_mr *base_mr, struct scatterlist *sg,
		  int sg_nents, unsigned int *sg_offset)
{
	struct xiw_mr *mr = to_xiw_mr(base_mr);

	if (mr->kind != XIW_MR_FAST)
		return -EINVAL;
	mr->num_fr_pages = 0;
	return ib_sg_to_pages(base_mr, sg, sg_nents, sg_offset,
			      xiw_mr_set_page);
}

/**
 * xiw_dereg_mr - deregister an MR
 * @base_mr: the MR
 * @udata: user data (unused)
 *
 * Waits until the data path has dropped its references.
 *
 * Return: 0.
 */
int xiw_dereg_mr(struct ib_mr *base_mr, struct ib_udata *udata)
{
	xiw_mr_free(to_xiw_mr(base_mr));
	return 0;
}

/**
 * xiw_fill_res_mr_entry - driver details for `rdma res show mr -dd`
 * @msg: netlink message
 * @base_mr: the MR
 *
 * Return: 0 or -EMSGSIZE.
 */
int xiw_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *base_mr)
{
	struct xiw_mr *mr = to_xiw_mr(base_mr);
	struct nlattr *nest;

	/* Driver attributes go into their own nest, which `rdma -dd` prints. */
	nest = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32_hex(msg, "stag", READ_ONCE(mr->stag)) ||
	    rdma_nl_put_driver_string(msg, "kind", xiw_mr_kind_name[mr->kind]) ||
	    rdma_nl_put_driver_u32(msg, "valid", READ_ONCE(mr->valid)) ||
	    rdma_nl_put_driver_u32_hex(msg, "access", READ_ONCE(mr->access)) ||
	    rdma_nl_put_driver_u32(msg, "pages", mr->kind == XIW_MR_FAST ?
				   mr->num_fr_pages : mr->num_pages)) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

/**
 * xiw_mr_check - check an access to an MR
 * @mr: the MR
 * @pd: protection domain of the accessing QP
 * @access: IB_ACCESS_* rights needed (0 for a local read)
 * @addr: first address accessed
 * @len: number of bytes
 *
 * Return: XIW_ACC_OK or the reason the access is refused.
 */
enum xiw_access_result xiw_mr_check(struct xiw_mr *mr, struct ib_pd *pd,
				    int access, u64 addr, u64 len)
{
	return __xiw_mr_check(mr, pd, access, addr, len);
}
EXPORT_SYMBOL_IF_KUNIT(xiw_mr_check);

/**
 * xiw_mr_lookup - find and check the MR of an STag
 * @xdev: device
 * @pd: protection domain of the accessing QP
 * @stag: STag
 * @access: IB_ACCESS_* rights needed
 * @addr: first address accessed
 * @len: number of bytes
 * @mrp: on XIW_ACC_OK the MR, with a reference for the caller
 *
 * Any context.
 *
 * Return: XIW_ACC_OK or the reason the access is refused.
 */
enum xiw_access_result xiw_mr_lookup(struct xiw_device *xdev,
				     struct ib_pd *pd, u32 stag, int access,
				     u64 addr, u64 len, struct xiw_mr **mrp)
{
	return __xiw_mr_lookup(xdev, pd, stag, access, addr, len, mrp);
}
EXPORT_SYMBOL_IF_KUNIT(xiw_mr_lookup);

struct xiw_copy_ctx {
	u8 *buf;
	bool to_mr;
};

static int xiw_mr_copy_piece(void *priv, void *kaddr, unsigned int len)
{
	struct xiw_copy_ctx *ctx = priv;

	if (ctx->to_mr)
		memcpy(kaddr, ctx->buf, len);
	else
		memcpy(ctx->buf, kaddr, len);
	ctx->buf += len;
	return 0;
}

/**
 * xiw_mr_copy_to - copy a buffer into an MR
 * @mr: destination MR, checked by the caller for the range
 * @addr: destination address
 * @buf: source
 * @len: number of bytes
 *
 * Return: 0 or -EFAULT.
 */
int xiw_mr_copy_to(struct xiw_mr *mr, u64 addr, const void *buf, u64 len)
{
	struct xiw_copy_ctx ctx = { .buf = (u8 *)buf, .to_mr = true };

	return xiw_mr_walk(mr, addr, len, xiw_mr_copy_piece, &ctx);
}

/**
 * xiw_mr_copy_from - copy from an MR into a buffer
 * @mr: source MR, checked by the caller for the range
 * @addr: source address
 * @buf: destination
 * @len: number of bytes
 *
 * Return: 0 or -EFAULT.
 */
int xiw_mr_copy_from(struct xiw_mr *mr, u64 addr, void *buf, u64 len)
{
	struct xiw_copy_ctx ctx = { .buf = buf, .to_mr = false };

	return xiw_mr_walk(mr, addr, len, xiw_mr_copy_piece, &ctx);
}

/**
 * xiw_mr_invalidate - invalidate an STag (local or remote invalidate)
 * @xdev: device
 * @pd: protection domain of the QP that asks
 * @stag: the STag
 *
 * Only fast-reg MRs can be invalidated.  Any context.
 *
 * Return: XIW_ACC_OK or the reason the invalidation is refused.
 */
enum xiw_access_result xiw_mr_invalidate(struct xiw_device *xdev,
					 struct ib_pd *pd, u32 stag)
{
	enum xiw_access_result res = XIW_ACC_OK;
	struct xiw_mr *mr;

	mr = xiw_mr_get(xdev, stag);
	if (!mr)
		return XIW_ACC_BAD_STAG;
	if (mr->pd != pd)
		res = XIW_ACC_PD_MISMATCH;
	else if (mr->kind != XIW_MR_FAST)
		res = XIW_ACC_RIGHTS;
	else
		WRITE_ONCE(mr->valid, false);
	xiw_mr_put(mr);
	return res;
}

/**
 * xiw_mr_fast_reg - execute IB_WR_REG_MR
 * @mr: fast-reg MR whose page list map_mr_sg loaded
 * @pd: protection domain of the QP
 * @stag: the new STag (same index, possibly a new key)
 * @access: IB_ACCESS_* flags
 *
 * Any context.
 *
 * Return: 0, or -EINVAL when the MR is not a fast-reg MR of @pd, the
 * index differs, the flags are invalid or the MR is still valid.
 */
int xiw_mr_fast_reg(struct xiw_mr *mr, struct ib_pd *pd, u32 stag,
		    int access)
{
	if (mr->kind != XIW_MR_FAST || mr->pd != pd ||
	    (stag >> 8) != (mr->stag >> 8) || xiw_mr_access_ok(access) ||
	    READ_ONCE(mr->valid))
		return -EINVAL;
	WRITE_ONCE(mr->stag, stag);
	WRITE_ONCE(mr->access, access);
	WRITE_ONCE(mr->va, mr->base_mr.iova);
	WRITE_ONCE(mr->length, mr->base_mr.length);
	/* Publish the new translation before the STag becomes valid. */
	smp_store_release(&mr->valid, true);
	return 0;
}
