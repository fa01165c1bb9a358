// SPDX-License-Identifier: GPL-2.0
/*
 * Linux 6.12: an skb's page fragments may be device memory the CPU cannot
 * read (devmem TCP); skb_frags_readable() says whether they are not.
 */
#include <linux/skbuff.h>

bool probe_skb_frags_readable(const struct sk_buff *skb);
bool probe_skb_frags_readable(const struct sk_buff *skb)
{
	return skb_frags_readable(skb);
}
