// SPDX-License-Identifier: GPL-2.0
//
// xiw-stream: many RDMA connections streaming verified Sends at once, for
// the load and fault tests (tests/selftests/xiw_faults.sh).
//
//   server: xiw-stream -a ADDR -n N [-p PORT] [-T SECS] [-F]
//   client: xiw-stream -c ADDR -n N [-p PORT] [-T SECS] [-F] [-d SECS]
//                      [-s SIZE] [-w WINDOW] [-b SRC] [-i FIRST]
//
// The client opens N connections through librdmacm (at most 64 being set
// up at a time) and, for -d seconds, keeps up to WINDOW Sends of SIZE
// octets in flight on each.  Every message starts with a header (the
// connection's number, its sequence number, a flag for the last one) and
// continues with the xiw_pattern.h pattern of a seed made of both.  The
// server keeps 2 x WINDOW receives posted per connection, checks every
// octet of every message and that each connection's sequence has no gap,
// duplicate or reordering, reposts, and acknowledges every WINDOW-th
// message and the last one with a small Send carrying its count.  The
// client never has more messages unacknowledged than the server has
// receives, so no Send meets an empty receive queue.  All connections of
// a process share one PD and one CQ.  -i numbers the client's
// connections from FIRST, so that several clients can share one server.
// -P bounds the connections a client sets up at once (default 64): a
// slow server (a KASAN kernel under emulation) must answer every MPA
// Request within the initiator's MPA timeout, so several clients sharing
// one server pace their connection setup.
//
// At the end every connection is drained and disconnected; the client
// prints "sent M messages on N connections" and the server, once all N
// connections it expects are gone, "received M messages on N
// connections, B bad".  Exit 0 when nothing was lost or wrong, 1
// otherwise, 2 on bad usage or a setup error.
//
// -F (faults expected): a connection may end early, by a flushed or
// failed work request, a disconnect, or the device going away (rdma link
// del, netdev unregister, rmmod: RDMA_CM_EVENT_DEVICE_REMOVAL, after
// which everything on that device is released at once).  Those count as
// "ended early", not as failures; what was received must still be intact
// and in order, and everything must end within -T seconds (default 120).

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <getopt.h>
#include <netdb.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xiw_cli.h"
#include "xiw_pattern.h"
#include "xiw_verbs_util.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kHdr = 16;		// conn, seq, flags, size
constexpr uint32_t kFlagLast = 1;
constexpr uint32_t kAckLen = 8;
constexpr uint32_t kAckRecvs = 8;	// client receives for acknowledgements
constexpr uint32_t kPdataLen = 12;	// conn, size, window

[[noreturn]] void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
[[noreturn]] void die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	std::fputs("xiw-stream: ", stderr);
	std::vfprintf(stderr, fmt, ap);
	std::fputc('\n', stderr);
	va_end(ap);
	std::exit(code);
}

void put32(uint8_t *p, uint32_t v) { std::memcpy(p, &v, 4); }
uint32_t get32(const uint8_t *p) { uint32_t v; std::memcpy(&v, p, 4); return v; }

// The pattern seed of message @seq on connection @conn (never 0: zeros).
uint32_t seed_of(uint32_t conn, uint32_t seq)
{
	uint32_t s = (conn * 0x9e37'79b1u) ^ (seq * 0x85eb'ca6bu) ^ 0x5bd1'e995u;

	return s ? s : 1;
}

// wr_id: connection slot << 32 | kind << 24 | index
enum Kind : uint64_t { kData = 1, kAck = 2 };
uint64_t wrid(uint32_t slot, Kind k, uint32_t idx) { return uint64_t(slot) << 32 | uint64_t(k) << 24 | idx; }
uint32_t wr_slot(uint64_t id) { return uint32_t(id >> 32); }
Kind wr_kind(uint64_t id) { return Kind((id >> 24) & 0xff); }
uint32_t wr_idx(uint64_t id) { return uint32_t(id & 0xffffff); }

