// SPDX-License-Identifier: GPL-2.0
//
// xiw-peer fuzz and replay: see xiw_peer_fuzz.h, and kHelp below for
// the command lines.
//
// What a connection is checked for.  Up to its first mutated frame the
// stream is valid: legal Sends into posted receives, Writes inside the
// advertised regions, Read Requests within bounds and within the agreed
// ORD.  Such a stream must get no TERMINATE, every Read Response must
// carry the sink STag, Tagged Offsets and data its request asked for
// (the ro region holds pattern 1, the rw region what our Writes put
// there), and every Send must complete exactly one receive.  A mutated
// frame says what it needs: a TERMINATE and then the close (Must), or
// either of those or nothing (May); a mistake in the octets (CRC, pad,
// markers, lengths, cut or extra octets) leaves it to the model of the
// target's deframer, which sees every octet the target sees.  A
// connection that breaks one of these rules, or in which the target
// makes no progress for the hang timeout (no TERMINATE, no close, a
// window that stays shut, a receive or Read Response that never comes),
// or whose target process dies or cannot close it, is a finding.

#include "xiw_peer_fuzz.h"
#include "xiw_cli.h"
#include "xiw_pattern.h"
#include "xiw_peer_decode.h"
#include "xiw_peer_target.h"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

namespace xiw::peer::fuzz {

const char *const kRegionNames[kNumRegions] = { "rw", "ro", "wo", "foreign", "dead" };

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kPeerStag = 0x00c0de01;	// the sink of our Read Requests
constexpr uint64_t kPeerTo = 0x100000;
constexpr uint32_t kRoSeed = 1;			// xiw-target fills ro with pattern 1
constexpr uint64_t kPatLen = 1 << 18;		// cached pattern octets per seed
constexpr uint64_t kPatFirst = 1 << 17;		// payloads start below this offset

double secs_since(Clock::time_point t)
{
	return std::chrono::duration<double>(Clock::now() - t).count();
}

const char *expect_name(Expect e)
{
	switch (e) {
	case Expect::None: return "none";
	case Expect::May: return "may";
	case Expect::Must: return "must";
	case Expect::Model: return "model";
	}
	return "?";
}

} // namespace

uint64_t conn_seed(uint64_t seed, uint64_t conn)
{
	Rng r(seed ^ (conn * 0xd1342543de82ef95ull));
	r.next();
	return r.next();
}

const char *end_name(End e)
{
	switch (e) {
	case End::Wait: return "wait";
	case End::Fin: return "fin";
	case End::Disconnect: return "disconnect";
	case End::PeerTerm: return "peer-terminate";
	case End::Abort: return "abort";
	}
	return "?";
}

// ---------------------------------------------------------------------
// The scenario file

namespace {

std::string ref_str(const Ref &r)
{
	if (r.region < 0)
		return fmt("0x%" PRIx64, r.v);
	if (int64_t(r.v) < 0)
		return fmt("%s-0x%" PRIx64, kRegionNames[r.region], uint64_t(-r.v));
	return fmt("%s+0x%" PRIx64, kRegionNames[r.region], r.v);
}

bool parse_u64(const std::string &s, uint64_t &v)
{
	if (s.empty())
		return false;
	char *end;
	errno = 0;
	v = strtoull(s.c_str(), &end, 0);
	return !errno && *end == 0 && s[0] != '-';
}

bool parse_ref(const std::string &s, Ref &r)
{
	for (int i = 0; i < kNumRegions; i++) {
		size_t n = strlen(kRegionNames[i]);
		if (s.compare(0, n, kRegionNames[i]) || s.size() <= n || (s[n] != '+' && s[n] != '-'))
			continue;
		uint64_t v;
		if (!parse_u64(s.substr(n + 1), v))
			return false;
		r = Ref::rel(Region(i), s[n] == '-' ? uint64_t(-v) : v);
		return true;
	}
	r.region = -1;
	return parse_u64(s, r.v);
}

// "a:b" of two parsers.
template <class A, class B> bool parse_pair(const std::string &s, A a, B b)
{
	size_t c = s.find(':');
	return c != std::string::npos && a(s.substr(0, c)) && b(s.substr(c + 1));
}

std::string flips_str(const std::vector<std::pair<uint32_t, uint8_t>> &v)
{
	std::string s;
	for (auto &[off, m] : v)
		s += fmt("%s%u:0x%02x", s.empty() ? "" : ",", off, m);
	return s;
}

bool parse_flips(const std::string &s, std::vector<std::pair<uint32_t, uint8_t>> &v)
{
	std::istringstream is(s);
	std::string item;
	while (std::getline(is, item, ',')) {
		uint64_t off, m;
		if (!parse_pair(item, [&](const std::string &a) { return parse_u64(a, off) && off <= UINT32_MAX; },
				[&](const std::string &b) { return parse_u64(b, m) && m <= 255; }))
			return false;
		v.emplace_back(uint32_t(off), uint8_t(m));
	}
	return !v.empty();
}

std::string frame_str(const FrameRec &f)
{
	const FrameRec d;
	std::string s = fmt("f op=%u", f.op);
	if (!f.last)
		s += " l=0";
	if (!(f.stag == d.stag))
		s += " stag=" + ref_str(f.stag);
	if (!(f.to == d.to))
		s += " to=" + ref_str(f.to);
	if (f.qn)
		s += fmt(" qn=%u", f.qn);
	if (f.msn)
		s += fmt(" msn=%u", f.msn);
	if (f.mo)
		s += fmt(" mo=%u", f.mo);
	if (!(f.inv == d.inv))
		s += " inv=" + ref_str(f.inv);
	if (f.sink_stag || f.sink_to)
		s += fmt(" sink=0x%x:0x%" PRIx64, f.sink_stag, f.sink_to);
	if (f.size)
		s += fmt(" size=%u", f.size);
	if (!(f.src_stag == d.src_stag) || !(f.src_to == d.src_to))
		s += " src=" + ref_str(f.src_stag) + ":" + ref_str(f.src_to);
	if (f.aop)
		s += fmt(" aop=%u", f.aop);
	if (f.req_id)
		s += fmt(" id=%u", f.req_id);
	if (f.adata)
		s += fmt(" adata=0x%" PRIx64, f.adata);
	if (f.imm)
		s += fmt(" imm=0x%" PRIx64, f.imm);
	if (f.term.layer || f.term.etype || f.term.ecode)
		s += fmt(" term=%u/%u/0x%02x", f.term.layer, f.term.etype, f.term.ecode);
	if (f.len || f.seed || f.first)
		s += fmt(" pay=%u:%u:0x%" PRIx64, f.len, f.seed, f.first);
	if (f.ddp_ctrl >= 0)
		s += fmt(" ddp=0x%02x", f.ddp_ctrl);
	if (f.rdmap_ctrl >= 0)
		s += fmt(" rdmap=0x%02x", f.rdmap_ctrl);
	if (f.ulpdu_len >= 0)
		s += fmt(" ulen=%d", f.ulpdu_len);
	if (!f.flips.empty())
		s += " flip=" + flips_str(f.flips);
	if (!f.mflips.empty())
		s += " mflip=" + flips_str(f.mflips);
	if (f.trunc >= 0)
		s += fmt(" trunc=%d", f.trunc);
	if (f.garb_len)
		s += fmt(" garb=%u:%u", f.garb_len, f.garb_seed);
	if (!f.mut.empty())
		s += " mut=" + f.mut;
	if (f.expect != Expect::None)
		s += std::string(" exp=") + expect_name(f.expect);
	return s;
}

bool parse_frame(std::istringstream &is, FrameRec &f, std::string &err)
{
	std::string tok;
	bool have_op = false;
	while (is >> tok) {
		size_t eq = tok.find('=');
		if (eq == std::string::npos) {
			err = "not key=value: " + tok;
			return false;
		}
		std::string k = tok.substr(0, eq), v = tok.substr(eq + 1);
		uint64_t n = 0;
		auto num = [&](uint64_t max) { return parse_u64(v, n) && n <= max; };
		bool ok;
		if (k == "op")
			ok = num(15), f.op = uint8_t(n), have_op = true;
		else if (k == "l")
			ok = num(1), f.last = n;
		else if (k == "stag")
			ok = parse_ref(v, f.stag);
		else if (k == "to")
			ok = parse_ref(v, f.to);
		else if (k == "qn")
			ok = num(UINT32_MAX), f.qn = uint32_t(n);
		else if (k == "msn")
			ok = num(UINT32_MAX), f.msn = uint32_t(n);
		else if (k == "mo")
			ok = num(UINT32_MAX), f.mo = uint32_t(n);
		else if (k == "inv")
			ok = parse_ref(v, f.inv);
		else if (k == "sink")
			ok = parse_pair(v, [&](const std::string &a) {
				uint64_t x;
				return parse_u64(a, x) && x <= UINT32_MAX && (f.sink_stag = uint32_t(x), true);
			}, [&](const std::string &b) { return parse_u64(b, f.sink_to); });
		else if (k == "size")
			ok = num(UINT32_MAX), f.size = uint32_t(n);
		else if (k == "src")
			ok = parse_pair(v, [&](const std::string &a) { return parse_ref(a, f.src_stag); },
					[&](const std::string &b) { return parse_ref(b, f.src_to); });
		else if (k == "aop")
			ok = num(255), f.aop = uint8_t(n);
		else if (k == "id")
			ok = num(UINT32_MAX), f.req_id = uint32_t(n);
		else if (k == "adata")
			ok = parse_u64(v, f.adata);
		else if (k == "imm")
			ok = parse_u64(v, f.imm);
		else if (k == "term") {
			unsigned l, t, c;
			char tail;
			ok = sscanf(v.c_str(), "%u/%u/%x%c", &l, &t, &c, &tail) == 3 && l < 16 && t < 16 &&
			     c < 256;
			f.term = { uint8_t(l), uint8_t(t), uint8_t(c) };
		} else if (k == "pay") {
			unsigned long long len, seed, first;
			char tail;
			ok = sscanf(v.c_str(), "%llu:%llu:%llx%c", &len, &seed, &first, &tail) == 3 &&
			     len <= MPA_MAX_ULPDU && seed <= UINT32_MAX && first < kPatFirst;
			f.len = uint32_t(len), f.seed = uint32_t(seed), f.first = first;
		} else if (k == "ddp")
			ok = num(255), f.ddp_ctrl = int(n);
		else if (k == "rdmap")
			ok = num(255), f.rdmap_ctrl = int(n);
		else if (k == "ulen")
			ok = num(0xffff), f.ulpdu_len = int(n);
		else if (k == "flip")
			ok = parse_flips(v, f.flips);
		else if (k == "mflip")
			ok = parse_flips(v, f.mflips);
		else if (k == "trunc")
			ok = num(0x7fffffff), f.trunc = int(n);
		else if (k == "garb")
			ok = parse_pair(v, [&](const std::string &a) {
				uint64_t x;
				return parse_u64(a, x) && x <= 65536 && (f.garb_len = uint32_t(x), true);
			}, [&](const std::string &b) {
				uint64_t x;
				return parse_u64(b, x) && x <= UINT32_MAX && (f.garb_seed = uint32_t(x), true);
			});
		else if (k == "mut")
			ok = !v.empty(), f.mut = v;
		else if (k == "exp") {
			ok = true;
			if (v == "none")
				f.expect = Expect::None;
			else if (v == "may")
				f.expect = Expect::May;
			else if (v == "must")
				f.expect = Expect::Must;
			else if (v == "model")
				f.expect = Expect::Model;
			else
				ok = false;
		} else {
			err = "unknown frame field " + k;
			return false;
		}
		if (!ok) {
			err = "bad value in " + tok;
			return false;
		}
	}
	if (!have_op || !xiw_rdmap_op_lookup(f.op)) {
		err = "a frame needs op= with a defined opcode";
		return false;
	}
	return true;
}

} // namespace

