// SPDX-License-Identifier: GPL-2.0
// Microbenchmarks of the xiw protocol core.
//
// The sized families (64 B to 1 MiB of Write payload) answer one question:
// what does MPA framing with CRC32c cost next to just copying the bytes?
//   Memcpy/N            memcpy of N octets (the baseline)
//   FpduBuild/N/K       N octets framed into FPDUs with CRC, each segment
//                       copied and then checksummed where it landed, as
//                       xiw.ko does (xiw_copy_crc32c()), K=0: largest FPDUs
//                       (65535-octet ULPDUs, what a TSO/loopback MSS
//                       allows), K=1: MULPDU from a 1460-octet MSS
//   FpduBuildZc/N/K     the zero-copy shape: headers and trailers built,
//                       CRC computed over the payload in place, no copy
//   Deframe/N/K         the same stream deframed with the CRC checked
//   DeframePlace/N/K    ... and every payload chunk copied to its place
//   Crc32c/N            crc32c() alone: isa-l's crc32_iscsi() in userspace
//   MemcpyCrc32c/N      memcpy, then crc32c() over the destination, one
//                       call each for all N octets
// At the end a table gives each family's throughput as a ratio to Memcpy
// of the same size, measured in the same run. --benchmark_format=json (or
// csv) prints the raw results only.
//
// The CRC is isa-l's, not the kernel's: on x86-64 the crc32c() of the
// 6.1 and 6.12 kernels is crc32c-intel, which like isa-l's
// crc32_iscsi_01 runs three crc32 instruction streams joined with
// PCLMULQDQ (from 512 octets on); isa-l picks a VPCLMULQDQ folding loop
// instead where the CPU has AVX-512, which crc32c-intel does not use.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "proto/xiw_proto.h"

