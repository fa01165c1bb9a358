// SPDX-License-Identifier: GPL-2.0
// xiw-peer fuzz, without a target: the generator's connections (valid
// frames deframe as sent under every CRC and marker setting, each
// mutation breaks what it is meant to break and the model of the
// target's deframer says so), the encoder's relocation of STags and
// Tagged Offsets to the regions of a new target, the scenario file
// (format, parse, the same octets again) and reproducibility from a seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "xiw_peer_fuzz.h"
#include "xiw_test_util.h"

using namespace xiw::peer::fuzz;
using xiw::peer::Bytes;

namespace {

Regions RegionsA()
{
	Regions g;
	for (int i = 0; i < kNumRegions; i++) {
		g.stag[i] = uint32_t(0x1200 + i) << 8;
		g.base[i] = 0x7f0000000000ull + uint64_t(i) * 0x20000;
	}
	return g;
}

Regions RegionsB()
{
	Regions g;
	for (int i = 0; i < kNumRegions; i++) {
		g.stag[i] = uint32_t(0x31 + i) << 8;
		g.base[i] = 0x55d000000000ull + uint64_t(i) * 0x11000;
	}
	return g;
}

// A sink that frames what the generator sends and records it, as the
// executor does, without a connection.
class TestSink : public Sink {
public:
	TestSink(bool crc, bool markers, const Regions &g) : enc(crc, markers), g(g) {}

	bool frame(const FrameRec &f) override
	{
		Op op;
		op.f = f;
		ops.push_back(op);
		Bytes b = enc.encode(f, g);
		stream.insert(stream.end(), b.begin(), b.end());
		pend += b.size();
		states.push_back(enc.model());
		errs.push_back(enc.model_err());
		return true;
	}
	bool write(const std::vector<uint32_t> &chunks) override
	{
		Op op;
		op.kind = Op::Write;
		op.chunks = chunks;
		ops.push_back(op);
		for (uint32_t c : chunks) {
			EXPECT_GT(c, 0u);
			EXPECT_LE(c, pend);
			pend -= std::min<size_t>(c, pend);
		}
		return true;
	}
	bool sync(uint64_t n) override
	{
		Op op;
		op.kind = Op::Sync;
		op.n = n;
		ops.push_back(op);
		return true;
	}
	bool reads(uint64_t n) override
	{
		Op op;
		op.kind = Op::Reads;
		op.n = n;
		ops.push_back(op);
		return true;
	}
	void end(End e) override
	{
		Op op;
		op.kind = Op::Finish;
		op.end = e;
		ops.push_back(op);
		ended++;
	}
	size_t pending() const override { return pend; }
	ModelState model() const override { return enc.model(); }

	// The first mutated frame, and its index among the frames.
	const FrameRec *mutated(size_t *index = nullptr) const
	{
		size_t i = 0;
		for (const Op &op : ops) {
			if (op.kind != Op::Frame)
				continue;
			if (!op.f.mut.empty()) {
				if (index)
					*index = i;
				return &op.f;
			}
			i++;
		}
		return nullptr;
	}

	Encoder enc;
	Regions g;
	std::vector<Op> ops;
	std::vector<ModelState> states;	// after each frame
	std::vector<xiw_proto_err> errs;
	Bytes stream;
	size_t pend = 0;
	int ended = 0;
};

struct Conf {
	bool crc, markers;
};

const Conf kConfs[] = { { false, false }, { true, false }, { false, true }, { true, true } };

Agreed AgreedOf(const ConnParams &p, const Conf &c)
{
	Agreed a;
	a.crc = c.crc;
	a.markers_tx = c.markers;
	a.ord = p.ord;
	return a;
}

std::string Text(const std::vector<Op> &ops)
{
	std::string s;
	for (const Op &op : ops)
		s += format_op(op) + "\n";
	return s;
}

} // namespace

