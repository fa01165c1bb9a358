// SPDX-License-Identifier: GPL-2.0
/*
 * xiw_kverbs_test.ko: the kernel verbs a consumer uses, on one device.
 *
 * `echo xiw0 > /sys/module/xiw_kverbs_test/parameters/run` (root only) runs
 * the verbs a kernel consumer uses against device xiw0 through ib_core:
 * PD with local_dma_lkey, CQs in workqueue and direct polling mode, an RC QP
 * with 8-SGE and inline sends, a fast-reg MR with map_mr_sg and IB_WR_REG_MR,
 * then ib_drain_qp(), which must return every posted work request as
 * flushed.  The write fails with -EIO when a check failed; details go to the
 * kernel log.
 */

#define pr_fmt(fmt) "xiw_kverbs_test: " fmt

#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

#define XIW_ST_RECVS	4
#define XIW_ST_SENDS	3

struct xiw_st_wr {
	struct ib_cqe cqe;
	struct xiw_st *st;
	int idx;		/* 0..RECVS-1 receives, then sends, then REG_MR */
};

struct xiw_st {
	struct ib_device *ibdev;
	struct ib_qp *qp;
	struct xiw_st_wr wr[XIW_ST_RECVS + XIW_ST_SENDS + 1];
	atomic_t done[XIW_ST_RECVS + XIW_ST_SENDS + 1];
	atomic_t bad;		/* completions with wrong status or QP */
};

#define XIW_ST_CHECK(st, cond, fmt, ...)				\
	do {								\
		if (!(cond)) {						\
			ibdev_err((st)->ibdev, "selftest: " fmt "\n",	\
				  ##__VA_ARGS__);			\
			atomic_inc(&(st)->bad);				\
		}							\
	} while (0)

static void xiw_st_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct xiw_st_wr *wr = container_of(wc->wr_cqe, struct xiw_st_wr, cqe);
	struct xiw_st *st = wr->st;

	XIW_ST_CHECK(st, wc->status == IB_WC_WR_FLUSH_ERR,
		     "WR %d: status %d, want flush", wr->idx, wc->status);
	XIW_ST_CHECK(st, wc->qp == st->qp, "WR %d: wrong QP in completion",
		     wr->idx);
	atomic_inc(&st->done[wr->idx]);
}

/* CQ in direct polling mode: a receive posted in ERROR is flushed at once. */
static void xiw_st_direct(struct xiw_st *st, struct ib_pd *pd)
{
	struct ib_qp_init_attr ia = {};
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	const struct ib_recv_wr *bad;
	struct ib_recv_wr rwr = { .wr_id = 0x77 };
	struct ib_wc wc;
	struct ib_qp *qp;
	struct ib_cq *cq;
	int n, tries;

	cq = ib_alloc_cq(st->ibdev, NULL, 4, 0, IB_POLL_DIRECT);
	XIW_ST_CHECK(st, !IS_ERR(cq), "direct CQ: %ld", PTR_ERR(cq));
	if (IS_ERR(cq))
		return;
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IB_QPT_RC;
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = ib_create_qp(pd, &ia);
	XIW_ST_CHECK(st, !IS_ERR(qp), "direct QP: %ld", PTR_ERR(qp));
	if (IS_ERR(qp))
		goto out_cq;
	XIW_ST_CHECK(st, !ib_modify_qp(qp, &attr, IB_QP_STATE), "to ERR");
	XIW_ST_CHECK(st, !ib_post_recv(qp, &rwr, &bad), "post_recv in ERR");
	n = 0;
	for (tries = 0; tries < 100 && !n; tries++)
		n = ib_poll_cq(cq, 1, &wc);
	XIW_ST_CHECK(st, n == 1 && wc.wr_id == 0x77 &&
		     wc.status == IB_WC_WR_FLUSH_ERR && wc.qp == qp &&
		     wc.opcode == IB_WC_RECV,
		     "direct poll: n %d id %llx status %d", n, wc.wr_id,
		     wc.status);
	XIW_ST_CHECK(st, ib_poll_cq(cq, 1, &wc) == 0, "extra completion");
	ib_destroy_qp(qp);
out_cq:
	ib_free_cq(cq);
}

