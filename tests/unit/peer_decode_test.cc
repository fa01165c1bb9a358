// SPDX-License-Identifier: GPL-2.0
// xiw-peer decode: streams built with the protocol core (MPA Request and
// Reply, FPDUs with CRC and markers on and off) list every segment with 0
// errors; corrupted CRCs, markers and frames are counted; and a pcap of
// the same connection (both directions interleaved, cut at odd sizes,
// with a retransmission and an out-of-order pair, over every supported
// link type, IPv4 and IPv6, both byte orders) lists the same segments as
// the contiguous streams; the same packets as pcapng list exactly as the
// pcap does, and a capture cut short is decoded up to the cut.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "xiw_peer_decode.h"
#include "xiw_test_util.h"

using namespace xiwtest;
using xiw::peer::DecodeOptions;
using xiw::peer::decode_file;
using xiw::peer::decode_main;
using xiw::peer::decode_stream;

namespace {

/* ---- streams ------------------------------------------------------------- */

struct Msg {
	xiw_rdmap_hdr hdr;
	Bytes payload;
	std::string expect;	// segment line after "#N @pos "
};

Bytes MpaFrame(bool reply, bool crc, bool markers, u8 rev = 2,
	       bool reject = false, const std::string &pdata = "hello, xiw!!")
{
	xiw_mpa_frame f{};
	Bytes out(MPA_RR_HDR_LEN + MPA_MAX_PD_LEN);
	size_t n = 0;

	f.reply = reply;
	f.crc = crc;
	f.markers = markers;
	f.reject = reject;
	f.rev = rev;
	f.enhanced = rev == 2;
	f.ird = 4;
	f.ord = 4;
	f.pdata = reinterpret_cast<const u8 *>(pdata.data());
	f.pdata_len = u16(pdata.size());
	EXPECT_EQ(XIW_OK, xiw_mpa_frame_build(&f, out.data(), out.size(), &n));
	out.resize(n);
	return out;
}

// One direction: its octets and the segment lines the decoder must print.
struct Stream {
	Bytes bytes;
	std::vector<std::string> lines;
	std::vector<size_t> at;		// stream octet of each FPDU
	size_t start = 0;		// FPDU stream position 0
	bool markers = false;
};

// Stream octet @pos, or the first octet after it that is not a marker.
size_t NotMarker(const Stream &s, size_t pos)
{
	while (s.markers && (pos - s.start) % MPA_MARKER_SPACING < MPA_MARKER_LEN)
		pos++;
	return pos;
}

void AddFpdus(Stream *s, xiw_tx *tx, const std::vector<Msg> &msgs)
{
	for (const Msg &m : msgs) {
		size_t at = s->bytes.size();

		// a marker due where the FPDU starts precedes ULPDU_Length
		if (tx->markers && xiw_mpa_marker_distance(tx->stream_pos) == 0)
			at += MPA_MARKER_LEN;
		ASSERT_TRUE(Frame(tx, Ulpdu(m.hdr, m.payload), &s->bytes));
		s->at.push_back(at);
		s->lines.push_back("  #" + std::to_string(s->lines.size() + 1) +
				   " @" + std::to_string(at) + " " + m.expect);
	}
}

Stream MakeStream(const Bytes &frame, bool crc, bool markers,
		  const std::vector<Msg> &msgs)
{
	Stream s;
	xiw_tx tx;

	s.bytes = frame;
	s.start = frame.size();
	s.markers = markers;
	xiw_tx_init(&tx, crc, markers, 0);
	AddFpdus(&s, &tx, msgs);
	return s;
}

Msg Send(u32 msn, u32 mo, bool last, size_t len, u32 seed)
{
	xiw_rdmap_hdr h = Hdr(RDMAP_OP_SEND, last);

	h.msn = msn;
	h.mo = mo;
	return { h, Pattern(len, seed),
		 "Send MSN " + std::to_string(msn) + " MO " + std::to_string(mo) +
		 (last ? " L" : "") + " len " + std::to_string(len) + " (QN 0)" };
}

Msg Write(size_t len)
{
	xiw_rdmap_hdr h = Hdr(RDMAP_OP_WRITE);

	h.stag = 0x1234;
	h.to = 0x7f00;
	return { h, Pattern(len, 3),
		 "RDMA Write STag 0x00001234 TO 0x7f00 L len " + std::to_string(len) };
}

Msg ReadRequest()
{
	xiw_rdmap_hdr h = Hdr(RDMAP_OP_READ_REQ);

	h.msn = 1;
	h.u.read_req = { 0xaabbccdd, 0x1000, 4096, 0x55667788, 0x2000 };
	return { h, {},
		 "RDMA Read Request MSN 1 sink STag 0xaabbccdd TO 0x1000 size 4096"
		 " src STag 0x55667788 TO 0x2000 (QN 1)" };
}

Msg ReadResponse(size_t len)
{
	xiw_rdmap_hdr h = Hdr(RDMAP_OP_READ_RESP);

	h.stag = 0xaabbccdd;
	h.to = 0x1000;
	return { h, Pattern(len, 5),
		 "RDMA Read Response STag 0xaabbccdd TO 0x1000 L len " + std::to_string(len) };
}

Msg SendInv()
{
	xiw_rdmap_hdr h = Hdr(RDMAP_OP_SEND_INV);

	h.rsvdulp = 0xdeadbeef;
	h.msn = 3;
	return { h, Pattern(1, 6),
		 "Send with Invalidate STag 0xdeadbeef MSN 3 MO 0 L len 1 (QN 0)" };
}

Msg ImmData()
{
	xiw_rdmap_hdr h = Hdr(RDMAP_OP_IMM_DATA);

	h.msn = 4;
	h.u.imm_data = 0x0123456789abcdefull;
	return { h, {}, "Immediate Data MSN 4 data 0x0123456789abcdef (QN 0)" };
}

Msg AtomicReq()
{
	xiw_rdmap_hdr h = Hdr(RDMAP_OP_ATOMIC_REQ);

	h.msn = 2;
	h.u.atomic_req = { RDMAP_ATOMIC_FETCHADD, 42, 0x1234, 0x8000, 1, 0, 0, 0 };
	return { h, {},
		 "Atomic Request MSN 2 FetchAdd id 42 STag 0x00001234 TO 0x8000"
		 " add 0x1 mask 0x0 (QN 1)" };
}

Msg AtomicResp()
{
	xiw_rdmap_hdr h = Hdr(RDMAP_OP_ATOMIC_RESP);

	h.msn = 1;
	h.u.atomic_resp = { 42, 7 };
	return { h, {}, "Atomic Response MSN 1 id 42 value 0x0000000000000007 (QN 3)" };
}

// TERMINATE: the control word is in the RDMAP header, the rest is payload.
Msg Terminate(bool with_read_req)
{
	xiw_rdmap_hdr h = Hdr(RDMAP_OP_TERMINATE);
	xiw_term t{};
	u8 body[RDMAP_TERM_MAX_LEN];
	size_t n = 0;
	std::string expect;

	h.msn = 1;
	t.ctrl.m = true;
	t.ctrl.d = true;
	t.seg_len = 122;
	t.ddp_hdr_len = DDP_UNTAGGED_HDR_LEN;
	if (with_read_req) {
		xiw_rdmap_hdr rr = ReadRequest().hdr;

		t.ctrl.code = { TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_PROTECTION,
				RDMAP_ECODE_INVALID_STAG };
		t.ctrl.r = true;
		Bytes u = Ulpdu(rr, {});
		memcpy(t.ddp_hdr, u.data(), DDP_UNTAGGED_HDR_LEN);
		memcpy(t.rdmap_hdr, u.data() + DDP_UNTAGGED_HDR_LEN, RDMAP_READ_REQ_LEN);
		expect = "Terminate MSN 1 layer RDMAP(0) type 1 (remote protection)"
			 " code 0x00 (invalid STag) [M D R] seglen 122"
			 " ddp {RDMA Read Request QN 1 MSN 1 MO 0 L}"
			 " rdmap {sink STag 0xaabbccdd TO 0x1000 size 4096"
			 " src STag 0x55667788 TO 0x2000} (QN 2)";
	} else {
		xiw_rdmap_hdr sh = Hdr(RDMAP_OP_SEND);

		t.ctrl.code = { TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED_BUF,
				DDP_ECODE_UT_INVALID_QN };
		sh.qn = 7;
		sh.msn = 5;
		Bytes u = Ulpdu(sh, {});
		memcpy(t.ddp_hdr, u.data(), DDP_UNTAGGED_HDR_LEN);
		expect = "Terminate MSN 1 layer DDP(1) type 2 (untagged buffer)"
			 " code 0x01 (invalid QN) [M D] seglen 122"
			 " ddp {Send QN 7 MSN 5 MO 0 L} (QN 2)";
	}
	EXPECT_EQ(XIW_OK, xiw_term_build(&t, body, sizeof(body), &n));
	h.u.term = t.ctrl;
	return { h, Bytes(body + RDMAP_TERM_CTRL_LEN, body + n), expect };
}

std::vector<Msg> AllMsgs()
{
	return { Send(1, 0, true, 100, 1), ReadRequest(), Write(4096),
		 Send(2, 0, false, 600, 2), Send(2, 600, true, 7, 3), SendInv(),
		 ImmData(), AtomicReq(), AtomicResp(), ReadResponse(1500),
		 Terminate(false), Terminate(true) };
}

std::vector<std::string> Lines(const std::string &out)
{
	std::vector<std::string> v;
	std::istringstream in(out);
	std::string l;

	while (std::getline(in, l))
		v.push_back(l);
	return v;
}

std::vector<std::string> SegLines(const std::vector<std::string> &v)
{
	std::vector<std::string> s;

	for (const std::string &l : v)
		if (l.rfind("  #", 0) == 0)
			s.push_back(l);
	return s;
}

bool Has(const std::string &out, const std::string &what)
{
	return out.find(what) != std::string::npos;
}

/* ---- decode_stream: the table ---------------------------------------------- */

struct StreamRow {
	const char *name;
	bool frame;		// an MPA frame leads the stream
	bool reply;
	u8 rev;
	bool frame_crc;		// C flag of that frame
	bool crc;		// the FPDUs carry a CRC
	bool markers;		// the FPDUs carry markers
	int opt_crc;
	int opt_markers;
	const char *framing;	// expected framing line
};

const StreamRow kStreamRows[] = {
	{ "RequestCrc", true, false, 2, true, true, false, -1, -1,
	  "  framing crc=1 (this frame) markers=0 (detected)" },
	{ "ReplyCrcMarkers", true, true, 2, true, true, true, -1, -1,
	  "  framing crc=1 (this frame) markers=1 (detected)" },
	{ "RequestMarkers", true, false, 2, false, false, true, -1, -1,
	  "  framing crc=0 (this frame) markers=1 (detected)" },
	{ "Rev1Plain", true, true, 1, false, false, false, -1, -1,
	  "  framing crc=0 (this frame) markers=0 (detected)" },
	// the peer asked for CRC: the decoder is told so
	{ "ForcedCrc", true, false, 2, false, true, false, 1, -1,
	  "  framing crc=1 (forced) markers=0 (detected)" },
	{ "ForcedBoth", true, true, 2, false, true, true, 1, 1,
	  "  framing crc=1 (forced) markers=1 (forced)" },
	{ "NoFrameDefault", false, false, 0, false, false, false, -1, -1,
	  "  framing crc=0 (default) markers=0 (default)" },
	{ "NoFrameForced", false, false, 0, false, true, true, 1, 1,
	  "  framing crc=1 (forced) markers=1 (forced)" },
	{ "NoFrameCrcOnly", false, false, 0, false, true, false, 1, 0,
	  "  framing crc=1 (forced) markers=0 (forced)" },
};

Stream RowStream(const StreamRow &r)
{
	Bytes frame;

	if (r.frame)
		frame = MpaFrame(r.reply, r.frame_crc, !r.markers, r.rev);
	return MakeStream(frame, r.crc, r.markers, AllMsgs());
}

class PeerDecodeStream : public ::testing::TestWithParam<StreamRow> {};

TEST_P(PeerDecodeStream, ListsEverySegment)
{
	const StreamRow &r = GetParam();
	Stream s = RowStream(r);
	DecodeOptions o;
	std::string out;

	o.crc = r.opt_crc;
	o.markers = r.opt_markers;
	ASSERT_EQ(0, decode_stream(s.bytes.data(), s.bytes.size(), o, out)) << out;
	auto lines = Lines(out);
	EXPECT_EQ(s.lines, SegLines(lines)) << out;
	EXPECT_TRUE(Has(out, std::string(r.framing) + "\n")) << out;
	EXPECT_EQ("  " + std::to_string(s.lines.size()) + " segments, " +
		  std::to_string(s.bytes.size()) + " octets, 0 errors", lines.back());
	if (r.frame)
		EXPECT_EQ(std::string("MPA ") + (r.reply ? "Reply" : "Request") +
			  " rev " + std::to_string(r.rev) + " crc=" +
			  std::to_string(r.frame_crc) + " markers=" +
			  std::to_string(!r.markers) +
			  (r.rev == 2 ? " enhanced p2p=0 ird=4 ord=4" : "") +
			  " pdata=12", lines[0]);
	else
		EXPECT_EQ("no MPA frame: FPDUs from octet 0", lines[0]);
}

// A CRC-protected stream with one payload octet flipped: one CRC error,
// at the FPDU it hit, after the segments before it; nothing after it.
TEST_P(PeerDecodeStream, CorruptPayloadIsOneCrcError)
{
	const StreamRow &r = GetParam();
	Stream s = RowStream(r);
	DecodeOptions o;
	std::string out;
	size_t victim = 2;	// the 4096-octet RDMA Write

	o.crc = r.opt_crc;
	o.markers = r.opt_markers;
	s.bytes[NotMarker(s, s.at[victim] + 100)] ^= 0x20;
	int errors = decode_stream(s.bytes.data(), s.bytes.size(), o, out);
	auto segs = SegLines(Lines(out));

	if (!r.crc || (r.frame && !r.frame_crc && r.opt_crc < 0)) {
		// no CRC in use, or not known to be: nothing to detect
		EXPECT_EQ(0, errors) << out;
		EXPECT_EQ(s.lines.size(), segs.size());
		return;
	}
	EXPECT_EQ(1, errors) << out;
	EXPECT_TRUE(Has(out, "  ! error XIW_ERR_MPA_CRC at stream octet " +
			std::to_string(s.at[victim]) + " (CRC field ")) << out;
	EXPECT_TRUE(Has(out, " in #3\n")) << out;
	ASSERT_EQ(victim + 1, segs.size()) << out;
	EXPECT_EQ(s.lines[victim], segs[victim]);
	EXPECT_TRUE(Has(Lines(out).back(), ", 1 errors")) << out;
}

TEST_P(PeerDecodeStream, PrefixOnEveryLine)
{
	const StreamRow &r = GetParam();
	Stream s = RowStream(r);
	DecodeOptions o;
	std::string out;

	o.crc = r.opt_crc;
	o.markers = r.opt_markers;
	decode_stream(s.bytes.data(), s.bytes.size(), o, out, "c> ");
	for (const std::string &l : Lines(out))
		EXPECT_EQ(0u, l.rfind("c> ", 0)) << l;
}

INSTANTIATE_TEST_SUITE_P(PeerDecode, PeerDecodeStream, ::testing::ValuesIn(kStreamRows),
			 [](const ::testing::TestParamInfo<StreamRow> &i) {
				 return std::string(i.param.name);
			 });

/* ---- decode_stream: errors and corner cases ---------------------------------- */

TEST(PeerDecode, CorruptMarkerIsMarkerError)
{
	Stream s = MakeStream(MpaFrame(false, true, false), true, true, AllMsgs());
	size_t frame = s.at[0] - MPA_MARKER_LEN;	// the marker at FPDU stream 512
	std::string out;

	s.bytes[frame + 512 + 3] ^= 0x04;
	EXPECT_EQ(1, decode_stream(s.bytes.data(), s.bytes.size(), {}, out)) << out;
	EXPECT_TRUE(Has(out, "  ! error XIW_ERR_MPA_MARKER at stream octet " +
			std::to_string(frame + 512) + " (marker ")) << out;
}

TEST(PeerDecode, BadUlpduLengthIsOneError)
{
	Stream s = MakeStream(MpaFrame(false, false, true), false, false, AllMsgs());
	std::string out;

	s.bytes[s.at[1]] = 0;
	s.bytes[s.at[1] + 1] = 3;	// ULPDU_Length 3: shorter than any header
	EXPECT_EQ(1, decode_stream(s.bytes.data(), s.bytes.size(), {}, out)) << out;
	EXPECT_TRUE(Has(out, "  ! error XIW_ERR_RDMAP_HDR_SHORT at stream octet " +
			std::to_string(s.at[1]) + "\n")) << out;
	EXPECT_EQ(1u, SegLines(Lines(out)).size()) << out;
}

TEST(PeerDecode, BadMpaRevisionIsOneError)
{
	Bytes b = MpaFrame(false, true, false);
	std::string out;

	b[MPA_RR_REV_OFF] = 3;
	EXPECT_EQ(1, decode_stream(b.data(), b.size(), {}, out)) << out;
	EXPECT_TRUE(Has(out, "  ! error XIW_ERR_MPA_REV at stream octet 0")) << out;
}

TEST(PeerDecode, TruncatedFrameIsOneError)
{
	Bytes b = MpaFrame(true, true, false);
	std::string out;

	EXPECT_EQ(1, decode_stream(b.data(), 25, {}, out)) << out;
	EXPECT_TRUE(Has(out, "MPA frame incomplete: 25 of 36 octets")) << out;
	out.clear();
	EXPECT_EQ(1, decode_stream(b.data(), 9, {}, out)) << out;
}

TEST(PeerDecode, RejectedReplyHasNoFpdus)
{
	Stream s = MakeStream(MpaFrame(true, false, false, 2, true), false, false,
			      { Send(1, 0, true, 10, 1) });
	std::string out;

	EXPECT_EQ(0, decode_stream(s.bytes.data(), s.bytes.size(), {}, out)) << out;
	EXPECT_TRUE(Has(out, "MPA Reply rev 2 crc=0 markers=0 REJECT enhanced")) << out;
	EXPECT_TRUE(Has(out, "  rejected: no FPDUs follow\n")) << out;
	EXPECT_TRUE(Has(out, "  note: 36 octets follow the rejected setup")) << out;
	EXPECT_TRUE(SegLines(Lines(out)).empty()) << out;
}

TEST(PeerDecode, StreamEndingInsideASegmentIsNoError)
{
	Stream s = MakeStream(MpaFrame(false, true, false), true, false, AllMsgs());
	std::string out;

	// end 10 octets into the payload of the RDMA Write
	size_t cut = s.at[2] + MPA_HDR_LEN + DDP_TAGGED_HDR_LEN + 10;
	EXPECT_EQ(0, decode_stream(s.bytes.data(), cut, {}, out)) << out;
	auto segs = SegLines(Lines(out));
	ASSERT_EQ(3u, segs.size()) << out;
	EXPECT_EQ(s.lines[2] + " (stream ends inside this FPDU, after 10 of 4096"
		  " payload octets)", segs[2]);
	out.clear();
	EXPECT_EQ(0, decode_stream(s.bytes.data(), s.at[2] + 5, {}, out)) << out;
	EXPECT_TRUE(Has(out, "  note: stream ends inside an FPDU header (5 octets)")) << out;
}

// A TERMINATE whose header-control bits promise more than its body has:
// one error, and the segments after it are still listed.
TEST(PeerDecode, MalformedTerminateIsOneError)
{
	xiw_rdmap_hdr h = Hdr(RDMAP_OP_TERMINATE);

	h.msn = 1;
	h.u.term.code = { TERM_LAYER_LLP, LLP_ETYPE_MPA, LLP_ECODE_CRC };
	h.u.term.m = true;
	h.u.term.d = true;
	Msg bad = { h, { 0, 64 }, "" };
	Msg after = Send(1, 0, true, 5, 8);
	Stream s = MakeStream(MpaFrame(false, true, false), true, false, { bad, after });
	std::string out;

	EXPECT_EQ(1, decode_stream(s.bytes.data(), s.bytes.size(), {}, out)) << out;
	auto segs = SegLines(Lines(out));
	ASSERT_EQ(2u, segs.size()) << out;
	EXPECT_EQ("  #1 @" + std::to_string(s.at[0]) + " Terminate MSN 1 malformed body"
		  " (6 octets) (QN 2)", segs[0]);
	EXPECT_EQ(s.lines[1], segs[1]);
	EXPECT_TRUE(Has(out, "  ! error XIW_ERR_RDMAP_TERM_MALFORMED at stream octet " +
			std::to_string(s.at[0]) + " in #1\n")) << out;
}

TEST(PeerDecode, HexDumpsTheFirst64PayloadOctets)
{
	Msg m = Send(1, 0, true, 100, 1);
	Stream s = MakeStream(MpaFrame(false, true, false, 2, false, "AB"), true,
			      false, { m });
	DecodeOptions o;
	std::string out;

	o.hex = true;
	EXPECT_EQ(0, decode_stream(s.bytes.data(), s.bytes.size(), o, out)) << out;
	char first[80];
	const Bytes &p = m.payload;
	snprintf(first, sizeof(first),
		 "      0000  %02x %02x %02x %02x %02x %02x %02x %02x  %02x",
		 p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8]);
	EXPECT_TRUE(Has(out, first)) << out;
	EXPECT_TRUE(Has(out, "      0030 ")) << out;
	EXPECT_FALSE(Has(out, "      0040 ")) << out;
	EXPECT_TRUE(Has(out, "      ... 36 more octets\n")) << out;
	EXPECT_TRUE(Has(out, "      0000  41 42")) << out;		// private data
}