struct Opts {
	bool server = false, faults = false;
	std::string addr, port = "18800", src;
	uint32_t n = 1, size = 4096, window = 8, first = 0;
	uint32_t setup = 64;	// -P: connections being set up at once
	int duration = 10, timeout = 120;
};

enum class St { Resolving, Connecting, Up, Draining, Done, Dead };

// A connection, its verbs objects destroyed in the reverse order of the
// members (the QP first, the id last) or by Proc::release().
struct Conn {
	xiw::CmId id;
	uint32_t num = 0;		// connection number (client: first + index)
	St st = St::Resolving;
	std::vector<uint8_t> buf;	// data slots (client) or receive slots (server)
	std::vector<uint8_t> ack;	// ack receive slots (client) or ack source (server)
	xiw::Mr mr, ack_mr;
	xiw::CmQp qp;
	uint64_t sent = 0, acked = 0, inflight = 0;	// client
	uint64_t received = 0;				// server
	uint32_t size = 0, window = 0;
	bool last_seen = false;
};

// A process's end of everything, destroyed in the reverse order of the
// members (the connections first, the event channel last) or, when the
// device goes, by release_all().
struct Proc {
	Opts o;
	xiw::CmEvents events;
	xiw::CmId listen;
	ibv_context *verbs = nullptr;
	xiw::Pd pd;
	xiw::Cq cq;
	std::vector<std::unique_ptr<Conn>> conns;
	uint64_t bad = 0, ended_early = 0, total = 0;
	bool device_gone = false;
	Clock::time_point deadline;

	bool expired() const { return Clock::now() > deadline; }

	void shared(ibv_context *v)
	{
		if (pd)
			return;
		verbs = v;
		pd.reset(ibv_alloc_pd(v));
		if (!pd)
			die(2, "ibv_alloc_pd: %s", std::strerror(errno));
		int cqe = int(o.n * (o.server ? (2 * o.window + 4) : (o.window + kAckRecvs + 4)));
		if (cqe > 65536)
			cqe = 65536;
		cq.reset(ibv_create_cq(v, cqe, nullptr, nullptr, 0));
		if (!cq)
			die(2, "ibv_create_cq(%d): %s", cqe, std::strerror(errno));
	}

	void qp_for(Conn &c)
	{
		ibv_qp_init_attr a = {};
		a.send_cq = a.recv_cq = cq.get();
		a.qp_type = IBV_QPT_RC;
		a.cap.max_send_wr = o.server ? 2 * o.window + 4 : o.window + 2;
		a.cap.max_recv_wr = o.server ? 2 * o.window + 2 : kAckRecvs + 2;
		a.cap.max_send_sge = a.cap.max_recv_sge = 1;
		if (rdma_create_qp(c.id.get(), pd.get(), &a))
			die(2, "rdma_create_qp: %s", std::strerror(errno));
		c.qp.reset(c.id.get());
		uint32_t slots = o.server ? 2 * c.window : c.window;
		c.buf.assign(size_t(slots) * c.size, 0);
		c.ack.assign(o.server ? kAckLen : size_t(kAckRecvs) * kAckLen, 0);
		c.mr.reset(ibv_reg_mr(pd.get(), c.buf.data(), c.buf.size(), IBV_ACCESS_LOCAL_WRITE));
		c.ack_mr.reset(ibv_reg_mr(pd.get(), c.ack.data(), c.ack.size(), IBV_ACCESS_LOCAL_WRITE));
		if (!c.mr || !c.ack_mr)
			die(2, "ibv_reg_mr: %s", std::strerror(errno));
	}

	// The verbs objects of @c, in the order of its destruction; what it
	// counted stays.
	static void release(Conn &c)
	{
		c.qp.reset();
		c.ack_mr.reset();
		c.mr.reset();
		c.id.reset();
	}