static void xiw_st_main(struct xiw_st *st, struct ib_pd *pd, struct ib_cq *cq,
			u8 *buf, u64 dma)
{
	struct ib_qp_init_attr ia = {};
	struct ib_qp_attr attr = {};
	struct ib_sge sge[8];
	struct scatterlist sg;
	const struct ib_send_wr *sbad;
	const struct ib_recv_wr *rbad;
	struct ib_reg_wr reg = {};
	struct ib_mr *mr, *big;
	int i, n;

	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IB_QPT_RC;
	ia.sq_sig_type = IB_SIGNAL_REQ_WR;
	ia.cap.max_send_wr = 10;
	ia.cap.max_recv_wr = 5;
	ia.cap.max_send_sge = 8;
	ia.cap.max_recv_sge = 8;
	ia.cap.max_inline_data = 64;
	st->qp = ib_create_qp(pd, &ia);
	XIW_ST_CHECK(st, !IS_ERR(st->qp), "create_qp: %ld", PTR_ERR(st->qp));
	if (IS_ERR(st->qp))
		return;
	XIW_ST_CHECK(st, ia.cap.max_send_wr >= 10 && ia.cap.max_recv_wr >= 5 &&
		     ia.cap.max_send_sge >= 8 && ia.cap.max_recv_sge >= 8,
		     "caps %u/%u/%u/%u", ia.cap.max_send_wr, ia.cap.max_recv_wr,
		     ia.cap.max_send_sge, ia.cap.max_recv_sge);

	attr.qp_state = IB_QPS_INIT;
	attr.qp_access_flags = IB_ACCESS_LOCAL_WRITE;
	XIW_ST_CHECK(st, !ib_modify_qp(st->qp, &attr,
				       IB_QP_STATE | IB_QP_ACCESS_FLAGS),
		     "to INIT");
	attr.qp_state = IB_QPS_RTS;
	XIW_ST_CHECK(st, ib_modify_qp(st->qp, &attr, IB_QP_STATE) == -EINVAL,
		     "RTS without a connection accepted");

	for (i = 0; i < 8; i++) {
		sge[i].addr = dma + i * 64;
		sge[i].length = 64;
		sge[i].lkey = pd->local_dma_lkey;
	}
	for (i = 0; i < XIW_ST_RECVS; i++) {
		struct ib_recv_wr rwr = {
			.wr_cqe = &st->wr[i].cqe,
			.sg_list = sge,
			.num_sge = 8,
		};

		XIW_ST_CHECK(st, !ib_post_recv(st->qp, &rwr, &rbad),
			     "post_recv %d", i);
	}
	for (i = 0; i < XIW_ST_SENDS; i++) {
		struct ib_send_wr swr = {
			.wr_cqe = &st->wr[XIW_ST_RECVS + i].cqe,
			.sg_list = sge,
			.num_sge = i == 0 ? 1 : 8,
			.opcode = IB_WR_SEND,
			.send_flags = i == 0 ? IB_SEND_INLINE : 0,
		};

		if (i == 0)
			sge[0].addr = (u64)(uintptr_t)buf;	/* inline: a VA */
		XIW_ST_CHECK(st, !ib_post_send(st->qp, &swr, &sbad),
			     "post_send %d", i);
		sge[0].addr = dma;
	}
	/* Too many SGEs and too much inline data are refused. */
	{
		struct ib_sge many[9];
		struct ib_send_wr swr = {
			.sg_list = many, .num_sge = 9, .opcode = IB_WR_SEND,
		};

		memcpy(many, sge, sizeof(sge));
		many[8] = sge[0];
		XIW_ST_CHECK(st, ib_post_send(st->qp, &swr, &sbad) == -EINVAL,
			     "9 SGEs accepted");
		many[0].addr = (u64)(uintptr_t)buf;
		many[0].length = 65;
		swr.num_sge = 1;
		swr.send_flags = IB_SEND_INLINE;
		XIW_ST_CHECK(st, ib_post_send(st->qp, &swr, &sbad) == -EINVAL,
			     "65 inline bytes accepted");
	}

	/* A fast-reg MR over the buffer; its REG_MR WR is queued. */
	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 4);
	XIW_ST_CHECK(st, !IS_ERR(mr), "alloc_mr: %ld", PTR_ERR(mr));
	if (!IS_ERR(mr)) {
		sg_init_one(&sg, buf, PAGE_SIZE);
		n = ib_dma_map_sg(st->ibdev, &sg, 1, DMA_BIDIRECTIONAL);
		XIW_ST_CHECK(st, n == 1, "map_sg");
		n = ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE);
		XIW_ST_CHECK(st, n == 1, "map_mr_sg: %d", n);
		big = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG,
				  st->ibdev->attrs.max_fast_reg_page_list_len + 1);
		XIW_ST_CHECK(st, IS_ERR(big),
			     "alloc_mr over max_fast_reg_page_list_len");
		if (!IS_ERR(big))
			ib_dereg_mr(big);
		ib_update_fast_reg_key(mr, 0x5a);
		reg.wr.opcode = IB_WR_REG_MR;
		reg.wr.wr_cqe = &st->wr[XIW_ST_RECVS + XIW_ST_SENDS].cqe;
		reg.mr = mr;
		reg.key = mr->rkey;
		reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
		XIW_ST_CHECK(st, !ib_post_send(st->qp, &reg.wr, &sbad),
			     "post REG_MR");
	}

	/* Flush everything; the core's drain waits for its marker WRs. */
	ib_drain_qp(st->qp);
	for (i = 0; i < ARRAY_SIZE(st->done); i++) {
		if (i == XIW_ST_RECVS + XIW_ST_SENDS && IS_ERR(mr))
			continue;
		XIW_ST_CHECK(st, atomic_read(&st->done[i]) == 1,
			     "WR %d completed %d times", i,
			     atomic_read(&st->done[i]));
	}
	ib_destroy_qp(st->qp);
	if (!IS_ERR(mr)) {
		ib_dma_unmap_sg(st->ibdev, &sg, 1, DMA_BIDIRECTIONAL);
		ib_dereg_mr(mr);
	}
}