TEST(PeerDecode, EmptyStream)
{
	std::string out;

	EXPECT_EQ(0, decode_stream(nullptr, 0, {}, out));
	EXPECT_EQ("(no data)\n  0 segments, 0 octets, 0 errors\n", out);
}

/* ---- pcap ----------------------------------------------------------------- */

enum class Link { Eth, EthVlan, Sll, Sll2, Raw };

struct PcapRow {
	const char *name;
	Link link;
	bool v6;
	bool big_endian;
	bool nsec;
	bool tcp_opts;
};

const PcapRow kPcapRows[] = {
	{ "EthIpv4", Link::Eth, false, false, false, false },
	{ "EthVlanIpv6", Link::EthVlan, true, false, true, true },
	{ "SllIpv6BigEndianNsec", Link::Sll, true, true, true, false },
	{ "Sll2Ipv4BigEndian", Link::Sll2, false, true, false, true },
	{ "RawIpv6Nsec", Link::Raw, true, false, true, false },
	{ "RawIpv4BigEndian", Link::Raw, false, true, false, true },
};

constexpr u16 kClientPort = 40001;
constexpr u16 kServerPort = 4791;
constexpr u32 kClientIsn = 0xfffff000;	// the sequence space wraps early on
constexpr u32 kServerIsn = 0x7ffffff0;
constexpr u8 kSyn = 0x02, kAck = 0x10, kFin = 0x01, kPsh = 0x08;