	// Everything on the device, in the order of the destruction; the
	// connections' counts stay.
	void release_all()
	{
		for (auto &c : conns)
			if (c)
				release(*c);
		cq.reset();
		pd.reset();
		listen.reset();
	}

	// Everything this connection had to do is done: what fails after
	// that (receives flushed by the disconnect) does not count.
	bool finished(const Conn &c) const
	{
		return o.server ? c.last_seen : c.st == St::Done && !c.inflight && c.acked >= c.sent;
	}

	// A connection ended before its time (only allowed with -F).
	void dead(Conn &c, const char *why)
	{
		if (c.st == St::Dead)
			return;
		if (finished(c)) {
			c.st = St::Done;
			return;
		}
		if (!o.faults)
			std::fprintf(stderr, "xiw-stream: connection %u: %s\n", c.num, why);
		c.st = St::Dead;
		ended_early++;
	}

	Conn *by_id(rdma_cm_id *id)
	{
		for (auto &c : conns)
			if (c && c->id.get() == id)
				return c.get();
		return nullptr;
	}

	// ---- completions

	void post_data_recv(Conn &c, uint32_t slot)
	{
		if (xiw::post_one_recv(c.id->qp, wrid(c.num - o.first, kData, slot),
				       c.buf.data() + size_t(slot) * c.size, c.size, c.mr->lkey))
			dead(c, "ibv_post_recv failed");
	}

	void post_ack_recv(Conn &c, uint32_t slot)
	{
		if (xiw::post_one_recv(c.id->qp, wrid(c.num - o.first, kAck, slot),
				       c.ack.data() + slot * kAckLen, kAckLen, c.ack_mr->lkey))
			dead(c, "ibv_post_recv failed");
	}

	void server_recv(Conn &c, const ibv_wc &wc)
	{
		uint32_t slot = wr_idx(wc.wr_id);
		const uint8_t *m = c.buf.data() + size_t(slot) * c.size;
		uint32_t conn = get32(m), seq = get32(m + 4), flags = get32(m + 8);

		if (wc.byte_len != c.size || conn != c.num || seq != c.received ||
		    get32(m + 12) != c.size ||
		    xiw::pattern_mismatch(m + kHdr, c.size - kHdr, seed_of(conn, seq), kHdr) >= 0) {
			if (bad++ < 10)
				std::fprintf(stderr,
					     "xiw-stream: connection %u: message %llu bad (len %u conn %u seq %u)\n",
					     c.num, (unsigned long long)c.received, wc.byte_len, conn, seq);
		}
		c.received++;
		total++;
		if (flags & kFlagLast)
			c.last_seen = true;
		post_data_recv(c, slot);
		if (c.received % c.window == 0 || c.last_seen) {
			uint64_t n = c.received;
			std::memcpy(c.ack.data(), &n, kAckLen);
			if (xiw::post_one_send(c.id->qp, wrid(c.num - o.first, kAck, 0), IBV_WR_SEND,
					       c.ack.data(), kAckLen, c.ack_mr->lkey))
				dead(c, "ibv_post_send (ack) failed");
		}
	}

	void client_send(Conn &c)
	{
		uint32_t slot = uint32_t(c.sent % c.window);
		uint8_t *m = c.buf.data() + size_t(slot) * c.size;
		bool last = c.st == St::Draining;
		uint32_t seq = uint32_t(c.sent);

		put32(m, c.num);
		put32(m + 4, seq);
		put32(m + 8, last ? kFlagLast : 0);
		put32(m + 12, c.size);
		xiw::pattern_fill(m + kHdr, c.size - kHdr, seed_of(c.num, seq), kHdr);
		if (xiw::post_one_send(c.id->qp, wrid(c.num - o.first, kData, slot), IBV_WR_SEND, m,
				       c.size, c.mr->lkey)) {
			dead(c, "ibv_post_send failed");
			return;
		}
		c.sent++;
		c.inflight++;
		total++;
		if (last)
			c.st = St::Done;	// waits for its acks below
	}