TEST(PeerFuzzRng, SameSeedSameSequenceAndBounds)
{
	Rng a(42), b(42), c(43), d(44);
	bool differ = false;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = a.next();
		EXPECT_EQ(x, b.next());
		differ |= x != c.next();
		EXPECT_LT(d.below(7), 7u);
		uint64_t r = d.range(5, 9);
		EXPECT_GE(r, 5u);
		EXPECT_LE(r, 9u);
	}
	EXPECT_TRUE(differ);
	EXPECT_NE(conn_seed(1, 0), conn_seed(1, 1));
	EXPECT_NE(conn_seed(1, 0), conn_seed(2, 0));
	EXPECT_EQ(conn_seed(7, 3), conn_seed(7, 3));
}

// Valid streams: no mutations, every CRC and marker setting, every frame
// deframes as it was sent, the writes hand over exactly what was framed,
// and the receive and Read bookkeeping stays inside its limits.
TEST(PeerFuzzGen, ValidStreamsDeframeAsSent)
{
	for (const Conf &c : kConfs) {
		for (uint64_t seed = 1; seed <= 40; seed++) {
			Rng r(conn_seed(seed, 0));
			ConnParams p = draw_params(r, c.markers);
			TestSink s(c.crc, c.markers, RegionsA());
			GenConfig cfg;
			cfg.mutate = 0;
			cfg.frames = 300;
			generate(r, p, AgreedOf(p, c), cfg, s);
			SCOPED_TRACE(testing::Message() << "crc " << c.crc << " markers " << c.markers
							<< " seed " << seed);
			ASSERT_EQ(s.ended, 1);
			ASSERT_EQ(s.enc.model(), ModelState::InSync) << xiw_proto_err_name(s.enc.model_err());
			ASSERT_EQ(s.mutated(), nullptr);
			size_t frames = 0;
			uint64_t sends = 0, synced = 0, reads = 0, waited = 0;
			for (const Op &op : s.ops) {
				if (op.kind == Op::Frame) {
					frames++;
					const FrameRec &f = op.f;
					if ((f.op == RDMAP_OP_SEND || f.op == RDMAP_OP_SEND_SE) && f.last)
						sends++;
					if (f.op == RDMAP_OP_READ_REQ)
						reads++;
					// a receive per Send, and ORD Reads at most
					EXPECT_LE(sends, p.recvs + synced);
					EXPECT_LE(reads - waited, p.ord);
				} else if (op.kind == Op::Sync) {
					EXPECT_GT(op.n, synced);
					EXPECT_LE(op.n, sends);
					synced = op.n;
				} else if (op.kind == Op::Reads) {
					EXPECT_LE(op.n, reads);
					waited = std::max(waited, op.n);
				}
			}
			EXPECT_GE(frames, 1u);
			// The budget is checked between messages: one more may
			// follow it, in up to 65536 / 64 segments.
			EXPECT_LE(frames, 300u + 1025);
			// Everything framed went out, but an abort may cut it short.
			if (s.ops.back().end != End::Abort) {
				EXPECT_EQ(s.pend, 0u);
			}
			auto d = xiwtest::Deframe(s.stream, c.crc, c.markers, 0, {});
			EXPECT_EQ(d.err, XIW_OK);
			EXPECT_EQ(d.segs.size(), frames);
			EXPECT_EQ(d.trace_error, "");
		}
	}
}