struct Pkt {
	bool client;
	u32 seq;
	u8 flags;
	Bytes data;
};

void Be16(Bytes &b, u16 v)
{
	b.push_back(u8(v >> 8));
	b.push_back(u8(v));
}

void Be32(Bytes &b, u32 v)
{
	Be16(b, u16(v >> 16));
	Be16(b, u16(v));
}

Bytes Addr(bool v6, bool client)
{
	if (v6)
		return { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			 u8(client ? 1 : 2) };
	return { 192, 0, 2, u8(client ? 1 : 2) };
}

Bytes IpPacket(const PcapRow &c, const Pkt &p)
{
	Bytes tcp, ip;

	Be16(tcp, p.client ? kClientPort : kServerPort);
	Be16(tcp, p.client ? kServerPort : kClientPort);
	Be32(tcp, p.seq);
	Be32(tcp, 0);
	tcp.push_back(u8((c.tcp_opts ? 8 : 5) << 4));
	tcp.push_back(p.flags);
	Be16(tcp, 65535);
	Be32(tcp, 0);				// checksum, urgent pointer
	if (c.tcp_opts) {			// NOP NOP timestamps
		tcp.insert(tcp.end(), { 1, 1, 8, 10 });
		Be32(tcp, 1000);
		Be32(tcp, 2000);
	}
	tcp.insert(tcp.end(), p.data.begin(), p.data.end());

	Bytes src = Addr(c.v6, p.client), dst = Addr(c.v6, !p.client);
	if (c.v6) {
		Be32(ip, 0x60000000);
		Be16(ip, u16(tcp.size()));
		ip.push_back(6);
		ip.push_back(64);
	} else {
		ip.push_back(0x45);
		ip.push_back(0);
		Be16(ip, u16(20 + tcp.size()));
		Be32(ip, 0x00004000);		// id 0, DF
		ip.push_back(64);
		ip.push_back(6);
		Be16(ip, 0);
	}
	ip.insert(ip.end(), src.begin(), src.end());
	ip.insert(ip.end(), dst.begin(), dst.end());
	ip.insert(ip.end(), tcp.begin(), tcp.end());
	return ip;
}

