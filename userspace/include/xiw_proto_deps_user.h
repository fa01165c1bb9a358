/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace environment for the xiw protocol core (proto/).
 *
 * proto/xiw_proto_deps.h includes this file whenever __KERNEL__ is not
 * defined. It supplies exactly what the kernel headers supply to proto/:
 * fixed-width types, bool, memcpy/memset, likely/unlikely, errno values
 * and crc32c() with the kernel's signature and semantics (no pre- or
 * post-inversion: callers pass ~0 as the seed and invert the result).
 */
#ifndef XIW_PROTO_DEPS_USER_H
#define XIW_PROTO_DEPS_USER_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <errno.h>
#include "xiw_crc32c.h"
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

/*
 * Byte-order annotated types: plain integers in userspace (sparse is
 * kernel-only). On Linux take them from the uapi header so they agree
 * with any other header that includes it (glibc, GoogleTest).
 */
#ifdef __linux__
#include <linux/types.h>
#else
typedef uint16_t __be16;
typedef uint32_t __be32;
typedef uint64_t __be64;
typedef uint16_t __le16;
typedef uint32_t __le32;
typedef uint64_t __le64;
#endif

#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif

/*
 * crc32c() with the kernel's signature and contract, on top of the
 * run-time dispatched implementation in userspace/lib/crc32c.cc, and the
 * fused copy-and-CRC primitive the kernel side spells as memcpy() plus
 * crc32c().
 */
static inline u32 crc32c(u32 crc, const void *p, unsigned int len)
{
	return xiw_crc32c(crc, p, len);
}

static inline u32 xiw_copy_crc32c(u32 crc, void *dst, const void *src,
				  unsigned int len)
{
	return xiw_crc32c_copy(crc, dst, src, len);
}

#ifdef __cplusplus
}
#endif

#endif /* XIW_PROTO_DEPS_USER_H */
