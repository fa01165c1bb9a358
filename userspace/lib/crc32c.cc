// SPDX-License-Identifier: GPL-2.0
//
// CRC32c for the userspace build of the protocol core.
//
// proto/ calls crc32c() with the kernel's contract (running value in and
// out, no inversion). In the module that is the kernel's crc32c(); here it
// is xiw_crc32c(), which picks the fastest implementation the CPU offers
// the first time it runs:
//
//   vpclmul  AVX-512 VPCLMULQDQ folding, four 512-bit accumulators, with
//            three crc32 instruction streams alongside on long buffers
//   pclmul   PCLMULQDQ folding, four 128-bit accumulators
//   sse42    the SSE4.2 crc32 instruction, eight octets per step
//   sw       portable slicing-by-8 tables (built at compile time)
//
// XIW_CRC32C=<name> in the environment forces one (if the CPU has it);
// tests and benchmarks reach every implementation through
// xiw_crc32c_impls(). Each one also has a fused copy: xiw_crc32c_copy()
// copies and checksums in one pass over the data, which is what the FPDU
// builder uses.
//
// Folding, in the notation used below. Take the reflected convention of
// CRC32c: 16 message octets loaded little-endian into a 128-bit lane give
// a polynomial whose lane bit i is the coefficient of x^(127-i); the low
// 64-bit half H holds the first eight octets (the higher degrees) and the
// high half L the last eight, so the lane is H*x^64 + L. Moving the lane d
// bits further down the message means multiplying by x^d modulo P:
//   H*x^(64+d) + L*x^d == H*(x^(64+d) mod P) + L*(x^d mod P)
// A carry-less multiply of two bit-reflected 64-bit operands returns a
// product whose bit i is the coefficient of x^(126-i), one short of the
// lane's convention, so each constant carries one power of x less:
// x^(63+d) for H and x^(d-1) for L, each a 32-bit residue placed in the
// upper half of its 64-bit operand. Once everything is folded into one
// lane X, the CRC is X*x^32 mod P, which two crc32 instructions compute
// from a zero register: first over H, then over L.

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "xiw_crc32c.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define XIW_CRC_X86 1
#endif

