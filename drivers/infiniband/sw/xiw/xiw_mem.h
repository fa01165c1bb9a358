/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xiw memory regions: STags, access checks and copy helpers for the data
 * path.
 */
#ifndef _XIW_MEM_H
#define _XIW_MEM_H

#include <linux/completion.h>
#include <linux/highmem.h>
#include <linux/kref.h>
#include <linux/math64.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "xiw.h"

/**
 * enum xiw_mr_kind - how an MR's addresses are resolved
 * @XIW_MR_DMA: addresses are kernel virtual addresses (get_dma_mr)
 * @XIW_MR_USER: pinned user pages of an ib_umem (reg_user_mr)
 * @XIW_MR_FAST: page list of kernel virtual addresses set by map_mr_sg
 *	and made valid by IB_WR_REG_MR (alloc_mr)
 */
enum xiw_mr_kind {
	XIW_MR_DMA,
	XIW_MR_USER,
	XIW_MR_FAST,
};

/**
 * enum xiw_access_result - outcome of an STag lookup and access check
 *
 * The data path turns each category into its TERMINATE code.
 *
 * @XIW_ACC_OK: access allowed
 * @XIW_ACC_BAD_STAG: no MR with that index, or the key does not match
 * @XIW_ACC_INVALIDATED: the MR exists but is not valid (invalidated or a
 *	fast-reg MR never registered)
 * @XIW_ACC_PD_MISMATCH: the MR belongs to another protection domain
 * @XIW_ACC_RIGHTS: the requested access is not granted by the MR
 * @XIW_ACC_BOUNDS: the range lies (partly) outside the MR
 * @XIW_ACC_WRAP: the range's last octet lies beyond 2^64 - 1
 */
enum xiw_access_result {
	XIW_ACC_OK,
	XIW_ACC_BAD_STAG,
	XIW_ACC_INVALIDATED,
	XIW_ACC_PD_MISMATCH,
	XIW_ACC_RIGHTS,
	XIW_ACC_BOUNDS,
	XIW_ACC_WRAP,
};

/**
 * struct xiw_mr - memory region
 * @base_mr: the ib_core MR; must stay first
 * @xdev: owning device
 * @pd: protection domain
 * @ref: lookup references (xiw_mr_get()/xiw_mr_put()); the MR's owner
 *	holds the initial one and dereg waits for @released after dropping it
 * @released: completed when @ref drops to zero
 * @kind: enum xiw_mr_kind
 * @stag: current STag (index << 8 | key); the key part changes with
 *	IB_WR_REG_MR on fast-reg MRs
 * @valid: the STag may be used; cleared by invalidation
 * @access: IB_ACCESS_* flags
 * @va: first valid address (iova of user and fast-reg MRs)
 * @length: number of bytes from @va
 * @umem: pinned user memory (XIW_MR_USER)
 * @pages: page array of @umem, for O(1) lookup of the page behind an
 *	address
 * @page_offset: offset of @va in @pages[0]
 * @num_pages: entries of @pages
 * @page_list: XIW_MR_FAST: kernel virtual addresses of the pages, each
 *	of base_mr.page_size bytes
 * @max_pages: size of @page_list
 * @num_fr_pages: entries of @page_list set by map_mr_sg
 *
 * @stag, @valid, @access, @va and @length of a fast-reg MR change at
 * IB_WR_REG_MR / LOCAL_INV time, which the consumer orders against its
 * own use of the MR; they are written with WRITE_ONCE() under no lock.
 */
struct xiw_mr {
	struct ib_mr base_mr;
	struct xiw_device *xdev;
	struct ib_pd *pd;
	struct kref ref;
	struct completion released;
	struct rcu_head rcu;
	enum xiw_mr_kind kind;
	u32 stag;
	bool valid;
	int access;
	u64 va;
	u64 length;

	struct ib_umem *umem;
	struct page **pages;
	u32 page_offset;
	u32 num_pages;

	u64 *page_list;
	u32 max_pages;
	u32 num_fr_pages;
};

static inline struct xiw_mr *to_xiw_mr(struct ib_mr *mr)
{
	return container_of(mr, struct xiw_mr, base_mr);
}

/* Verbs (xiw_mem.c) */
struct ib_mr *xiw_get_dma_mr(struct ib_pd *pd, int access);
struct ib_mr *xiw_reg_user_mr_impl(struct ib_pd *pd, u64 start, u64 len,
				   u64 va, int access, struct ib_udata *udata);