	void poll_cq()
	{
		ibv_wc wc[64];
		int n;

		// A bounded batch: under a steady stream the CQ is never empty,
		// and CM events (a disconnect, the device going) must get a turn.
		for (int round = 0; round < 16 && cq && (n = ibv_poll_cq(cq.get(), 64, wc)) > 0;
		     round++) {
			for (int i = 0; i < n; i++) {
				uint32_t idx = wr_slot(wc[i].wr_id);
				if (idx >= conns.size() || !conns[idx])
					continue;
				Conn &c = *conns[idx];
				if (wc[i].status != IBV_WC_SUCCESS) {
					dead(c, ibv_wc_status_str(wc[i].status));
					continue;
				}
				if (o.server) {
					if (wc[i].opcode == IBV_WC_RECV)
						server_recv(c, wc[i]);
				} else if (wr_kind(wc[i].wr_id) == kData) {
					c.inflight--;
				} else if (wr_kind(wc[i].wr_id) == kAck) {
					uint64_t v;
					std::memcpy(&v, c.ack.data() + wr_idx(wc[i].wr_id) * kAckLen, kAckLen);
					if (v > c.acked)
						c.acked = v;
					post_ack_recv(c, wr_idx(wc[i].wr_id));
				}
			}
		}
	}

	// ---- connection manager events

	// Handle the next CM event, waiting up to @ms for it; false when none
	// came.
	bool cm_event(int ms)
	{
		std::optional<xiw::CmEvent> ev = events.next(xiw::CmEvents::in_ms(ms));
		if (!ev)
			return false;
		handle(*ev);
		return true;
	}

	void handle(const xiw::CmEvent &e)
	{
		if (e.type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			// Everything on the device goes, at once.
			device_gone = true;
			for (auto &c : conns)
				if (c)
					dead(*c, "device removed");
			release_all();
			return;
		}
		if (e.type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			accept(e);
			return;
		}
		Conn *c = by_id(e.id);
		if (!c)
			return;
		switch (e.type) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			if (rdma_resolve_route(e.id, 5000))
				dead(*c, "rdma_resolve_route failed");
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			connect(*c);
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			c->st = St::Up;
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			if (o.server && c->last_seen) {
				c->st = St::Done;
			} else if (c->st != St::Done) {
				dead(*c, "disconnected");
			}
			if (c->id)
				rdma_disconnect(c->id.get());
			break;
		default:
			dead(*c, e.name());
			break;
		}
	}

	// A CONNECT_REQUEST: its id goes with the connection, or with a
	// rejected request at once.
	void accept(const xiw::CmEvent &e)
	{
		uint8_t pd[kPdataLen] = {};
		if (e.pdata.size() >= kPdataLen)
			std::memcpy(pd, e.pdata.data(), kPdataLen);
		auto c = std::make_unique<Conn>();
		rdma_cm_id *id = e.id;
		c->id.reset(id);
		c->num = get32(pd);
		c->size = get32(pd + 4);
		c->window = get32(pd + 8);
		uint32_t idx = c->num - o.first;
		if (c->size < kHdr || c->size > (1u << 20) || !c->window || c->window > 256 ||
		    idx >= o.n || (idx < conns.size() && conns[idx])) {
			std::fprintf(stderr, "xiw-stream: bad connect request (conn %u)\n", c->num);
			rdma_reject(id, nullptr, 0);
			bad++;
			return;
		}
		shared(id->verbs);
		qp_for(*c);
		for (uint32_t s = 0; s < 2 * c->window; s++)
			post_data_recv(*c, s);
		rdma_conn_param cp = {};
		cp.responder_resources = 1;
		cp.initiator_depth = 1;
		if (rdma_accept(id, &cp)) {
			dead(*c, "rdma_accept failed");
			return;
		}
		c->st = St::Connecting;
		if (conns.size() <= idx)
			conns.resize(idx + 1);
		conns[idx] = std::move(c);
	}

	void connect(Conn &c)
	{
		shared(c.id->verbs);
		qp_for(c);
		for (uint32_t s = 0; s < kAckRecvs; s++)
			post_ack_recv(c, s);
		uint8_t pd[kPdataLen];
		put32(pd, c.num);
		put32(pd + 4, c.size);
		put32(pd + 8, c.window);
		rdma_conn_param cp = {};
		cp.private_data = pd;
		cp.private_data_len = kPdataLen;
		cp.responder_resources = 1;
		cp.initiator_depth = 1;
		cp.retry_count = 7;
		if (rdma_connect(c.id.get(), &cp))
			dead(c, "rdma_connect failed");
		c.st = St::Connecting;
	}
};

