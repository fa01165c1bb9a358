/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace environment for the xiw protocol core (proto/).
 *
 * proto/xiw_proto_deps.h includes this file whenever __KERNEL__ is not
 * defined. It supplies exactly what the kernel headers supply to proto/:
 * fixed-width types, bool, memcpy/memset, likely/unlikely, errno values
 * and crc32c() with the kernel's signature and semantics (no pre- or
 * post-inversion: callers pass ~0 as the seed and invert the result),
 * here computed by isa-l's crc32_iscsi().
 */
#ifndef XIW_PROTO_DEPS_USER_H
#define XIW_PROTO_DEPS_USER_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <errno.h>
#include <limits.h>
#include <isa-l/crc.h>
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
#ifndef __always_inline
#define __always_inline	inline __attribute__((__always_inline__))
#endif

/*
 * crc32c() with the kernel's signature and contract.  isa-l's
 * crc32_iscsi() has the same contract (the running value in and out,
 * nothing inverted) and picks its implementation from the CPU at run
 * time.  It takes an int length and a non-const pointer it only reads,
 * hence the cast and the loop for lengths above INT_MAX.
 */
static inline u32 crc32c(u32 crc, const void *p, unsigned int len)
{
	unsigned char *b = (unsigned char *)p;

	while (len > INT_MAX) {
		crc = crc32_iscsi(b, INT_MAX, crc);
		b += INT_MAX;
		len -= INT_MAX;
	}
	return crc32_iscsi(b, (int)len, crc);
}

#ifdef __cplusplus
}
#endif

#endif /* XIW_PROTO_DEPS_USER_H */