Bytes LinkFrame(const PcapRow &c, const Pkt &p)
{
	Bytes ip = IpPacket(c, p), f;
	u16 et = c.v6 ? 0x86dd : 0x0800;

	switch (c.link) {
	case Link::Eth:
	case Link::EthVlan:
		f = { 2, 0, 0, 0, 0, u8(p.client ? 2 : 1), 2, 0, 0, 0, 0,
		      u8(p.client ? 1 : 2) };
		if (c.link == Link::EthVlan) {
			Be16(f, 0x8100);
			Be16(f, 42);
		}
		Be16(f, et);
		f.insert(f.end(), ip.begin(), ip.end());
		if (f.size() < 60)		// minimum frame: padding
			f.resize(60, 0xee);
		return f;
	case Link::Sll:
		Be16(f, p.client ? 4 : 0);	// outgoing / to us
		Be16(f, 1);			// ARPHRD_ETHER
		Be16(f, 6);
		f.insert(f.end(), { 2, 0, 0, 0, 0, 1, 0, 0 });
		Be16(f, et);
		break;
	case Link::Sll2:
		Be16(f, et);
		Be16(f, 0);
		Be32(f, 2);			// ifindex
		Be16(f, 1);
		f.push_back(p.client ? 4 : 0);
		f.push_back(6);
		f.insert(f.end(), { 2, 0, 0, 0, 0, 1, 0, 0 });
		break;
	case Link::Raw:
		break;
	}
	f.insert(f.end(), ip.begin(), ip.end());
	return f;
}