sockaddr_storage resolve(const std::string &host, const std::string &port)
{
	sockaddr_storage ss;
	if (int rv = xiw::numeric_addr(host, port, ss))
		die(2, "bad address %s: %s", host.c_str(), gai_strerror(rv));
	return ss;
}

int serve(Proc &p)
{
	sockaddr_storage ss = resolve(p.o.addr, p.o.port);
	p.listen = p.events.create_id();
	if (!p.listen || rdma_bind_addr(p.listen.get(), reinterpret_cast<sockaddr *>(&ss)) ||
	    rdma_listen(p.listen.get(), 1024))
		die(2, "listen on %s port %s: %s", p.o.addr.c_str(), p.o.port.c_str(),
		    std::strerror(errno));
	std::printf("listening\n");
	std::fflush(stdout);

	uint32_t finished = 0;
	auto last_report = Clock::now();
	while (finished < p.o.n && !p.device_gone) {
		if (p.expired()) {
			std::printf("timed out with %u of %u connections finished\n", finished, p.o.n);
			return 1;
		}
		// Up to 32 CM events, then a bounded batch of completions.
		for (int k = 0; k < 32 && p.cm_event(k ? 0 : 1); k++)
			;
		p.poll_cq();
		finished = 0;
		for (auto &c : p.conns)
			if (c && (c->st == St::Done || c->st == St::Dead))
				finished++;
		if (Clock::now() - last_report > std::chrono::seconds(10)) {
			std::printf("received %llu so far\n", (unsigned long long)p.total);
			std::fflush(stdout);
			last_report = Clock::now();
		}
	}
	std::printf("received %llu messages on %u connections, %llu bad, %llu ended early%s\n",
		    (unsigned long long)p.total, p.o.n, (unsigned long long)p.bad,
		    (unsigned long long)p.ended_early, p.device_gone ? ", device removed" : "");
	if (p.bad || (!p.o.faults && p.ended_early))
		return 1;
	return 0;
}