namespace {

std::vector<u8> Random(size_t n)
{
	std::vector<u8> v(n);
	std::mt19937 rng(42);

	for (auto &b : v)
		b = (u8)rng();
	return v;
}

constexpr int64_t kMinSize = 64, kMaxSize = 1 << 20;

// A destination of @n octets whose address is half a page away from
// @src's, modulo the page.  Two buffers of one size from the allocator
// usually sit at the same page offset, and a copy between addresses that
// alias modulo 4 KiB runs at a fraction of its speed on some CPUs (glibc's
// rep movsb path on AMD Zen measured 1.5 against 45 GB/s): the baseline and
// every family copy between buffers placed this way.
class Apart {
public:
	Apart(size_t n, const u8 *src) : mem_(n + kPage)
	{
		uintptr_t base = (uintptr_t)mem_.data();

		p_ = mem_.data() + (((uintptr_t)src + kPage / 2 - base) & (kPage - 1));
	}
	u8 *data() { return p_; }
	bool Equals(const std::vector<u8> &v) const
	{
		return memcmp(p_, v.data(), v.size()) == 0;
	}

private:
	static constexpr uintptr_t kPage = 4096;
	std::vector<u8> mem_;
	u8 *p_;
};

// Largest Write payload per FPDU for size class @kind.
size_t SegPayload(int64_t kind)
{
	u32 mulpdu = kind ? xiw_mpa_mulpdu(1460, false, true) : MPA_MAX_ULPDU;

	return mulpdu - DDP_TAGGED_HDR_LEN;
}

// Frame @payload as one tagged Write message; returns octets written.
size_t Frame(const std::vector<u8> &payload, size_t seg, u8 *out, size_t cap)
{
	xiw_tx tx;
	xiw_rdmap_hdr h{};
	size_t used = 0;

	h.opcode = RDMAP_OP_WRITE;
	h.tagged = true;
	h.stag = 0x1234;
	xiw_tx_init(&tx, true, false, 0);
	for (size_t off = 0; off < payload.size() || !used;) {
		size_t chunk = std::min(seg, payload.size() - off);
		u8 hdr[XIW_RDMAP_HDR_MAX];
		size_t hl, n;

		h.last = off + chunk == payload.size();
		h.to = off;
		xiw_rdmap_hdr_build(&h, hdr, sizeof(hdr), &hl);
		xiw_slice sl[2] = { { hdr, hl }, { payload.data() + off, chunk } };
		if (xiw_fpdu_build(&tx, sl, 2, out + used, cap - used, &n) != XIW_OK)
			return 0;
		used += n;
		off += chunk;
		if (!chunk)
			break;
	}
	return used;
}

size_t FramedCap(size_t n, size_t seg)
{
	return (n / seg + 1) * (seg + 64);
}

void BM_Memcpy(benchmark::State &st)
{
	auto src = Random((size_t)st.range(0));
	Apart dst(src.size(), src.data());

	for (auto _ : st) {
		memcpy(dst.data(), src.data(), src.size());
		benchmark::DoNotOptimize(dst.data());
		benchmark::ClobberMemory();
	}
	st.SetBytesProcessed((int64_t)st.iterations() * st.range(0));
}
BENCHMARK(BM_Memcpy)->RangeMultiplier(4)->Range(kMinSize, kMaxSize);

void BM_FpduBuild(benchmark::State &st)
{
	auto payload = Random((size_t)st.range(0));
	size_t seg = SegPayload(st.range(1));
	size_t cap = FramedCap(payload.size(), seg);
	Apart out(cap, payload.data());

	for (auto _ : st) {
		if (!Frame(payload, seg, out.data(), cap))
			st.SkipWithError("build failed");
		benchmark::DoNotOptimize(out.data());
		benchmark::ClobberMemory();
	}
	st.SetBytesProcessed((int64_t)st.iterations() * st.range(0));
}

// The zero-copy transmit shape: ULPDU_Length and the header built, the
// CRC run over the payload where it lies, pad and CRC field appended; the
// payload itself is handed to the socket by reference, not copied.
void BM_FpduBuildZc(benchmark::State &st)
{
	auto payload = Random((size_t)st.range(0));
	size_t seg = SegPayload(st.range(1));
	std::vector<u8> heads((payload.size() / seg + 1) * (MPA_HDR_LEN + XIW_RDMAP_HDR_MAX +
							MPA_ALIGN + MPA_CRC_LEN));

	for (auto _ : st) {
		xiw_rdmap_hdr h{};
		u8 *o = heads.data();
		size_t off = 0;

		h.opcode = RDMAP_OP_WRITE;
		h.tagged = true;
		h.stag = 0x1234;
		do {
			size_t chunk = std::min(seg, payload.size() - off), hl;
			u32 crc;

			h.last = off + chunk == payload.size();
			h.to = off;
			xiw_rdmap_hdr_build(&h, o + MPA_HDR_LEN, XIW_RDMAP_HDR_MAX, &hl);
			o[0] = (u8)((hl + chunk) >> 8);
			o[1] = (u8)(hl + chunk);
			crc = xiw_crc_update(XIW_CRC_SEED, o, MPA_HDR_LEN + hl);
			crc = xiw_crc_update(crc, payload.data() + off, chunk);
			o += MPA_HDR_LEN + hl;
			o += xiw_fpdu_trailer(crc, true, (u32)(hl + chunk), o);
			off += chunk;
		} while (off < payload.size());
		benchmark::DoNotOptimize(heads.data());
		benchmark::ClobberMemory();
	}
	st.SetBytesProcessed((int64_t)st.iterations() * st.range(0));
}

template <bool kPlace>
void BM_DeframeT(benchmark::State &st)
{
	auto payload = Random((size_t)st.range(0));
	size_t seg = SegPayload(st.range(1));
	std::vector<u8> stream(FramedCap(payload.size(), seg));
	stream.resize(Frame(payload, seg, stream.data(), stream.size()));
	Apart dst(payload.size(), stream.data() + MPA_HDR_LEN + DDP_TAGGED_HDR_LEN);

	for (auto _ : st) {
		const u8 *p = stream.data();
		size_t left = stream.size();
		u64 placed = 0;
		xiw_rx rx;

		xiw_rx_init(&rx, true, false, 0, 0);
		while (left) {
			xiw_rx_event ev;
			size_t used;

			if (xiw_rx_step(&rx, p, left, &used, &ev) != XIW_OK) {
				st.SkipWithError("deframe failed");
				return;
			}
			if (ev.type == XIW_RX_EV_DATA) {
				if (kPlace)
					memcpy(dst.data() + rx.hdr.to + ev.offset, ev.data, ev.len);
				placed += ev.len;
			}
			p += used;
			left -= used;
		}
		if (placed != payload.size())
			st.SkipWithError("payload mismatch");
		benchmark::DoNotOptimize(placed);
		benchmark::ClobberMemory();
	}
	if (kPlace && !dst.Equals(payload))
		st.SkipWithError("placed bytes differ");
	st.SetBytesProcessed((int64_t)st.iterations() * st.range(0));
}

void BM_Deframe(benchmark::State &st)
{
	BM_DeframeT<false>(st);
}

void BM_DeframePlace(benchmark::State &st)
{
	BM_DeframeT<true>(st);
}

void SizedArgs(benchmark::internal::Benchmark *b)
{
	for (int64_t kind = 0; kind <= 1; kind++)
		for (int64_t n = kMinSize; n <= kMaxSize; n *= 4)
			b->Args({ n, kind });
}
BENCHMARK(BM_FpduBuild)->Apply(SizedArgs);
BENCHMARK(BM_FpduBuildZc)->Apply(SizedArgs);
BENCHMARK(BM_Deframe)->Apply(SizedArgs);
BENCHMARK(BM_DeframePlace)->Apply(SizedArgs);

void BM_Crc32c(benchmark::State &st)
{
	auto buf = Random((size_t)st.range(0));
	u32 c = XIW_CRC_SEED;

	for (auto _ : st) {
		c = xiw_crc_update(c, buf.data(), buf.size());
		benchmark::DoNotOptimize(c);
	}
	st.SetBytesProcessed((int64_t)st.iterations() * st.range(0));
}
BENCHMARK(BM_Crc32c)->RangeMultiplier(4)->Range(kMinSize, kMaxSize);

// The copying transmit path of xiw.ko: the payload copied into the
// framing buffer (misaligned as after an FPDU's headers), then checksummed
// there.
void BM_MemcpyCrc32c(benchmark::State &st)
{
	auto buf = Random((size_t)st.range(0));
	Apart dst(buf.size() + 64, buf.data());
	u32 c = XIW_CRC_SEED;

	for (auto _ : st) {
		c = xiw_crc_copy(c, dst.data() + 16, buf.data(), buf.size());
		benchmark::DoNotOptimize(c);
		benchmark::ClobberMemory();
	}
	st.SetBytesProcessed((int64_t)st.iterations() * st.range(0));
}
BENCHMARK(BM_MemcpyCrc32c)->RangeMultiplier(4)->Range(kMinSize, kMaxSize);

void BM_HeaderParse(benchmark::State &st)
{
	xiw_rdmap_hdr h{}, out;
	u8 buf[XIW_RDMAP_HDR_MAX];
	size_t hl;

	h.opcode = (u8)st.range(0);
	h.last = true;
	h.qn = xiw_rdmap_op_lookup(h.opcode)->qn;
	xiw_rdmap_hdr_build(&h, buf, sizeof(buf), &hl);
	for (auto _ : st) {
		xiw_proto_err e = xiw_rdmap_hdr_parse(buf, hl, &out, &hl);

		benchmark::DoNotOptimize(e);
		benchmark::DoNotOptimize(out);
	}
}
BENCHMARK(BM_HeaderParse)->Arg(RDMAP_OP_WRITE)->Arg(RDMAP_OP_SEND)->Arg(RDMAP_OP_READ_REQ)
	->Arg(RDMAP_OP_ATOMIC_REQ);

void BM_MpaParseNegotiate(benchmark::State &st)
{
	xiw_mpa_policy pol{};
	xiw_mpa_frame req, f;
	xiw_mpa_params a;
	u8 buf[64];
	size_t n, used;

	pol.crc = XIW_MPA_CRC_PREFER;
	pol.rev = 2;
	pol.ird = pol.ord = 16;
	xiw_mpa_request_init(&pol, &req);
	xiw_mpa_frame_build(&req, buf, sizeof(buf), &n);
	for (auto _ : st) {
		xiw_mpa_frame_parse(buf, n, &f, &used);
		benchmark::DoNotOptimize(xiw_mpa_negotiate(&pol, &f, &a));
	}
}
BENCHMARK(BM_MpaParseNegotiate);

// Console output plus a record of every run's throughput for the table.
class RatioReporter : public benchmark::ConsoleReporter {
public:
	void ReportRuns(const std::vector<Run> &runs) override
	{
		for (const auto &r : runs) {
			auto it = r.counters.find("bytes_per_second");

			if (!r.error_occurred && it != r.counters.end())
				bps_[r.benchmark_name()] = it->second.value;
		}
		ConsoleReporter::ReportRuns(runs);
	}