// @v appended to @b in a capture file's byte order.
void Put16(Bytes &b, u16 v, bool big_endian)
{
	if (big_endian) {
		Be16(b, v);
	} else {
		b.push_back(u8(v));
		b.push_back(u8(v >> 8));
	}
}

void Put32(Bytes &b, u32 v, bool big_endian)
{
	if (big_endian) {
		Be32(b, v);
	} else {
		Put16(b, u16(v), false);
		Put16(b, u16(v >> 16), false);
	}
}

// The capture file's link-layer type of @l.
u32 LinkType(Link l)
{
	switch (l) {
	case Link::Sll: return 113;
	case Link::Sll2: return 276;
	case Link::Raw: return 101;
	default: return 1;	// Ethernet, with or without a VLAN tag
	}
}

// @snaplen: frames are stored cut to this many octets
Bytes PcapFile(const PcapRow &c, const std::vector<Pkt> &pkts, u32 snaplen = 262144)
{
	Bytes f;
	auto w16 = [&](u16 v) { Put16(f, v, c.big_endian); };
	auto w32 = [&](u32 v) { Put32(f, v, c.big_endian); };
	u32 link = LinkType(c.link);
	w32(c.nsec ? 0xa1b23c4d : 0xa1b2c3d4);
	w16(2);
	w16(4);
	w32(0);
	w32(0);
	w32(snaplen);
	w32(link);
	for (size_t i = 0; i < pkts.size(); i++) {
		Bytes fr = LinkFrame(c, pkts[i]);
		u32 incl = std::min(u32(fr.size()), snaplen);

		w32(1700000000 + u32(i / 100));
		w32(u32(i % 100) * (c.nsec ? 1000000 : 1000));
		w32(incl);
		w32(u32(fr.size()));
		f.insert(f.end(), fr.begin(), fr.begin() + incl);
	}
	return f;
}

// The same packets as PcapFile() as a pcapng file: a section header, one
// interface (with if_tsresol for nanoseconds) and an Enhanced Packet
// Block per frame, in the row's byte order.
Bytes PcapngFile(const PcapRow &c, const std::vector<Pkt> &pkts, u32 snaplen = 262144)
{
	Bytes f;
	auto w32 = [&](u32 v) { Put32(f, v, c.big_endian); };
	// A block of @type around @body (padded to 4 octets).
	auto block = [&](u32 type, Bytes body) {
		body.resize((body.size() + 3) / 4 * 4, 0);
		w32(type);
		w32(u32(12 + body.size()));
		f.insert(f.end(), body.begin(), body.end());
		w32(u32(12 + body.size()));
	};
	// Fields of a block body, in the row's byte order.
	auto field = [&](Bytes &b, u32 v, int octets) {
		if (octets == 2)
			Put16(b, u16(v), c.big_endian);
		else
			Put32(b, v, c.big_endian);
	};
	u32 link = LinkType(c.link);

	Bytes shb, idb;

	field(shb, 0x1a2b3c4d, 4);		// byte-order magic
	field(shb, 1, 2);			// version 1.0
	field(shb, 0, 2);
	field(shb, 0xffffffff, 4);		// section length: not given
	field(shb, 0xffffffff, 4);
	block(0x0a0d0d0a, shb);

	field(idb, link, 2);
	field(idb, 0, 2);
	field(idb, snaplen, 4);
	if (c.nsec) {
		field(idb, 9, 2);		// if_tsresol: 10^-9
		field(idb, 1, 2);
		idb.insert(idb.end(), { 9, 0, 0, 0 });
		field(idb, 0, 2);		// opt_endofopt
		field(idb, 0, 2);
	}
	block(1, idb);

	for (size_t i = 0; i < pkts.size(); i++) {
		Bytes fr = LinkFrame(c, pkts[i]), epb;
		u32 incl = std::min(u32(fr.size()), snaplen);
		u64 ts = (1700000000ull + i / 100) * (c.nsec ? 1000000000ull : 1000000ull) +
			 (i % 100) * 1000;

		field(epb, 0, 4);		// interface 0
		field(epb, u32(ts >> 32), 4);
		field(epb, u32(ts), 4);
		field(epb, incl, 4);
		field(epb, u32(fr.size()), 4);
		epb.insert(epb.end(), fr.begin(), fr.begin() + incl);
		block(6, epb);
	}
	return f;
}