int client(Proc &p)
{
	sockaddr_storage dst = resolve(p.o.addr, p.o.port), src = {};
	if (!p.o.src.empty())
		src = resolve(p.o.src, "");
	p.conns.resize(p.o.n);

	uint32_t started = 0, up = 0;
	auto t0 = Clock::now();
	// Connections, at most -P being set up at a time.
	for (;;) {
		uint32_t setting = 0, settled = 0;
		up = 0;
		for (auto &c : p.conns) {
			if (!c)
				continue;
			if (c->st == St::Resolving || c->st == St::Connecting)
				setting++;
			else
				settled++;
			if (c->st == St::Up)
				up++;
		}
		if (settled == p.o.n || p.device_gone)
			break;
		while (started < p.o.n && setting < p.o.setup) {
			auto c = std::make_unique<Conn>();
			c->num = p.o.first + started;
			c->size = p.o.size;
			c->window = p.o.window;
			c->id = p.events.create_id();
			if (!c->id)
				die(2, "rdma_create_id: %s", std::strerror(errno));
			if (rdma_resolve_addr(c->id.get(), p.o.src.empty() ? nullptr : reinterpret_cast<sockaddr *>(&src),
					      reinterpret_cast<sockaddr *>(&dst), 5000))
				p.dead(*c, "rdma_resolve_addr failed");
			p.conns[started++] = std::move(c);
			setting++;
		}
		if (p.expired()) {
			std::printf("timed out connecting\n");
			return 1;
		}
		p.cm_event(100);
	}
	double secs = std::chrono::duration<double>(Clock::now() - t0).count();
	std::printf("connected %u of %u in %.1f s\n", up, p.o.n, secs);
	std::fflush(stdout);
	if (up < p.o.n && !p.o.faults)
		return 1;

	// Stream.
	auto stop = Clock::now() + std::chrono::seconds(p.o.duration);
	uint32_t r = 2 * p.o.window;
	for (;;) {
		bool streaming = Clock::now() < stop;
		bool busy = false;
		for (auto &c : p.conns) {
			if (!c || p.device_gone)
				continue;
			if (c->st == St::Up && !streaming)
				c->st = St::Draining;
			while ((c->st == St::Up || c->st == St::Draining) && c->inflight < c->window &&
			       c->sent - c->acked < r)
				p.client_send(*c);
			if (c->st == St::Done && (c->inflight || c->acked < c->sent))
				busy = true;
			if (c->st == St::Up || c->st == St::Draining)
				busy = true;
		}
		if (!busy || p.device_gone)
			break;
		if (p.expired()) {
			std::printf("timed out streaming\n");
			return 1;
		}
		p.poll_cq();
		while (p.cm_event(0))
			;
	}
	uint64_t sent = 0;
	for (auto &c : p.conns)
		if (c)
			sent += c->sent;
	std::printf("sent %llu messages on %u connections, %llu ended early%s\n",
		    (unsigned long long)sent, p.o.n, (unsigned long long)p.ended_early,
		    p.device_gone ? ", device removed" : "");
	std::fflush(stdout);
	// Disconnect and wait for the DISCONNECTED events (bounded).
	if (!p.device_gone) {
		for (auto &c : p.conns)
			if (c && c->id && c->st == St::Done)
				rdma_disconnect(c->id.get());
		auto until = Clock::now() + std::chrono::seconds(10);
		while (Clock::now() < until && p.cm_event(200))
			;
	}
	return p.ended_early && !p.o.faults ? 1 : 0;
}