// Each mutation, drawn again and again: what it puts on the wire, and
// what the model makes of it.
TEST(PeerFuzzGen, MutationsBreakWhatTheyName)
{
	std::map<std::string, int> seen;
	for (const Conf &c : kConfs) {
		for (uint64_t seed = 1; seed <= 1500; seed++) {
			Rng r(conn_seed(seed, 9));
			ConnParams p = draw_params(r, c.markers);
			p.p2p = false;
			Regions g = RegionsA();
			TestSink s(c.crc, c.markers, g);
			GenConfig cfg;
			cfg.mutate = 1;
			cfg.frames = 50;
			generate(r, p, AgreedOf(p, c), cfg, s);
			size_t at = 0;
			const FrameRec *f = s.mutated(&at);
			ASSERT_NE(f, nullptr);
			seen[f->mut]++;
			SCOPED_TRACE(f->mut + " crc " + std::to_string(c.crc) + " markers " +
				     std::to_string(c.markers) + ": " + format_op({ Op::Frame, *f, {}, 0, End::Wait }));
			ASSERT_EQ(s.ended, 1);
			ModelState m = s.states[at];
			xiw_proto_err err = s.errs[at];
			const std::string &k = f->mut;
			uint32_t stag = f->stag.stag(g);
			uint64_t to = f->to.to(g);
			if (k.rfind("stag.", 0) == 0) {
				EXPECT_EQ(f->op, RDMAP_OP_WRITE);
				EXPECT_GT(f->len, 0u);
				EXPECT_NE(stag, g.stag[kRw]);
				EXPECT_NE(stag, g.stag[kWo]);
				EXPECT_EQ(f->expect, Expect::Must);
			} else if (k.rfind("to.", 0) == 0) {
				EXPECT_GT(f->len, 0u);
				bool inside = to >= g.base[kRw] && to - g.base[kRw] <= g.len &&
					      f->len <= g.len - (to - g.base[kRw]);
				EXPECT_FALSE(inside);
				EXPECT_EQ(f->expect, Expect::Must);
			} else if (k == "read.stag" || k == "read.bounds") {
				EXPECT_EQ(f->op, RDMAP_OP_READ_REQ);
				EXPECT_GT(f->size, 0u);
				uint32_t src = f->src_stag.stag(g);
				uint64_t sto = f->src_to.to(g);
				bool readable = (src == g.stag[kRw] || src == g.stag[kRo]) && sto >= g.base[kRw] &&
						sto - g.base[kRw] + f->size <= g.len;
				EXPECT_FALSE(readable);
			} else if (k == "send.long") {
				EXPECT_GT(f->len, p.rlen);
			} else if (k == "send.inv") {
				EXPECT_TRUE(f->op == RDMAP_OP_SEND_INV || f->op == RDMAP_OP_SEND_SE_INV);
			} else if (k == "qn") {
				EXPECT_EQ(m, ModelState::Error);
				EXPECT_EQ(err, XIW_ERR_DDP_UT_INVALID_QN);
			} else if (k == "version") {
				EXPECT_EQ(m, ModelState::Error);
				EXPECT_TRUE(err == XIW_ERR_DDP_T_VERSION || err == XIW_ERR_DDP_UT_VERSION ||
					    err == XIW_ERR_RDMAP_VERSION)
					<< xiw_proto_err_name(err);
			} else if (k == "tflag") {
				EXPECT_EQ(err, XIW_ERR_RDMAP_OPCODE_MODEL);
			} else if (k == "lflag") {
				EXPECT_EQ(err, XIW_ERR_RDMAP_SEGMENTED);
			} else if (k == "rsvd") {
				EXPECT_EQ(m, ModelState::InSync);
				EXPECT_EQ(f->expect, Expect::None);
			} else if (k == "crc") {
				EXPECT_EQ(m, c.crc ? ModelState::Error : ModelState::InSync);
				if (c.crc) {
					EXPECT_EQ(err, XIW_ERR_MPA_CRC);
				}
			} else if (k == "pad" || k == "payload") {
				EXPECT_EQ(m, c.crc ? ModelState::Error : ModelState::InSync);
			} else if (k == "marker") {
				ASSERT_TRUE(c.markers);
				EXPECT_EQ(m, ModelState::Error);
				EXPECT_TRUE(err == XIW_ERR_MPA_MARKER || err == XIW_ERR_MPA_MARKER_RSVD)
					<< xiw_proto_err_name(err);
			} else if (k == "len" || k == "trunc" || k == "garbage") {
				// Out of step, or (a length within the pad) not the frame sent.
				EXPECT_NE(resolve(*f, m), Expect::None);
				if (k != "len") {
					EXPECT_NE(m, ModelState::InSync);
				}
			} else if (k == "opcode") {
				EXPECT_GE(f->rdmap_ctrl, 0);
				EXPECT_NE(f->rdmap_ctrl & RDMAP_OPCODE_MASK, f->op);
			}
			// A mutation that may end the connection ends it: nothing
			// but framing filler after it, then the wait for the target.
			if (resolve(*f, m) != Expect::None) {
				EXPECT_EQ(s.ops.back().kind, Op::Finish);
				EXPECT_EQ(s.ops.back().end, End::Wait);
				// Filler only while the model is out of step, never past an error.
				bool after = false;
				size_t i = 0;
				for (const Op &op : s.ops) {
					if (op.kind != Op::Frame)
						continue;
					if (after) {
						EXPECT_TRUE(op.f.mut.empty());
						EXPECT_EQ(s.states[i - 1], ModelState::Desync);
					}
					after |= !op.f.mut.empty();
					i++;
				}
			}
		}
	}
	// Every mutation was drawn.
	for (const char *k : { "stag.near", "stag.random", "stag.region", "to.below", "to.above", "to.wrap",
			       "to.random", "read.stag", "read.bounds", "read.msn", "read.ird", "send.msn",
			       "send.mo", "send.long", "send.inv", "qn", "opcode", "version", "tflag", "lflag",
			       "rsvd", "atomic", "readresp", "imm", "term.msn", "hdr.flip", "crc", "pad",
			       "payload", "len", "trunc", "garbage", "marker" })
		EXPECT_GT(seen[k], 0) << k;
}

