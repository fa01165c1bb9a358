/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CRC32c of the userspace build (userspace/lib/crc32c.cc).
 *
 * Kernel contract: the running value goes in and comes out, nothing is
 * inverted (seed ~0, invert the final value). The implementation is picked
 * at run time from what the CPU offers; XIW_CRC32C=vpclmul|pclmul|sse42|sw
 * forces one that the CPU supports.
 */
#ifndef XIW_CRC32C_H
#define XIW_CRC32C_H

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct xiw_crc32c_impl - one CRC32c implementation
 * @name: short name (also the XIW_CRC32C value that selects it)
 * @crc: update a running CRC over @len octets
 * @copy: copy @len octets and update the CRC over them, one pass
 * @usable: the CPU can run it
 */
struct xiw_crc32c_impl {
	const char *name;
	uint32_t (*crc)(uint32_t crc, const void *p, size_t len);
	uint32_t (*copy)(uint32_t crc, void *dst, const void *src, size_t len);
	bool (*usable)(void);
};

uint32_t xiw_crc32c(uint32_t crc, const void *p, size_t len);
uint32_t xiw_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t len);
const struct xiw_crc32c_impl *xiw_crc32c_impls(unsigned int *n);
const char *xiw_crc32c_active(void);

#ifdef __cplusplus
}
#endif

#endif /* XIW_CRC32C_H */