std::string format_op(const Op &op)
{
	switch (op.kind) {
	case Op::Frame:
		return frame_str(op.f);
	case Op::Write: {
		std::string s = "w";
		for (uint32_t c : op.chunks)
			s += fmt(" %u", c);
		return s;
	}
	case Op::Sync:
		return fmt("sync %" PRIu64, op.n);
	case Op::Reads:
		return fmt("reads %" PRIu64, op.n);
	case Op::Finish:
		return std::string("end ") + end_name(op.end);
	}
	return "";
}

std::string format_scenario(const Scenario &s)
{
	std::string out = "# xiw-peer fuzz scenario; run it again with\n"
			  "#   xiw-peer replay --target PATH --addr ADDR [--markers-addr ADDR] FILE\n"
			  "xiw-peer-scenario 1\n";
	out += fmt("seed %" PRIu64 "\nconn %" PRIu64 "\n", s.seed, s.conn);
	std::string finding = s.finding;
	std::replace(finding.begin(), finding.end(), '\n', ' ');
	if (!finding.empty())
		out += "finding " + finding + "\n";
	const ConnParams &p = s.p;
	out += fmt("params rev=%u crc=%d markers=%d markers_rx=%d p2p=%d rtr=0x%x ird=%u ord=%u "
		   "recvs=%u rlen=%u t_ird=%u t_ord=%u\n",
		   p.rev, p.crc, p.markers, p.markers_rx, p.p2p, p.rtr, p.ird, p.ord, p.recvs, p.rlen,
		   p.t_ird, p.t_ord);
	out += "regions";
	for (int i = 0; i < kNumRegions; i++)
		out += fmt(" %s=0x%08x:0x%" PRIx64, kRegionNames[i], s.regions.stag[i], s.regions.base[i]);
	out += fmt(" len=%" PRIu64 "\n", s.regions.len);
	for (const Op &op : s.ops)
		out += format_op(op) + "\n";
	return out;
}

bool parse_scenario(const std::string &text, Scenario &s, std::string &err)
{
	std::istringstream in(text);
	std::string line;
	int no = 0;
	bool header = false, params = false, ended = false;

	s = Scenario();
	auto fail = [&](const std::string &why) {
		err = fmt("line %d: ", no) + why;
		return false;
	};
	while (std::getline(in, line)) {
		no++;
		if (line.empty() || line[0] == '#')
			continue;
		std::istringstream is(line);
		std::string w;
		is >> w;
		if (!header) {
			std::string v;
			if (w != "xiw-peer-scenario" || !(is >> v) || v != "1")
				return fail("not an xiw-peer scenario (version 1)");
			header = true;
			continue;
		}
		if (ended)
			return fail("operations after end");
		if (w == "seed" || w == "conn") {
			std::string v;
			if (!(is >> v) || !parse_u64(v, w == "seed" ? s.seed : s.conn))
				return fail("bad " + w);
		} else if (w == "finding") {
			std::getline(is >> std::ws, s.finding);
		} else if (w == "params") {
			std::string tok;
			ConnParams &p = s.p;
			while (is >> tok) {
				size_t eq = tok.find('=');
				uint64_t n;
				if (eq == std::string::npos || !parse_u64(tok.substr(eq + 1), n))
					return fail("bad params field " + tok);
				std::string k = tok.substr(0, eq);
				if (k == "rev" && (n == 1 || n == 2))
					p.rev = uint8_t(n);
				else if (k == "crc" && n <= 1)
					p.crc = n;
				else if (k == "markers" && n <= 1)
					p.markers = n;
				else if (k == "markers_rx" && n <= 1)
					p.markers_rx = n;
				else if (k == "p2p" && n <= 1)
					p.p2p = n;
				else if (k == "rtr" && n <= XIW_MPA_RTR_ALL)
					p.rtr = uint8_t(n);
				else if (k == "ird" && n <= MPA_V2_IRD_ORD_MASK)
					p.ird = uint16_t(n);
				else if (k == "ord" && n <= MPA_V2_IRD_ORD_MASK)
					p.ord = uint16_t(n);
				else if (k == "recvs" && n >= 1 && n <= 128)
					p.recvs = uint32_t(n);
				else if (k == "rlen" && n <= 262144)
					p.rlen = uint32_t(n);
				else if (k == "t_ird" && n <= 255)
					p.t_ird = uint16_t(n);
				else if (k == "t_ord" && n <= 255)
					p.t_ord = uint16_t(n);
				else
					return fail("bad params field " + tok);
			}
			params = true;
		} else if (w == "regions") {
			std::string tok;
			while (is >> tok) {
				size_t eq = tok.find('=');
				std::string k = tok.substr(0, eq), v = eq == std::string::npos ? "" : tok.substr(eq + 1);
				int i = int(std::find_if(kRegionNames, kRegionNames + kNumRegions,
							 [&k](const char *n) { return k == n; }) - kRegionNames);
				bool ok;
				if (k == "len")
					ok = parse_u64(v, s.regions.len);
				else if (i < kNumRegions)
					ok = parse_pair(v, [&](const std::string &a) {
						uint64_t x;
						return parse_u64(a, x) && x <= UINT32_MAX &&
						       (s.regions.stag[i] = uint32_t(x), true);
					}, [&](const std::string &b) { return parse_u64(b, s.regions.base[i]); });
				else
					ok = false;
				if (!ok)
					return fail("bad regions field " + tok);
			}
		} else if (w == "f") {
			Op op;
			std::string why;
			if (!parse_frame(is, op.f, why))
				return fail(why);
			s.ops.push_back(std::move(op));
		} else if (w == "w") {
			Op op;
			op.kind = Op::Write;
			std::string v;
			uint64_t n;
			while (is >> v) {
				if (!parse_u64(v, n) || !n || n > UINT32_MAX)
					return fail("bad chunk size " + v);
				op.chunks.push_back(uint32_t(n));
			}
			if (op.chunks.empty())
				return fail("w without chunk sizes");
			s.ops.push_back(std::move(op));
		} else if (w == "sync" || w == "reads") {
			Op op;
			op.kind = w == "sync" ? Op::Sync : Op::Reads;
			std::string v;
			if (!(is >> v) || !parse_u64(v, op.n))
				return fail("bad " + w);
			s.ops.push_back(std::move(op));
		} else if (w == "end") {
			Op op;
			op.kind = Op::Finish;
			std::string v;
			is >> v;
			bool found = false;
			for (End e : { End::Wait, End::Fin, End::Disconnect, End::PeerTerm, End::Abort })
				if (v == end_name(e))
					op.end = e, found = true;
			if (!found)
				return fail("unknown end '" + v + "'");
			s.ops.push_back(std::move(op));
			ended = true;
		} else {
			return fail("unknown line '" + w + "'");
		}
	}
	if (!header)
		return fail("empty");
	if (!params)
		return fail("no params line");
	if (!ended)
		return fail("no end line");
	return true;
}

// ---------------------------------------------------------------------
// Frames to octets

namespace {

// Pattern octets, cached per seed: a payload is a slice of them.
const uint8_t *pattern_at(uint32_t seed, uint64_t first, uint32_t len, Bytes &spill)
{
	static std::map<uint32_t, Bytes> cache;

	if (first + len > kPatLen) {
		spill.resize(len);
		pattern_fill(spill.data(), len, seed, first);
		return spill.data();
	}
	auto it = cache.find(seed);
	if (it == cache.end()) {
		if (cache.size() > 64)
			cache.clear();
		it = cache.emplace(seed, Bytes(kPatLen)).first;
		pattern_fill(it->second.data(), kPatLen, seed, 0);
	}
	return it->second.data() + first;
}

} // namespace

Bytes payload(const FrameRec &f)
{
	Bytes spill;
	const uint8_t *p = pattern_at(f.seed, f.first, f.len, spill);
	return Bytes(p, p + f.len);
}

Expect resolve(const FrameRec &f, ModelState m)
{
	if (m == ModelState::Error)
		return Expect::Must;
	if (f.expect == Expect::Model) {
		if (m == ModelState::Desync)
			return Expect::May;
		return f.ulpdu_len >= 0 || f.trunc >= 0 || f.garb_len ? Expect::May : Expect::None;
	}
	if (m == ModelState::Desync && f.expect == Expect::None)
		return Expect::May;	// filler after the framing broke
	return f.expect;
}

Encoder::Encoder(bool crc, bool markers) : markers_(markers)
{
	framer_.start_fpdus(crc, markers, false);
	xiw_rx_init(&rx_, crc, markers, 0, 0);
}

Bytes Encoder::encode(const FrameRec &f, const Regions &g)
{
	const xiw_rdmap_opinfo *oi = xiw_rdmap_op_lookup(f.op);
	if (!oi)
		throw Failure(fmt("frame with undefined opcode %u", f.op));
	SegSpec s;
	xiw_rdmap_hdr &h = s.hdr;
	h.opcode = f.op;
	h.last = f.last;
	if (oi->tagged) {
		h.tagged = true;
		h.stag = f.stag.stag(g);
		h.to = f.to.to(g);
	} else {
		h.qn = f.qn;
		h.msn = f.msn;
		h.mo = f.mo;
		h.rsvdulp = f.inv.stag(g);
	}
	switch (f.op) {
	case RDMAP_OP_READ_REQ:
		h.u.read_req = { f.sink_stag, f.sink_to, f.size, f.src_stag.stag(g), f.src_to.to(g) };
		break;
	case RDMAP_OP_ATOMIC_REQ:
		h.u.atomic_req = { f.aop, f.req_id, f.stag.stag(g), f.to.to(g), f.adata, 0, 0, 0 };
		break;
	case RDMAP_OP_IMM_DATA:
	case RDMAP_OP_IMM_DATA_SE:
		h.u.imm_data = f.imm;
		break;
	case RDMAP_OP_TERMINATE:
		h.u.term.code = f.term;
		break;
	default:
		break;
	}
	s.payload = payload(f);
	s.ddp_ctrl = f.ddp_ctrl;
	s.rdmap_ctrl = f.rdmap_ctrl;
	uint32_t start = framer_.tx_pos();
	Bytes out = framer_.frame(s);

	if (f.ulpdu_len >= 0 || !f.flips.empty() || !f.mflips.empty()) {
		// Octet i of the frame is a marker octet when its stream
		// position falls in the first four octets of a 512-octet block.
		std::vector<size_t> octet, mark;
		for (size_t i = 0; i < out.size(); i++)
			(markers_ && (start + i) % MPA_MARKER_SPACING < MPA_MARKER_LEN ? mark : octet)
				.push_back(i);
		if (f.ulpdu_len >= 0) {
			out[octet[0]] = uint8_t(f.ulpdu_len >> 8);
			out[octet[1]] = uint8_t(f.ulpdu_len);
		}
		for (auto [off, m] : f.flips)
			if (off < octet.size())
				out[octet[off]] ^= m;
		for (auto [k, m] : f.mflips)
			if (k < mark.size())
				out[mark[k]] ^= m;
	}
	if (f.trunc >= 0 && size_t(f.trunc) < out.size())
		out.resize(size_t(f.trunc));
	if (f.garb_len) {
		Rng r(f.garb_seed);
		for (uint32_t i = 0; i < f.garb_len; i++)
			out.push_back(uint8_t(r.next()));
	}

	// The target's deframer, fed the same octets.
	frames_++;
	size_t off = 0;
	while (off < out.size() && rx_.state != XIW_RX_ERROR) {
		size_t used = 0;
		xiw_rx_event ev;
		xiw_rx_step(&rx_, out.data() + off, out.size() - off, &used, &ev);
		off += used;
	}
	if (rx_.state == XIW_RX_ERROR)
		state_ = ModelState::Error;
	else if (state_ == ModelState::InSync &&
		 (rx_.segments != frames_ || rx_.state != XIW_RX_HDR || rx_.raw_got || rx_.mk_got))
		state_ = ModelState::Desync;
	return out;
}

