// SPDX-License-Identifier: GPL-2.0
// FPDU framing and the resumable deframer: build -> exact bytes ->
// deframe under whole, one-byte and random delivery, markers at every
// stream offset modulo 512, MULPDU bounds, and framing errors.
#include <gtest/gtest.h>

#include <cstring>

#include "xiw_test_util.h"

using namespace xiwtest;

namespace {

struct Msg {
	xiw_rdmap_hdr hdr;
	Bytes payload;
};

std::vector<Msg> SampleMessages(u32 seed, size_t big)
{
	std::vector<Msg> v;
	xiw_rdmap_hdr h;

	h = Hdr(RDMAP_OP_WRITE);
	h.stag = 0x11223344;
	h.to = 0x0102030405060708ull;
	v.push_back({ h, Pattern(big, seed) });
	h = Hdr(RDMAP_OP_SEND, false);
	h.msn = 7;
	v.push_back({ h, Pattern(3, seed + 1) });
	h = Hdr(RDMAP_OP_READ_REQ);
	h.msn = 1;
	h.u.read_req = { 0xaabbccdd, 0x1000, 4096, 0x55667788, 0x2000 };
	v.push_back({ h, {} });
	h = Hdr(RDMAP_OP_SEND_SE_INV);
	h.rsvdulp = 0xdeadbeef;
	h.msn = 8;
	h.mo = 0;
	v.push_back({ h, Pattern(1, seed + 2) });
	h = Hdr(RDMAP_OP_READ_RESP);
	h.stag = 0x99;
	h.to = 0xfffffffffffff000ull;
	v.push_back({ h, Pattern(big / 3 + 2, seed + 3) });
	h = Hdr(RDMAP_OP_ATOMIC_REQ);
	h.u.atomic_req = { RDMAP_ATOMIC_CMPSWAP, 42, 0x1234, 0x8000, 1, ~0ull, 2, ~0ull };
	v.push_back({ h, {} });
	h = Hdr(RDMAP_OP_IMM_DATA_SE);
	h.u.imm_data = 0x0123456789abcdefull;
	v.push_back({ h, {} });
	return v;
}

struct Cfg {
	bool crc;
	bool markers;
	u32 pos;
};

void PrintTo(const Cfg &c, std::ostream *os)
{
	*os << "crc=" << c.crc << " markers=" << c.markers << " pos=" << c.pos;
}

class FpduRoundTrip : public ::testing::TestWithParam<Cfg> {};

TEST_P(FpduRoundTrip, AllDeliveriesAgree)
{
	const Cfg c = GetParam();
	auto msgs = SampleMessages(c.pos + 1, 1500);
	xiw_tx tx;
	Bytes stream;

	xiw_tx_init(&tx, c.crc, c.markers, c.pos);
	for (auto &m : msgs)
		ASSERT_TRUE(Frame(&tx, Ulpdu(m.hdr, m.payload), &stream));
	EXPECT_EQ(tx.stream_pos - c.pos, stream.size());

	std::vector<std::vector<size_t>> plans = { Whole(), OneByte(),
		RandomCuts(c.pos), RandomCuts(c.pos + 99, 7), { 511 }, { 512 }, { 3, 509 } };
	// Every delivery, with the segments' ends reported on their own and
	// joined to their last chunk of data where the trailer is at hand.
	for (bool join : { false, true }) {
		for (auto &plan : plans) {
			DeframeResult r = Deframe(stream, c.crc, c.markers, c.pos, plan, 0, join);

			ASSERT_EQ(XIW_OK, r.err) << xiw_proto_err_name(r.err);
			ASSERT_EQ("", r.trace_error);
			// Offered whole exactly where it can be: joined, no markers.
			if (plan.empty()) {
				EXPECT_EQ(join && !c.markers ? msgs.size() : 0u, r.wholes);
			}
			ASSERT_EQ(msgs.size(), r.segs.size());
			EXPECT_EQ(stream.size(), r.consumed);
			for (size_t i = 0; i < msgs.size(); i++) {
				EXPECT_TRUE(r.segs[i].ended);
				EXPECT_EQ(msgs[i].payload, r.segs[i].payload) << i;
				EXPECT_EQ(msgs[i].hdr.opcode, r.segs[i].hdr.opcode);
				EXPECT_EQ(Ulpdu(msgs[i].hdr, {}),
					  Ulpdu(r.segs[i].hdr, {})) << "header " << i;
			}
		}
	}
}

std::vector<Cfg> AllCfgs()
{
	std::vector<Cfg> v;

	for (u32 pos : { 0u, 4u, 8u, 252u, 500u, 504u, 508u, 1024u, 0xfffffe00u })
		for (int crc = 0; crc < 2; crc++)
			for (int mk = 0; mk < 2; mk++)
				v.push_back({ crc != 0, mk != 0, pos });
	return v;
}

INSTANTIATE_TEST_SUITE_P(Matrix, FpduRoundTrip, ::testing::ValuesIn(AllCfgs()));

// Markers at every stream offset modulo 512: the stream starts at @pos,
// the FPDUs are sized so that markers land in headers, payloads, pads,
// right before CRC fields and at FPDU boundaries.
class MarkerOffsets : public ::testing::TestWithParam<u32> {};

TEST_P(MarkerOffsets, InsertAndStrip)
{
	u32 pos = GetParam();
	xiw_tx tx;
	Bytes stream;
	std::vector<Bytes> payloads;

	xiw_tx_init(&tx, true, true, pos);
	for (size_t n : { 0u, 1u, 2u, 3u, 494u, 497u, 1021u, 4u }) {
		xiw_rdmap_hdr h = Hdr(RDMAP_OP_WRITE);

		h.stag = (u32)n;
		payloads.push_back(Pattern(n, pos * 31 + (u32)n));
		ASSERT_TRUE(Frame(&tx, Ulpdu(h, payloads.back()), &stream));
	}
	// Every marker is where the position says and well formed.
	for (size_t i = 0; i < stream.size(); i++) {
		if (((pos + i) & 511) == 0) {
			ASSERT_LE(i + 4, stream.size() + 4);
			if (i + 4 <= stream.size()) {
				EXPECT_EQ(0, stream[i]);
				EXPECT_EQ(0, stream[i + 1]);
			}
		}
	}
	for (auto plan : { Whole(), OneByte(), RandomCuts(pos) }) {
		DeframeResult r = Deframe(stream, true, true, pos, plan);

		ASSERT_EQ(XIW_OK, r.err) << xiw_proto_err_name(r.err) << " pos " << pos;
		ASSERT_EQ("", r.trace_error);
		ASSERT_EQ(payloads.size(), r.segs.size());
		for (size_t i = 0; i < payloads.size(); i++)
			EXPECT_EQ(payloads[i], r.segs[i].payload);
	}
	// Without CRC, stripping the markers yields the marker-free framing.
	xiw_tx a, b;
	Bytes sa, sb;

	xiw_tx_init(&a, false, true, pos);
	xiw_tx_init(&b, false, false, pos);
	for (auto &pl : payloads) {
		ASSERT_TRUE(Frame(&a, Ulpdu(Hdr(RDMAP_OP_WRITE), pl), &sa));
		ASSERT_TRUE(Frame(&b, Ulpdu(Hdr(RDMAP_OP_WRITE), pl), &sb));
	}
	Bytes stripped;
	for (size_t i = 0; i < sa.size();) {
		if (((pos + i) & 511) == 0) {
			i += 4;
			continue;
		}
		stripped.push_back(sa[i++]);
	}
	EXPECT_EQ(sb, stripped);
}

INSTANTIATE_TEST_SUITE_P(Every, MarkerOffsets, ::testing::Range(0u, 512u));

TEST(MarkerOffsets, CorruptEachMarkerGivesMarkerError)
{
	for (u32 pos : { 0u, 12u, 300u }) {
		xiw_tx tx;
		Bytes stream;

		xiw_tx_init(&tx, false, true, pos);
		ASSERT_TRUE(Frame(&tx, Ulpdu(Hdr(RDMAP_OP_WRITE), Pattern(2000, 1)), &stream));
		for (size_t i = 0; i + 4 <= stream.size(); i++) {
			if (((pos + i) & 511) != 0)
				continue;
			Bytes s = stream;

			s[i + 3] ^= 0x04;
			EXPECT_EQ(XIW_ERR_MPA_MARKER,
				  Deframe(s, false, true, pos, OneByte()).err) << i;
			s = stream;
			s[i] = 0x80;
			EXPECT_EQ(XIW_ERR_MPA_MARKER_RSVD,
				  Deframe(s, false, true, pos, Whole()).err) << i;
		}
	}
}

TEST(Fpdu, FlippingAnyPayloadOrCrcBitGivesCrcError)
{
	xiw_tx tx;
	Bytes stream;

	xiw_tx_init(&tx, true, false, 0);
	ASSERT_TRUE(Frame(&tx, Ulpdu(Hdr(RDMAP_OP_WRITE), Pattern(61, 3)), &stream));
	for (size_t i = 2 + DDP_TAGGED_HDR_LEN; i < stream.size(); i++) {
		for (int bit = 0; bit < 8; bit++) {
			Bytes s = stream;

			s[i] ^= (u8)(1 << bit);
			DeframeResult r = Deframe(s, true, false, 0, OneByte());
			// pad octets are covered by the CRC as well
			EXPECT_EQ(XIW_ERR_MPA_CRC, r.err) << i << "/" << bit;
		}
	}
	// CRC off: the same flips go unnoticed.
	Bytes s = stream;
	s[s.size() - 1] ^= 1;
	EXPECT_EQ(XIW_OK, Deframe(s, false, false, 0, Whole()).err);
}

// With join_end, a segment whose trailer is at hand takes two calls: its
// header, then its data with the end; the CRC is checked before the data
// is handed out, so a corrupt segment hands out none of that chunk.
TEST(Deframer, JoinedEndTakesTheTrailerWithTheLastChunk)
{
	xiw_tx tx;
	Bytes stream;

	xiw_tx_init(&tx, true, false, 0);
	ASSERT_TRUE(Frame(&tx, Ulpdu(Hdr(RDMAP_OP_WRITE), Pattern(61, 3)), &stream));
	for (int corrupt = 0; corrupt < 2; corrupt++) {
		Bytes s = stream;
		xiw_rx rx;
		xiw_rx_event ev;
		size_t used, off = 0;

		if (corrupt)
			s[2 + DDP_TAGGED_HDR_LEN + 5] ^= 0x10;
		xiw_rx_init(&rx, true, false, 0, 0);
		rx.join_end = true;
		ASSERT_EQ(XIW_OK, xiw_rx_step(&rx, s.data(), s.size(), &used, &ev));
		EXPECT_EQ(XIW_RX_EV_HDR, ev.type);
		EXPECT_EQ((size_t)2 + DDP_TAGGED_HDR_LEN, used);
		off += used;
		if (corrupt) {
			EXPECT_EQ(XIW_ERR_MPA_CRC,
				  xiw_rx_step(&rx, s.data() + off, s.size() - off, &used, &ev));
			EXPECT_EQ(XIW_RX_EV_NONE, ev.type);
			EXPECT_EQ(s.size() - off, used);
			continue;
		}
		ASSERT_EQ(XIW_OK, xiw_rx_step(&rx, s.data() + off, s.size() - off, &used, &ev));
		EXPECT_EQ(XIW_RX_EV_DATA, ev.type);
		EXPECT_TRUE(ev.end);
		EXPECT_EQ(61u, ev.len);
		EXPECT_EQ(s.size() - off, used);
		EXPECT_EQ(1u, rx.segments);
		EXPECT_EQ(XIW_RX_HDR, rx.state);
		// The header stays quotable for a TERMINATE the end may cause.
		EXPECT_EQ((u8)(2 + DDP_TAGGED_HDR_LEN), rx.raw_last);
	}
}

// A Send of 61 octets in one CRC-protected, marker-free FPDU, and a
// deframer that joins ends, stepped over its header: the event offers the
// rest of the segment whole.
Bytes WholeSend(xiw_rx *rx, xiw_rx_event *ev, bool corrupt)
{
	xiw_tx tx;
	Bytes s;
	size_t used = 0;

	xiw_tx_init(&tx, true, false, 0);
	EXPECT_TRUE(Frame(&tx, Ulpdu(Hdr(RDMAP_OP_SEND), Pattern(61, 9)), &s));
	if (corrupt)
		s[2 + DDP_UNTAGGED_HDR_LEN + 60] ^= 0x01;
	xiw_rx_init(rx, true, false, 0, 0);
	rx->join_end = true;
	EXPECT_EQ(XIW_OK, xiw_rx_step(rx, s.data(), s.size(), &used, ev));
	EXPECT_EQ(XIW_RX_EV_HDR, ev->type);
	EXPECT_EQ((size_t)2 + DDP_UNTAGGED_HDR_LEN, used);
	return s;
}

// xiw_rx_take_whole() takes payload and trailer in one call, once, and
// only where offered; a corrupt segment fails its CRC before its payload
// counts, the error sticky and the header quotable for the TERMINATE.
// One octet missing from the input, nothing is offered.
TEST(Deframer, WholeSegmentTakenInOneCall)
{
	xiw_rx rx;
	xiw_rx_event ev;
	size_t more, used;
	Bytes s;

	for (bool corrupt : { false, true }) {
		more = 99;
		s = WholeSend(&rx, &ev, corrupt);
		ASSERT_TRUE(ev.whole);
		EXPECT_EQ(s.data() + 2 + DDP_UNTAGGED_HDR_LEN, ev.data);
		EXPECT_EQ(61u, ev.len);
		EXPECT_EQ(corrupt ? XIW_ERR_MPA_CRC : XIW_OK,
			  xiw_rx_take_whole(&rx, ev.data, &more));
		EXPECT_EQ(s.size() - 2 - DDP_UNTAGGED_HDR_LEN, more);
		EXPECT_EQ(corrupt ? 0u : 1u, rx.segments);
		if (corrupt) {
			EXPECT_EQ(XIW_RX_ERROR, rx.state);
			EXPECT_EQ(XIW_ERR_MPA_CRC, xiw_rx_step(&rx, s.data(), 1, &used, &ev));
			EXPECT_EQ((u8)(2 + DDP_UNTAGGED_HDR_LEN), rx.raw_got);
			continue;
		}
		EXPECT_EQ(XIW_RX_HDR, rx.state);
		EXPECT_EQ(s.size(), rx.octets);
		EXPECT_EQ(XIW_ERR_INVAL, xiw_rx_take_whole(&rx, ev.data, &more));
		EXPECT_EQ(0u, more);
	}

	xiw_rx_init(&rx, true, false, 0, 0);
	rx.join_end = true;
	ASSERT_EQ(XIW_OK, xiw_rx_step(&rx, s.data(), s.size() - 1, &used, &ev));
	EXPECT_EQ(XIW_RX_EV_HDR, ev.type);
	EXPECT_FALSE(ev.whole);
	EXPECT_EQ(XIW_ERR_INVAL, xiw_rx_take_whole(&rx, s.data() + used, &more));
}

// The trailer one octet short of the piece: the end comes on its own.
TEST(Deframer, JoinedEndWaitsForTheWholeTrailer)
{
	xiw_tx tx;
	Bytes s;
	xiw_rx rx;
	xiw_rx_event ev;
	size_t used, off;

	xiw_tx_init(&tx, true, false, 0);
	ASSERT_TRUE(Frame(&tx, Ulpdu(Hdr(RDMAP_OP_WRITE), Pattern(64, 5)), &s));
	xiw_rx_init(&rx, true, false, 0, 0);
	rx.join_end = true;
	ASSERT_EQ(XIW_OK, xiw_rx_step(&rx, s.data(), s.size() - 1, &used, &ev));
	off = used;
	ASSERT_EQ(XIW_OK, xiw_rx_step(&rx, s.data() + off, s.size() - 1 - off, &used, &ev));
	EXPECT_EQ(XIW_RX_EV_DATA, ev.type);
	EXPECT_FALSE(ev.end);
	EXPECT_EQ(64u, ev.len);
	off += used;
	ASSERT_EQ(XIW_OK, xiw_rx_step(&rx, s.data() + off, s.size() - 1 - off, &used, &ev));
	EXPECT_EQ(XIW_RX_EV_NONE, ev.type);
	off += used;
	ASSERT_EQ(XIW_OK, xiw_rx_step(&rx, s.data() + off, s.size() - off, &used, &ev));
	EXPECT_EQ(XIW_RX_EV_END, ev.type);
}

TEST(Fpdu, FpduLenMatchesBuiltLength)
{
	for (u32 pos = 0; pos < 1024; pos += 4) {
		for (u32 n : { 0u, 1u, 14u, 505u, 506u, 1454u, 65535u }) {
			for (int mk = 0; mk < 2; mk++) {
				xiw_tx tx;
				Bytes ul(n, 0x5a), out;

				xiw_tx_init(&tx, true, mk, pos);
				ASSERT_TRUE(Frame(&tx, ul, &out));
				EXPECT_EQ(out.size(), xiw_mpa_fpdu_len(pos, mk, n));
			}
		}
	}
}

TEST(Fpdu, BuildRejectsOversizeAndShortBuffers)
{
	xiw_tx tx;
	Bytes big(65536), out(70000);
	xiw_slice s = { big.data(), big.size() };
	size_t n = 99;

	xiw_tx_init(&tx, true, false, 0);
	EXPECT_EQ(XIW_ERR_INVAL, xiw_fpdu_build(&tx, &s, 1, out.data(), out.size(), &n));
	EXPECT_EQ(0u, n);
	s.len = 100;
	EXPECT_EQ(XIW_ERR_NOSPACE, xiw_fpdu_build(&tx, &s, 1, out.data(), 107, &n));
	EXPECT_EQ(0u, tx.stream_pos);
	EXPECT_EQ(XIW_OK, xiw_fpdu_build(&tx, &s, 1, out.data(), 108, &n));
	EXPECT_EQ(108u, n);
	s.p = nullptr;
	EXPECT_EQ(XIW_ERR_INVAL, xiw_fpdu_build(&tx, &s, 1, out.data(), out.size(), &n));
}

TEST(Fpdu, ScatteredSlicesEqualContiguous)
{
	Bytes ul = Ulpdu(Hdr(RDMAP_OP_SEND), Pattern(300, 9));
	xiw_tx a, b;
	Bytes oa(400), ob(400);
	size_t na, nb;
	xiw_slice one = { ul.data(), ul.size() };
	xiw_slice three[3] = { { ul.data(), 5 }, { ul.data() + 5, 0 },
			       { ul.data() + 5, ul.size() - 5 } };

	xiw_tx_init(&a, true, true, 100);
	xiw_tx_init(&b, true, true, 100);
	ASSERT_EQ(XIW_OK, xiw_fpdu_build(&a, &one, 1, oa.data(), oa.size(), &na));
	ASSERT_EQ(XIW_OK, xiw_fpdu_build(&b, three, 3, ob.data(), ob.size(), &nb));
	oa.resize(na);
	ob.resize(nb);
	EXPECT_EQ(oa, ob);
}

TEST(Fpdu, TrailerHelperMatchesBuilder)
{
	for (u32 n = 14; n < 40; n++) {
		Bytes ul = Ulpdu(Hdr(RDMAP_OP_WRITE), Pattern(n - 14, n));
		xiw_tx tx;
		Bytes out;
		u8 lenf[2], trl[8];
		u32 crc;

		xiw_tx_init(&tx, true, false, 0);
		ASSERT_TRUE(Frame(&tx, ul, &out));
		xiw_put_be16(lenf, (u16)n);
		crc = xiw_crc_update(XIW_CRC_SEED, lenf, 2);
		crc = xiw_crc_update(crc, ul.data(), ul.size());
		size_t tl = xiw_fpdu_trailer(crc, true, n, trl);
		ASSERT_EQ(out.size(), 2 + n + tl);
		EXPECT_EQ(0, memcmp(out.data() + 2 + n, trl, tl));
	}
}

TEST(Mulpdu, RfcFormula)
{
	EXPECT_EQ(1454u, xiw_mpa_mulpdu(1460, false, true));
	EXPECT_EQ(1442u, xiw_mpa_mulpdu(1460, true, true));
	EXPECT_EQ(1454u, xiw_mpa_mulpdu(1460, false, false));
	EXPECT_EQ(8948u - 6, xiw_mpa_mulpdu(8948, false, true));
	EXPECT_EQ(8948u - 6 - 4 * 18, xiw_mpa_mulpdu(8948, true, true));
	EXPECT_EQ(1461u - 7, xiw_mpa_mulpdu(1461, false, true));
	EXPECT_EQ(0u, xiw_mpa_mulpdu(6, false, true));
	EXPECT_EQ(0u, xiw_mpa_mulpdu(0, true, true));
	EXPECT_EQ(65535u, xiw_mpa_mulpdu(200000, false, true));
}

TEST(Mulpdu, MulpduFpduFitsEmssAtEveryAlignedPosition)
{
	for (u32 emss = 16; emss < 9100; emss += 37) {
		for (int mk = 0; mk < 2; mk++) {
			u32 m = xiw_mpa_mulpdu(emss, mk, true);

			for (u32 pos = 0; pos < 512; pos += 4)
				ASSERT_LE(xiw_mpa_fpdu_len(pos, mk, m), emss)
					<< "emss " << emss << " pos " << pos;
		}
	}
}

TEST(Deframer, ErrorIsStickyAndReportsConsumed)
{
	Bytes s = { 0x00, 0x05, 0x41, 0x40, 0, 0 };	// ULPDU_Length 5 < 14
	xiw_rx rx;
	xiw_rx_event ev;
	size_t used;

	xiw_rx_init(&rx, true, false, 0, 0);
	EXPECT_EQ(XIW_ERR_RDMAP_HDR_SHORT, xiw_rx_step(&rx, s.data(), s.size(), &used, &ev));
	EXPECT_EQ(2u, used);
	EXPECT_EQ(XIW_RX_ERROR, rx.state);
	EXPECT_EQ(XIW_ERR_RDMAP_HDR_SHORT, xiw_rx_step(&rx, s.data(), s.size(), &used, &ev));
	EXPECT_EQ(0u, used);
	xiw_rx_init(&rx, true, false, 0, 0);
	EXPECT_EQ(XIW_OK, xiw_rx_step(&rx, s.data(), 1, &used, &ev));
	EXPECT_EQ(XIW_RX_EV_NONE, ev.type);
	EXPECT_EQ(XIW_ERR_INVAL, xiw_rx_step(&rx, nullptr, 3, &used, &ev));
	EXPECT_EQ(XIW_OK, xiw_rx_step(&rx, nullptr, 0, &used, &ev));
}

TEST(Deframer, MaxUlpduLimit)
{
	xiw_tx tx;
	Bytes s;

	xiw_tx_init(&tx, true, false, 0);
	ASSERT_TRUE(Frame(&tx, Ulpdu(Hdr(RDMAP_OP_WRITE), Pattern(100, 1)), &s));
	EXPECT_EQ(XIW_OK, Deframe(s, true, false, 0, Whole(), 114).err);
	EXPECT_EQ(XIW_ERR_MPA_ULPDU_LEN, Deframe(s, true, false, 0, Whole(), 113).err);
}

}  // namespace
