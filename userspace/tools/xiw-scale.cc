// SPDX-License-Identifier: GPL-2.0
//
// xiw-scale: many RDMA connections open at once, for the scale point of
// `make bench` (how many QPs a device carries at the same time and what
// each costs in kernel memory).
//
//   server: xiw-scale -a ADDR -n N [-p PORT] [-T SECS]
//   client: xiw-scale -c ADDR -n N [-p PORT] [-T SECS] [-k]
//
// The client sets up N connections through librdmacm, at most 64 of them
// in flight at a time; each has its own QP (16 send and 16 receive WRs)
// and its own CQ.  When all N are established it sends one 64 byte
// message on every connection, which the server checks (a connection
// number and a sequence of bytes), and prints "connected N in S s".
// With -k it then waits for SIGUSR1 or SIGTERM (which timeout(1) passes
// on), so that a script can read the kernel's memory counters while
// everything is up.  Then it disconnects all of them and both ends tear
// everything down.
//
// The server prints "listening" once it listens, "established N" when
// every connection is up and "received N" when every message arrived
// intact.  Exit 0 on success, 1 on a failed connection or message, 2 on
// bad usage or a setup error.

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <getopt.h>
#include <netdb.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "xiw_cli.h"
#include "xiw_verbs_util.h"

namespace {

constexpr size_t kMsg = 64;
constexpr uint32_t kMaxConns = 65536;
constexpr uint32_t kInFlight = 64;

[[noreturn]] void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
[[noreturn]] void die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	std::fputs("xiw-scale: ", stderr);
	std::vfprintf(stderr, fmt, ap);
	std::fputc('\n', stderr);
	va_end(ap);
	std::exit(code);
}

using Clock = std::chrono::steady_clock;

// The message of connection @i.
void fill(uint8_t *p, uint32_t i)
{
	for (size_t k = 0; k < kMsg; k++)
		p[k] = (uint8_t)(i * 7 + k * 13 + (i >> 8));
	std::memcpy(p, &i, sizeof(i));
}

// A connection's id and the QP rdma_create_qp() gave it (which goes
// first).
struct Conn {
	xiw::CmId id;
	xiw::CmQp qp;
};

// Everything of one end, destroyed in the reverse order of the members:
// the connections first, the event channel last.
struct Side {
	xiw::CmEvents events;
	xiw::CmId listen;
	ibv_context *ctx = nullptr;
	xiw::Pd pd;
	std::vector<xiw::Cq> cqs;	// one per connection
	std::vector<uint8_t> buf;	// kMsg per connection
	xiw::Mr mr;
	std::vector<Conn> conns;
	Clock::time_point deadline;
	int timeout_s = 120;

	// The resources shared by all connections, on the first id's device.
	void shared(ibv_context *c, uint32_t n)
	{
		if (ctx) {
			if (c != ctx)
				die(2, "connections on more than one device");
			return;
		}
		ctx = c;
		pd.reset(ibv_alloc_pd(ctx));
		if (!pd)
			die(2, "ibv_alloc_pd: %s", strerror(errno));
		buf.assign((size_t)n * kMsg, 0);
		mr.reset(ibv_reg_mr(pd.get(), buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE));
		if (!mr)
			die(2, "ibv_reg_mr: %s", strerror(errno));
	}

	// The QP of connection @i, on its own CQ.
	void qp(Conn &c, uint32_t i)
	{
		cqs.emplace_back(ibv_create_cq(ctx, 32, nullptr, nullptr, 0));
		if (!cqs.back())
			die(1, "ibv_create_cq for connection %u: %s", i, strerror(errno));
		ibv_qp_init_attr ia = {};
		ia.send_cq = ia.recv_cq = cqs.back().get();
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = ia.cap.max_recv_wr = 16;
		ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
		if (rdma_create_qp(c.id.get(), pd.get(), &ia))
			die(1, "rdma_create_qp for connection %u: %s", i, strerror(errno));
		c.qp.reset(c.id.get());
	}

	// Next CM event, or die at the deadline.
	xiw::CmEvent next()
	{
		std::optional<xiw::CmEvent> ev = events.next(deadline);
		if (!ev && errno == ETIMEDOUT)
			die(1, "no connection event within %d s", timeout_s);
		if (!ev)
			die(1, "rdma_get_cm_event: %s", strerror(errno));
		return std::move(*ev);
	}

