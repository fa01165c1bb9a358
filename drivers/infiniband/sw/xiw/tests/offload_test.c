// SPDX-License-Identifier: GPL-2.0
/*
 * xiw_offload_test.ko: an offload backend for the VM tests, "emulated".
 *
 * It stands in for a NIC that computes the MPA CRC, cuts FPDUs to its own
 * segment size, gathers a bounded number of them per TSO send and places
 * received payload: the CRC is its own table-driven CRC32c (not the
 * kernel's crc32c(), which the software path uses), FPDUs are at most
 * max_fpdu octets, batches at most tso_fpdus FPDUs, and placement is a
 * counted copy.  What it did is readable in /sys/module/xiw_offload_test/
 * parameters/stats; decline=1 makes it refuse connections, which then run
 * in software.
 */

#include <linux/atomic.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "xiw_offload.h"

static unsigned int max_fpdu = 2048;
module_param(max_fpdu, uint, 0644);
MODULE_PARM_DESC(max_fpdu, "Largest FPDU the emulated segmentation builds (octets)");

static unsigned int tso_fpdus = 16;
module_param(tso_fpdus, uint, 0644);
MODULE_PARM_DESC(tso_fpdus, "Most FPDUs per emulated TSO send");

static bool decline;
module_param(decline, bool, 0644);
MODULE_PARM_DESC(decline, "Refuse every connection (they fall back to software)");

static atomic64_t xot_started, xot_active, xot_declined, xot_crc, xot_placed;

static u32 xot_table[256];

/* CRC32c, reflected polynomial 0x82f63b78, a byte at a time. */
static void xot_table_init(void)
{
	u32 i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ (c & 1 ? 0x82f63b78 : 0);
		xot_table[i] = c;
	}
}

static u32 xot_crc32c(struct xiw_offload_conn *oc, u32 crc, const u8 *p,
		      size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		crc = xot_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	atomic64_add(len, &xot_crc);
	return crc;
}

static int xot_conn_start(struct xiw_offload_conn *oc)
{
	if (READ_ONCE(decline)) {
		atomic64_inc(&xot_declined);
		return -EOPNOTSUPP;
	}
	atomic64_inc(&xot_started);
	atomic64_inc(&xot_active);
	return 0;
}

static void xot_conn_stop(struct xiw_offload_conn *oc)
{
	atomic64_dec(&xot_active);
}

static u32 xot_tx_mulpdu(struct xiw_offload_conn *oc, u32 mulpdu)
{
	return min(mulpdu, READ_ONCE(max_fpdu));
}

static u32 xot_tx_batch(struct xiw_offload_conn *oc, u32 batch)
{
	return min(batch, READ_ONCE(tso_fpdus));
}

static void xot_rx_place(struct xiw_offload_conn *oc, void *dst,
			 const void *src, unsigned int len)
{
	memcpy(dst, src, len);
	atomic64_add(len, &xot_placed);
}

static struct xiw_offload_ops xot_ops = {
	.name = "emulated",
	.owner = THIS_MODULE,
	.conn_start = xot_conn_start,
	.conn_stop = xot_conn_stop,
	.crc32c = xot_crc32c,
	.tx_mulpdu = xot_tx_mulpdu,
	.tx_batch = xot_tx_batch,
	.rx_place = xot_rx_place,
};

static int xot_stats_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "started %lld active %lld declined %lld crc_octets %lld placed_octets %lld\n",
			  atomic64_read(&xot_started),
			  atomic64_read(&xot_active),
			  atomic64_read(&xot_declined),
			  atomic64_read(&xot_crc), atomic64_read(&xot_placed));
}

static const struct kernel_param_ops xot_stats_ops = {
	.get = xot_stats_get,
};
module_param_cb(stats, &xot_stats_ops, NULL, 0444);
MODULE_PARM_DESC(stats, "What the backend did");

static int __init xot_init(void)
{
	xot_table_init();
	return xiw_offload_register(&xot_ops);
}

static void __exit xot_exit(void)
{
	xiw_offload_unregister(&xot_ops);
}

module_init(xot_init);
module_exit(xot_exit);
MODULE_DESCRIPTION("xiw test: an emulated CRC, segmentation and placement offload");
MODULE_AUTHOR("xiw developers");
MODULE_LICENSE("GPL");