// A frame names the target's STags and Tagged Offsets relative to its
// regions: against another target the same frames carry that target's.
TEST(PeerFuzzEncoder, RelocatesToTheRegionsOfTheTarget)
{
	Regions a = RegionsA(), b = RegionsB();
	Rng r(conn_seed(5, 5));
	ConnParams p = draw_params(r, false);
	Rng r2 = r;
	TestSink sa(true, false, a), sb(true, false, b);
	GenConfig cfg;
	cfg.mutate = 0;
	cfg.frames = 400;
	generate(r, p, AgreedOf(p, { true, false }), cfg, sa);
	generate(r2, p, AgreedOf(p, { true, false }), cfg, sb);
	ASSERT_EQ(Text(sa.ops), Text(sb.ops));
	ASSERT_EQ(sa.stream.size(), sb.stream.size());
	ASSERT_NE(sa.stream, sb.stream);
	auto da = xiwtest::Deframe(sa.stream, true, false, 0, {});
	auto db = xiwtest::Deframe(sb.stream, true, false, 0, {});
	ASSERT_EQ(da.segs.size(), db.segs.size());
	size_t i = 0, tagged = 0, reads = 0;
	for (const Op &op : sa.ops) {
		if (op.kind != Op::Frame)
			continue;
		const FrameRec &f = op.f;
		const xiw_rdmap_hdr &ha = da.segs[i].hdr, &hb = db.segs[i].hdr;
		i++;
		EXPECT_EQ(ha.opcode, f.op);
		EXPECT_EQ(da.segs[i - 1].payload, db.segs[i - 1].payload);
		if (f.op == RDMAP_OP_WRITE && f.stag.region >= 0) {
			EXPECT_EQ(ha.stag, f.stag.stag(a));
			EXPECT_EQ(hb.stag, f.stag.stag(b));
			EXPECT_EQ(ha.to - a.base[f.to.region], hb.to - b.base[f.to.region]);
			tagged++;
		}
		if (f.op == RDMAP_OP_READ_REQ && f.src_stag.region >= 0) {
			EXPECT_EQ(hb.u.read_req.src_stag, f.src_stag.stag(b));
			EXPECT_EQ(hb.u.read_req.src_to, f.src_to.to(b));
			EXPECT_EQ(ha.u.read_req.sink_to, hb.u.read_req.sink_to);
			reads++;
		}
	}
	EXPECT_GT(tagged, 10u);
	EXPECT_GT(reads, 5u);
}