// ---------------------------------------------------------------------
// The generator

ConnParams draw_params(Rng &r, bool markers_dev)
{
	static const uint32_t rlens[] = { 64, 256, 1024, 4096, 16384 };
	ConnParams p;

	p.rev = r.chance(0.1) ? 1 : 2;
	p.crc = r.chance(0.5);
	p.markers = markers_dev;
	p.markers_rx = markers_dev && r.chance(0.5);
	p.p2p = p.rev == 2 && r.chance(0.15);
	p.rtr = p.p2p ? uint8_t(r.range(1, XIW_MPA_RTR_ALL)) : 0;
	// Mostly deep queues: with few receives or a small ORD the stream
	// waits for the target every few messages.
	p.ird = p.ord = uint16_t(r.chance(0.2) ? r.range(1, 7) : r.range(8, 16));
	p.recvs = uint32_t(r.chance(0.2) ? r.range(4, 31) : r.range(32, 128));
	p.rlen = rlens[r.below(std::size(rlens))];
	p.t_ird = p.t_ord = 16;
	return p;
}

namespace {

class Gen {
public:
	Gen(Rng &r, const ConnParams &p, const Agreed &a, const GenConfig &cfg, Sink &s)
		: r_(r), p_(p), a_(a), cfg_(cfg), s_(s)
	{
		static const uint32_t segs[] = { 64, 256, 1024, 1448, 4096, 8192, 16384, 65000 };
		// Octets framed before they go to TCP: every TCP write costs
		// the receiver a pass through its stack, so mostly many frames.
		static const size_t batches[] = { 0, 1448, 8192, 8192, 65536, 65536, 65536, 65536 };
		seg_max_ = segs[r_.below(std::size(segs))];
		batch_ = batches[r_.below(std::size(batches))];
		split_ = int(r_.below(10));	// 0-5 whole, 6-8 random cuts, 9 also octet by octet
		pat_seed_ = uint32_t(r_.range(2, 17));
	}

	void run();

private:
	Rng &r_;
	const ConnParams &p_;
	const Agreed &a_;
	const GenConfig &cfg_;
	Sink &s_;
	bool over_ = false;
	uint32_t seg_max_;
	size_t batch_;
	int split_;
	uint32_t pat_seed_;
	uint32_t msn_send_ = 1, msn_read_ = 1;
	uint64_t sends_ = 0, recvs_done_ = 0;	// Sends needing a receive; receives known done
	uint64_t reads_ = 0, reads_done_ = 0;	// Read Requests sent; responses known in
	uint64_t frames_ = 0;

	// A payload size up to @max: mostly small, now and then large (the
	// receiver's cost is per octet as well as per frame).
	uint32_t size(uint32_t max)
	{
		uint64_t v, w = r_.below(100);
		if (w < 50)
			v = r_.below(65);
		else if (w < 88)
			v = r_.range(65, 1024);
		else if (w < 98)
			v = r_.range(1025, 8192);
		else
			v = r_.range(8193, 65536);
		return uint32_t(std::min<uint64_t>(v, max));
	}

	void pay(FrameRec &f, uint32_t len)
	{
		f.len = len;
		f.seed = pat_seed_;
		f.first = r_.below(kPatFirst);
	}

	FrameRec send_seg(uint8_t op, uint32_t msn, uint32_t mo, bool last, uint32_t len)
	{
		FrameRec f;
		f.op = op;
		f.qn = RDMAP_QN_SEND;
		f.msn = msn;
		f.mo = mo;
		f.last = last;
		pay(f, len);
		return f;
	}

	FrameRec write_seg(Ref stag, Ref to, uint32_t len, bool last = true)
	{
		FrameRec f;
		f.op = RDMAP_OP_WRITE;
		f.stag = stag;
		f.to = to;
		f.last = last;
		pay(f, len);
		return f;
	}

	FrameRec read_req(uint32_t msn, Ref src_stag, Ref src_to, uint32_t size)
	{
		FrameRec f;
		f.op = RDMAP_OP_READ_REQ;
		f.qn = RDMAP_QN_READ_REQ;
		f.msn = msn;
		f.sink_stag = kPeerStag;
		f.sink_to = kPeerTo + r_.below(1 << 24);
		f.src_stag = src_stag;
		f.src_to = src_to;
		f.size = size;
		return f;
	}

	// A random offset for @len octets inside a region.
	uint64_t in_region(uint32_t len) { return r_.below(65536 - uint64_t(len) + 1); }

	// ---- writing

	// The sizes of the send() calls that hand @n octets to TCP: whole,
	// cut at random points (inside headers, markers, CRCs as it falls),
	// or with a run of up to 256 octets in them sent one at a time.  Each
	// send() costs the receiver a pass through its TCP stack (about a
	// millisecond on the debug kernel under TCG): short ones stay few.
	std::vector<uint32_t> chunks(size_t n)
	{
		std::vector<size_t> cuts = { 0, n };
		if (split_ >= 6 && n > 1) {
			for (uint64_t k = r_.range(1, n >= 4096 ? 8 : 2); k; k--)
				cuts.push_back(r_.range(1, n - 1));
		}
		if (split_ == 9 && n > 1 && r_.chance(0.05)) {
			size_t run = r_.chance(0.9) ? r_.range(1, 64) : r_.range(65, 256);
			size_t from = r_.below(n), len = std::min<size_t>(n - from, run);
			for (size_t i = 1; i <= len; i++)
				cuts.push_back(from + i);
			cuts.push_back(from);
		}
		std::sort(cuts.begin(), cuts.end());
		cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
		std::vector<uint32_t> c;
		for (size_t i = 1; i < cuts.size(); i++)
			c.push_back(uint32_t(cuts[i] - cuts[i - 1]));
		return c;
	}

	void flush()
	{
		if (!over_ && s_.pending())
			over_ = !s_.write(chunks(s_.pending()));
	}

	void emit(const FrameRec &f)
	{
		if (over_)
			return;
		over_ = !s_.frame(f);
		frames_++;
		if (s_.pending() > batch_)
			flush();
	}

	// A receive for one more Send: sync with the target when those it
	// is known to have are all used.
	void need_recv()
	{
		if (over_ || sends_ < p_.recvs + recvs_done_)
			return;
		flush();
		uint64_t min = sends_ - p_.recvs / 4;
		if (!over_)
			over_ = !s_.sync(min);
		recvs_done_ = min;
	}

	// Room for one more Read Request within the ORD.
	void need_read()
	{
		if (over_ || reads_ - reads_done_ < a_.ord)
			return;
		flush();
		uint64_t n = reads_ - a_.ord + 1;
		if (!over_)
			over_ = !s_.reads(n);
		reads_done_ = n;
	}

	// ---- valid operations

	void send_msg(uint32_t len, uint8_t op)
	{
		need_recv();
		uint32_t msn = msn_send_++, mo = 0;
		do {
			uint32_t seg = std::min(len - mo, seg_max_);
			emit(send_seg(op, msn, mo, mo + seg == len, seg));
			mo += seg;
		} while (mo < len);
		sends_++;
	}

	void write_msg(Region rg, uint32_t len)
	{
		uint64_t off = in_region(len);
		uint32_t done = 0;
		do {
			uint32_t seg = std::min(len - done, seg_max_);
			emit(write_seg(Ref::rel(rg, 0), Ref::rel(rg, off + done), seg, done + seg == len));
			done += seg;
		} while (done < len);
	}

	void read_msg(Region rg, uint32_t size)
	{
		need_read();
		emit(read_req(msn_read_++, Ref::rel(rg, 0), Ref::rel(rg, in_region(size)), size));
		reads_++;
	}

	void valid_op()
	{
		uint64_t w = r_.below(100);
		if (w < 35)
			send_msg(size(p_.rlen), r_.chance(0.2) ? RDMAP_OP_SEND_SE : RDMAP_OP_SEND);
		else if (w < 78)
			write_msg(r_.chance(0.7) ? kRw : kWo, size(65536));
		else if (w < 94)
			read_msg(r_.chance(0.6) ? kRw : kRo, size(65536));
		else if (w < 97) {
			// RFC 5040 5.1: a zero-length Write validates no STag.
			emit(write_seg(Ref::abs(uint32_t(r_.next())), Ref::abs(r_.next()), 0));
		} else {
			// RFC 5040 5.2: nor does a zero-length Read.
			need_read();
			emit(read_req(msn_read_++, Ref::abs(uint32_t(r_.next())), Ref::abs(r_.next()), 0));
			reads_++;
		}
	}

	void rtr()
	{
		if (a_.rtr == XIW_MPA_RTR_WRITE) {
			emit(write_seg(Ref::abs(0), Ref::abs(0), 0));
		} else if (a_.rtr == XIW_MPA_RTR_READ) {
			FrameRec f = read_req(msn_read_++, Ref::abs(0), Ref::abs(0), 0);
			f.sink_stag = 0;
			f.sink_to = 0;
			emit(f);
			reads_++;
		} else {
			// The zero-length Send RTR takes no receive (RFC 6581 sec 5).
			emit(send_seg(RDMAP_OP_SEND, msn_send_++, 0, true, 0));
		}
		flush();
	}

	// ---- mutations

	// An STag that is none of the target's: rw's index with another key,
	// or an index beyond the seven MRs of the connection.
	Ref bad_stag()
	{
		switch (r_.below(4)) {
		case 0: return Ref::rel(kRw, r_.range(1, 255));
		case 1: return Ref::rel(kRw, uint64_t(0) - r_.range(1, 255));
		case 2: return Ref::rel(kRw, r_.range(8, 64) << 8);
		default: return Ref::rel(kRw, uint64_t(0) - (r_.range(1, 64) << 8));
		}
	}

