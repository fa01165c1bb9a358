// SPDX-License-Identifier: GPL-2.0
// Shared helpers of the protocol-core GoogleTest suites.
#ifndef XIW_TEST_UTIL_H
#define XIW_TEST_UTIL_H

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "proto/xiw_proto.h"

namespace xiwtest {

using Bytes = std::vector<u8>;

struct Segment {
	xiw_rdmap_hdr hdr{};
	Bytes raw_hdr;	// ULPDU_Length + DDP/RDMAP header octets
	Bytes payload;
	bool ended = false;
};

struct DeframeResult {
	std::vector<Segment> segs;
	xiw_proto_err err = XIW_OK;
	size_t consumed = 0;
	size_t wholes = 0;	// segments taken whole (xiw_rx_take_whole())
	std::string trace_error;	// invariant violations, empty if none
};

// Feed @stream to a fresh deframer in pieces whose sizes come from @cuts
// (cycled; 0 = rest of the stream) and check the event invariants.
// @join_end: the deframer may end a segment with its last chunk of data
// (xiw_rx.join_end), as the driver's receive engine has it.
inline DeframeResult Deframe(const Bytes &stream, bool crc, bool markers,
			     u32 pos, const std::vector<size_t> &cuts,
			     u32 max_ulpdu = 0, bool join_end = false)
{
	DeframeResult r;
	xiw_rx rx;
	size_t off = 0, ci = 0;

	xiw_rx_init(&rx, crc, markers, pos, max_ulpdu);
	rx.join_end = join_end;
	while (off < stream.size()) {
		size_t piece = cuts.empty() ? 0 : cuts[ci++ % cuts.size()];

		if (piece == 0 || piece > stream.size() - off)
			piece = stream.size() - off;
		const u8 *p = stream.data() + off;
		size_t left = piece;

		while (left) {
			xiw_rx_event ev;
			size_t used = 0;
			xiw_proto_err e = xiw_rx_step(&rx, p, left, &used, &ev);

			r.consumed += used;
			if (used > left)
				r.trace_error = "consumed more than offered";
			if (e != XIW_OK) {
				r.err = e;
				return r;
			}
			if (used == 0 && ev.type == XIW_RX_EV_NONE)
				r.trace_error = "no progress";
			if (used == 0)
				return r;
			switch (ev.type) {
			case XIW_RX_EV_HDR:
				r.segs.emplace_back();
				r.segs.back().hdr = rx.hdr;
				r.segs.back().raw_hdr.assign(rx.raw, rx.raw + rx.raw_got);
				if (!ev.whole)
					break;
				if (!join_end || markers)
					r.trace_error = "whole segment unasked";
				else if (ev.data != p + used || ev.len != rx.data_len)
					r.trace_error = "whole payload misplaced";
				// Taken whole where offered: no chunk before the CRC.
				else {
					size_t more = 0;

					e = xiw_rx_take_whole(&rx, p + used, &more);
					r.consumed += more;
					if (used + more > left)
						r.trace_error = "whole segment past the input";
					if (e != XIW_OK) {
						r.err = e;
						return r;
					}
					r.segs.back().payload.assign(ev.data, ev.data + ev.len);
					r.segs.back().ended = true;
					r.wholes++;
					used += more;
				}
				break;
			case XIW_RX_EV_DATA:
				if (r.segs.empty() || r.segs.back().ended)
					r.trace_error = "data without header";
				else if (ev.offset != r.segs.back().payload.size())
					r.trace_error = "data offset gap";
				else if (ev.data < p || ev.data + ev.len > p + used)
					r.trace_error = "data outside input";
				else
					r.segs.back().payload.insert(r.segs.back().payload.end(),
								     ev.data, ev.data + ev.len);
				if (!ev.end)
					break;
				if (!join_end)
					r.trace_error = "end with data unasked";
				else if (r.segs.back().payload.size() != rx.data_len)
					r.trace_error = "end before the last octet";
				else
					r.segs.back().ended = true;
				break;
			case XIW_RX_EV_END:
				if (r.segs.empty())
					r.trace_error = "end without header";
				else
					r.segs.back().ended = true;
				break;
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

// Vector rows filtered by outcome: every row, the accepted, the rejected.
enum class Which { All, Ok, Err };

template <typename T, size_t N>
std::vector<T> Rows(const T (&a)[N], Which w)
{
	std::vector<T> v;

	for (const T &r : a)
		if (w == Which::All || (w == Which::Ok) == (r.err == XIW_OK))
			v.push_back(r);
	return v;
}

inline std::vector<size_t> OneByte() { return {1}; }
inline std::vector<size_t> Whole() { return {}; }
inline std::vector<size_t> RandomCuts(u32 seed, size_t max = 97)
{
	std::mt19937 rng(seed);
	std::vector<size_t> v(64);

	for (auto &c : v)
		c = 1 + rng() % max;
	return v;
}

// Build a ULPDU from a header and payload.
inline Bytes Ulpdu(const xiw_rdmap_hdr &h, const Bytes &payload)
{
	Bytes out(XIW_RDMAP_HDR_MAX);
	size_t hl = 0;

	if (xiw_rdmap_hdr_build(&h, out.data(), out.size(), &hl) != XIW_OK)
		return {};
	out.resize(hl);
	out.insert(out.end(), payload.begin(), payload.end());
	return out;
}

// Frame one ULPDU with @tx (advancing it) and append to @stream.
inline bool Frame(xiw_tx *tx, const Bytes &ulpdu, Bytes *stream)
{
	xiw_slice s = { ulpdu.data(), ulpdu.size() };
	size_t need = xiw_mpa_fpdu_len(tx->stream_pos, tx->markers, (u32)ulpdu.size());
	size_t old = stream->size(), n = 0;

	stream->resize(old + need);
	if (xiw_fpdu_build(tx, &s, 1, stream->data() + old, need, &n) != XIW_OK)
		return false;
	return n == need;
}

inline xiw_rdmap_hdr Hdr(u8 opcode, bool last = true)
{
	xiw_rdmap_hdr h{};
	const xiw_rdmap_opinfo *oi = xiw_rdmap_op_lookup(opcode);

	h.opcode = opcode;
	h.last = last;
	if (oi) {
		h.tagged = oi->tagged;
		if (!oi->tagged)
			h.qn = oi->qn;
	}
	h.ddp_version = DDP_VERSION;
	h.rdmap_version = RDMAP_VERSION;
	return h;
}

inline Bytes Pattern(size_t n, u32 seed)
{
	Bytes b(n);
	std::mt19937 rng(seed);

	for (auto &x : b)
		x = (u8)rng();
	return b;
}

}  // namespace xiwtest

#endif