// Octet mistakes land where they are meant to, markers or not.
TEST(PeerFuzzEncoder, MistakesAfterFraming)
{
	Regions g = RegionsA();
	FrameRec f;
	f.op = RDMAP_OP_WRITE;
	f.stag = Ref::rel(kRw, 0);
	f.to = Ref::rel(kRw, 0x40);
	f.len = 1000;
	f.seed = 3;
	for (bool markers : { false, true }) {
		Encoder clean(false, markers), e(false, markers);
		Bytes want = clean.encode(f, g);
		FrameRec m = f;
		m.flips = { { 2, 0x80 } };	// the DDP control octet: T
		Bytes got = e.encode(m, g);
		ASSERT_EQ(got.size(), want.size());
		size_t first = markers ? 4 : 0;	// the stream starts with a marker
		for (size_t i = 0; i < got.size(); i++)
			EXPECT_EQ(got[i], i == first + 2 ? want[i] ^ 0x80 : want[i]) << i;
		EXPECT_EQ(e.model(), ModelState::Error);
		EXPECT_EQ(e.model_err(), XIW_ERR_RDMAP_OPCODE_MODEL);

		Encoder t(false, markers);
		FrameRec cut = f;
		cut.trunc = 100;
		cut.garb_len = 7;
		cut.garb_seed = 11;
		Bytes tb = t.encode(cut, g);
		ASSERT_EQ(tb.size(), 107u);
		EXPECT_TRUE(std::equal(tb.begin(), tb.begin() + 100, want.begin()));
		EXPECT_EQ(t.model(), ModelState::Desync);
	}
	// The first marker of a frame, every octet of it.
	Encoder mk(false, true);
	FrameRec m = f;
	m.mflips = { { 0, 0x01 } };	// reserved octet of the marker at stream octet 0
	mk.encode(m, g);
	EXPECT_EQ(mk.model_err(), XIW_ERR_MPA_MARKER_RSVD);
	Encoder mp(false, true);
	m.mflips = { { 3, 0x01 } };	// its FPDUPTR
	mp.encode(m, g);
	EXPECT_EQ(mp.model_err(), XIW_ERR_MPA_MARKER);
}

// Format, parse, format: the same text; the parsed operations frame to
// the same octets.
TEST(PeerFuzzScenario, RoundTrip)
{
	for (uint64_t seed = 1; seed <= 60; seed++) {
		Conf c = kConfs[seed % 4];
		Rng r(conn_seed(seed, 77));
		ConnParams p = draw_params(r, c.markers);
		p.p2p = seed % 3 == 0;
		p.rtr = p.p2p ? XIW_MPA_RTR_READ : 0;
		Agreed a = AgreedOf(p, c);
		a.p2p = p.p2p;
		a.rtr = p.rtr;
		TestSink s(c.crc, c.markers, RegionsA());
		GenConfig cfg;
		cfg.mutate = 0.05;
		cfg.frames = 200;
		generate(r, p, a, cfg, s);

		Scenario sc;
		sc.seed = seed;
		sc.conn = 77;
		sc.finding = "hang: a test\nwith two lines";
		sc.p = p;
		sc.regions = RegionsA();
		sc.ops = s.ops;
		std::string text = format_scenario(sc);
		Scenario back;
		std::string err;
		ASSERT_TRUE(parse_scenario(text, back, err)) << err << "\n" << text;
		EXPECT_EQ(back.seed, seed);
		EXPECT_EQ(back.conn, 77u);
		EXPECT_EQ(back.finding, "hang: a test with two lines");
		EXPECT_EQ(back.p, p);
		for (int i = 0; i < kNumRegions; i++) {
			EXPECT_EQ(back.regions.stag[i], sc.regions.stag[i]);
			EXPECT_EQ(back.regions.base[i], sc.regions.base[i]);
		}
		ASSERT_EQ(back.ops.size(), sc.ops.size());
		for (size_t i = 0; i < sc.ops.size(); i++)
			EXPECT_EQ(back.ops[i], sc.ops[i]) << format_op(sc.ops[i]);
		EXPECT_EQ(format_scenario(back), text);

		// Replayed through a new encoder: the very octets.
		Encoder e(c.crc, c.markers);
		Bytes again;
		for (const Op &op : back.ops)
			if (op.kind == Op::Frame) {
				Bytes b = e.encode(op.f, RegionsA());
				again.insert(again.end(), b.begin(), b.end());
			}
		EXPECT_EQ(again, s.stream);
	}
}