const xiw::cli::Usage kUsage = {
	"xiw-stream",
	"usage: xiw-stream -a ADDR -n N [-p PORT] [-T SECS] [-F]\n"
	"       xiw-stream -c ADDR -n N [-p PORT] [-T SECS] [-F] [-d SECS] [-s SIZE]\n"
	"                  [-w WINDOW] [-b SRC] [-i FIRST] [-P SETUP]\n",
	"NAME\n"
	"    xiw-stream - many RDMA connections streaming verified Sends\n"
	"\n"
	"SYNOPSIS\n"
	"    xiw-stream -a ADDR -n N [-p PORT] [-T SECS] [-F]\n"
	"    xiw-stream -c ADDR -n N [-p PORT] [-T SECS] [-F] [-d SECS] [-s SIZE]\n"
	"               [-w WINDOW] [-b SRC] [-i FIRST] [-P SETUP]\n"
	"\n"
	"DESCRIPTION\n"
	"    The load and fault tests' traffic.  The client opens N connections\n"
	"    through librdmacm and for -d seconds keeps up to WINDOW Sends of\n"
	"    SIZE bytes in flight on each; every message carries the connection\n"
	"    and its sequence number and a pattern made of both.  The server\n"
	"    checks every byte and that no connection's sequence has a gap, a\n"
	"    duplicate or a reordering, and acknowledges every WINDOW-th\n"
	"    message, so no Send meets an empty receive queue.  At the end the\n"
	"    client prints \"sent M messages on N connections\" and the server,\n"
	"    once all N connections it expects are gone, \"received M messages\n"
	"    on N connections, B bad\".\n"
	"\n"
	"OPTIONS\n"
	"    -a ADDR    serve on ADDR (an address of the RDMA device)\n"
	"    -c ADDR    connect to the server at ADDR\n"
	"    -n N       connections, 1..65536 (the server: how many to expect)\n"
	"    -p PORT    port, 1..65535 (default 18800)\n"
	"    -T SECS    everything must end within SECS, 1..86400 (default 120)\n"
	"    -F         faults expected: a connection may end early (flush,\n"
	"               disconnect, the device going away); that counts as\n"
	"               \"ended early\", not as a failure, while what arrived\n"
	"               must still be intact and in order\n"
	"    -d SECS    client: stream for SECS, 0..86400 (default 10)\n"
	"    -s SIZE    client: message size, 16..1048576 bytes (default 4096)\n"
	"    -w WINDOW  client: Sends in flight per connection, 1..256 (default 8)\n"
	"    -b SRC     client: bind to the source address SRC\n"
	"    -i FIRST   client: number the connections from FIRST, 0..2^30, so\n"
	"               that several clients can share one server\n"
	"    -P SETUP   client: connections being set up at once, 1..4096\n"
	"               (default 64)\n"
	"    -h, --help this text\n"
	"\n"
	"EXIT STATUS\n"
	"    0 nothing lost or wrong, 1 otherwise, 2 bad usage or a setup error\n",
};

} // namespace

int main(int argc, char **argv)
{
	using xiw::cli::uint_opt;
	static const option longopts[] = {
		{ "help", no_argument, nullptr, 'h' },
		{ nullptr, 0, nullptr, 0 },
	};
	Proc p;
	int opt;
	bool have = false;

	signal(SIGPIPE, SIG_IGN);
	while ((opt = getopt_long(argc, argv, "a:c:n:p:T:Fd:s:w:b:i:P:h", longopts, nullptr)) != -1) {
		switch (opt) {
		case 'a': p.o.server = true; p.o.addr = optarg; have = true; break;
		case 'c': p.o.server = false; p.o.addr = optarg; have = true; break;
		case 'n': p.o.n = uint32_t(uint_opt(kUsage, "-n", optarg, 1, 65536)); break;
		case 'p': p.o.port = std::to_string(uint_opt(kUsage, "-p", optarg, 1, 65535)); break;
		case 'T': p.o.timeout = int(uint_opt(kUsage, "-T", optarg, 1, 86400)); break;
		case 'F': p.o.faults = true; break;
		case 'd': p.o.duration = int(uint_opt(kUsage, "-d", optarg, 0, 86400)); break;
		case 's': p.o.size = uint32_t(uint_opt(kUsage, "-s", optarg, kHdr, 1u << 20)); break;
		case 'w': p.o.window = uint32_t(uint_opt(kUsage, "-w", optarg, 1, 256)); break;
		case 'b': p.o.src = optarg; break;
		case 'i': p.o.first = uint32_t(uint_opt(kUsage, "-i", optarg, 0, 1u << 30)); break;
		case 'P': p.o.setup = uint32_t(uint_opt(kUsage, "-P", optarg, 1, 4096)); break;
		case 'h': xiw::cli::help(kUsage);
		default: xiw::cli::usage_error(kUsage, "");
		}
	}
	if (!have)
		xiw::cli::usage_error(kUsage, "one of -a and -c");
	if (optind != argc)
		xiw::cli::usage_error(kUsage, std::string("unexpected argument '") + argv[optind] + "'");
	p.deadline = Clock::now() + std::chrono::seconds(p.o.timeout);
	if (!p.events.open())
		die(2, "rdma_create_event_channel: %s", std::strerror(errno));
	return p.o.server ? serve(p) : client(p);
}