// A file in the test's temporary directory, removed with the object.
struct TempFile {
	std::string path;

	TempFile(const std::string &name, const Bytes &b)
	{
		path = ::testing::TempDir() + "xiw_peer_decode_" +
		       std::to_string(getpid()) + "_" + name;
		FILE *f = fopen(path.c_str(), "wb");

		EXPECT_NE(nullptr, f) << path;
		if (f) {
			EXPECT_EQ(b.size(), fwrite(b.data(), 1, b.size(), f));
			fclose(f);
		}
	}
	~TempFile() { remove(path.c_str()); }
};

// The connection: the client asks for CRC and markers, the server for
// neither, so CRC runs both ways and only server -> client has markers.
struct Conn {
	Stream client, server;
};

Conn MakeConn()
{
	Conn c;

	c.client = MakeStream(MpaFrame(false, true, true), true, false,
			      { Send(1, 0, true, 100, 1), ReadRequest(), Write(4096),
				Send(2, 0, false, 600, 2), Send(2, 600, true, 7, 3),
				AtomicReq(), Terminate(false) });
	c.server = MakeStream(MpaFrame(true, false, false), true, true,
			      { ReadResponse(4096), Send(1, 0, true, 1500, 4),
				AtomicResp(), ImmData(), SendInv(), Terminate(true) });
	return c;
}

struct Piece {
	u32 off;
	Bytes data;
};

std::vector<Piece> Cut(const Bytes &s, const std::vector<size_t> &sizes)
{
	std::vector<Piece> v;
	size_t off = 0, i = 0;

	while (off < s.size()) {
		size_t n = std::min(sizes[i++ % sizes.size()], s.size() - off);

		v.push_back({ u32(off), Bytes(s.begin() + long(off), s.begin() + long(off + n)) });
		off += n;
	}
	return v;
}

// Handshake, then both directions interleaved in odd-sized segments; the
// client retransmits a range overlapping two segments it sent, the
// server's 4th and 5th segments arrive swapped.  @drop_client drops one
// client segment for good.
std::vector<Pkt> Packets(const Conn &c, int drop_client = -1)
{
	std::vector<Piece> cp = Cut(c.client.bytes, { 1, 7, 13, 333, 1447, 2, 517 });
	std::vector<Piece> sp = Cut(c.server.bytes, { 1448, 3, 101, 999, 29 });
	std::vector<Pkt> v;
	size_t i = 0, k = 0;

	v.push_back({ true, kClientIsn, kSyn, {} });
	v.push_back({ false, kServerIsn, kSyn | kAck, {} });
	v.push_back({ true, kClientIsn + 1, kAck, {} });
	while (i < cp.size() || k < sp.size()) {
		if (i < cp.size()) {
			if (int(i) != drop_client)
				v.push_back({ true, kClientIsn + 1 + cp[i].off, kAck | kPsh,
					      cp[i].data });
			if (i == 5) {
				// octets 10 .. 30: the end of piece 2, the start of 3
				Bytes r(c.client.bytes.begin() + 10, c.client.bytes.begin() + 30);

				v.push_back({ true, kClientIsn + 1 + 10, kAck, r });
			}
			i++;
		}
		if (k < sp.size()) {
			size_t j = k == 3 ? 4 : k == 4 ? 3 : k;

			if (j < sp.size())
				v.push_back({ false, kServerIsn + 1 + sp[j].off, kAck,
					      sp[j].data });
			k++;
		}
	}
	v.push_back({ true, kClientIsn + 1 + u32(c.client.bytes.size()), kFin | kAck, {} });
	v.push_back({ false, kServerIsn + 1 + u32(c.server.bytes.size()), kFin | kAck, {} });
	return v;
}

std::string Label(const PcapRow &r, bool from_client)
{
	auto ep = [&](bool client) {
		std::string a = r.v6 ? (client ? "[2001:db8::1]" : "[2001:db8::2]")
				     : (client ? "192.0.2.1" : "192.0.2.2");

		return a + ":" + std::to_string(client ? kClientPort : kServerPort);
	};
	return ep(from_client) + " > " + ep(!from_client);
}

// Lines under each "src > dst" header of a decode_file listing.
std::map<std::string, std::vector<std::string>> Sections(const std::string &out)
{
	std::map<std::string, std::vector<std::string>> m;
	std::string cur;

	for (const std::string &l : Lines(out)) {
		if (l.empty() || l.rfind("capture:", 0) == 0) {
			cur.clear();
		} else if (l[0] != ' ' && l.find(" > ") != std::string::npos) {
			cur = l;
			m[cur];
		} else if (!cur.empty()) {
			m[cur].push_back(l);
		}
	}
	return m;
}

std::vector<std::string> StreamSegLines(const Bytes &b)
{
	std::string out;

	EXPECT_EQ(0, decode_stream(b.data(), b.size(), {}, out)) << out;
	return SegLines(Lines(out));
}

class PeerDecodePcap : public ::testing::TestWithParam<PcapRow> {};

TEST_P(PeerDecodePcap, SameSegmentsAsTheContiguousStreams)
{
	const PcapRow &r = GetParam();
	Conn c = MakeConn();
	TempFile f(std::string(r.name) + ".pcap", PcapFile(r, Packets(c)));
	std::string out;

	ASSERT_EQ(0, decode_file(f.path, {}, out)) << out;
	auto sec = Sections(out);
	ASSERT_EQ(2u, sec.size()) << out;

	const auto &cs = sec[Label(r, true)], &ss = sec[Label(r, false)];

	EXPECT_EQ(c.client.lines, SegLines(cs)) << out;
	EXPECT_EQ(c.server.lines, SegLines(ss)) << out;
	EXPECT_EQ(StreamSegLines(c.client.bytes), SegLines(cs));
	EXPECT_EQ(StreamSegLines(c.server.bytes), SegLines(ss));

	// the negotiation: CRC both ways, markers only towards the client
	ASSERT_GE(cs.size(), 2u) << out;
	EXPECT_EQ("MPA Request rev 2 crc=1 markers=1 enhanced p2p=0 ird=4 ord=4 pdata=12",
		  cs[1]);
	EXPECT_EQ("  framing crc=1 (negotiated) markers=0 (peer frame)", cs[2]);
	ASSERT_GE(ss.size(), 2u) << out;
	EXPECT_EQ("MPA Reply rev 2 crc=0 markers=0 enhanced p2p=0 ird=4 ord=4 pdata=12",
		  ss[1]);
	EXPECT_EQ("  framing crc=1 (negotiated) markers=1 (peer frame)", ss[2]);
	EXPECT_TRUE(Has(cs[0], "retransmitted octets dropped")) << out;
	EXPECT_TRUE(Has(ss[0], " 1 segments out of order")) << out;
	EXPECT_EQ("  " + std::to_string(c.client.lines.size()) + " segments, " +
		  std::to_string(c.client.bytes.size()) + " octets, 0 errors", cs.back());
	EXPECT_TRUE(Has(out, " 2 directions, 0 errors\n")) << out;
}