	// A single-segment valid frame, bookkeeping done, for byte mistakes.
	FrameRec base_frame(uint32_t min_len = 0)
	{
		switch (r_.below(3)) {
		case 0: {
			need_recv();
			uint32_t len = std::max(min_len, std::min(size(p_.rlen), seg_max_));
			len = std::min<uint32_t>(len, p_.rlen);
			if (len < min_len)
				break;	// a write then
			sends_++;
			return send_seg(RDMAP_OP_SEND, msn_send_++, 0, true, len);
		}
		case 1:
			if (min_len)
				break;
			need_read();
			reads_++;
			return read_req(msn_read_++, Ref::rel(kRo, 0), Ref::rel(kRo, 0), size(65536));
		default:
			break;
		}
		uint32_t len = std::max(min_len, std::min(size(65536), seg_max_));
		return write_seg(Ref::rel(kRw, 0), Ref::rel(kRw, in_region(len)), len);
	}

	// The logical length of a frame (no markers) and where its pad starts.
	static uint32_t ulpdu(const FrameRec &f)
	{
		return xiw_rdmap_op_lookup(f.op)->hdr_len + f.len;
	}

	bool mutate();
	void after_mutation();
	void ending();
};

// Apply one mutation; true when the connection is to end after it (the
// frame is not known to be harmless).
bool Gen::mutate()
{
	struct Kind {
		const char *name;
		int weight;
	};
	static const Kind kinds[] = {
		{ "stag.near", 6 }, { "stag.random", 4 }, { "stag.region", 5 }, { "to.below", 3 },
		{ "to.above", 3 }, { "to.wrap", 2 }, { "to.random", 2 }, { "read.stag", 4 },
		{ "read.bounds", 3 }, { "read.msn", 3 }, { "read.ird", 2 }, { "send.msn", 3 },
		{ "send.mo", 2 }, { "send.long", 3 }, { "send.inv", 3 }, { "qn", 3 }, { "opcode", 4 },
		{ "version", 3 }, { "tflag", 2 }, { "lflag", 1 }, { "rsvd", 3 }, { "atomic", 2 },
		{ "readresp", 2 }, { "imm", 1 }, { "term.msn", 1 }, { "hdr.flip", 3 }, { "crc", 4 },
		{ "pad", 2 }, { "payload", 2 }, { "len", 4 }, { "trunc", 3 }, { "garbage", 3 },
		{ "marker", 3 },
	};
	int total = 0;
	for (const Kind &k : kinds)
		total += k.weight;
	int pick = int(r_.below(uint64_t(total)));
	std::string name;
	for (const Kind &k : kinds) {
		if (pick < k.weight) {
			name = k.name;
			break;
		}
		pick -= k.weight;
	}
	if (name == "payload" && !a_.crc)
		name = "crc";
	if (name == "marker" && !a_.markers_tx)
		name = "len";

	FrameRec f;
	Expect e = Expect::Must;
	uint32_t len = std::max<uint32_t>(1, std::min(size(65536), seg_max_));
	if (name == "stag.near" || name == "stag.random" || name == "stag.region") {
		Ref st = name == "stag.near" ? bad_stag() : Ref::abs(uint32_t(r_.next()) | 0x100);
		if (name == "stag.region") {
			static const Region rs[] = { kRo, kForeign, kDead };
			st = Ref::rel(rs[r_.below(3)], 0);
		}
		f = write_seg(st, Ref::rel(st.region < 0 ? kRw : Region(st.region), in_region(len)), len);
		if (name != "stag.region")
			f.to = Ref::rel(kRw, in_region(len));
	} else if (name.rfind("to.", 0) == 0) {
		Ref to;
		if (name == "to.below")
			to = Ref::rel(kRw, uint64_t(0) - r_.range(1, 4096));
		else if (name == "to.above")
			to = Ref::rel(kRw, 65536 - len + r_.range(1, 4096));
		else if (name == "to.wrap")
			to = Ref::abs(uint64_t(0) - r_.range(1, len));
		else
			to = Ref::abs(r_.next() | (uint64_t(1) << 63));
		f = write_seg(Ref::rel(kRw, 0), to, len);
	} else if (name.rfind("read.", 0) == 0) {
		uint32_t sz = std::max<uint32_t>(1, size(65536));
		if (name == "read.ird") {
			// ORD Read Requests outstanding, then one more: the target
			// has no room for it, unless it answered one meanwhile.
			need_read();
			while (reads_ - reads_done_ < a_.ord && !over_) {
				emit(read_req(msn_read_++, Ref::rel(kRo, 0), Ref::rel(kRo, 0), 65536));
				reads_++;
			}
			e = Expect::May;
		} else {
			need_read();
		}
		f = read_req(msn_read_++, Ref::rel(kRw, 0), Ref::rel(kRw, in_region(sz)), sz);
		reads_++;
		if (name == "read.stag") {
			static const Region rs[] = { kWo, kForeign, kDead };
			f.src_stag = r_.chance(0.5) ? bad_stag() : Ref::rel(rs[r_.below(3)], 0);
			if (f.src_stag.region > 0 && f.src_stag.v == 0)
				f.src_to = Ref::rel(Region(f.src_stag.region), f.src_to.v);
		} else if (name == "read.bounds") {
			if (r_.chance(0.5))
				f.src_to = Ref::rel(kRw, uint64_t(0) - r_.range(1, 4096));
			else
				f.size = uint32_t(65536 - f.src_to.v + r_.range(1, 4096));
		} else if (name == "read.msn") {
			f.msn += r_.chance(0.5) ? uint32_t(r_.range(1, 3)) : uint32_t(r_.next() | 0x100);
			if (r_.chance(0.3) && msn_read_ > 2)
				f.msn = msn_read_ - 2;	// one behind, when there was one
		}
		if (name == "read.ird")
			f.src_stag = Ref::rel(kRo, 0), f.src_to = Ref::rel(kRo, 0), f.size = 65536;
	} else if (name.rfind("send.", 0) == 0) {
		need_recv();
		uint32_t slen = std::min<uint32_t>(std::min(size(p_.rlen), seg_max_), p_.rlen);
		f = send_seg(RDMAP_OP_SEND, msn_send_++, 0, true, slen);
		sends_++;
		if (name == "send.msn")
			f.msn += r_.chance(0.5) ? uint32_t(r_.range(1, 3)) : uint32_t(r_.next() | 0x100);
		else if (name == "send.mo")
			f.mo = uint32_t(r_.range(1, 65536));
		else if (name == "send.long")
			f.len = std::min<uint32_t>(p_.rlen + uint32_t(r_.range(1, 4096)), 65000);
		else {
			static const Region rs[] = { kRw, kRo, kWo, kForeign, kDead };
			f.op = r_.chance(0.5) ? RDMAP_OP_SEND_INV : RDMAP_OP_SEND_SE_INV;
			f.inv = r_.chance(0.8) ? Ref::rel(rs[r_.below(5)], 0) : Ref::abs(uint32_t(r_.next()));
		}
	} else if (name == "qn" || name == "lflag") {
		if (name == "qn" && r_.chance(0.5)) {
			need_recv();
			f = send_seg(RDMAP_OP_SEND, msn_send_++, 0, true, std::min(size(p_.rlen), seg_max_));
			sends_++;
		} else {
			need_read();
			f = read_req(msn_read_++, Ref::rel(kRo, 0), Ref::rel(kRo, 0), size(65536));
			reads_++;
		}
		if (name == "lflag") {
			f.last = false;
		} else {
			static const uint32_t qns[] = { 0, 1, 2, 3, 4, 0xffffffff };
			uint32_t want = f.qn;
			do
				f.qn = r_.chance(0.8) ? qns[r_.below(std::size(qns))] : uint32_t(r_.next());
			while (f.qn == want);
		}
	} else if (name == "opcode" || name == "version" || name == "tflag" || name == "rsvd" ||
		   name == "hdr.flip") {
		f = base_frame();
		const xiw_rdmap_opinfo *oi = xiw_rdmap_op_lookup(f.op);
		uint8_t ddp = uint8_t((oi->tagged ? DDP_FLAG_T : 0) | (f.last ? DDP_FLAG_L : 0) | DDP_VERSION);
		uint8_t rdmap = uint8_t(RDMAP_VERSION << RDMAP_RV_SHIFT | f.op);
		if (name == "opcode") {
			uint8_t op;
			do
				op = uint8_t(r_.below(16));
			while (op == f.op || (f.op == RDMAP_OP_SEND && op == RDMAP_OP_SEND_SE));
			f.rdmap_ctrl = (rdmap & ~RDMAP_OPCODE_MASK) | op;
		} else if (name == "version") {
			if (r_.chance(0.5))
				f.ddp_ctrl = (ddp & ~DDP_DV_MASK) | int(r_.chance(0.5) ? 0 : r_.range(2, 3));
			else
				f.rdmap_ctrl = (rdmap & ~RDMAP_RV_MASK) |
					       (int(r_.chance(0.5) ? 0 : r_.range(2, 3)) << RDMAP_RV_SHIFT);
		} else if (name == "tflag") {
			f.ddp_ctrl = ddp ^ DDP_FLAG_T;
		} else if (name == "rsvd") {
			// RFC 5041 4.2, 5040 4.2: reserved fields are ignored on receipt.
			e = Expect::None;
			uint64_t which = r_.below(3);
			if (which == 0)
				f.ddp_ctrl = ddp | int(r_.range(1, 15) << 2);
			else if (which == 1)
				f.rdmap_ctrl = rdmap | int(r_.range(1, 3) << 4);
			else if (!oi->tagged && !oi->inval_stag)
				f.inv = Ref::abs(uint32_t(r_.next()));
			else
				f.ddp_ctrl = ddp | int(r_.range(1, 15) << 2);
		} else {
			// Any header bit: the outcome depends on the field.
			e = Expect::May;
			f.flips.emplace_back(uint32_t(MPA_HDR_LEN + r_.below(oi->hdr_len)),
					     uint8_t(1u << r_.below(8)));
		}
	} else if (name == "atomic") {
		need_read();
		f.op = RDMAP_OP_ATOMIC_REQ;
		f.qn = RDMAP_QN_READ_REQ;
		f.msn = msn_read_++;
		reads_++;
		f.aop = r_.chance(0.8) ? (r_.chance(0.5) ? RDMAP_ATOMIC_FETCHADD : RDMAP_ATOMIC_CMPSWAP)
				       : uint8_t(r_.below(16));
		f.stag = Ref::rel(kRw, 0);
		f.to = Ref::rel(kRw, r_.below(65536 / 8) * 8 + (r_.chance(0.8) ? 0 : r_.range(1, 7)));
		f.req_id = uint32_t(r_.next());
		f.adata = r_.next();
	} else if (name == "readresp") {
		f.op = RDMAP_OP_READ_RESP;
		f.stag = Ref::abs(uint32_t(r_.next()));
		f.to = Ref::abs(r_.next());
		f.last = r_.chance(0.5);
		pay(f, size(seg_max_));
	} else if (name == "imm") {
		need_recv();
		f.op = r_.chance(0.5) ? RDMAP_OP_IMM_DATA : RDMAP_OP_IMM_DATA_SE;
		f.qn = RDMAP_QN_SEND;
		f.msn = msn_send_++;
		sends_++;
		f.imm = r_.next();
	} else if (name == "term.msn") {
		f.op = RDMAP_OP_TERMINATE;
		f.qn = RDMAP_QN_TERMINATE;
		f.msn = uint32_t(r_.range(2, 1000));
		f.term = { TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OPERATION, RDMAP_ECODE_UNSPECIFIED };
	} else {
		// Mistakes in the octets: the model of the target's deframer
		// decides what they break.
		e = Expect::Model;
		f = base_frame(name == "marker" ? 520 : 0);
		uint32_t ul = ulpdu(f), pad = xiw_mpa_pad_len(ul);
		uint32_t logical = MPA_HDR_LEN + ul + pad + MPA_CRC_LEN;
		if (name == "crc") {
			f.flips.emplace_back(logical - MPA_CRC_LEN + uint32_t(r_.below(4)),
					     uint8_t(r_.range(1, 255)));
		} else if (name == "pad" && pad) {
			f.flips.emplace_back(MPA_HDR_LEN + ul + uint32_t(r_.below(pad)), uint8_t(r_.range(1, 255)));
		} else if (name == "payload" && f.len) {
			f.flips.emplace_back(MPA_HDR_LEN + ul - f.len + uint32_t(r_.below(f.len)),
					     uint8_t(r_.range(1, 255)));
		} else if (name == "trunc") {
			f.trunc = int(r_.below(logical));
		} else if (name == "garbage") {
			f.garb_len = uint32_t(r_.range(1, 64));
			f.garb_seed = uint32_t(r_.next());
		} else if (name == "marker") {
			f.mflips.emplace_back(uint32_t(r_.below(4)), uint8_t(r_.range(1, 255)));
		} else {
			name = "len";
			uint32_t v;
			do
				v = r_.chance(0.6) ? uint32_t(ul + r_.range(1, 8) - (r_.chance(0.5) ? 9 : 0))
						   : uint32_t(r_.below(65536));
			while ((v & 0xffff) == ul);
			f.ulpdu_len = int(v & 0xffff);
		}
	}
	f.mut = name;
	f.expect = e;
	emit(f);
	flush();
	return resolve(f, s_.model()) != Expect::None;
}

// After a mutation that broke the framing without an error the target's
// deframer sees (a longer ULPDU_Length, cut or extra octets, CRC off),
// the target waits for the rest of a frame: more octets make it decide.
void Gen::after_mutation()
{
	uint64_t filler = 0;

	while (!over_ && s_.model() == ModelState::Desync && filler < (1 << 17)) {
		uint32_t len = size(seg_max_);
		emit(write_seg(Ref::rel(kRw, 0), Ref::rel(kRw, in_region(len)), len));
		filler += len + DDP_TAGGED_HDR_LEN;
	}
	flush();
	s_.end(End::Wait);
}

void Gen::ending()
{
	uint64_t w = r_.below(100);
	End e = w < 40 ? End::Fin : w < 60 ? End::Disconnect : w < 75 ? End::PeerTerm : End::Abort;

	if (e == End::PeerTerm) {
		static const xiw_term_code codes[] = {
			{ TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OPERATION, RDMAP_ECODE_UNSPECIFIED },
			{ TERM_LAYER_RDMAP, RDMAP_ETYPE_CATASTROPHIC, RDMAP_ECODE_UNSPECIFIED },
			{ TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED_BUF, DDP_ECODE_UT_INVALID_MSN_NOBUF },
			{ TERM_LAYER_LLP, LLP_ETYPE_MPA, LLP_ECODE_CRC },
		};
		FrameRec f;
		f.op = RDMAP_OP_TERMINATE;
		f.qn = RDMAP_QN_TERMINATE;
		f.msn = 1;
		f.term = codes[r_.below(std::size(codes))];
		emit(f);
	}
	if (e == End::Abort && s_.pending() > 1 && r_.chance(0.5)) {
		// Reset in the middle of a frame.
		if (!over_)
			over_ = !s_.write({ uint32_t(r_.range(1, s_.pending() - 1)) });
	} else {
		flush();
	}
	if ((e == End::Fin || e == End::Disconnect) && reads_ > reads_done_ && !over_)
		over_ = !s_.reads(reads_);
	// The target's disconnect may overtake Sends still in its socket.
	if (e == End::Disconnect && sends_ > recvs_done_ && !over_)
		over_ = !s_.sync(sends_);
	// After our TERMINATE the target may reset while we still write.
	s_.end(over_ && e != End::PeerTerm ? End::Wait : e);
}

void Gen::run()
{
	uint64_t budget = r_.range(1, std::max<uint64_t>(1, cfg_.frames));

	if (a_.p2p) {
		if (r_.chance(std::min(1.0, cfg_.mutate * 20))) {
			// Anything but the agreed RTR first (RFC 6581 sec 5).
			FrameRec f = write_seg(Ref::rel(kRw, 0), Ref::rel(kRw, in_region(64)), 64);
			f.mut = "rtr.wrong";
			f.expect = Expect::Must;
			emit(f);
			flush();
			after_mutation();
			return;
		}
		rtr();
	}
	while (!over_ && frames_ < budget && !(cfg_.stop && cfg_.stop(frames_))) {
		if (r_.chance(cfg_.mutate)) {
			if (mutate()) {
				after_mutation();
				return;
			}
			continue;
		}
		valid_op();
	}
	if (over_) {
		s_.end(End::Wait);
		return;
	}
	ending();
}

} // namespace