	double Get(const std::string &name) const
	{
		auto it = bps_.find(name);

		return it == bps_.end() ? 0 : it->second;
	}

	void PrintRatios() const
	{
		static const char *const fam[] = { "BM_FpduBuild", "BM_FpduBuildZc", "BM_Deframe",
						   "BM_DeframePlace" };

		printf("\nThroughput relative to memcpy of the same size (same run, CRC32c: "
		       "isa-l crc32_iscsi)\n");
		printf("%8s %11s", "size", "memcpy GB/s");
		for (const char *f : fam)
			printf(" %9s.max %9s.mss", f + 3, f + 3);
		printf(" %10s %12s\n", "Crc32c", "MemcpyCrc32c");
		for (int64_t n = kMinSize; n <= kMaxSize; n *= 4) {
			double m = Get("BM_Memcpy/" + std::to_string(n));

			if (m <= 0)
				continue;
			printf("%8lld %11.2f", (long long)n, m / 1e9);
			for (const char *f : fam) {
				for (int kind = 0; kind <= 1; kind++) {
					double v = Get(std::string(f) + "/" + std::to_string(n) +
						       "/" + std::to_string(kind));

					if (v > 0)
						printf(" %13.3fx", v / m);
					else
						printf(" %14s", "-");
				}
			}
			for (const char *f : { "BM_Crc32c/", "BM_MemcpyCrc32c/" }) {
				double v = Get(f + std::to_string(n));

				if (v > 0)
					printf(" %*.3fx", f[3] == 'C' ? 9 : 11, v / m);
				else
					printf(" %*s", f[3] == 'C' ? 10 : 12, "-");
			}
			printf("\n");
		}
	}

private:
	std::map<std::string, double> bps_;
};

}  // namespace

int main(int argc, char **argv)
{
	bool console = true;

	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--benchmark_format=", 19) &&
		    strcmp(argv[i] + 19, "console"))
			console = false;
	benchmark::Initialize(&argc, argv);
	if (benchmark::ReportUnrecognizedArguments(argc, argv))
		return 1;
	if (!console) {
		benchmark::RunSpecifiedBenchmarks();
	} else {
		RatioReporter rep;

		benchmark::RunSpecifiedBenchmarks(&rep);
		rep.PrintRatios();
	}
	benchmark::Shutdown();
	return 0;
}