static int xiw_kverbs_selftest(struct ib_device *ibdev)
{
	struct xiw_st *st;
	struct ib_pd *pd;
	struct ib_cq *cq;
	u8 *buf;
	u64 dma;
	int i, rv = 0;

	st = kzalloc(sizeof(*st), GFP_KERNEL);
	buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	if (!st || !buf) {
		rv = -ENOMEM;
		goto out_free;
	}
	st->ibdev = ibdev;
	for (i = 0; i < ARRAY_SIZE(st->wr); i++) {
		st->wr[i].cqe.done = xiw_st_done;
		st->wr[i].st = st;
		st->wr[i].idx = i;
	}

	pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(pd)) {
		rv = PTR_ERR(pd);
		goto out_free;
	}
	cq = ib_alloc_cq(ibdev, NULL, 32, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(cq)) {
		rv = PTR_ERR(cq);
		goto out_pd;
	}
	dma = ib_dma_map_single(ibdev, buf, PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ibdev, dma)) {
		rv = -ENOMEM;
		goto out_cq;
	}

	xiw_st_main(st, pd, cq, buf, dma);
	xiw_st_direct(st, pd);

	ib_dma_unmap_single(ibdev, dma, PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (atomic_read(&st->bad))
		rv = -EIO;
	ibdev_info(ibdev, "kernel verbs selftest: %s (%d failed checks)\n",
		   rv ? "FAIL" : "pass", atomic_read(&st->bad));
out_cq:
	ib_free_cq(cq);
out_pd:
	ib_dealloc_pd(pd);
out_free:
	kfree(buf);
	kfree(st);
	return rv;
}

/*
 * The RDMA device called @name that has a netdev in the initial network
 * namespace, with a reference.  Found through the netdevs: the RDMA core
 * has no exported lookup by name on every kernel (7.x has none).
 */
static struct ib_device *xiw_selftest_get_dev(const char *name)
{
	struct ib_device *ibdev, *found = NULL;
	struct net_device *ndev;

	rtnl_lock();
	for_each_netdev(&init_net, ndev) {
		ibdev = ib_device_get_by_netdev(ndev, RDMA_DRIVER_SIW);
		if (!ibdev)
			continue;
		if (!strcmp(dev_name(&ibdev->dev), name)) {
			found = ibdev;
			break;
		}
		ib_device_put(ibdev);
	}
	rtnl_unlock();
	return found;
}

static int xiw_selftest_set(const char *val, const struct kernel_param *kp)
{
	char name[IB_DEVICE_NAME_MAX];
	struct ib_device *ibdev;
	int rv;

	strscpy(name, val, sizeof(name));
	strim(name);
	ibdev = xiw_selftest_get_dev(name);
	if (!ibdev)
		return -ENODEV;
	/* Only xiw's devices (in-tree siw shares the driver id). */
	if (!ibdev->ops.owner || strcmp(module_name(ibdev->ops.owner), "xiw"))
		rv = -ENODEV;
	else
		rv = xiw_kverbs_selftest(ibdev);
	ib_device_put(ibdev);
	return rv;
}

static const struct kernel_param_ops xiw_selftest_ops = {
	.set = xiw_selftest_set,
};
module_param_cb(run, &xiw_selftest_ops, NULL, 0200);
MODULE_PARM_DESC(run, "write an xiw device's name to run the kernel verbs test on it");

MODULE_DESCRIPTION("xiw: kernel verbs test of one device (testing only)");
MODULE_LICENSE("GPL");