namespace {

constexpr uint32_t kPoly = 0x82f63b78u;	// reflected Castagnoli polynomial

struct Tables {
	uint32_t t[8][256];
};

constexpr Tables MakeTables()
{
	Tables tb{};

	for (uint32_t b = 0; b < 256; b++) {
		uint32_t c = b;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ ((c & 1) ? kPoly : 0);
		tb.t[0][b] = c;
	}
	for (int k = 1; k < 8; k++)
		for (uint32_t b = 0; b < 256; b++)
			tb.t[k][b] = (tb.t[k - 1][b] >> 8) ^ tb.t[0][tb.t[k - 1][b] & 0xff];
	return tb;
}

constexpr Tables kTab = MakeTables();
static_assert(kTab.t[0][1] == 0xf26b8303u, "CRC32c table generation");
static_assert(kTab.t[0][128] == kPoly, "CRC32c table generation");

inline uint32_t Le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

uint32_t CrcSw(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *b = static_cast<const uint8_t *>(data);

	while (len >= 8) {
		uint32_t lo = crc ^ Le32(b), hi = Le32(b + 4);

		crc = kTab.t[7][lo & 0xff] ^ kTab.t[6][(lo >> 8) & 0xff] ^
		      kTab.t[5][(lo >> 16) & 0xff] ^ kTab.t[4][lo >> 24] ^
		      kTab.t[3][hi & 0xff] ^ kTab.t[2][(hi >> 8) & 0xff] ^
		      kTab.t[1][(hi >> 16) & 0xff] ^ kTab.t[0][hi >> 24];
		b += 8;
		len -= 8;
	}
	while (len--)
		crc = kTab.t[0][(crc ^ *b++) & 0xff] ^ (crc >> 8);
	return crc;
}

uint32_t CopySw(uint32_t crc, void *dst, const void *src, size_t len)
{
	// Block-wise so the checksum reads what was just written, from L1.
	uint8_t *d = static_cast<uint8_t *>(dst);
	const uint8_t *s = static_cast<const uint8_t *>(src);

	while (len) {
		size_t n = len < 4096 ? len : 4096;

		memcpy(d, s, n);
		crc = CrcSw(crc, d, n);
		d += n;
		s += n;
		len -= n;
	}
	return crc;
}

#ifdef XIW_CRC_X86

// x^n mod P as a reflected 32-bit residue (bit i: coefficient of x^(31-i)).
constexpr uint32_t XPowMod(unsigned int n)
{
	uint32_t r = 0x80000000u;	// x^0

	while (n--)
		r = (r >> 1) ^ ((r & 1) ? kPoly : 0);
	return r;
}

// The two 64-bit operands that move a 128-bit lane @d bits forward.
constexpr uint64_t FoldLo(unsigned int d)
{
	return (uint64_t)XPowMod(63 + d) << 32;
}

constexpr uint64_t FoldHi(unsigned int d)
{
	return (uint64_t)XPowMod(d - 1) << 32;
}

__attribute__((target("sse4.2")))
uint32_t CrcHwTail(uint32_t crc, const uint8_t *b, size_t len)
{
	uint64_t c = crc;

	while (len >= 8) {
		uint64_t v;

		memcpy(&v, b, 8);
		c = _mm_crc32_u64(c, v);
		b += 8;
		len -= 8;
	}
	crc = (uint32_t)c;
	while (len--)
		crc = _mm_crc32_u8(crc, *b++);
	return crc;
}

__attribute__((target("sse4.2")))
uint32_t CrcSse42(uint32_t crc, const void *data, size_t len)
{
	return CrcHwTail(crc, static_cast<const uint8_t *>(data), len);
}

__attribute__((target("sse4.2")))
uint32_t CopySse42(uint32_t crc, void *dst, const void *src, size_t len)
{
	uint8_t *d = static_cast<uint8_t *>(dst);
	const uint8_t *s = static_cast<const uint8_t *>(src);
	uint64_t c = crc;

	while (len >= 8) {
		uint64_t v;

		memcpy(&v, s, 8);
		memcpy(d, &v, 8);
		c = _mm_crc32_u64(c, v);
		s += 8;
		d += 8;
		len -= 8;
	}
	crc = (uint32_t)c;
	while (len--) {
		*d = *s++;
		crc = _mm_crc32_u8(crc, *d++);
	}
	return crc;
}

// The final 128-bit lane to a CRC register value.
__attribute__((target("sse4.2,pclmul")))
inline uint32_t Lane128ToCrc(__m128i x)
{
	uint64_t c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(x));

	return (uint32_t)_mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(x, 1));
}

