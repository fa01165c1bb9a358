// SPDX-License-Identifier: GPL-2.0
// Microbenchmarks of the xiw protocol core: CRC32c throughput, FPDU
// framing (with and without CRC, with markers), deframing 64 KiB of stream
// delivered in MSS-sized pieces, and header parsing.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
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
BENCHMARK(BM_Crc32c)->Arg(64)->Arg(1454)->Arg(4096)->Arg(65536);

// One MULPDU-sized Write FPDU: args = crc, markers.
void BM_FpduBuild(benchmark::State &st)
{
	bool crc = st.range(0), mk = st.range(1);
	u32 mulpdu = xiw_mpa_mulpdu(1460, mk, crc);
	xiw_rdmap_hdr h{};
	u8 hdr[XIW_RDMAP_HDR_MAX];
	size_t hl, n;
	auto payload = Random(mulpdu - DDP_TAGGED_HDR_LEN);
	std::vector<u8> out(2048);
	xiw_tx tx;

	h.opcode = RDMAP_OP_WRITE;
	h.last = true;
	xiw_rdmap_hdr_build(&h, hdr, sizeof(hdr), &hl);
	xiw_slice sl[2] = { { hdr, hl }, { payload.data(), payload.size() } };
	xiw_tx_init(&tx, crc, mk, 0);
	for (auto _ : st) {
		if (xiw_fpdu_build(&tx, sl, 2, out.data(), out.size(), &n) != XIW_OK)
			st.SkipWithError("build failed");
		benchmark::DoNotOptimize(out.data());
	}
	st.SetBytesProcessed((int64_t)st.iterations() * (int64_t)payload.size());
}
BENCHMARK(BM_FpduBuild)->Args({ 0, 0 })->Args({ 1, 0 })->Args({ 1, 1 })->Args({ 0, 1 });

// 64 KiB of Write payload framed at MULPDU, fed in 1460-octet pieces.
void BM_Deframe64K(benchmark::State &st)
{
	bool crc = st.range(0), mk = st.range(1);
	u32 mulpdu = xiw_mpa_mulpdu(1460, mk, crc);
	auto payload = Random(65536);
	std::vector<u8> stream;
	xiw_tx tx;
	xiw_rdmap_hdr h{};

	h.opcode = RDMAP_OP_WRITE;
	xiw_tx_init(&tx, crc, mk, 0);
	for (size_t off = 0; off < payload.size();) {
		size_t chunk = std::min<size_t>(mulpdu - DDP_TAGGED_HDR_LEN, payload.size() - off);
		u8 hdr[XIW_RDMAP_HDR_MAX];
		size_t hl, n;

		h.last = off + chunk == payload.size();
		h.to = off;
		xiw_rdmap_hdr_build(&h, hdr, sizeof(hdr), &hl);
		xiw_slice sl[2] = { { hdr, hl }, { payload.data() + off, chunk } };
		size_t old = stream.size();
		stream.resize(old + xiw_mpa_fpdu_len(tx.stream_pos, mk, (u32)(hl + chunk)));
		xiw_fpdu_build(&tx, sl, 2, stream.data() + old, stream.size() - old, &n);
		off += chunk;
	}
	for (auto _ : st) {
		xiw_rx rx;
		u64 placed = 0;

		xiw_rx_init(&rx, crc, mk, 0, 0);
		for (size_t off = 0; off < stream.size(); off += 1460) {
			const u8 *p = stream.data() + off;
			size_t left = std::min<size_t>(1460, stream.size() - off);

			while (left) {
				xiw_rx_event ev;
				size_t used;

				if (xiw_rx_step(&rx, p, left, &used, &ev) != XIW_OK) {
					st.SkipWithError("deframe failed");
					return;
				}
				if (ev.type == XIW_RX_EV_DATA)
					placed += ev.len;
				p += used;
				left -= used;
			}
		}
		if (placed != payload.size())
			st.SkipWithError("payload mismatch");
		benchmark::DoNotOptimize(placed);
	}
	st.SetBytesProcessed((int64_t)st.iterations() * (int64_t)payload.size());
}
BENCHMARK(BM_Deframe64K)->Args({ 0, 0 })->Args({ 1, 0 })->Args({ 1, 1 });

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

}  // namespace

BENCHMARK_MAIN();