void generate(Rng &rng, const ConnParams &p, const Agreed &a, const GenConfig &cfg, Sink &sink)
{
	Gen g(rng, p, a, cfg, sink);
	g.run();
}

// ---------------------------------------------------------------------
// The executor: a connection to xiw-target, run and judged

namespace {

struct RunOpts {
	std::string target;
	std::vector<std::string> addrs, markers_addrs;
	uint16_t port = 18700;
	double hang = 20;	// seconds without progress that make a hang
	bool verbose = false;
};

// What one connection came to.
struct Outcome {
	std::string finding;	// empty: none
	std::string ending;	// terminate, close, reset, abort
	bool term = false;
	xiw_term_code tc = {};
	std::string mut;	// the mutation that ended the valid stream
	uint64_t frames = 0, mutated = 0, octets = 0;
	bool target_broken = false;	// it must be restarted
	double t_open = 0, t_run = 0, t_end = 0;	// seconds: setup, stream, end and close
	uint64_t sends = 0, syncs = 0, waits = 0;	// send() calls, receive syncs, Read waits
	double t_sync = 0, t_wait = 0;	// seconds in them
	End end = End::Wait;
};

// A Read Response we wait for.
struct ReadExp {
	uint32_t sink_stag = 0, size = 0;
	uint64_t sink_to = 0;
	int64_t rw_off = -1;	// source offset in rw, -1: not rw
	Bytes data;		// the octets it must carry, when @verify
	bool verify = false;
	bool lenient = false;	// its request was mutated: take what comes
	uint32_t got = 0;
};

const char *op_name(uint8_t op)
{
	const xiw_rdmap_opinfo *oi = xiw_rdmap_op_lookup(op);
	return oi ? oi->name : "reserved opcode";
}

class Runner : public Sink {
public:
	Runner(Target &t, const RunOpts &o, const std::string &addr, Scenario &rec)
		: t_(t), o_(o), addr_(addr), rec_(rec), shadow_(65536)
	{
	}

	bool open(const ConnParams &p, Agreed &a);
	bool frame(const FrameRec &f) override;
	bool write(const std::vector<uint32_t> &chunks) override;
	bool sync(uint64_t min) override;
	bool reads(uint64_t n) override;
	void end(End e) override;
	size_t pending() const override { return pending_.size() - pend_off_; }
	ModelState model() const override { return enc_ ? enc_->model() : ModelState::InSync; }

	Outcome &outcome() { return out_; }
	const Bytes &sent() const { return sent_; }
	bool ended() const { return ended_; }

private:
	Target &t_;
	const RunOpts &o_;
	std::string addr_;
	Scenario &rec_;
	Conn c_;
	std::optional<Encoder> enc_;
	Regions g_;
	Bytes pending_;
	size_t pend_off_ = 0;
	Bytes sent_;			// every octet written, MPA Request first
	uint64_t encoded_ = 0, written_ = 0;	// FPDU stream octets
	Expect exp_ = Expect::None;	// what the stream so far needs
	bool exact_ = false;	// it ended with a mistake the target sees at once
	uint64_t mut_at_ = UINT64_MAX;	// stream offset of that mistake
	bool over_ = false, term_ = false, eof_ = false, ended_ = false;
	bool closing_ = false;	// we asked for the close
	bool peer_term_ = false;	// we sent a TERMINATE
	bool rtr_ = false;	// the next frame is the P2P RTR
	bool need_established_ = false;	// ask for ESTABLISHED once the RTR is out
	Bytes shadow_;		// what rw holds
	std::deque<ReadExp> reads_;
	uint64_t reads_done_ = 0, valid_sends_ = 0;
	Outcome out_;
	Clock::time_point t0_;

	void finding(const std::string &why)
	{
		if (out_.finding.empty())
			out_.finding = why;
		over_ = true;
	}