__attribute__((target("sse4.2,pclmul")))
inline __m128i Fold128(__m128i x, __m128i k, __m128i next)
{
	__m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(x, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

// The end of every folding loop: the remaining whole 16-octet lanes folded
// into @x, @x turned into a CRC register value, the last octets by crc32.
template <bool kCopy>
__attribute__((target("sse4.2,pclmul")))
inline uint32_t Finish128(__m128i x, uint8_t *d, const uint8_t *s, size_t len)
{
	const __m128i k128 = _mm_set_epi64x((long long)FoldHi(128), (long long)FoldLo(128));
	uint32_t crc;

	while (len >= 16) {
		__m128i n = _mm_loadu_si128((const __m128i *)s);

		if (kCopy) {
			_mm_storeu_si128((__m128i *)d, n);
			d += 16;
		}
		x = Fold128(x, k128, n);
		s += 16;
		len -= 16;
	}
	crc = Lane128ToCrc(x);
	if (kCopy) {
		memcpy(d, s, len);
		return CrcHwTail(crc, d, len);
	}
	return CrcHwTail(crc, s, len);
}

template <bool kCopy>
__attribute__((target("sse4.2,pclmul")))
uint32_t CrcPclmulT(uint32_t crc, uint8_t *d, const uint8_t *s, size_t len)
{
	const __m128i k512 = _mm_set_epi64x((long long)FoldHi(512), (long long)FoldLo(512));
	const __m128i k128 = _mm_set_epi64x((long long)FoldHi(128), (long long)FoldLo(128));
	__m128i a0, a1, a2, a3, x;

	if (len < 128) {
		if (kCopy)
			memcpy(d, s, len);
		return CrcHwTail(crc, kCopy ? d : s, len);
	}
	a0 = _mm_loadu_si128((const __m128i *)s);
	a1 = _mm_loadu_si128((const __m128i *)(s + 16));
	a2 = _mm_loadu_si128((const __m128i *)(s + 32));
	a3 = _mm_loadu_si128((const __m128i *)(s + 48));
	if (kCopy) {
		_mm_storeu_si128((__m128i *)d, a0);
		_mm_storeu_si128((__m128i *)(d + 16), a1);
		_mm_storeu_si128((__m128i *)(d + 32), a2);
		_mm_storeu_si128((__m128i *)(d + 48), a3);
		d += 64;
	}
	a0 = _mm_xor_si128(a0, _mm_cvtsi32_si128((int)crc));
	s += 64;
	len -= 64;
	while (len >= 64) {
		__m128i n0 = _mm_loadu_si128((const __m128i *)s);
		__m128i n1 = _mm_loadu_si128((const __m128i *)(s + 16));
		__m128i n2 = _mm_loadu_si128((const __m128i *)(s + 32));
		__m128i n3 = _mm_loadu_si128((const __m128i *)(s + 48));

		if (kCopy) {
			_mm_storeu_si128((__m128i *)d, n0);
			_mm_storeu_si128((__m128i *)(d + 16), n1);
			_mm_storeu_si128((__m128i *)(d + 32), n2);
			_mm_storeu_si128((__m128i *)(d + 48), n3);
			d += 64;
		}
		a0 = Fold128(a0, k512, n0);
		a1 = Fold128(a1, k512, n1);
		a2 = Fold128(a2, k512, n2);
		a3 = Fold128(a3, k512, n3);
		s += 64;
		len -= 64;
	}
	x = Fold128(a0, k128, a1);
	x = Fold128(x, k128, a2);
	x = Fold128(x, k128, a3);
	return Finish128<kCopy>(x, d, s, len);
}

uint32_t CrcPclmul(uint32_t crc, const void *data, size_t len)
{
	return CrcPclmulT<false>(crc, nullptr, static_cast<const uint8_t *>(data), len);
}

uint32_t CopyPclmul(uint32_t crc, void *dst, const void *src, size_t len)
{
	return CrcPclmulT<true>(crc, static_cast<uint8_t *>(dst),
				static_cast<const uint8_t *>(src), len);
}

#define XIW_AVX512_TARGET "sse4.2,pclmul,avx512f,avx512vl,vpclmulqdq"

__attribute__((target(XIW_AVX512_TARGET)))
inline __m512i Fold512(__m512i x, __m512i k, __m512i next)
{
	__m512i lo = _mm512_clmulepi64_epi128(x, k, 0x00);
	__m512i hi = _mm512_clmulepi64_epi128(x, k, 0x11);

	return _mm512_ternarylogic_epi64(lo, hi, next, 0x96);	// lo ^ hi ^ next
}

__attribute__((target(XIW_AVX512_TARGET)))
inline __m512i Bcast128(uint64_t lo, uint64_t hi)
{
	return _mm512_set_epi64((long long)hi, (long long)lo, (long long)hi, (long long)lo,
				(long long)hi, (long long)lo, (long long)hi, (long long)lo);
}

// The four 128-bit lanes of @v folded into one.  Through memory: gcc 12
// warns about the undefined pass-through operand of the lane-extract
// intrinsics.
__attribute__((target(XIW_AVX512_TARGET)))
inline __m128i FoldLanes(__m512i v)
{
	const __m128i k128 = _mm_set_epi64x((long long)FoldHi(128), (long long)FoldLo(128));
	alignas(64) uint8_t lanes[64];
	__m128i x;

	_mm512_store_si512(lanes, v);
	x = _mm_load_si128((const __m128i *)lanes);
	x = Fold128(x, k128, _mm_load_si128((const __m128i *)(lanes + 16)));
	x = Fold128(x, k128, _mm_load_si128((const __m128i *)(lanes + 32)));
	return Fold128(x, k128, _mm_load_si128((const __m128i *)(lanes + 48)));
}

template <bool kCopy>
__attribute__((target(XIW_AVX512_TARGET)))
uint32_t CrcVpclmulT(uint32_t crc, uint8_t *d, const uint8_t *s, size_t len)
{
	if (len < 512)
		return CrcPclmulT<kCopy>(crc, d, s, len);

	const __m512i k2048 = Bcast128(FoldLo(2048), FoldHi(2048));
	const __m512i k512 = Bcast128(FoldLo(512), FoldHi(512));
	__m512i a0 = _mm512_loadu_si512(s);
	__m512i a1 = _mm512_loadu_si512(s + 64);
	__m512i a2 = _mm512_loadu_si512(s + 128);
	__m512i a3 = _mm512_loadu_si512(s + 192);

	if (kCopy) {
		_mm512_storeu_si512(d, a0);
		_mm512_storeu_si512(d + 64, a1);
		_mm512_storeu_si512(d + 128, a2);
		_mm512_storeu_si512(d + 192, a3);
		d += 256;
	}
	a0 = _mm512_xor_si512(a0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)crc)));
	s += 256;
	len -= 256;
	while (len >= 256) {
		__m512i n0 = _mm512_loadu_si512(s);
		__m512i n1 = _mm512_loadu_si512(s + 64);
		__m512i n2 = _mm512_loadu_si512(s + 128);
		__m512i n3 = _mm512_loadu_si512(s + 192);

		if (kCopy) {
			_mm512_storeu_si512(d, n0);
			_mm512_storeu_si512(d + 64, n1);
			_mm512_storeu_si512(d + 128, n2);
			_mm512_storeu_si512(d + 192, n3);
			d += 256;
		}
		a0 = Fold512(a0, k2048, n0);
		a1 = Fold512(a1, k2048, n1);
		a2 = Fold512(a2, k2048, n2);
		a3 = Fold512(a3, k2048, n3);
		s += 256;
		len -= 256;
	}
	a1 = Fold512(a0, k512, a1);
	a2 = Fold512(a1, k512, a2);
	a3 = Fold512(a2, k512, a3);
	while (len >= 64) {
		__m512i n = _mm512_loadu_si512(s);

		if (kCopy) {
			_mm512_storeu_si512(d, n);
			d += 64;
		}
		a3 = Fold512(a3, k512, n);
		s += 64;
		len -= 64;
	}
	return Finish128<kCopy>(FoldLanes(a3), d, s, len);
}

