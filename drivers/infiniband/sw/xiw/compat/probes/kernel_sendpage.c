// SPDX-License-Identifier: GPL-2.0
/*
 * Linux 6.5: kernel_sendpage() and proto_ops.sendpage were removed; pages
 * are handed to TCP by sendmsg() with MSG_SPLICE_PAGES instead.  (Debian's
 * 6.1 defines MSG_SPLICE_PAGES without TCP honouring it, so the probe looks
 * for the old interface, not the flag.)
 */
#include <linux/net.h>

int (*probe_fn)(struct socket *, struct page *, int, size_t, int)
	__maybe_unused = kernel_sendpage;