	std::string after() const { return "after " + out_.mut + " (" + expect_name(exp_) + ")"; }
	void service(double timeout);
	void handle(const Segment &s);
	void read_resp(const Segment &s);
	bool wait(const std::function<bool()> &done, double secs);
	void track(const FrameRec &f);
	void judge_wait();
	void finish(End e);
	void target_failed(const Failure &f)
	{
		finding(std::string("xiw-target: ") + f.what());
		out_.target_broken = true;
	}
};

bool Runner::open(const ConnParams &p, Agreed &a)
{
	rec_.p = p;
	t0_ = Clock::now();
	try {
		c_.connect(addr_, o_.port, o_.hang);
		xiw_mpa_frame req = {};
		req.rev = p.rev;
		req.enhanced = p.rev == 2;
		req.crc = p.crc;
		req.markers = p.markers_rx;
		req.p2p = p.p2p;
		req.rtr = p.rtr;
		req.ird = p.ird;
		req.ord = p.ord;
		sent_ = Conn::mpa_frame(req);
		if (!c_.write(sent_))
			throw Failure("connection lost sending the MPA Request");
		Reply r = t_.must(fmt("accept serve=1 recvs=%u rlen=%u ird=%u ord=%u timeout=%g", p.recvs,
				      p.rlen, p.t_ird, p.t_ord, o_.hang), o_.hang + 20);
		for (int i = 0; i < kNumRegions; i++) {
			const std::string &v = r.at(kRegionNames[i]);
			g_.stag[i] = uint32_t(std::stoul(v.substr(0, v.find(':')), nullptr, 16));
			g_.base[i] = std::stoull(v.substr(v.find(':') + 1), nullptr, 16);
		}
		g_.len = std::stoull(r.at("len"));
		rec_.regions = g_;
		MpaIn m = c_.read_mpa(o_.hang);
		if (m.result != MpaResult::Frame || !m.frame.reply || m.frame.reject)
			throw Failure(fmt("no accepting MPA Reply (result %d, %s)", int(m.result),
					  xiw_proto_err_name(m.err)));
		const xiw_mpa_frame &f = m.frame;
		a.crc = req.crc || f.crc;
		a.markers_tx = f.markers;
		a.p2p = f.p2p;
		a.rtr = f.rtr;
		uint16_t ird = f.enhanced ? f.ird : p.t_ird;
		a.ord = std::max<uint16_t>(1, std::min(p.ord, ird));
		c_.start_fpdus(a.crc, f.markers, req.markers && f.markers);
		enc_.emplace(a.crc, f.markers);
		if (a.p2p)
			rtr_ = need_established_ = true;
		else
			t_.must("established", o_.hang + 20);
		out_.t_open = secs_since(t0_);
		t0_ = Clock::now();
		return true;
	} catch (const Failure &e) {
		finding(std::string("connection setup: ") + e.what());
		ended_ = true;
		try {
			t_.cmd("close", o_.hang + 30);
		} catch (const Failure &) {
			out_.target_broken = true;
		}
		return false;
	}
}

void Runner::service(double timeout)
{
	if (eof_)
		return;
	c_.pump(timeout);
	while (auto s = c_.take())
		handle(*s);
	if (c_.rx_error())
		finding(std::string("the target's stream does not deframe: ") +
			xiw_proto_err_name(c_.rx_error()));
	if (c_.closed()) {
		eof_ = true;
		over_ = true;
		if (exp_ == Expect::None && !term_ && !closing_ && !peer_term_)
			finding(std::string("the target ") + (c_.reset() ? "reset" : "closed") +
				" a valid connection without a TERMINATE");
	}
}

void Runner::handle(const Segment &s)
{
	if (term_) {
		finding(fmt("%s from the target after its TERMINATE", op_name(s.hdr.opcode)));
		return;
	}
	if (s.hdr.opcode == RDMAP_OP_READ_RESP && s.hdr.tagged) {
		read_resp(s);
		return;
	}
	if (s.hdr.opcode != RDMAP_OP_TERMINATE) {
		finding(fmt("unexpected %s from the target", op_name(s.hdr.opcode)));
		return;
	}
	term_ = true;
	over_ = true;
	out_.term = true;
	Bytes body(s.raw_hdr.begin() + std::min<size_t>(s.raw_hdr.size(), DDP_UNTAGGED_HDR_LEN),
		   s.raw_hdr.end());
	body.insert(body.end(), s.payload.begin(), s.payload.end());
	xiw_term t;
	if (body.size() < RDMAP_TERM_CTRL_LEN || xiw_term_parse(body.data(), body.size(), &t)) {
		finding("a malformed TERMINATE: " + hex(body.data(), std::min<size_t>(body.size(), 48)));
		return;
	}
	out_.tc = t.ctrl.code;
	if (peer_term_)
		finding("a TERMINATE " + term_str(t.ctrl.code) + " in answer to ours");
	else if (exp_ == Expect::None)
		finding("TERMINATE " + term_str(t.ctrl.code) + " on a valid stream");
	else if (written_ <= mut_at_)
		finding("TERMINATE " + term_str(t.ctrl.code) + " before the mutated frame was sent");
}

void Runner::read_resp(const Segment &s)
{
	if (reads_.empty()) {
		// Out of step, the target may have read a Read Request out of
		// the octets of other frames: its answer goes anywhere.
		if (exp_ != Expect::May)
			finding(fmt("a Read Response (STag 0x%08x TO 0x%" PRIx64
				    ") with no Read Request outstanding", s.hdr.stag, s.hdr.to));
		return;
	}
	ReadExp &r = reads_.front();
	size_t n = s.payload.size();
	if (!r.lenient) {
		if (s.hdr.stag != r.sink_stag || s.hdr.to != r.sink_to + r.got)
			return finding(fmt("Read Response to STag 0x%08x TO 0x%" PRIx64 ", asked for 0x%08x TO 0x%" PRIx64,
					   s.hdr.stag, s.hdr.to, r.sink_stag, r.sink_to + r.got));
		if (r.got + n > r.size)
			return finding(fmt("Read Response of %zu octets more than the %u asked for",
					   r.got + n - r.size, r.size));
		if (r.verify && n && memcmp(s.payload.data(), r.data.data() + r.got, n)) {
			size_t i = 0;
			while (s.payload[i] == r.data[r.got + i])
				i++;
			return finding(fmt("Read Response data differs at octet %zu of %u (0x%02x, not 0x%02x)",
					   r.got + i, r.size, s.payload[i], r.data[r.got + i]));
		}
	}
	r.got += uint32_t(n);
	if (!s.hdr.last)
		return;
	if (!r.lenient && r.got != r.size)
		return finding(fmt("Read Response ended after %u of %u octets", r.got, r.size));
	reads_.pop_front();
	reads_done_++;
}

bool Runner::wait(const std::function<bool()> &done, double secs)
{
	auto start = Clock::now();
	while (!done()) {
		double left = secs - secs_since(start);
		if (left <= 0 || eof_)
			return done();
		service(std::min(left, 0.5));
	}
	return true;
}

void Runner::track(const FrameRec &f)
{
	if (rtr_) {
		rtr_ = false;	// the RTR: a Send of it takes no receive
		if (f.op != RDMAP_OP_READ_REQ)
			return;
	}
	switch (f.op) {
	case RDMAP_OP_SEND:
	case RDMAP_OP_SEND_SE:
		if (f.last)
			valid_sends_++;
		break;
	case RDMAP_OP_WRITE:
		if (f.stag == Ref::rel(kRw, 0) && f.to.region == kRw && f.len) {
			Bytes b = payload(f);
			std::copy(b.begin(), b.end(), shadow_.begin() + int64_t(f.to.v));
			// A Write after a Read Request may be placed before the
			// response is read from the region (RFC 5040 sec 5.5).
			for (ReadExp &r : reads_)
				if (r.rw_off >= 0 && uint64_t(r.rw_off) < f.to.v + f.len &&
				    f.to.v < uint64_t(r.rw_off) + r.size)
					r.verify = false;
		}
		break;
	case RDMAP_OP_READ_REQ: {
		ReadExp r;
		r.sink_stag = f.sink_stag;
		r.sink_to = f.sink_to;
		r.size = f.size;
		if (f.size && f.src_stag == Ref::rel(kRw, 0) && f.src_to.region == kRw) {
			r.rw_off = int64_t(f.src_to.v);
			r.data.assign(shadow_.begin() + r.rw_off, shadow_.begin() + r.rw_off + f.size);
			r.verify = true;
		} else if (f.size && f.src_stag == Ref::rel(kRo, 0) && f.src_to.region == kRo) {
			r.data.resize(f.size);
			pattern_fill(r.data.data(), f.size, kRoSeed, f.src_to.v);
			r.verify = true;
		}
		reads_.push_back(std::move(r));
		break;
	}
	default:
		break;
	}
}

bool Runner::frame(const FrameRec &f)
{
	Op op;
	op.f = f;
	rec_.ops.push_back(std::move(op));
	if (over_)
		return false;
	uint64_t at = encoded_;
	Bytes b = enc_->encode(f, g_);
	encoded_ += b.size();
	out_.frames++;
	if (!f.mut.empty())
		out_.mutated++;
	if (f.op == RDMAP_OP_TERMINATE && f.mut.empty())
		peer_term_ = true;

	ModelState m = enc_->model();
	if (m == ModelState::Desync && f.expect == Expect::None && exp_ == Expect::None)
		throw Failure("generator: a valid frame does not deframe as sent");
	Expect e = resolve(f, m);
	if (e != Expect::None && exp_ == Expect::None) {
		mut_at_ = at;
		out_.mut = f.mut.empty() ? "?" : f.mut;
		exact_ = e == Expect::Must && f.expect == Expect::Must;
	}
	if (e > exp_)
		exp_ = e;
	if (e == Expect::None && exp_ == Expect::None) {
		track(f);
	} else if (f.op == RDMAP_OP_READ_REQ && (e == Expect::May || f.garb_len)) {
		// It may be answered: whole, followed by garbage the target
		// fails on only after it has queued the Read; or read out of
		// step.  Take the answer, whatever it is.
		track(f);
		reads_.back().lenient = true;
	}
	if (pend_off_ == pending_.size()) {
		pending_.clear();
		pend_off_ = 0;
	}
	pending_.insert(pending_.end(), b.begin(), b.end());
	return true;
}

bool Runner::write(const std::vector<uint32_t> &chunks)
{
	Op op;
	op.kind = Op::Write;
	op.chunks = chunks;
	rec_.ops.push_back(std::move(op));
	for (uint32_t chunk : chunks) {
		if (over_)
			return false;
		if (chunk > pending())
			throw Failure("generator: a write beyond the octets framed");
		const uint8_t *p = pending_.data() + pend_off_;
		size_t left = chunk;
		auto progress = Clock::now();
		while (left) {
			ssize_t n = c_.send_some(p, left);
			out_.sends++;
			if (n > 0) {
				sent_.insert(sent_.end(), p, p + n);
				p += n;
				left -= size_t(n);
				pend_off_ += size_t(n);
				written_ += uint64_t(n);
				progress = Clock::now();
				continue;
			}
			if (n < 0) {
				// Reset: read what came before it.
				wait([this] { return eof_; }, 2);
				eof_ = over_ = true;
				if (exp_ == Expect::None && !term_ && !peer_term_)
					finding("the target reset a valid connection without a TERMINATE");
				return false;
			}
			pollfd pf = { c_.fd(), POLLOUT | POLLIN, 0 };
			poll(&pf, 1, 100);
			if (pf.revents & (POLLIN | POLLHUP | POLLERR))
				service(0);
			if (over_)
				return false;
			if (secs_since(progress) > o_.hang) {
				finding(fmt("hang: the target took no octet for %g s (its window stays shut)",
					    o_.hang));
				return false;
			}
		}
	}
	service(0);
	if (need_established_ && !over_ && exp_ == Expect::None) {
		// The RTR went out: the responder's ULP sees the connection now.
		need_established_ = false;
		try {
			Reply r = t_.cmd("established", o_.hang + 20);
			if (!r.ok) {
				service(0.5);
				if (!over_)
					finding("the target's ULP saw no ESTABLISHED after the RTR: " + r.line);
			}
		} catch (const Failure &f) {
			target_failed(f);
		}
	}
	return !over_;
}

bool Runner::sync(uint64_t min)
{
	Op op;
	op.kind = Op::Sync;
	op.n = min;
	rec_.ops.push_back(std::move(op));
	if (over_)
		return false;
	auto t0 = Clock::now();
	try {
		Reply r = t_.cmd(fmt("served min=%" PRIu64 " timeout=%g", min, o_.hang), o_.hang + 20);
		out_.syncs++;
		out_.t_sync += secs_since(t0);
		if (r.ok)
			return true;
		service(0.5);
		if (!over_)
			finding(fmt("%" PRIu64 " receives wanted done, the target says: ", min) + r.line);
	} catch (const Failure &f) {
		target_failed(f);
	}
	return false;
}

bool Runner::reads(uint64_t n)
{
	Op op;
	op.kind = Op::Reads;
	op.n = n;
	rec_.ops.push_back(std::move(op));
	if (over_)
		return false;
	auto t0 = Clock::now();
	bool done = wait([this, n] { return reads_done_ >= n; }, o_.hang);
	out_.waits++;
	out_.t_wait += secs_since(t0);
	if (!done && !over_)
		finding(fmt("hang: %" PRIu64 " of %" PRIu64 " Read Responses in after %g s", reads_done_, n,
			    o_.hang));
	return !over_;
}

void Runner::judge_wait()
{
	if (exp_ == Expect::None)
		return;		// ended by a finding or by the target already judged
	if (exp_ == Expect::Must) {
		if (!term_)
			wait([this] { return term_ || eof_; }, o_.hang);
		if (!term_) {
			if (eof_)
				finding(std::string("the target ") + (c_.reset() ? "reset" : "closed") +
					" the connection without the TERMINATE due " + after());
			else
				finding(fmt("hang: no TERMINATE %g s ", o_.hang) + after());
			return;
		}
	} else {
		wait([this] { return term_ || eof_; }, 1);
		if (!term_ && !eof_) {
			closing_ = true;
			c_.shutdown_write();
			if (!wait([this] { return term_ || eof_; }, o_.hang)) {
				finding(fmt("hang: no TERMINATE and no close %g s ", o_.hang) + after() +
					" and our FIN");
				return;
			}
		}
	}
	if (term_ && !wait([this] { return eof_; }, o_.hang))
		finding(fmt("hang: no close %g s after the TERMINATE ", o_.hang) + after());
}

void Runner::end(End e)
{
	Op op;
	op.kind = Op::Finish;
	op.end = e;
	rec_.ops.push_back(std::move(op));
	ended_ = true;
	out_.end = e;
	out_.t_run = secs_since(t0_);
	t0_ = Clock::now();
	switch (e) {
	case End::Wait:
		judge_wait();
		break;
	case End::Fin:
		closing_ = true;
		c_.shutdown_write();
		if (!wait([this] { return eof_; }, o_.hang) && !over_)
			finding(fmt("hang: no close %g s after our FIN", o_.hang));
		else if (c_.reset() && out_.finding.empty())
			finding("the target reset the connection we closed in order");
		break;
	case End::Disconnect:
		closing_ = true;
		try {
			Reply r = t_.cmd("disconnect", o_.hang + 20);
			if (!r.ok)
				finding("xiw-target disconnect: " + r.line);
		} catch (const Failure &f) {
			target_failed(f);
		}
		if (!wait([this] { return eof_; }, o_.hang) && !over_)
			finding(fmt("hang: no close %g s after the target's disconnect", o_.hang));
		break;
	case End::PeerTerm:
		if (!wait([this] { return eof_; }, o_.hang) && !over_)
			finding(fmt("hang: no close %g s after our TERMINATE", o_.hang));
		break;
	case End::Abort:
		closing_ = true;
		c_.abort();
		break;
	}
	out_.ending = e == End::Abort ? "abort" : term_ ? "terminate" : !eof_ ? "open" :
		      c_.reset() ? "reset" : "close";
	finish(e);
}

// The target's side: every valid Send completed one receive, and the
// connection closes (its QP is destroyed, its MRs deregistered).
void Runner::finish(End e)
{
	out_.octets = sent_.size();
	if (out_.target_broken) {
		c_.abort();
		return;
	}
	try {
		uint64_t min = e == End::Abort ? 0 : valid_sends_;
		Reply r = t_.cmd(fmt("served min=%" PRIu64 " timeout=%g", min, o_.hang), o_.hang + 20);
		uint64_t k = r.kv.count("recvs") ? std::stoull(r.kv["recvs"]) : 0;
		bool bad;
		if (e == End::Abort)
			bad = k > valid_sends_;
		else if (exp_ == Expect::None || exact_)
			bad = k != valid_sends_;
		else
			bad = k < valid_sends_;
		if (bad && out_.finding.empty())
			finding(fmt("%" PRIu64 " receives completed for %" PRIu64 " valid Sends (%s)", k,
				    valid_sends_, r.line.c_str()));
		Reply c = t_.cmd("close", o_.hang + 30);
		if (!c.ok) {
			finding("xiw-target close: " + c.line);
			out_.target_broken = true;
		}
	} catch (const Failure &f) {
		target_failed(f);
	}
	c_.abort();
	out_.t_end = secs_since(t0_);
}

// ---------------------------------------------------------------------
// The subcommands

const char kSynopsis[] =
	"usage: xiw-peer fuzz --target PATH --addr ADDR... [--markers-addr ADDR...] [--port P]\n"
	"                     [--seed N] [--frames N] [--time S] [--conns N] [--first-conn N]\n"
	"                     [--mutate P] [--conn-frames N] [--hang-timeout S]\n"
	"                     [--save-dir DIR] [--keep-every N --keep-dir DIR] [--verbose]\n"
	"       xiw-peer replay --target PATH --addr ADDR... [--markers-addr ADDR...]\n"
	"                       [--port P] [--hang-timeout S] FILE...\n";

const char kHelp[] =
	"NAME\n"
	"    xiw-peer fuzz, xiw-peer replay - random FPDU streams against live\n"
	"    QPs, and the connections that showed a bug run again\n"
	"\n"
	"SYNOPSIS\n"
	"    xiw-peer fuzz --target PATH --addr ADDR... [--markers-addr ADDR...]\n"
	"                  [--port P] [--seed N] [--frames N] [--time S]\n"
	"                  [--conns N] [--first-conn N] [--mutate P]\n"
	"                  [--conn-frames N] [--hang-timeout S] [--save-dir DIR]\n"
	"                  [--keep-every N --keep-dir DIR] [--verbose]\n"
	"    xiw-peer replay --target PATH --addr ADDR... [--markers-addr ADDR...]\n"
	"                    [--port P] [--hang-timeout S] FILE...\n"
	"\n"
	"DESCRIPTION\n"
	"    fuzz starts PATH (xiw-target) on each address and connects to them\n"
	"    again and again with real MPA (revision 1 and 2, CRC on and off,\n"
	"    markers, P2P), each connection drawn from the seed: mostly valid\n"
	"    frames (Sends into the posted receives, Writes and Read Requests\n"
	"    within the advertised regions), then one mutated frame and the\n"
	"    target's TERMINATE, or an orderly end.  A connection without its\n"
	"    TERMINATE, with one it should not get, with wrong Read Response\n"
	"    data or receive completions, one in which the target makes no\n"
	"    progress for the hang timeout, and a target that dies or cannot\n"
	"    close it, are findings.  Prints the seed first and a summary last:\n"
	"    frames, connections, how they ended, the TERMINATEs seen per\n"
	"    mutation, the findings, frames/s.\n"
	"    replay runs saved connections (scenario files) again against a new\n"
	"    target and prints KTAP: ok when no finding shows.\n"
	"\n"
	"OPTIONS\n"
	"    --target PATH       the xiw-target binary to start\n"
	"    --addr ADDR         an address of a device with MPA markers off\n"
	"                        (IPv4 or IPv6 literal); more than one allowed\n"
	"    --markers-addr ADDR an address of a device with mpa_markers=prefer\n"
	"    --port P            xiw-target's port, 1..65535 (default 18700)\n"
	"    --seed N            the run's seed (default: from the clock)\n"
	"    --frames N          stop after N frames, 1..10^12 (default 100000)\n"
	"    --time S            or after S seconds, 0..604800 (0: no limit)\n"
	"    --conns N           or after N connections (0: no limit)\n"
	"    --first-conn N      start at connection N of the seed (to repeat it)\n"
	"    --mutate P          chance of each frame being the mutated one,\n"
	"                        0..1 (default 0.002)\n"
	"    --conn-frames N     frames of a connection at most, drawn from 1..N\n"
	"                        (default 2000)\n"
	"    --hang-timeout S    seconds without progress that are a hang,\n"
	"                        1..3600 (default 20)\n"
	"    --save-dir DIR      save each finding's connection there: NAME.scn\n"
	"                        (for replay) and NAME.bin (the octets sent)\n"
	"    --keep-every N --keep-dir DIR\n"
	"                        save every Nth connection there too\n"
	"    --verbose           a line for every connection\n"
	"    -h, --help          this text\n"
	"\n"
	"EXIT STATUS\n"
	"    0 no finding, 1 findings (replay: a scenario showed one, or could\n"
	"    not be read), 2 bad usage\n";

const xiw::cli::Usage kFuzzUsage = { "xiw-peer fuzz", kSynopsis, kHelp };
const xiw::cli::Usage kReplayUsage = { "xiw-peer replay", kSynopsis, kHelp };

struct FuzzOpts {
	RunOpts run;
	uint64_t seed = 0;
	bool seeded = false;
	uint64_t frames = 100000, conns = 0, first = 0;
	double time = 0;
	GenConfig gen;
	std::string save_dir;	// connections with a finding
	uint64_t keep_every = 0;	// and every Nth connection, finding or not,
	std::string keep_dir;	// there
};

// The options of fuzz or of @replay; returns the index of replay's
// first FILE.  A bad command line exits (2).
int parse_opts(int argc, char **argv, FuzzOpts &o, bool replay)
{
	using xiw::cli::uint_opt;
	using xiw::cli::usage_error;
	const xiw::cli::Usage &u = replay ? kReplayUsage : kFuzzUsage;
	int i = 1;

	for (; i < argc; i++) {
		std::string a = argv[i];
		if (a == "-h" || a == "--help")
			xiw::cli::help(u);
		if (a.rfind("--", 0))
			break;
		if (a == "--verbose" && !replay) {
			o.run.verbose = true;
			continue;
		}
		auto val = [&]() -> const char * {
			if (i + 1 >= argc)
				usage_error(u, a + " needs a value");
			return argv[++i];
		};
		if (a == "--target")
			o.run.target = val();
		else if (a == "--addr")
			o.run.addrs.push_back(val());
		else if (a == "--markers-addr")
			o.run.markers_addrs.push_back(val());
		else if (a == "--port")
			o.run.port = uint16_t(uint_opt(u, "--port", val(), 1, 65535));
		else if (a == "--hang-timeout")
			o.run.hang = xiw::cli::secs_opt(u, "--hang-timeout", val(), 1, 3600);
		else if (replay)
			usage_error(u, "unknown option '" + a + "'");
		else if (a == "--seed")
			o.seed = uint_opt(u, "--seed", val(), 0, UINT64_MAX), o.seeded = true;
		else if (a == "--frames")
			o.frames = uint_opt(u, "--frames", val(), 1, 1000000000000ull);
		else if (a == "--conns")
			o.conns = uint_opt(u, "--conns", val(), 0, UINT64_MAX);
		else if (a == "--first-conn")
			o.first = uint_opt(u, "--first-conn", val(), 0, UINT64_MAX / 2);
		else if (a == "--time")
			o.time = xiw::cli::secs_opt(u, "--time", val(), 0, 604800);
		else if (a == "--mutate") {
			const char *v = val();
			auto p = xiw::cli::parse_double(v, 0, 1);
			if (!p)
				usage_error(u, std::string("--mutate: '") + v + "' is not a chance in 0..1");
			o.gen.mutate = *p;
		} else if (a == "--conn-frames")
			o.gen.frames = uint_opt(u, "--conn-frames", val(), 1, 1000000000);
		else if (a == "--save-dir")
			o.save_dir = val();
		else if (a == "--keep-every")
			o.keep_every = uint_opt(u, "--keep-every", val(), 1, UINT64_MAX);
		else if (a == "--keep-dir")
			o.keep_dir = val();
		else
			usage_error(u, "unknown option '" + a + "'");
	}
	if (o.run.target.empty() || (o.run.addrs.empty() && o.run.markers_addrs.empty()))
		usage_error(u, "--target and an --addr or --markers-addr are needed");
	if (o.keep_dir.empty() != !o.keep_every)
		usage_error(u, "--keep-every and --keep-dir go together");
	if (replay && i == argc)
		usage_error(u, "no scenario FILE");
	if (!replay && i != argc)
		usage_error(u, std::string("unexpected argument '") + argv[i] + "'");
	return i;
}

// The xiw-target processes, one per address, restarted when they die.
struct Targets {
	struct One {
		std::string addr;
		bool markers;
		std::unique_ptr<Target> t;
	};
	std::vector<One> all;