// ---- Hybrid: VPCLMUL folding and three crc32 streams side by side ------
//
// The carry-less multiplier and the crc32 instruction sit on different
// execution ports, so one loop can feed both: per step, 512 octets of
// region A go through eight 512-bit accumulators while three crc32 streams
// each take 64 octets of regions B1, B2, B3 (A, B1, B2, B3 are
// consecutive, |B1| = |B2| = |B3| = L). The pieces are then joined with
// crc(A B) = crc(A) * x^(8L) + crc0(B), where crc0 starts from zero;
// multiplying a residue by x^(8L) is one carry-less multiply and one
// crc32 (see MulModX32()).

constexpr unsigned int kHybSteps = 4;	// fewest steps worth the join
constexpr size_t kHybAcc = 8;		// 512-bit accumulators for region A
constexpr size_t kHybA = 64 * kHybAcc, kHybB = 64, kHybStep = kHybA + 3 * kHybB;

// a * b mod P, reflected residues, bitwise (compile time only).
constexpr uint32_t GfMul(uint32_t a, uint32_t b)
{
	uint32_t m = 0x80000000u, p = 0;

	for (;;) {
		if (a & m) {
			p ^= b;
			if (!(a & (m - 1)))
				break;
		}
		m >>= 1;
		b = (b >> 1) ^ ((b & 1) ? kPoly : 0);
	}
	return p;
}

struct ShiftTable {
	uint32_t t[64];	// t[k] = x^(2^k - 32) mod P, for k >= 5
};

