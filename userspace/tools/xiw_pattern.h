// SPDX-License-Identifier: GPL-2.0
//
// The test pattern xiw-peer and xiw-target agree on: byte @i of the
// pattern of @seed, for any offset, so either end can fill or check any
// slice of a transfer without the rest.  Seed 0 is all zeros (what a fresh
// region holds).

#ifndef XIW_PATTERN_H
#define XIW_PATTERN_H

#include <cstddef>
#include <cstdint>

namespace xiw {

inline uint8_t pattern_byte(uint32_t seed, uint64_t i)
{
	if (!seed)
		return 0;
	uint64_t x = (i + 1) * 0x9e37'79b9'7f4a'7c15ull ^ uint64_t(seed) * 0xc2b2'ae3d'27d4'eb4full;
	x ^= x >> 31;
	x *= 0xbf58'476d'1ce4'e5b9ull;
	return uint8_t(x >> 56);
}

inline void pattern_fill(uint8_t *p, size_t n, uint32_t seed, uint64_t first = 0)
{
	for (size_t k = 0; k < n; k++)
		p[k] = pattern_byte(seed, first + k);
}

// Offset of the first byte of @p (holding pattern offsets first..first+n-1)
// that differs, or -1 when all match.
inline long pattern_mismatch(const uint8_t *p, size_t n, uint32_t seed, uint64_t first = 0)
{
	for (size_t k = 0; k < n; k++)
		if (p[k] != pattern_byte(seed, first + k))
			return long(k);
	return -1;
}

} // namespace xiw

#endif