	void wait_cq(uint32_t want, const char *what, bool check)
	{
		uint32_t got = 0;
		size_t next = 0;
		while (got < want) {
			ibv_wc wc[32];
			int n = 0;
			// Round robin over the CQs; a full round without a
			// completion counts as idle.
			for (size_t k = 0; k < cqs.size() && !n; k++, next = (next + 1) % cqs.size()) {
				n = ibv_poll_cq(cqs[next].get(), 32, wc);
				if (n < 0)
					die(1, "ibv_poll_cq failed");
			}
			for (int k = 0; k < n; k++) {
				if (wc[k].status != IBV_WC_SUCCESS)
					die(1, "%s %" PRIu64 ": %s", what, wc[k].wr_id,
					    ibv_wc_status_str(wc[k].status));
				if (check)
					check_msg((uint32_t)wc[k].wr_id, wc[k].byte_len);
			}
			got += (uint32_t)n;
			if (!n) {
				if (Clock::now() > deadline)
					die(1, "%u of %u %s within %d s", got, want, what, timeout_s);
				usleep(100);
			}
		}
	}

	// Receive @slot holds the message of one client connection, each
	// connection's exactly once.
	std::vector<bool> seen;
	void check_msg(uint32_t slot, uint32_t len)
	{
		const uint8_t *p = &buf[(size_t)slot * kMsg];
		uint8_t want[kMsg];
		uint32_t i;
		std::memcpy(&i, p, sizeof(i));
		seen.resize(conns.size());
		if (len != kMsg || i >= seen.size() || seen[i])
			die(1, "receive %u: bad message (%u bytes, connection %u)", slot, len, i);
		fill(want, i);
		if (std::memcmp(p, want, kMsg))
			die(1, "receive %u: connection %u's message is corrupt", slot, i);
		seen[i] = true;
	}
};

sockaddr_storage resolve(const std::string &host, const std::string &port)
{
	sockaddr_storage ss;
	if (int rv = xiw::numeric_addr(host, port, ss))
		die(2, "bad address '%s': %s", host.c_str(), gai_strerror(rv));
	return ss;
}

void post_recv(Side &s, uint32_t i)
{
	if (xiw::post_one_recv(s.conns[i].id->qp, i, &s.buf[(size_t)i * kMsg], (uint32_t)kMsg,
			       s.mr->lkey))
		die(1, "ibv_post_recv on connection %u failed", i);
}

int serve(const std::string &addr, const std::string &port, uint32_t n, int tmo)
{
	Side s;
	s.timeout_s = tmo;
	if (!s.events.open() || !(s.listen = s.events.create_id()))
		die(2, "rdma_create_id: %s", strerror(errno));
	sockaddr_storage sa = resolve(addr, port);
	if (rdma_bind_addr(s.listen.get(), reinterpret_cast<sockaddr *>(&sa)))
		die(2, "rdma_bind_addr %s: %s", addr.c_str(), strerror(errno));
	if (rdma_listen(s.listen.get(), (int)std::min<uint32_t>(n, 1024)))
		die(2, "rdma_listen: %s", strerror(errno));
	std::printf("xiw-scale: listening\n");
	std::fflush(stdout);

	s.deadline = Clock::now() + std::chrono::seconds(tmo);
	uint32_t up = 0, down = 0;
	while (up < n) {
		xiw::CmEvent ev = s.next();
		if (ev.type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			xiw::CmId id(ev.id);
			uint32_t i = (uint32_t)s.conns.size();
			if (i >= n) {
				rdma_reject(id.get(), nullptr, 0);
				die(1, "more than %u connection requests", n);
			}
			s.shared(id->verbs, n);
			id->context = reinterpret_cast<void *>((uintptr_t)i);
			s.conns.push_back({ std::move(id), {} });
			s.qp(s.conns.back(), i);
			post_recv(s, i);
			rdma_conn_param cp = {};
			if (rdma_accept(ev.id, &cp))
				die(1, "rdma_accept (connection %u): %s", i, strerror(errno));
		} else if (ev.type == RDMA_CM_EVENT_ESTABLISHED) {
			up++;
		} else {
			die(1, "connection event %s (status %d) before all were up", ev.name(),
			    ev.status);
		}
	}
	std::printf("xiw-scale: established %u\n", up);
	std::fflush(stdout);
	// Each connection's message lands in the receive posted for it: the
	// receive's wr_id names the connection, the message carries its number.
	s.wait_cq(n, "message", true);
	std::printf("xiw-scale: received %u\n", n);
	std::fflush(stdout);
	s.deadline = Clock::now() + std::chrono::hours(1);
	while (down < n) {
		xiw::CmEvent ev = s.next();
		if (ev.type != RDMA_CM_EVENT_DISCONNECTED)
			die(1, "unexpected %s while waiting for disconnects", ev.name());
		down++;
	}
	return 0;
}