struct ib_mr *xiw_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			   u32 max_num_sg);
int xiw_map_mr_sg(struct ib_mr *mr, struct scatterlist *sg, int sg_nents,
		  unsigned int *sg_offset);
int xiw_dereg_mr(struct ib_mr *mr, struct ib_udata *udata);
int xiw_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *mr);

/* Data path interface (xiw_mem.c) */
void xiw_mr_release(struct kref *ref);

/**
 * xiw_mr_put - release a reference taken by xiw_mr_get()
 * @mr: the MR
 *
 * Any context.  Inline: every placement and gather puts one.
 */
static inline void xiw_mr_put(struct xiw_mr *mr)
{
	kref_put(&mr->ref, xiw_mr_release);
}

/**
 * xiw_mr_get - find the MR of an STag and take a reference
 * @xdev: device
 * @stag: STag (index and key must both match)
 *
 * Any context.
 *
 * Return: the MR, to be released with xiw_mr_put(), or NULL.
 */
static __always_inline struct xiw_mr *
xiw_mr_get(struct xiw_device *xdev, u32 stag)
{
	XA_STATE(xas, &xdev->mem_xa, stag >> 8);
	struct xiw_mr *mr;

	/*
	 * xa_load() by hand: its own RCU section would nest in the one the
	 * reference needs, on every segment placed and sent.
	 */
	rcu_read_lock();
	do {
		mr = xas_load(&xas);
		/*
		 * An index xiw_mr_alloc() reserved, its MR not published
		 * yet; before xas_retry(), which retries zero entries too.
		 */
		if (xa_is_zero(mr))
			mr = NULL;
	} while (xas_retry(&xas, mr));
	if (mr && !kref_get_unless_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();

	if (mr && READ_ONCE(mr->stag) != stag) {
		xiw_mr_put(mr);
		mr = NULL;
	}
	return mr;
}

/* xiw_mr_check(), inline in __xiw_mr_lookup(). */
static __always_inline enum xiw_access_result
__xiw_mr_check(struct xiw_mr *mr, struct ib_pd *pd, int access, u64 addr,
	       u64 len)
{
	u64 end, mr_end;

	/* Pairs with smp_store_release() in xiw_mr_fast_reg(). */
	if (!smp_load_acquire(&mr->valid))
		return XIW_ACC_INVALIDATED;
	if (mr->pd != pd)
		return XIW_ACC_PD_MISMATCH;
	if ((READ_ONCE(mr->access) & access) != access)
		return XIW_ACC_RIGHTS;
	if (len && addr + (len - 1) < addr)
		return XIW_ACC_WRAP;
	if (check_add_overflow(addr, len, &end))
		return XIW_ACC_BOUNDS;
	if (mr->kind == XIW_MR_DMA)
		return XIW_ACC_OK;
	mr_end = READ_ONCE(mr->va) + READ_ONCE(mr->length);
	if (addr < READ_ONCE(mr->va) || end > mr_end)
		return XIW_ACC_BOUNDS;
	return XIW_ACC_OK;
}

/*
 * xiw_mr_lookup(), inline: for the walks below, which look up the MR of
 * every SGE they visit, and the placement of tagged segments.  On the
 * data path the out-of-line call's frame (saves, stack canary) was a
 * third of the lookup's instructions.
 */
static __always_inline enum xiw_access_result
__xiw_mr_lookup(struct xiw_device *xdev, struct ib_pd *pd, u32 stag,
		int access, u64 addr, u64 len, struct xiw_mr **mrp)
{
	enum xiw_access_result res;
	struct xiw_mr *mr;

	*mrp = NULL;
	mr = xiw_mr_get(xdev, stag);
	if (!mr)
		return XIW_ACC_BAD_STAG;
	res = __xiw_mr_check(mr, pd, access, addr, len);
	if (res != XIW_ACC_OK) {
		xiw_mr_put(mr);
		return res;
	}
	*mrp = mr;
	return XIW_ACC_OK;
}

enum xiw_access_result xiw_mr_check(struct xiw_mr *mr, struct ib_pd *pd,
				    int access, u64 addr, u64 len);
enum xiw_access_result xiw_mr_lookup(struct xiw_device *xdev,
				     struct ib_pd *pd, u32 stag, int access,
				     u64 addr, u64 len, struct xiw_mr **mrp);
int xiw_mr_copy_to(struct xiw_mr *mr, u64 addr, const void *buf, u64 len);
int xiw_mr_copy_from(struct xiw_mr *mr, u64 addr, void *buf, u64 len);
enum xiw_access_result xiw_mr_invalidate(struct xiw_device *xdev,
					 struct ib_pd *pd, u32 stag);
int xiw_mr_fast_reg(struct xiw_mr *mr, struct ib_pd *pd, u32 stag,
		    int access);

/*
 * The walks are inline, with the piece function of each caller: they run
 * for every payload segment, and an out-of-line walk would call @fn
 * through a pointer for every piece.
 */

/**
 * xiw_mr_walk - visit the kernel mappings behind a range of an MR
 * @mr: the MR, checked by the caller (xiw_mr_check()) for this range
 * @addr: first address
 * @len: number of bytes
 * @fn: called for each virtually contiguous piece, in order; a non-zero
 *	return stops the walk and is returned
 * @priv: passed to @fn
 *
 * Pages of user MRs are mapped with kmap_local_page() around each call,
 * so @fn must not sleep.  Any context.
 *
 * Return: 0, the first non-zero return of @fn, or -EFAULT when the range
 * is not backed (a bug in the caller's check).
 */
static __always_inline int
xiw_mr_walk(struct xiw_mr *mr, u64 addr, u64 len,
	    int (*fn)(void *priv, void *kaddr, unsigned int len), void *priv)
{
	u64 off;
	int rv = 0;

	switch (mr->kind) {
	case XIW_MR_DMA:
		while (len && !rv) {
			unsigned int n = min_t(u64, len, SZ_1G);

			rv = fn(priv, (void *)(uintptr_t)addr, n);
			addr += n;
			len -= n;
		}
		return rv;

	case XIW_MR_USER:
		off = addr - mr->va + mr->page_offset;
		while (len && !rv) {
			u64 idx = off >> PAGE_SHIFT;
			unsigned int in_page = offset_in_page(off);
			unsigned int n = min_t(u64, len, PAGE_SIZE - in_page);
			void *kaddr;

			if (idx >= mr->num_pages)
				return -EFAULT;
			kaddr = kmap_local_page(mr->pages[idx]);
			rv = fn(priv, kaddr + in_page, n);
			kunmap_local(kaddr);
			off += n;
			len -= n;
		}
		return rv;

	case XIW_MR_FAST: {
		u64 psize = mr->base_mr.page_size;

		if (!psize)
			return -EFAULT;
		/* Page entries are page aligned; iova may start inside one. */
		off = addr - mr->va + (mr->va & (psize - 1));
		while (len && !rv) {
			u64 idx = div64_u64(off, psize);
			u64 in_page = off - idx * psize;
			unsigned int n = min_t(u64, len, psize - in_page);

			if (idx >= mr->num_fr_pages)
				return -EFAULT;
			rv = fn(priv, (void *)(uintptr_t)(mr->page_list[idx] +
							  in_page), n);
			off += n;
			len -= n;
		}
		return rv;
	}
	}
	return -EFAULT;
}

/**
 * xiw_sgl_walk - walk a range of a scatter/gather list, checking each STag
 * @xdev: device
 * @pd: protection domain of the QP the list belongs to
 * @sge: the list
 * @num_sge: entries of @sge
 * @off: first octet of the range, counted across the list
 * @len: octets in the range
 * @access: IB_ACCESS_* rights each entry's MR must grant (0: local read)
 * @fn: called for each virtually contiguous piece, in order (see
 *	xiw_mr_walk())
 * @priv: passed to @fn
 *
 * Any context; @fn must not sleep.
 *
 * Return: 0; -EACCES if an entry's STag, rights or bounds fail the check
 * or @fn failed; -EINVAL if the list is shorter than @off + @len.
 */
static __always_inline int
xiw_sgl_walk(struct xiw_device *xdev, struct ib_pd *pd,
	     const struct xiw_sge *sge, unsigned int num_sge, u32 off, u32 len,
	     int access, int (*fn)(void *priv, void *kaddr, unsigned int len),
	     void *priv)
{
	unsigned int i;

	for (i = 0; i < num_sge && len; i++, sge++) {
		struct xiw_mr *mr;
		u32 n;
		int rv;

		if (off >= sge->length) {
			off -= sge->length;
			continue;
		}
		n = min(len, sge->length - off);
		if (__xiw_mr_lookup(xdev, pd, sge->lkey, access,
				    sge->laddr + off, n, &mr) != XIW_ACC_OK)
			return -EACCES;
		rv = xiw_mr_walk(mr, sge->laddr + off, n, fn, priv);
		xiw_mr_put(mr);
		if (rv)
			return -EACCES;
		len -= n;
		off = 0;
	}
	return len ? -EINVAL : 0;
}

#endif /* _XIW_MEM_H */
