// SPDX-License-Identifier: GPL-2.0
/*
 * Linux 6.7: the zero-copy notification struct ubuf_info calls its owner
 * through a const struct ubuf_info_ops instead of a callback member.
 */
#include <linux/skbuff.h>

static void probe_complete(struct sk_buff *skb, struct ubuf_info *uarg,
			   bool zerocopy_success)
{
}

static const struct ubuf_info_ops probe_ops __maybe_unused = {
	.complete = probe_complete,
};