volatile sig_atomic_t g_go;
sigset_t g_unblocked;	// the mask before SIGUSR1 and SIGTERM were blocked
void on_sig(int) { g_go = 1; }

int client(const std::string &addr, const std::string &port, uint32_t n, int tmo, bool hold)
{
	std::optional<Side> side(std::in_place);	// gone before the last line
	Side &s = *side;
	s.timeout_s = tmo;
	if (!s.events.open())
		die(2, "rdma_create_event_channel: %s", strerror(errno));
	sockaddr_storage dst = resolve(addr, port);
	s.deadline = Clock::now() + std::chrono::seconds(tmo);
	auto t0 = Clock::now();
	uint32_t started = 0, up = 0;
	auto start_one = [&] {
		uint32_t i = started++;
		s.conns.push_back({ s.events.create_id(reinterpret_cast<void *>((uintptr_t)i)), {} });
		rdma_cm_id *id = s.conns.back().id.get();
		if (!id)
			die(1, "rdma_create_id %u: %s", i, strerror(errno));
		if (rdma_resolve_addr(id, nullptr, reinterpret_cast<sockaddr *>(&dst), 5000))
			die(1, "rdma_resolve_addr %u: %s", i, strerror(errno));
	};
	while (started < n && started < kInFlight)
		start_one();
	while (up < n) {
		xiw::CmEvent ev = s.next();
		rdma_cm_id *id = ev.id;
		uint32_t i = (uint32_t)(uintptr_t)id->context;
		switch (ev.type) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			if (rdma_resolve_route(id, 5000))
				die(1, "rdma_resolve_route %u: %s", i, strerror(errno));
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED: {
			s.shared(id->verbs, n);
			s.qp(s.conns[i], i);
			rdma_conn_param cp = {};
			if (rdma_connect(id, &cp))
				die(1, "rdma_connect %u: %s", i, strerror(errno));
			break;
		}
		case RDMA_CM_EVENT_ESTABLISHED:
			up++;
			if (started < n)
				start_one();
			break;
		default:
			die(1, "connection %u: %s (status %d%s%s)", i, ev.name(), ev.status,
			    ev.status < 0 ? ": " : "", ev.status < 0 ? strerror(-ev.status) : "");
		}
	}
	double secs = std::chrono::duration<double>(Clock::now() - t0).count();
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *p = &s.buf[(size_t)i * kMsg];
		fill(p, i);
		if (xiw::post_one_send(s.conns[i].id->qp, i, IBV_WR_SEND, p, (uint32_t)kMsg, s.mr->lkey))
			die(1, "ibv_post_send on connection %u failed", i);
	}
	s.wait_cq(n, "send", false);
	std::printf("xiw-scale: connected %u in %.3f s (%.1f connections/s)\n", n, secs,
		    n / secs);
	std::fflush(stdout);
	if (hold) {
		sigset_t old;
		while (!g_go)
			sigsuspend(&g_unblocked);
		sigprocmask(SIG_SETMASK, &g_unblocked, &old);
	}
	s.deadline = Clock::now() + std::chrono::seconds(tmo);
	for (Conn &c : s.conns)
		if (rdma_disconnect(c.id.get()))
			die(1, "rdma_disconnect: %s", strerror(errno));
	for (uint32_t down = 0; down < n;) {
		if (s.next().type == RDMA_CM_EVENT_DISCONNECTED)
			down++;
	}
	side.reset();
	std::printf("xiw-scale: disconnected %u\n", n);
	return 0;
}

