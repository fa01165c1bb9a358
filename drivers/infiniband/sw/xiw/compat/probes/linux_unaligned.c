// SPDX-License-Identifier: GPL-2.0
/* Linux 6.12: <asm/unaligned.h> moved to <linux/unaligned.h>. */
#include <linux/unaligned.h>

static u32 probe_get(const void *p)
{
	return get_unaligned_be32(p);
}

u32 (*probe_fn)(const void *p) __maybe_unused = probe_get;