TEST(PeerFuzzScenario, RefusesWhatItCannotRun)
{
	const std::string head = "xiw-peer-scenario 1\nparams rev=2 crc=1\n";
	struct Bad {
		std::string text, why;
	} bad[] = {
		{ "", "line 0: empty" },
		{ "xiw-peer-scenario 2\n", "line 1: not an xiw-peer scenario (version 1)" },
		{ "xiw-peer-scenario 1\nf op=3\nend wait\n", "line 3: no params line" },
		{ head + "f op=3\n", "line 3: no end line" },
		{ head + "f op=12\nend wait\n", "line 3: a frame needs op= with a defined opcode" },
		{ head + "f op=3 msn=x\nend wait\n", "line 3: bad value in msn=x" },
		{ head + "f op=3 color=red\nend wait\n", "line 3: unknown frame field color" },
		{ head + "f op=0 stag=zz+0x1\nend wait\n", "line 3: bad value in stag=zz+0x1" },
		{ head + "w 0\nend wait\n", "line 3: bad chunk size 0" },
		{ head + "end wait\nf op=3\n", "line 4: operations after end" },
		{ head + "end later\n", "line 3: unknown end 'later'" },
		{ "xiw-peer-scenario 1\nparams rev=3\nend wait\n", "line 2: bad params field rev=3" },
		{ head + "frobnicate\nend wait\n", "line 3: unknown line 'frobnicate'" },
	};
	for (const Bad &b : bad) {
		Scenario s;
		std::string err;
		EXPECT_FALSE(parse_scenario(b.text, s, err)) << b.text;
		EXPECT_EQ(err, b.why) << b.text;
	}
	Scenario s;
	std::string err;
	ASSERT_TRUE(parse_scenario(head + "# a comment\nf op=0 stag=rw-0x1 to=dead+0x10 pay=4:2:0x0\n"
					  "w 10 20\nsync 3\nreads 2\nend abort\n",
				   s, err))
		<< err;
	ASSERT_EQ(s.ops.size(), 5u);
	EXPECT_EQ(s.ops[0].f.stag, Ref::rel(kRw, uint64_t(-1)));
	EXPECT_EQ(s.ops[0].f.to, Ref::rel(kDead, 0x10));
	EXPECT_EQ(s.ops[1].chunks, (std::vector<uint32_t>{ 10, 20 }));
	EXPECT_EQ(s.ops[4].end, End::Abort);
	EXPECT_EQ(s.ops[0].f.stag.stag(RegionsA()), RegionsA().stag[kRw] - 1);
}

// One seed, one run: the same connections again; another seed, others.
TEST(PeerFuzzGen, Reproducible)
{
	auto run = [](uint64_t seed) {
		std::string all;
		for (uint64_t conn = 0; conn < 5; conn++) {
			Rng r(conn_seed(seed, conn));
			ConnParams p = draw_params(r, conn % 2);
			TestSink s(p.crc, p.markers, RegionsA());
			GenConfig cfg;
			cfg.mutate = 0.01;
			cfg.frames = 300;
			generate(r, p, AgreedOf(p, { p.crc, p.markers }), cfg, s);
			all += Text(s.ops);
		}
		return all;
	};
	EXPECT_EQ(run(11), run(11));
	EXPECT_NE(run(11), run(12));
}
