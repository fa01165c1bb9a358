// SPDX-License-Identifier: GPL-2.0
//
// The context of xiw-peer's scenarios: connection setup, sending and the
// assertions (xiw_peer_scenario.h).

#include "xiw_peer_scenario.h"

#include "xiw_pattern.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>

namespace xiw::peer {

using namespace std::chrono_literals;

Bytes pattern(size_t n, uint32_t seed, uint64_t first)
{
	Bytes b(n);
	pattern_fill(b.data(), n, seed, first);
	return b;
}

xiw_term_code tc(uint8_t l, uint8_t t, uint8_t c)
{
	return { l, t, c };
}

Bytes Ctx::request(const ConnOpts &co)
{
	req = {};
	req.rev = co.rev;
	req.enhanced = co.enhanced && co.rev == 2;
	req.crc = co.crc;
	req.markers = co.markers;
	req.p2p = co.p2p;
	req.rtr = co.rtr;
	req.ird = co.ird;
	req.ord = co.ord;
	req.pdata = co.pdata.empty() ? nullptr : co.pdata.data();
	req.pdata_len = uint16_t(co.pdata.size());
	return Conn::mpa_frame(req);
}

void Ctx::tcp(const ConnOpts &co)
{
	c.connect(o_.addr, o_.port, o_.timeout, co.rcvbuf, co.mss);
}

void Ctx::target_accept(const ConnOpts &co)
{
	Reply r = t_.must(fmt("accept recvs=%d rlen=%d ird=%d ord=%d ", co.recvs, co.rlen,
			      co.t_ird, co.t_ord) + co.accept);
	for (const char *n : { "rw", "ro", "wo", "foreign", "dead" }) {
		const std::string &v = r.at(n);
		Region g;
		g.stag = uint32_t(std::stoul(v.substr(0, v.find(':')), nullptr, 16));
		g.base = std::stoull(v.substr(v.find(':') + 1), nullptr, 16);
		reg[n] = g;
	}
	target_pdata.clear();
	const std::string &pd = r.at("pdata");
	if (pd != "-")
		for (size_t i = 0; i + 1 < pd.size(); i += 2)
			target_pdata.push_back(uint8_t(std::stoul(pd.substr(i, 2), nullptr, 16)));
	recvs_left = co.recvs;
	rlen = co.rlen;
	next_recv = 0;
}

void Ctx::connect(const ConnOpts &co)
{
	tcp(co);
	if (!c.write(request(co)))
		throw Failure("connection lost sending the MPA Request");
	target_accept(co);
	reply = c.read_mpa(o_.timeout);
	if (reply.result != MpaResult::Frame)
		throw Failure(fmt("no MPA Reply (result %d, %s)", int(reply.result),
				  xiw_proto_err_name(reply.err)));
	const xiw_mpa_frame &f = reply.frame;
	if (!f.reply || f.reject)
		throw Failure("MPA Reply is not an accepting Reply");
	c.start_fpdus(req.crc || f.crc, f.markers, req.markers && f.markers);
	if (co.p2p)
		send_rtr(f.rtr);
	Reply e = t_.cmd("established");
	if (!e.ok)
		throw Failure("target not established: " + e.line);
}

void Ctx::send_rtr(uint8_t rtr)
{
	SegSpec s;
	if (rtr == XIW_MPA_RTR_WRITE) {
		s.hdr = tagged(RDMAP_OP_WRITE, 0, 0, true);
	} else if (rtr == XIW_MPA_RTR_READ) {
		s.hdr = untagged(RDMAP_OP_READ_REQ, RDMAP_QN_READ_REQ, c.next_msn(1), 0, true);
	} else if (rtr == XIW_MPA_RTR_SEND) {
		s.hdr = untagged(RDMAP_OP_SEND, RDMAP_QN_SEND, c.next_msn(0), 0, true);
	} else {
		throw Failure(fmt("Reply agreed no single RTR type (0x%x)", rtr));
	}
	send(s);
}


void Ctx::send(const SegSpec &s)
{
	if (!c.send(s))
		throw Failure("connection lost while sending");
}

SegSpec Ctx::send_seg(const Bytes &data, uint32_t msn, uint32_t mo, bool last, uint8_t op)
{
	SegSpec s;
	s.hdr = untagged(op, RDMAP_QN_SEND, msn, mo, last);
	s.payload = data;
	return s;
}

void Ctx::send_msg(const Bytes &data)
{
	send(send_seg(data, c.next_msn(0)));
}

SegSpec Ctx::write_seg(uint32_t stag, uint64_t to, const Bytes &data, bool last)
{
	SegSpec s;
	s.hdr = tagged(RDMAP_OP_WRITE, stag, to, last);
	s.payload = data;
	return s;
}

SegSpec Ctx::read_req(uint32_t src_stag, uint64_t src_to, uint32_t size, uint32_t msn)
{
	SegSpec s;
	s.hdr = untagged(RDMAP_OP_READ_REQ, RDMAP_QN_READ_REQ, msn, 0, true);
	s.hdr.u.read_req = { kPeerStag, kPeerTo, size, src_stag, src_to };
	return s;
}


Segment Ctx::recv(const char *what, double timeout)
{
	auto s = c.recv(timeout ? timeout : o_.timeout);
	if (!s)
		throw Failure(fmt("expected %s, got %s", what, lost().c_str()));
	return *s;
}

std::string Ctx::lost()
{
	if (c.rx_error())
		return std::string("a stream error ") + xiw_proto_err_name(c.rx_error());
	if (c.closed())
		return c.reset() ? "a reset" : "end of stream";
	return "nothing in time";
}

Bytes Ctx::recv_send(uint32_t msn)
{
	Bytes all;
	for (;;) {
		Segment s = recv("a Send");
		if (s.hdr.opcode != RDMAP_OP_SEND && s.hdr.opcode != RDMAP_OP_SEND_SE)
			throw Failure(fmt("expected a Send, got opcode 0x%x", s.hdr.opcode));
		if (s.hdr.qn != RDMAP_QN_SEND || s.hdr.msn != msn || s.hdr.mo != all.size())
			throw Failure(fmt("Send segment QN %u MSN %u MO %u, expected 0/%u/%zu",
					  s.hdr.qn, s.hdr.msn, s.hdr.mo, msn, all.size()));
		all.insert(all.end(), s.payload.begin(), s.payload.end());
		if (s.hdr.last)
			return all;
	}
}

xiw_term Ctx::expect_term(xiw_term_code want, const Bytes &bad)
{
	for (;;) {
		Segment s = recv(("TERMINATE " + term_str(want)).c_str());
		if (s.hdr.opcode != RDMAP_OP_TERMINATE)
			continue;
		if (s.hdr.tagged || s.hdr.qn != RDMAP_QN_TERMINATE || s.hdr.msn != 1 ||
		    s.hdr.mo || !s.hdr.last)
			throw Failure(fmt("TERMINATE DDP header QN %u MSN %u MO %u L %d",
					  s.hdr.qn, s.hdr.msn, s.hdr.mo, s.hdr.last));
		Bytes body(s.raw_hdr.begin() + DDP_UNTAGGED_HDR_LEN, s.raw_hdr.end());
		body.insert(body.end(), s.payload.begin(), s.payload.end());
		// The triplet first: it is what a failure report needs most.
		xiw_term_ctrl ctrl;
		xiw_term_ctrl_decode(body.data(), &ctrl);
		const xiw_term_code &g = ctrl.code;
		if (g.layer != want.layer || g.etype != want.etype || g.ecode != want.ecode)
			throw Failure("TERMINATE " + term_str(g) + ", expected " + term_str(want));
		xiw_term t;
		xiw_proto_err e = xiw_term_parse(body.data(), body.size(), &t);
		if (e)
			throw Failure(std::string("TERMINATE with the right triplet but a malformed body (") +
				      xiw_proto_err_name(e) + "): " +
				      hex(body.data(), std::min<size_t>(body.size(), 40)));
		// RFC 5040 sec 4.8: an error in a Read Request sends its
		// DDP header (D) and its RDMAP header (R) back, also where
		// the check waits for the segment's CRC.
		bool bad_read_req = bad.size() >= DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN &&
				    !(bad[0] & DDP_FLAG_T) &&
				    (bad[1] & RDMAP_OPCODE_MASK) == RDMAP_OP_READ_REQ;
		if (bad_read_req && want.layer != TERM_LAYER_LLP && (!t.ctrl.d || !t.ctrl.r))
			throw Failure(fmt("TERMINATE %s for a Read Request with D=%d R=%d, expected both",
					  term_str(g).c_str(), t.ctrl.d, t.ctrl.r));
		if (t.ctrl.d && !bad.empty()) {
			size_t n = t.ddp_hdr_len;
			if (bad.size() < n || memcmp(bad.data(), t.ddp_hdr, n))
				throw Failure("TERMINATE copied DDP header " + hex(t.ddp_hdr, n) +
					      ", sent " + hex(bad.data(), std::min(bad.size(), n)));
		}
		if (t.ctrl.r && bad.size() >= DDP_UNTAGGED_HDR_LEN + RDMAP_READ_REQ_LEN &&
		    memcmp(bad.data() + DDP_UNTAGGED_HDR_LEN, t.rdmap_hdr, RDMAP_READ_REQ_LEN))
			throw Failure("TERMINATE copied RDMAP header differs from the Read Request");
		return t;
	}
}

// The target's QP reaches @want within --timeout: what moves it (our
// TERMINATE, FIN or reset) may need TCP retransmissions to arrive.
void Ctx::expect_state(const std::string &want)
{
	auto end = std::chrono::steady_clock::now() +
		   std::chrono::duration<double>(o_.timeout);
	std::string got;
	for (;;) {
		Reply r = t_.must("state");
		got = r.at("state");
		if (got == want)
			return;
		if (std::chrono::steady_clock::now() >= end)
			break;
		std::this_thread::sleep_for(100ms);
	}
	throw Failure("target QP state " + got + ", expected " + want);
}


std::vector<Ctx::Wc> Ctx::poll(int n, double timeout)
{
	Reply r = t_.must(fmt("poll %d timeout=%g", n, timeout), timeout + 30);
	std::vector<Wc> v;
	for (size_t i = 2; i < r.words.size(); i++) {
		std::istringstream is(r.words[i]);
		std::string f[4];
		for (auto &x : f)
			std::getline(is, x, ':');
		v.push_back({ std::stoull(f[0]), f[1], f[2], uint32_t(std::stoul(f[3])) });
	}
	return v;
}

Ctx::Wc Ctx::expect_wc(const std::string &status, long len, const std::string &opcode)
{
	auto v = poll(1);
	if (v.empty())
		throw Failure("no completion, expected " + status);
	if (v[0].status != status || (len >= 0 && v[0].len != uint32_t(len)) ||
	    (!opcode.empty() && v[0].opcode != opcode))
		throw Failure(fmt("completion %s %s len %u, expected %s %s len %ld",
				  v[0].status.c_str(), v[0].opcode.c_str(), v[0].len,
				  status.c_str(), opcode.c_str(), len));
	if (v[0].opcode == "RECV" && v[0].status == "SUCCESS") {
		recvs_left--;
		next_recv++;
	}
	return v[0];
}

void Ctx::expect_no_wc()
{
	auto v = poll(1, 0.3);
	if (!v.empty())
		throw Failure("unexpected completion " + v[0].status + " " + v[0].opcode);
}

void Ctx::check(const std::string &region, uint64_t off, size_t len, uint32_t seed,
		uint64_t first)
{
	Reply r = t_.cmd(fmt("check %s %llu %zu %u first=%llu", region.c_str(),
			     (unsigned long long)off, len, seed, (unsigned long long)first));
	if (!r.ok)
		throw Failure("target " + region + fmt("+%llu: ", (unsigned long long)off) + r.line);
}

void Ctx::expect_dead()
{
	expect_state("ERR");
	int want = recvs_left;
	auto v = poll(want + 1, 2);
	int recv_errs = 0;
	for (auto &w : v) {
		if (w.status == "SUCCESS")
			throw Failure("successful completion after the TERMINATE (" + w.opcode + ")");
		if (w.id >= 1000)
			recv_errs++;
	}
	if (recv_errs < want)
		throw Failure(fmt("%d of %d posted receives completed in error", recv_errs, want));
	expect_fin("the TERMINATE");
}

void Ctx::expect_fin(const char *what)
{
	if (!c.wait_closed(o_.timeout))
		throw Failure(fmt("TCP connection still open after %s", what));
	if (c.reset())
		throw Failure(fmt("the stream ended in a reset after %s, not a FIN", what));
}

void Ctx::term_and_dead(xiw_term_code want, const Bytes &bad)
{
	expect_term(want, bad);
	expect_dead();
}

void Ctx::expect_refused(bool reject_ok)
{
	MpaIn m = c.read_mpa(o_.timeout * 3);
	if (m.result == MpaResult::Frame) {
		if (!reject_ok || !m.frame.reply || !m.frame.reject)
			throw Failure("the refused Request was answered by an MPA Reply" +
				      std::string(m.frame.reject ? " (reject)" : " (accept)"));
	} else if (m.result == MpaResult::Timeout) {
		throw Failure("connection still open, nothing received");
	} else if (m.result == MpaResult::Malformed) {
		throw Failure("answered with something not an MPA frame: " +
			      hex(m.raw.data(), std::min<size_t>(m.raw.size(), 24)));
	}
	if (!c.wait_closed(o_.timeout))
		throw Failure("connection still open after the reject");
	Reply r = t_.cmd("accept timeout=0.5");
	if (r.ok) {
		t_.cmd("close");
		throw Failure("the target's ULP was offered the refused connection");
	}
}

void Ctx::alive(size_t n, uint32_t seed)
{
	uint64_t off = recv_buf();
	send_msg(pattern(n, seed));
	expect_wc("SUCCESS", long(n), "RECV");
	check("rcv", off, n, seed);
}

xiw_term_code kDdpT(uint8_t c) { return tc(TERM_LAYER_DDP, DDP_ETYPE_TAGGED_BUF, c); }
xiw_term_code kDdpU(uint8_t c) { return tc(TERM_LAYER_DDP, DDP_ETYPE_UNTAGGED_BUF, c); }
xiw_term_code kProt(uint8_t c) { return tc(TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_PROTECTION, c); }
xiw_term_code kOp(uint8_t c) { return tc(TERM_LAYER_RDMAP, RDMAP_ETYPE_REMOTE_OPERATION, c); }
xiw_term_code kMpa(uint8_t c) { return tc(TERM_LAYER_LLP, LLP_ETYPE_MPA, c); }

void breaks(Ctx &x, const SegSpec &s, xiw_term_code want)
{
	x.send(s);
	x.term_and_dead(want, header(s));
}

void need(bool cond, const std::string &what)
{
	if (!cond)
		throw Failure(what);
}

ConnOpts small_window()
{
	ConnOpts co;
	co.rcvbuf = 4096;
	co.mss = 1024;
	return co;
}

SegSpec read_ro_started(Ctx &x)
{
	SegSpec s = x.read_req(x.reg["ro"].stag, x.reg["ro"].base, kRegionLen, x.c.next_msn(1));
	x.send(s);
	Segment r = x.recv("the first Read Response segment");
	need(r.hdr.opcode == RDMAP_OP_READ_RESP && !r.hdr.last,
	     fmt("opcode 0x%x L %d instead of the first of many Read Response segments",
		 r.hdr.opcode, r.hdr.last));
	return s;
}

} // namespace xiw::peer