	explicit Targets(const RunOpts &o)
	{
		for (auto &a : o.addrs)
			all.push_back({ a, false, nullptr });
		for (auto &a : o.markers_addrs)
			all.push_back({ a, true, nullptr });
	}

	Target &get(size_t i, const RunOpts &o)
	{
		if (!all[i].t) {
			all[i].t = std::make_unique<Target>();
			all[i].t->start(o.target, all[i].addr, o.port, o.hang);
		}
		return *all[i].t;
	}

	// The target's process, if it exited, and how.
	std::string died(size_t i)
	{
		std::string how;
		if (all[i].t && all[i].t->dead(how)) {
			all[i].t.reset();
			return how;
		}
		return "";
	}

	void restart(size_t i) { all[i].t.reset(); }
};

std::string save(const std::string &dir, const Scenario &s, const Bytes &sent)
{
	std::string base = dir + fmt("/fuzz-%" PRIu64 "-%" PRIu64, s.seed, s.conn);
	mkdir(dir.c_str(), 0755);
	std::ofstream(base + ".scn") << format_scenario(s);
	std::ofstream(base + ".bin", std::ios::binary)
		.write(reinterpret_cast<const char *>(sent.data()), std::streamsize(sent.size()));
	return base + ".scn";
}

// Run one connection: @gen draws it (fuzz) or @ops replays it.
Outcome run_conn(Targets &ts, size_t ti, const RunOpts &o, Scenario &rec, Rng *rng,
		 const GenConfig *gen, Bytes *sent)
{
	Outcome out;
	Target *t;
	try {
		t = &ts.get(ti, o);
	} catch (const Failure &f) {
		out.finding = std::string("xiw-target does not start: ") + f.what();
		out.target_broken = true;
		return out;
	}
	Runner r(*t, o, ts.all[ti].addr, rec);
	Agreed a;
	std::vector<Op> ops;
	if (!rng)
		ops.swap(rec.ops);	// the runner records them again as they run
	if (r.open(rec.p, a)) {
		if (rng) {
			generate(*rng, rec.p, a, *gen, r);
		} else {
			bool going = true;
			for (const Op &op : ops) {
				switch (op.kind) {
				case Op::Frame:
					going = going && r.frame(op.f);
					break;
				case Op::Write:
					going = going && r.write(op.chunks);
					break;
				case Op::Sync:
					going = going && r.sync(op.n);
					break;
				case Op::Reads:
					going = going && r.reads(op.n);
					break;
				case Op::Finish:
					r.end(op.end);
					break;
				}
			}
			if (!r.ended())
				r.end(End::Wait);
		}
	}
	out = r.outcome();
	std::string how = ts.died(ti);
	if (!how.empty()) {
		out.finding = "xiw-target died (" + how + ")" +
			      (out.finding.empty() ? "" : "; before that: " + out.finding);
		out.target_broken = true;
	}
	if (out.target_broken)
		ts.restart(ti);
	if (sent)
		*sent = r.sent();
	return out;
}

} // namespace

