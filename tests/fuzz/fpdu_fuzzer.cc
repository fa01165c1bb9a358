// SPDX-License-Identifier: GPL-2.0
// Deframer fuzzer. Input: flags (bit 0 CRC, bit 1 markers), a 16 bit
// stream position, five split-size seeds, then the TCP stream.
// Invariants: any split gives the same segments, payload and error as
// whole delivery; events are well formed; every error has a triplet and a
// TERMINATE can be built for it; accepted segments re-framed by the
// builder deframe to the same segments.
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_check.h"
#include "proto/xiw_proto.h"

namespace {

struct Seg {
	std::vector<u8> raw;
	std::vector<u8> payload;
	bool ended = false;
};

struct Run {
	std::vector<Seg> segs;
	xiw_proto_err err = XIW_OK;
	size_t consumed = 0;
};

Run deframe(const u8 *s, size_t n, bool crc, bool mk, u32 pos,
	    const u8 *cuts, size_t ncuts)
{
	Run r;
	xiw_rx rx;
	size_t off = 0, ci = 0;

	xiw_rx_init(&rx, crc, mk, pos, 0);
	while (off < n) {
		size_t piece = ncuts ? 1 + cuts[ci++ % ncuts] % 97 : n - off;

		if (piece > n - off)
			piece = n - off;
		const u8 *p = s + off;
		size_t left = piece;

		while (left) {
			xiw_rx_event ev;
			size_t used = 0;
			xiw_proto_err e = xiw_rx_step(&rx, p, left, &used, &ev);

			XIW_FUZZ_CHECK(used <= left);
			r.consumed += used;
			if (e != XIW_OK) {
				xiw_term_code tc;
				xiw_term t;

				XIW_FUZZ_CHECK(rx.state == XIW_RX_ERROR);
				XIW_FUZZ_CHECK(xiw_proto_err_term(e, &tc));
				XIW_FUZZ_CHECK(tc.layer <= TERM_LAYER_LLP);
				XIW_FUZZ_CHECK(xiw_term_init(&t, e, rx.raw, rx.raw_got) == XIW_OK);
				r.err = e;
				return r;
			}
			XIW_FUZZ_CHECK(used > 0 || ev.type == XIW_RX_EV_NONE);
			XIW_FUZZ_CHECK(rx.raw_got <= XIW_RX_HDR_BUF);
			XIW_FUZZ_CHECK(rx.trl_got <= sizeof(rx.trl));
			if (used == 0)
				break;
			switch (ev.type) {
			case XIW_RX_EV_HDR:
				XIW_FUZZ_CHECK(r.segs.empty() || r.segs.back().ended);
				r.segs.emplace_back();
				r.segs.back().raw.assign(rx.raw, rx.raw + rx.raw_got);
				XIW_FUZZ_CHECK(rx.raw_got == MPA_HDR_LEN + rx.info->hdr_len);
				break;
			case XIW_RX_EV_DATA:
				XIW_FUZZ_CHECK(!r.segs.empty() && !r.segs.back().ended);
				XIW_FUZZ_CHECK(ev.len > 0);
				XIW_FUZZ_CHECK(ev.data >= p && ev.data + ev.len <= p + used);
				XIW_FUZZ_CHECK(ev.offset == r.segs.back().payload.size());
				XIW_FUZZ_CHECK(ev.offset + ev.len <= rx.data_len);
				r.segs.back().payload.insert(r.segs.back().payload.end(),
							     ev.data, ev.data + ev.len);
				break;
			case XIW_RX_EV_END: {
				Seg &sg = r.segs.back();

				XIW_FUZZ_CHECK(!r.segs.empty() && !sg.ended);
				XIW_FUZZ_CHECK(sg.raw.size() - MPA_HDR_LEN + sg.payload.size() ==
					       xiw_get_be16(sg.raw.data()));
				sg.ended = true;
				break;
			}
			default:
				break;
			}
			p += used;
			left -= used;
		}
		off += piece;
	}
	return r;
}

bool same(const Run &a, const Run &b)
{
	if (a.err != b.err || a.consumed != b.consumed || a.segs.size() != b.segs.size())
		return false;
	for (size_t i = 0; i < a.segs.size(); i++)
		if (a.segs[i].raw != b.segs[i].raw || a.segs[i].payload != b.segs[i].payload ||
		    a.segs[i].ended != b.segs[i].ended)
			return false;
	return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 8)
		return 0;
	bool crc = data[0] & 1, mk = data[0] & 2;
	u32 pos = (u32)data[1] << 8 | data[2];
	const u8 *cuts = data + 3;
	const u8 *s = data + 8;
	size_t n = size - 8;

	Run whole = deframe(s, n, crc, mk, pos, nullptr, 0);
	Run split = deframe(s, n, crc, mk, pos, cuts, 5);
	Run ones = deframe(s, n, crc, mk, pos, (const u8 *)"\0", 1);

	XIW_FUZZ_CHECK(same(whole, split));
	XIW_FUZZ_CHECK(same(whole, ones));
	XIW_FUZZ_CHECK(whole.err != XIW_OK || whole.consumed == n);

	// Re-frame every complete segment; the result must deframe identically.
	xiw_tx tx;
	std::vector<u8> again;
	size_t complete = 0;

	xiw_tx_init(&tx, crc, mk, pos);
	for (auto &sg : whole.segs) {
		if (!sg.ended)
			break;
		complete++;
		xiw_slice sl[2] = { { sg.raw.data() + MPA_HDR_LEN, sg.raw.size() - MPA_HDR_LEN },
				    { sg.payload.data(), sg.payload.size() } };
		size_t ul = sl[0].len + sl[1].len;
		size_t need = xiw_mpa_fpdu_len(tx.stream_pos, mk, (u32)ul), got = 0;
		size_t old = again.size();

		again.resize(old + need);
		XIW_FUZZ_CHECK(xiw_fpdu_build(&tx, sl, 2, again.data() + old, need, &got) == XIW_OK);
		XIW_FUZZ_CHECK(got == need);
	}
	Run re = deframe(again.data(), again.size(), crc, mk, pos, nullptr, 0);
	XIW_FUZZ_CHECK(re.err == XIW_OK);
	XIW_FUZZ_CHECK(re.segs.size() == complete);
	for (size_t i = 0; i < complete; i++) {
		XIW_FUZZ_CHECK(re.segs[i].raw == whole.segs[i].raw);
		XIW_FUZZ_CHECK(re.segs[i].payload == whole.segs[i].payload);
	}
	return 0;
}