constexpr ShiftTable MakeShiftTable()
{
	ShiftTable st{};
	uint32_t x2k = 0x40000000u;	// x^(2^0)

	for (int k = 0; k < 5; k++)
		x2k = GfMul(x2k, x2k);	// now x^(2^5)
	st.t[5] = 0x80000000u;		// x^0
	for (int k = 6; k < 64; k++) {
		st.t[k] = GfMul(st.t[k - 1], x2k);	// x^(2^(k-1)-32) * x^(2^(k-1))
		x2k = GfMul(x2k, x2k);
	}
	return st;
}

constexpr ShiftTable kShift = MakeShiftTable();
static_assert(kShift.t[6] == XPowMod(32), "shift table");
static_assert(kShift.t[8] == XPowMod(224), "shift table");

// a * b * x^32 mod P: the 63-bit product, aligned for crc32, reduced by it.
__attribute__((target("sse4.2,pclmul")))
inline uint32_t MulModX32(uint32_t a, uint32_t b)
{
	__m128i p = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)a),
					 _mm_cvtsi32_si128((int)b), 0x00);

	return (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(p) << 1);
}

// x^(bits - 32) mod P for @bits a multiple of 64, at least 64.
__attribute__((target("sse4.2,pclmul")))
uint32_t ShiftConst(uint64_t bits)
{
	uint32_t r = 0;
	bool have = false;

	for (int k = 6; k < 64; k++) {
		if (!(bits & (1ull << k)))
			continue;
		r = have ? MulModX32(r, kShift.t[k]) : kShift.t[k];
		have = true;
	}
	return r;
}

template <bool kCopy>
__attribute__((target(XIW_AVX512_TARGET)))
uint32_t CrcHybridT(uint32_t crc, uint8_t *d, const uint8_t *s, size_t len)
{
	size_t steps = len / kHybStep;

	if (steps < kHybSteps)
		return CrcVpclmulT<kCopy>(crc, d, s, len);

	const __m512i kstep = Bcast128(FoldLo(8 * kHybA), FoldHi(8 * kHybA));
	const __m512i k512 = Bcast128(FoldLo(512), FoldHi(512));
	const size_t blen = kHybB * steps;
	const uint8_t *b1 = s + kHybA * steps, *b2 = b1 + blen, *b3 = b2 + blen;
	/* Destinations only when copying: no arithmetic on a null @d. */
	uint8_t *db1 = kCopy ? d + kHybA * steps : nullptr;
	uint8_t *db2 = kCopy ? db1 + blen : nullptr;
	uint8_t *db3 = kCopy ? db2 + blen : nullptr;
	uint64_t r1 = 0, r2 = 0, r3 = 0;
	__m512i acc[kHybAcc];
	uint32_t k;

	for (size_t j = 0; j < kHybAcc; j++) {
		acc[j] = _mm512_loadu_si512(s + 64 * j);
		if (kCopy)
			_mm512_storeu_si512(d + 64 * j, acc[j]);
	}
	acc[0] = _mm512_xor_si512(acc[0], _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)crc)));
	for (size_t i = 0; i < steps; i++) {
		if (i + 1 < steps) {
			const uint8_t *p = s + kHybA * (i + 1);

			for (size_t j = 0; j < kHybAcc; j++) {
				__m512i n = _mm512_loadu_si512(p + 64 * j);

				if (kCopy)
					_mm512_storeu_si512(d + kHybA * (i + 1) + 64 * j, n);
				acc[j] = Fold512(acc[j], kstep, n);
			}
		}
		if (kCopy) {
			size_t o = kHybB * i;

			_mm512_storeu_si512(db1 + o, _mm512_loadu_si512(b1 + o));
			_mm512_storeu_si512(db2 + o, _mm512_loadu_si512(b2 + o));
			_mm512_storeu_si512(db3 + o, _mm512_loadu_si512(b3 + o));
		}
		for (size_t q = 0; q < kHybB; q += 8) {
			size_t o = kHybB * i + q;
			uint64_t v1, v2, v3;

			memcpy(&v1, b1 + o, 8);
			memcpy(&v2, b2 + o, 8);
			memcpy(&v3, b3 + o, 8);
			r1 = _mm_crc32_u64(r1, v1);
			r2 = _mm_crc32_u64(r2, v2);
			r3 = _mm_crc32_u64(r3, v3);
		}
	}
	for (size_t j = 1; j < kHybAcc; j++)
		acc[j] = Fold512(acc[j - 1], k512, acc[j]);
	crc = Lane128ToCrc(FoldLanes(acc[kHybAcc - 1]));

	k = ShiftConst(8ull * blen);
	crc = MulModX32(crc, k) ^ (uint32_t)r1;
	crc = MulModX32(crc, k) ^ (uint32_t)r2;
	crc = MulModX32(crc, k) ^ (uint32_t)r3;

	s += kHybStep * steps;
	if (kCopy)
		d += kHybStep * steps;
	return CrcVpclmulT<kCopy>(crc, d, s, len - kHybStep * steps);
}