int fuzz_main(int argc, char **argv)
{
	FuzzOpts o;
	parse_opts(argc, argv, o, false);
	if (!o.seeded)
		o.seed = uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) % 1000000007;
	printf("# xiw-peer fuzz: seed %" PRIu64 ", %" PRIu64 " frames%s, mutate %g, hang timeout %g s\n",
	       o.seed, o.frames, o.time ? fmt(" or %g s", o.time).c_str() : "", o.gen.mutate, o.run.hang);
	fflush(stdout);

	Targets ts(o.run);
	auto start = Clock::now();
	auto last_note = start;
	uint64_t frames = 0, mutated = 0, octets = 0, conns = 0;
	std::map<std::string, uint64_t> endings, terms, muts;
	std::map<std::string, std::map<std::string, uint64_t>> mut_terms;
	std::vector<std::string> findings;
	bool timed_out = false;
	for (uint64_t ci = o.first; frames < o.frames; ci++) {
		if (o.conns && conns >= o.conns)
			break;
		if (o.time && secs_since(start) >= o.time) {
			timed_out = true;
			break;
		}
		Rng rng(conn_seed(o.seed, ci));
		size_t ti = size_t(rng.below(ts.all.size()));
		Scenario rec;
		rec.seed = o.seed;
		rec.conn = ci;
		rec.p = draw_params(rng, ts.all[ti].markers);
		GenConfig gen = o.gen;
		gen.stop = [&, before = frames](uint64_t f) {
			return before + f >= o.frames || (o.time && secs_since(start) >= o.time);
		};
		Bytes sent;
		Outcome out = run_conn(ts, ti, o.run, rec, &rng, &gen, &sent);
		conns++;
		frames += out.frames;
		mutated += out.mutated;
		octets += out.octets;
		endings[out.ending.empty() ? "setup" : out.ending]++;
		if (!out.mut.empty())
			muts[out.mut]++;
		if (out.term) {
			std::string tc = term_str(out.tc);
			terms[tc]++;
			mut_terms[out.mut.empty() ? "(none)" : out.mut][tc]++;
		}
		if (o.run.verbose)
			printf("# conn %" PRIu64 ": %s %s crc=%d markers=%d/%d p2p=%d: %" PRIu64
			       " frames %" PRIu64 " octets (%.2f+%.2f+%.2f s; %" PRIu64 " send() %" PRIu64
			       " syncs %.2f s %" PRIu64 " Read waits %.2f s), %s: %s%s%s%s\n",
			       ci, ts.all[ti].addr.c_str(), rec.p.rev == 1 ? "rev1" : "rev2", rec.p.crc,
			       rec.p.markers, rec.p.markers_rx, rec.p.p2p, out.frames, out.octets, out.t_open,
			       out.t_run, out.t_end, out.sends, out.syncs, out.t_sync, out.waits, out.t_wait,
			       end_name(out.end), out.ending.c_str(),
			       out.term ? (" " + term_str(out.tc)).c_str() : "",
			       out.mut.empty() ? "" : (" after " + out.mut).c_str(),
			       out.finding.empty() ? "" : (": FINDING " + out.finding).c_str());
		if (o.keep_every && ci % o.keep_every == 0 && out.finding.empty())
			save(o.keep_dir, rec, sent);
		if (!out.finding.empty()) {
			rec.finding = out.finding;
			std::string where = o.save_dir.empty() ? "" : " (saved " + save(o.save_dir, rec, sent) + ")";
			std::string line = fmt("conn %" PRIu64 ": ", ci) + out.finding + where;
			findings.push_back(line);
			printf("# FINDING %s\n", line.c_str());
		}
		if (secs_since(last_note) >= 60) {
			last_note = Clock::now();
			printf("# ... %" PRIu64 " frames, %" PRIu64 " connections, %.0f s\n", frames, conns,
			       secs_since(start));
		}
		fflush(stdout);
	}
	double secs = secs_since(start);
	printf("# seed %" PRIu64 ": %" PRIu64 " frames (%" PRIu64 " mutated) in %" PRIu64
	       " connections, %.1f MB, %.1f s, %.0f frames/s%s\n",
	       o.seed, frames, mutated, conns, double(octets) / 1e6, secs, secs > 0 ? double(frames) / secs : 0.0,
	       timed_out ? " (time limit)" : "");
	std::string line;
	for (auto &[k, n] : endings)
		line += fmt(" %s %" PRIu64, k.c_str(), n);
	printf("# endings:%s\n", line.c_str());
	line.clear();
	for (auto &[k, n] : terms)
		line += fmt(" %s x%" PRIu64, k.c_str(), n);
	printf("# TERMINATEs:%s\n", line.empty() ? " none" : line.c_str());
	for (auto &[m, n] : muts) {
		line.clear();
		for (auto &[k, c] : mut_terms[m])
			line += fmt(" %s x%" PRIu64, k.c_str(), c);
		printf("#   %-12s %5" PRIu64 ":%s\n", m.c_str(), n, line.empty() ? " no TERMINATE" : line.c_str());
	}
	printf("# findings: %zu\n", findings.size());
	for (auto &f : findings)
		printf("#   %s\n", f.c_str());
	printf("# frames %" PRIu64 " connections %" PRIu64 " findings %zu seconds %.1f\n", frames, conns,
	       findings.size(), secs);
	return findings.empty() ? 0 : 1;
}

int replay_main(int argc, char **argv)
{
	FuzzOpts o;
	int first = parse_opts(argc, argv, o, true);
	Targets ts(o.run);
	int n = 0, bad = 0, skipped = 0;
	printf("KTAP version 1\n1..%d\n", argc - first);
	for (int i = first; i < argc; i++) {
		n++;
		std::ifstream in(argv[i]);
		std::stringstream text;
		text << in.rdbuf();
		Scenario s;
		std::string err;
		if (!in || !parse_scenario(text.str(), s, err)) {
			printf("not ok %d %s # %s\n", n, argv[i], in ? err.c_str() : "cannot read it");
			bad++;
			continue;
		}
		size_t ti = ts.all.size();
		for (size_t k = 0; k < ts.all.size(); k++)
			if (ts.all[k].markers == s.p.markers)
				ti = k;
		if (ti == ts.all.size()) {
			printf("ok %d %s # SKIP needs %s\n", n, argv[i],
			       s.p.markers ? "--markers-addr (a device with mpa_markers=prefer)" : "--addr");
			skipped++;
			continue;
		}
		Outcome out = run_conn(ts, ti, o.run, s, nullptr, nullptr, nullptr);
		std::string what = out.ending + (out.term ? " " + term_str(out.tc) : "") +
				   (out.mut.empty() ? "" : " after " + out.mut);
		if (out.finding.empty()) {
			printf("ok %d %s # %" PRIu64 " frames, %s\n", n, argv[i], out.frames, what.c_str());
		} else {
			printf("not ok %d %s # %s\n", n, argv[i], out.finding.c_str());
			bad++;
		}
		fflush(stdout);
	}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n", n - bad - skipped, bad,
	       skipped);
	return bad ? 1 : 0;
}

} // namespace xiw::peer::fuzz