// The server's frame has no C flag, the client's has: CRC runs both ways,
// so a bad CRC from the server is an error in the capture, while the
// server's stream alone cannot tell.
TEST_P(PeerDecodePcap, CrcFollowsEitherFrame)
{
	const PcapRow &r = GetParam();
	Conn c = MakeConn();

	c.server.bytes[NotMarker(c.server, c.server.at[1] + 40)] ^= 1;
	TempFile f(std::string(r.name) + "_crc.pcap", PcapFile(r, Packets(c)));
	std::string out, alone;

	EXPECT_EQ(1, decode_file(f.path, {}, out)) << out;
	auto ss = Sections(out)[Label(r, false)];
	EXPECT_TRUE(Has(out, "  ! error XIW_ERR_MPA_CRC at stream octet " +
			std::to_string(c.server.at[1]) + " ")) << out;
	EXPECT_EQ(2u, SegLines(ss).size()) << out;
	EXPECT_EQ(0, decode_stream(c.server.bytes.data(), c.server.bytes.size(), {},
				   alone)) << alone;

	DecodeOptions off;
	out.clear();
	off.crc = 0;
	EXPECT_EQ(0, decode_file(f.path, off, out)) << out;
}

// A client segment never captured: its direction is decoded up to the
// gap, which is reported; the other direction is complete.
TEST_P(PeerDecodePcap, GapIsReported)
{
	const PcapRow &r = GetParam();
	Conn c = MakeConn();
	std::vector<Piece> cp = Cut(c.client.bytes, { 1, 7, 13, 333, 1447, 2, 517 });
	const int drop = 8;
	TempFile f(std::string(r.name) + "_gap.pcap", PcapFile(r, Packets(c, drop)));
	std::string out;

	EXPECT_EQ(1, decode_file(f.path, {}, out)) << out;
	auto sec = Sections(out);
	auto cs = SegLines(sec[Label(r, true)]);
	u32 at = cp[drop].off;

	EXPECT_TRUE(Has(out, "  ! gap: " + std::to_string(cp[drop].data.size()) +
			" octets missing at stream octet " + std::to_string(at) + ", ")) << out;
	ASSERT_LE(cs.size(), c.client.lines.size());
	for (size_t i = 0; i + 1 < cs.size(); i++)
		EXPECT_EQ(c.client.lines[i], cs[i]);
	EXPECT_EQ(c.server.lines, SegLines(sec[Label(r, false)])) << out;
}

// Frames cut by the snapshot length: a gap, and the reason for it.
TEST_P(PeerDecodePcap, SnapLengthCutsAreGaps)
{
	const PcapRow &r = GetParam();
	Conn c = MakeConn();
	TempFile f(std::string(r.name) + "_snap.pcap", PcapFile(r, Packets(c), 200));
	std::string out;

	EXPECT_EQ(2, decode_file(f.path, {}, out)) << out;
	EXPECT_TRUE(Has(out, " segments cut short by the capture's snapshot length")) << out;
	EXPECT_TRUE(Has(out, "  ! gap: ")) << out;
}

// No handshake in the capture: each direction starts at its first segment.
TEST_P(PeerDecodePcap, WithoutHandshake)
{
	const PcapRow &r = GetParam();
	Conn c = MakeConn();
	std::vector<Pkt> p = Packets(c);

	p.erase(p.begin(), p.begin() + 3);
	TempFile f(std::string(r.name) + "_nosyn.pcap", PcapFile(r, p));
	std::string out;

	EXPECT_EQ(0, decode_file(f.path, {}, out)) << out;
	auto sec = Sections(out);
	EXPECT_EQ(c.client.lines, SegLines(sec[Label(r, true)])) << out;
	EXPECT_EQ(c.server.lines, SegLines(sec[Label(r, false)])) << out;
}

// The 4-tuple used again by a new connection (new ISNs): four directions,
// the two connections listed one after the other.
TEST_P(PeerDecodePcap, FourTupleReused)
{
	const PcapRow &r = GetParam();
	Conn c = MakeConn();
	Conn d;

	d.client = MakeStream(MpaFrame(false, false, false), false, false,
			      { Send(9, 0, true, 33, 9) });
	d.server = MakeStream(MpaFrame(true, false, false), false, false, {});

	std::vector<Pkt> p = Packets(c), q = Packets(d);

	for (Pkt &k : q)
		k.seq += 0x01000000;
	p.insert(p.end(), q.begin(), q.end());
	TempFile f(std::string(r.name) + "_reuse.pcap", PcapFile(r, p));
	std::string out;

	EXPECT_EQ(0, decode_file(f.path, {}, out)) << out;
	EXPECT_TRUE(Has(out, " 4 directions, 0 errors")) << out;

	std::vector<std::string> heads, segs;
	for (const std::string &l : Lines(out))
		if (!l.empty() && l[0] != ' ' && l.find(" > ") != std::string::npos)
			heads.push_back(l);
	EXPECT_EQ((std::vector<std::string>{ Label(r, true), Label(r, false),
					     Label(r, true), Label(r, false) }), heads);
	segs = SegLines(Lines(out));
	ASSERT_EQ(c.client.lines.size() + c.server.lines.size() + 1, segs.size()) << out;
	EXPECT_EQ(d.client.lines[0], segs.back());
}