// Long buffers first take a short head through crc32 so that the 64-octet
// accesses of the main loops line up with cache lines: the stores when
// copying (a split store costs two), the loads otherwise.
template <bool kCopy>
__attribute__((target(XIW_AVX512_TARGET)))
uint32_t CrcVpclmulAligned(uint32_t crc, uint8_t *d, const uint8_t *s, size_t len)
{
	size_t mis = (uintptr_t)(kCopy ? d : s) & 63;

	if (mis && len >= 1024) {
		size_t head = 64 - mis;

		if (kCopy) {
			memcpy(d, s, head);
			crc = CrcHwTail(crc, d, head);
			d += head;
		} else {
			crc = CrcHwTail(crc, s, head);
		}
		s += head;
		len -= head;
	}
	return CrcHybridT<kCopy>(crc, d, s, len);
}

uint32_t CrcVpclmul(uint32_t crc, const void *data, size_t len)
{
	return CrcVpclmulAligned<false>(crc, nullptr, static_cast<const uint8_t *>(data), len);
}

uint32_t CopyVpclmul(uint32_t crc, void *dst, const void *src, size_t len)
{
	return CrcVpclmulAligned<true>(crc, static_cast<uint8_t *>(dst),
				       static_cast<const uint8_t *>(src), len);
}

bool HasSse42()
{
	return __builtin_cpu_supports("sse4.2");
}

bool HasPclmul()
{
	return HasSse42() && __builtin_cpu_supports("pclmul");
}

bool HasVpclmul()
{
	return HasPclmul() && __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("avx512vl") &&
	       __builtin_cpu_supports("vpclmulqdq");
}

#endif /* XIW_CRC_X86 */

bool Always()
{
	return true;
}

// Fastest first.
const xiw_crc32c_impl kImpls[] = {
#ifdef XIW_CRC_X86
	{ "vpclmul", CrcVpclmul, CopyVpclmul, HasVpclmul },
	{ "pclmul", CrcPclmul, CopyPclmul, HasPclmul },
	{ "sse42", CrcSse42, CopySse42, HasSse42 },
#endif
	{ "sw", CrcSw, CopySw, Always },
};

const xiw_crc32c_impl *Choose()
{
	const char *want = getenv("XIW_CRC32C");

	for (const auto &im : kImpls)
		if (want && !strcmp(want, im.name) && im.usable())
			return &im;
	for (const auto &im : kImpls)
		if (im.usable())
			return &im;
	return &kImpls[sizeof(kImpls) / sizeof(kImpls[0]) - 1];
}

std::atomic<const xiw_crc32c_impl *> g_active{ nullptr };

const xiw_crc32c_impl *Active()
{
	const xiw_crc32c_impl *im = g_active.load(std::memory_order_relaxed);

	if (__builtin_expect(!im, 0)) {
		im = Choose();
		g_active.store(im, std::memory_order_relaxed);
	}
	return im;
}

} // namespace

extern "C" {

uint32_t xiw_crc32c(uint32_t crc, const void *p, size_t len)
{
	return Active()->crc(crc, p, len);
}

uint32_t xiw_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
	return Active()->copy(crc, dst, src, len);
}

const xiw_crc32c_impl *xiw_crc32c_impls(unsigned int *n)
{
	*n = sizeof(kImpls) / sizeof(kImpls[0]);
	return kImpls;
}

const char *xiw_crc32c_active(void)
{
	return Active()->name;
}

} // extern "C"
