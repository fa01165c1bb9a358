/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one environment switch of the xiw protocol core.
 *
 * Every file in proto/ includes this header and nothing else from the
 * outside world. In the kernel it pulls in the kernel's types, string
 * helpers, crc32c() and errno values; in userspace (GoogleTest, fuzzers,
 * benchmarks, tools) it pulls in userspace/include/xiw_proto_deps_user.h,
 * which provides the same names with the same semantics.  Both get
 * xiw_copy_crc32c() from here.
 */
#ifndef XIW_PROTO_DEPS_H
#define XIW_PROTO_DEPS_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/crc32c.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#else
#include "xiw_proto_deps_user.h"
#endif

/*
 * Copy and checksum. The kernel has no fused CRC32c copy; checksumming
 * the destination right after the copy reads it back from L1/L2.  The
 * userspace build does the same, so that its benchmarks measure the
 * module's path.
 */
static inline u32 xiw_copy_crc32c(u32 crc, void *dst, const void *src,
				  unsigned int len)
{
	memcpy(dst, src, len);
	return crc32c(crc, dst, len);
}

#endif /* XIW_PROTO_DEPS_H */