// pcapng (libpcap reads both): the same listing as the classic pcap of
// the same packets, whole, cut by the snapshot length, and with a gap.
TEST_P(PeerDecodePcap, PcapngListsAsPcap)
{
	const PcapRow &r = GetParam();
	Conn c = MakeConn();
	std::vector<Pkt> p = Packets(c), gap = Packets(c, 8);

	for (auto [name, pkts, snap] : { std::tuple{ "whole", p, 262144u },
					 std::tuple{ "snap", p, 200u },
					 std::tuple{ "gap", gap, 262144u } }) {
		TempFile a(std::string(r.name) + "_" + name + ".pcap", PcapFile(r, pkts, snap));
		TempFile b(std::string(r.name) + "_" + name + ".pcapng", PcapngFile(r, pkts, snap));
		std::string pa, pb;

		EXPECT_EQ(decode_file(a.path, {}, pa), decode_file(b.path, {}, pb)) << name;
		EXPECT_TRUE(Has(pa, "capture: ")) << pa;
		EXPECT_EQ(pa, pb) << name;
	}
}

// A capture cut short: what came before the cut is decoded, and a note
// says where it ended.
TEST_P(PeerDecodePcap, TruncatedCaptureIsDecodedToTheCut)
{
	const PcapRow &r = GetParam();
	Conn c = MakeConn();

	for (bool ng : { false, true }) {
		Bytes whole = ng ? PcapngFile(r, Packets(c)) : PcapFile(r, Packets(c));
		Bytes cut(whole.begin(), whole.end() - 30);
		TempFile f(std::string(r.name) + (ng ? "_cut.pcapng" : "_cut.pcap"), cut);
		std::string out;

		EXPECT_LE(0, decode_file(f.path, {}, out)) << out;
		EXPECT_TRUE(Has(out, "note: capture ends inside record " +
				std::to_string(Packets(c).size()) + " (libpcap: ")) << out;
		EXPECT_TRUE(Has(out, "truncated")) << out;
		EXPECT_TRUE(Has(out, "capture: " + std::to_string(Packets(c).size() - 1) +
				" packets")) << out;
	}
}

INSTANTIATE_TEST_SUITE_P(PeerDecode, PeerDecodePcap, ::testing::ValuesIn(kPcapRows),
			 [](const ::testing::TestParamInfo<PcapRow> &i) {
				 return std::string(i.param.name);
			 });

/* ---- files and the subcommand ----------------------------------------------- */

TEST(PeerDecode, RawFileIsOneStream)
{
	Conn c = MakeConn();
	TempFile f("raw.bin", c.server.bytes);
	std::string out;

	EXPECT_EQ(0, decode_file(f.path, {}, out)) << out;
	EXPECT_EQ(0u, out.find(f.path + " (raw stream)\n")) << out;
	EXPECT_EQ(c.server.lines, SegLines(Lines(out))) << out;
}

TEST(PeerDecode, UnreadableAndUnsupportedFiles)
{
	std::string out;

	EXPECT_EQ(-1, decode_file(::testing::TempDir() + "xiw_peer_decode_no_such_file",
				  {}, out));
	EXPECT_TRUE(Has(out, "No such file")) << out;

	// a pcapng section header cut short: libpcap's reason
	TempFile ng("ng.pcapng", { 0x0a, 0x0d, 0x0d, 0x0a, 0x1c, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a });
	out.clear();
	EXPECT_EQ(-1, decode_file(ng.path, {}, out));
	EXPECT_EQ(0u, out.find(ng.path + ": ")) << out;
	EXPECT_TRUE(Has(out, "pcapng")) << out;

	// a pcap header cut short
	TempFile head("head.pcap", { 0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0 });
	out.clear();
	EXPECT_EQ(-1, decode_file(head.path, {}, out));
	EXPECT_EQ(0u, out.find(head.path + ": ")) << out;

	// a link type the decoder has no header parser for (IEEE 802.11)
	Conn c = MakeConn();
	Bytes wifi = PcapFile(kPcapRows[0], Packets(c));
	wifi[20] = 105;
	TempFile w("wifi.pcap", wifi);
	out.clear();
	EXPECT_EQ(-1, decode_file(w.path, {}, out));
	EXPECT_TRUE(Has(out, ": link type 105 (IEEE802_11) is not supported")) << out;

	// four octets that are no capture magic: a raw stream
	TempFile raw("short.bin", { 0xa1, 0xb2, 0xc3 });
	out.clear();
	EXPECT_EQ(0, decode_file(raw.path, {}, out)) << out;
	EXPECT_EQ(0u, out.find(raw.path + " (raw stream)\n")) << out;
}

TEST(PeerDecode, MainExitStatus)
{
	const PcapRow r = kPcapRows[0];
	Conn c = MakeConn();
	TempFile good("main_good.pcap", PcapFile(r, Packets(c)));
	c.client.bytes[c.client.at[0] + 5] ^= 1;
	TempFile bad("main_bad.pcap", PcapFile(r, Packets(c)));
	auto run = [](std::vector<std::string> args, std::string *so) {
		std::vector<char *> argv;

		for (std::string &a : args)
			argv.push_back(a.data());
		argv.push_back(nullptr);
		::testing::internal::CaptureStdout();
		::testing::internal::CaptureStderr();
		int rc = decode_main(int(args.size()), argv.data());
		*so = ::testing::internal::GetCapturedStdout();
		::testing::internal::GetCapturedStderr();
		return rc;
	};
	std::string so;

	EXPECT_EQ(0, run({ "decode", good.path }, &so));
	EXPECT_TRUE(Has(so, "capture: ")) << so;
	EXPECT_EQ(1, run({ "decode", bad.path }, &so));
	EXPECT_TRUE(Has(so, "XIW_ERR_MPA_CRC")) << so;
	EXPECT_EQ(0, run({ "decode", "--no-crc", "--hex", bad.path }, &so));
	EXPECT_TRUE(Has(so, "      0000  ")) << so;
	EXPECT_EQ(2, run({ "decode" }, &so));
	EXPECT_EQ(2, run({ "decode", "--bogus", good.path }, &so));
	EXPECT_EQ(2, run({ "decode", good.path, bad.path }, &so));
	EXPECT_EQ(2, run({ "decode", good.path + ".missing" }, &so));
	EXPECT_EQ(0, run({ "decode", "--help" }, &so));
	EXPECT_TRUE(Has(so, "usage: xiw-peer decode")) << so;
}

}  // namespace