const xiw::cli::Usage kUsage = {
	"xiw-scale",
	"usage: xiw-scale -a ADDR -n N [-p PORT] [-T SECS]\n"
	"       xiw-scale -c ADDR -n N [-p PORT] [-T SECS] [-k]\n",
	"NAME\n"
	"    xiw-scale - many RDMA connections open at once\n"
	"\n"
	"SYNOPSIS\n"
	"    xiw-scale -a ADDR -n N [-p PORT] [-T SECS]\n"
	"    xiw-scale -c ADDR -n N [-p PORT] [-T SECS] [-k]\n"
	"\n"
	"DESCRIPTION\n"
	"    The scale point of make bench: how many QPs a device carries at\n"
	"    the same time and what each costs in kernel memory.  The client\n"
	"    sets up N connections through librdmacm, at most 64 in flight at\n"
	"    a time, each with its own QP (16 send and 16 receive WRs) and CQ;\n"
	"    when all are established it sends one 64-byte message on each,\n"
	"    which the server checks, and prints \"connected N in S s\".  Then\n"
	"    it disconnects them all and both ends tear everything down.  The\n"
	"    server prints \"listening\", \"established N\" once every\n"
	"    connection is up and \"received N\" once every message arrived\n"
	"    intact.\n"
	"\n"
	"OPTIONS\n"
	"    -a ADDR   serve on ADDR (an address of the RDMA device)\n"
	"    -c ADDR   connect to the server at ADDR\n"
	"    -n N      connections, 1..65536\n"
	"    -p PORT   port, 1..65535 (default 18700)\n"
	"    -T SECS   give up after SECS seconds, 1..86400 (default 120)\n"
	"    -k        client: with every connection up, wait for SIGUSR1 or\n"
	"              SIGTERM before disconnecting, so that a script can read\n"
	"              the kernel's memory counters meanwhile\n"
	"    -h, --help  this text\n"
	"\n"
	"EXIT STATUS\n"
	"    0 success, 1 a connection or message failed, 2 bad usage or a\n"
	"    setup error\n",
};

} // namespace

int main(int argc, char **argv)
{
	using xiw::cli::uint_opt;
	static const option longopts[] = {
		{ "help", no_argument, nullptr, 'h' },
		{ nullptr, 0, nullptr, 0 },
	};
	std::string addr, port = "18700";
	bool server = false, is_client = false, hold = false;
	uint32_t n = 0;
	int tmo = 120, ch;
	while ((ch = getopt_long(argc, argv, "a:c:p:n:T:kh", longopts, nullptr)) != -1) {
		switch (ch) {
		case 'a':
			server = true;
			addr = optarg;
			break;
		case 'c':
			is_client = true;
			addr = optarg;
			break;
		case 'p':
			port = std::to_string(uint_opt(kUsage, "-p", optarg, 1, 65535));
			break;
		case 'n':
			n = (uint32_t)uint_opt(kUsage, "-n", optarg, 1, kMaxConns);
			break;
		case 'T':
			tmo = (int)uint_opt(kUsage, "-T", optarg, 1, 86400);
			break;
		case 'k':
			hold = true;
			break;
		case 'h':
			xiw::cli::help(kUsage);
		default:
			xiw::cli::usage_error(kUsage, "");
		}
	}
	if (server == is_client)
		xiw::cli::usage_error(kUsage, "one of -a and -c");
	if (optind != argc)
		xiw::cli::usage_error(kUsage, std::string("unexpected argument '") + argv[optind] + "'");
	if (!n)
		xiw::cli::usage_error(kUsage, "-n is required");
	struct sigaction sa = {};
	sa.sa_handler = on_sig;
	sigaction(SIGUSR1, &sa, nullptr);
	sigaction(SIGTERM, &sa, nullptr);
	// Blocked but for sigsuspend(), so a signal before the wait is kept.
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &g_unblocked);
	return server ? serve(addr, port, n, tmo) : client(addr, port, n, tmo, hold);
}
