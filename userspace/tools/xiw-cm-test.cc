// SPDX-License-Identifier: GPL-2.0
//
// xiw-cm-test -s SERVER_IP -c CLIENT_IP [-p PORT]: connected QPs between two
// addresses through librdmacm (both ends in this process), driven through
// rdma-core's unmodified libsiw provider, for what needs a live connection:
//
//   - Send/Receive, RDMA Write and RDMA Read move data byte-exact;
//   - the SRQ limit event fires once when the SRQ drains below its limit;
//   - deliberate errors, each on its own connection while a long-lived one
//     keeps carrying traffic: a Send with no receive posted, an RDMA Write
//     to a bad STag, more RDMA Reads at once than the ORD allows;
//   - a flush keeps posting order between the Read waiting for its
//     response and the one held back behind it by ORD 1, and so does the
//     error of a Read the requester refuses behind it;
//   - a client QP destroyed while its connection comes up (the data
//     path's start racing destroy_qp): both ends hear of the end of the
//     connection, and the long-lived one goes on;
//   - a connection whose local port, picked in RDMA CM's own port space,
//     a TCP listener on the same address holds: it comes up from another
//     TCP port, which the server sees.
//
// With --race SECONDS it runs the race of xiw_cm_race.cc instead: QPs
// destroyed while their TERMINATEs go out and while the devices under them
// are removed.
//
// Each error case checks the completions, the affiliated asynchronous
// event on both ends and the QP state; the TERMINATE triplets on the wire
// are in the kernel log, which tests/selftests/xiw_cm_errors.sh checks.
//
// Output is KTAP; exit 0 when every case passed, 1 otherwise, 2 for usage
// or setup errors.

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <arpa/inet.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xiw_cli.h"
#include "xiw_cm_race.h"
#include "xiw_ktap.h"
#include "xiw_verbs_util.h"

namespace {

using namespace xiw::ktap;

sockaddr_storage parse_addr(const char *ip, uint16_t port)
{
	sockaddr_storage ss = {};
	auto *in4 = reinterpret_cast<sockaddr_in *>(&ss);
	auto *in6 = reinterpret_cast<sockaddr_in6 *>(&ss);
	if (inet_pton(AF_INET, ip, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
	} else {
		std::fprintf(stderr, "xiw-cm-test: bad address '%s'\n", ip);
		std::exit(2);
	}
	return ss;
}

// The CM event channel both ends share (events for an id other than the
// one waited for are kept for later), and the listener.
xiw::CmEvents g_ev;
xiw::CmId g_listen;
sockaddr_storage g_srv, g_cli;

// The next event of @id (a CONNECT_REQUEST on the listener @id too)
// within @timeout_ms, into @out; true if it is of @type.
bool wait_event(rdma_cm_id *id, rdma_cm_event_type type, xiw::CmEvent *out,
		int timeout_ms = 10000)
{
	std::optional<xiw::CmEvent> ev = g_ev.take_of(id, xiw::CmEvents::in_ms(timeout_ms));
	if (!ev) {
		diag("no %s within %d ms", rdma_event_str(type), timeout_ms);
		return false;
	}
	if (ev->type != type)
		diag("id %p: got %s (status %d), waiting for %s", (void *)id, ev->name(),
		     ev->status, rdma_event_str(type));
	bool want = ev->type == type;
	if (out)
		*out = std::move(*ev);
	return want;
}

// The next event of @id, whatever it is, within @timeout_ms.
std::optional<xiw::CmEvent> next_event(rdma_cm_id *id, int timeout_ms)
{
	return g_ev.take_of(id, xiw::CmEvents::in_ms(timeout_ms));
}

constexpr size_t kBuf = 64 * 1024;

// Affiliated asynchronous events, read from the (shared) context and kept
// until the object they belong to is asked about.
struct AsyncEv {
	ibv_event_type type;
	void *obj;	// the QP or SRQ
};
std::vector<AsyncEv> g_async;

// Wait up to @ms for an event of @type on @obj (a QP or an SRQ).
bool async_event(ibv_context *ctx, void *obj, ibv_event_type type, int ms)
{
	for (;;) {
		for (auto it = g_async.begin(); it != g_async.end(); ++it) {
			if (it->obj == obj && it->type == type) {
				g_async.erase(it);
				return true;
			}
		}
		pollfd p = { ctx->async_fd, POLLIN, 0 };
		if (poll(&p, 1, ms) <= 0)
			return false;
		ibv_async_event ev;
		if (ibv_get_async_event(ctx, &ev))
			return false;
		void *o = ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED ||
			  ev.event_type == IBV_EVENT_SRQ_ERR ?
			static_cast<void *>(ev.element.srq) : static_cast<void *>(ev.element.qp);
		g_async.push_back({ ev.event_type, o });
		diag("async event %s", ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
}

// Forget the events of an object about to be destroyed.
void async_forget(void *obj)
{
	for (auto it = g_async.begin(); it != g_async.end();)
		it = it->obj == obj ? g_async.erase(it) : it + 1;
}


// One end of a connection: its id, PD (its own or the caller's), CQ, QP,
// a registered buffer; destroyed in the reverse order of the members.
struct End {
	xiw::CmId id;
	xiw::Pd own_pd;
	ibv_pd *pd = nullptr;		// own_pd's or the caller's
	xiw::Cq cq;
	ibv_srq *srq = nullptr;
	std::vector<uint8_t> buf = std::vector<uint8_t>(kBuf);
	xiw::Mr mr;
	xiw::CmQp qp;

	End() = default;
	~End() { teardown(); }

	bool setup(Case &c, const char *who, ibv_srq *use_srq, ibv_pd *use_pd)
	{
		if (!use_pd)
			own_pd.reset(ibv_alloc_pd(id->verbs));
		pd = use_pd ? use_pd : own_pd.get();
		cq.reset(ibv_create_cq(id->verbs, 256, nullptr, nullptr, 0));
		c.check(pd && cq, "%s: pd %p cq %p: %s", who, (void *)pd, (void *)cq.get(),
			strerror(errno));
		if (!pd || !cq)
			return false;
		mr.reset(ibv_reg_mr(pd, buf.data(), buf.size(),
				    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_REMOTE_READ));
		c.check(bool(mr), "%s: reg_mr: %s", who, strerror(errno));
		ibv_qp_init_attr ia = {};
		ia.send_cq = ia.recv_cq = cq.get();
		ia.srq = use_srq;
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = 64;
		ia.cap.max_recv_wr = use_srq ? 0 : 64;
		ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
		int rv = rdma_create_qp(id.get(), pd, &ia);
		c.check(!rv, "%s: rdma_create_qp: %s", who, strerror(errno));
		if (!rv)
			qp.reset(id.get());
		return mr && !rv;
	}

	// Everything, in the order of the members' destruction, and what was
	// kept of the QP's and the id's events.
	void teardown()
	{
		if (qp)
			async_forget(id->qp);
		qp.reset();
		mr.reset();
		cq.reset();
		own_pd.reset();
		pd = nullptr;
		if (id)
			g_ev.forget(id.get());
		id.reset();
	}

	int post_recv(uint64_t wr_id, uint32_t off, uint32_t len)
	{
		ibv_sge sge = { reinterpret_cast<uintptr_t>(buf.data() + off), len, mr->lkey };
		ibv_recv_wr wr = {}, *bad;
		wr.wr_id = wr_id;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		return srq ? ibv_post_srq_recv(srq, &wr, &bad) : ibv_post_recv(id->qp, &wr, &bad);
	}

	int post_send(uint64_t wr_id, ibv_wr_opcode op, uint32_t off, uint32_t len,
		      uint64_t raddr = 0, uint32_t rkey = 0)
	{
		return xiw::post_one_send(id->qp, wr_id, op, buf.data() + off, len, mr->lkey, raddr,
					  rkey);
	}

	// Poll until @n completions or about 10 s.
	std::vector<ibv_wc> poll(size_t n) { return xiw::poll_cq(cq.get(), n, 10000); }

	uint64_t addr(uint32_t off) const
	{
		return reinterpret_cast<uintptr_t>(buf.data() + off);
	}

	ibv_qp_state state()
	{
		ibv_qp_attr a = {};
		ibv_qp_init_attr ia = {};
		if (ibv_query_qp(id->qp, &a, IBV_QP_STATE, &ia))
			return static_cast<ibv_qp_state>(-1);
		return a.qp_state;
	}
};

struct Conn {
	End cli, srv;
	bool up = false;
	sockaddr_storage src = g_cli;	// the client's local address

	// Connect a new client id to the listener; @srv_srq: the server QP
	// receives from it; @ord/@ird: the client's initiator depth and the
	// server's responder resources.
	bool connect(Case &c, ibv_srq *srv_srq = nullptr, ibv_pd *srv_pd = nullptr,
		     uint8_t ord = 4, uint8_t ird = 4)
	{
		if (!begin(c, srv_srq, srv_pd, ord, ird))
			return false;
		bool a = wait_event(srv.id.get(), RDMA_CM_EVENT_ESTABLISHED, nullptr);
		bool b = wait_event(cli.id.get(), RDMA_CM_EVENT_ESTABLISHED, nullptr);
		c.check(a && b, "not established: server %d client %d", a, b);
		up = a && b;
		return up;
	}

	// connect() up to the server's rdma_accept(): the client's side of
	// the connection is still coming up (its MPA Reply in flight).
	bool begin(Case &c, ibv_srq *srv_srq = nullptr, ibv_pd *srv_pd = nullptr,
		   uint8_t ord = 4, uint8_t ird = 4)
	{
		cli.id = g_ev.create_id();
		if (!cli.id) {
			c.check(false, "rdma_create_id: %s", strerror(errno));
			return false;
		}
		rdma_cm_id *id = cli.id.get();
		c.check(!rdma_resolve_addr(id, reinterpret_cast<sockaddr *>(&src),
					   reinterpret_cast<sockaddr *>(&g_srv), 5000),
			"resolve_addr: %s", strerror(errno));
		if (!wait_event(id, RDMA_CM_EVENT_ADDR_RESOLVED, nullptr))
			return c.check(false, "address not resolved"), false;
		c.check(!rdma_resolve_route(id, 5000), "resolve_route: %s", strerror(errno));
		if (!wait_event(id, RDMA_CM_EVENT_ROUTE_RESOLVED, nullptr))
			return c.check(false, "route not resolved"), false;
		if (!cli.setup(c, "client", nullptr, nullptr))
			return false;
		rdma_conn_param cp = {};
		cp.initiator_depth = ord;
		cp.responder_resources = ord;
		cp.retry_count = 7;
		if (rdma_connect(id, &cp))
			return c.check(false, "rdma_connect: %s", strerror(errno)), false;
		xiw::CmEvent ev;
		if (!wait_event(g_listen.get(), RDMA_CM_EVENT_CONNECT_REQUEST, &ev))
			return c.check(false, "no connect request"), false;
		srv.id.reset(ev.id);
		srv.srq = srv_srq;
		if (!srv.setup(c, "server", srv_srq, srv_pd))
			return false;
		rdma_conn_param sp = {};
		sp.responder_resources = ird;
		sp.initiator_depth = ird;
		if (rdma_accept(srv.id.get(), &sp))
			return c.check(false, "rdma_accept: %s", strerror(errno)), false;
		return true;
	}

	void close()
	{
		if (cli.id && up) {
			rdma_disconnect(cli.id.get());
			wait_event(cli.id.get(), RDMA_CM_EVENT_DISCONNECTED, nullptr, 5000);
			wait_event(srv.id.get(), RDMA_CM_EVENT_DISCONNECTED, nullptr, 5000);
		}
		cli.teardown();
		srv.teardown();
		up = false;
	}
};

void fill(std::vector<uint8_t> &b, uint32_t off, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		b[off + i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
}

bool same(const std::vector<uint8_t> &a, uint32_t aoff, const std::vector<uint8_t> &b,
	  uint32_t boff, uint32_t len)
{
	return !std::memcmp(a.data() + aoff, b.data() + boff, len);
}

// Send, Write and Read over @k; true when all data arrived intact.
void traffic(Case &c, Conn &k, const char *what, uint8_t seed)
{
	const uint32_t len = 16384;
	fill(k.cli.buf, 0, len, seed);
	c.check(!k.srv.post_recv(1, 0, len), "%s: post_recv", what);
	c.check(!k.cli.post_send(2, IBV_WR_SEND, 0, len), "%s: post send", what);
	auto s = k.srv.poll(1), cl = k.cli.poll(1);
	c.check(s.size() == 1 && s[0].status == IBV_WC_SUCCESS && s[0].byte_len == len,
		"%s: receive %zu %s len %u", what, s.size(),
		s.empty() ? "-" : ibv_wc_status_str(s[0].status), s.empty() ? 0 : s[0].byte_len);
	c.check(cl.size() == 1 && cl[0].status == IBV_WC_SUCCESS, "%s: send completion", what);
	c.check(same(k.cli.buf, 0, k.srv.buf, 0, len), "%s: Send data differs", what);

	fill(k.cli.buf, len, len, seed + 1);
	c.check(!k.cli.post_send(3, IBV_WR_RDMA_WRITE, len, len, k.srv.addr(len), k.srv.mr->rkey),
		"%s: post write", what);
	cl = k.cli.poll(1);
	c.check(cl.size() == 1 && cl[0].status == IBV_WC_SUCCESS, "%s: write completion", what);

	fill(k.srv.buf, 2 * len, len, seed + 2);
	c.check(!k.cli.post_send(4, IBV_WR_RDMA_READ, 2 * len, len, k.srv.addr(2 * len),
				 k.srv.mr->rkey), "%s: post read", what);
	cl = k.cli.poll(1);
	c.check(cl.size() == 1 && cl[0].status == IBV_WC_SUCCESS, "%s: read completion", what);
	c.check(same(k.cli.buf, 2 * len, k.srv.buf, 2 * len, len), "%s: Read data differs", what);
	// The Write landed before the Read Response (RDMA ordering).
	c.check(same(k.cli.buf, len, k.srv.buf, len, len), "%s: Write data differs", what);
}

// A deliberate error on a connection of its own: the QPs of both ends
// must reach ERROR with the expected async events, a WR posted after the
// error must be flushed, and @keep must go on working.
void error_case(Case &c, Conn &keep, const char *what,
		const std::function<void(Conn &)> &provoke,
		ibv_event_type want_srv, ibv_event_type want_cli)
{
	Conn k;
	if (!k.connect(c))
		return;
	provoke(k);
	c.check(async_event(k.srv.id->verbs, k.srv.id->qp, want_srv, 10000),
		"%s: server QP got no %s", what, ibv_event_type_str(want_srv));
	c.check(async_event(k.cli.id->verbs, k.cli.id->qp, want_cli, 10000),
		"%s: client QP got no %s", what, ibv_event_type_str(want_cli));
	// Both QPs leave RTS: TERMINATE (SQE) on the way to ERROR.
	for (int i = 0; i < 100 && (k.srv.state() == IBV_QPS_RTS || k.cli.state() == IBV_QPS_RTS); i++)
		usleep(20000);
	c.check(k.srv.state() != IBV_QPS_RTS && k.cli.state() != IBV_QPS_RTS,
		"%s: QP states server %d client %d", what, k.srv.state(), k.cli.state());
	// What the client posts now is flushed.
	c.check(!k.cli.post_send(99, IBV_WR_SEND, 0, 8), "%s: post after the error", what);
	auto cl = k.cli.poll(2);
	bool flushed = false;
	for (auto &w : cl)
		flushed |= w.wr_id == 99 && w.status == IBV_WC_WR_FLUSH_ERR;
	c.check(flushed, "%s: WR posted after the error not flushed", what);
	k.close();
	traffic(c, keep, "the other connection", 0x40);
}

const xiw::cli::Usage kUsage = {
	"xiw-cm-test",
	"usage: xiw-cm-test -s SERVER_IP -c CLIENT_IP [-p PORT]\n"
	"       xiw-cm-test -s SERVER_IP -c CLIENT_IP [-p PORT] --race SECONDS [--conns N]\n"
	"                   [--seed N]\n",
	"NAME\n"
	"    xiw-cm-test - connected QPs through librdmacm: data and deliberate\n"
	"    errors\n"
	"\n"
	"SYNOPSIS\n"
	"    xiw-cm-test -s SERVER_IP -c CLIENT_IP [-p PORT]\n"
	"    xiw-cm-test -s SERVER_IP -c CLIENT_IP [-p PORT] --race SECONDS [--conns N]\n"
	"                [--seed N]\n"
	"\n"
	"DESCRIPTION\n"
	"    Both ends of each connection live in this process: the server on\n"
	"    SERVER_IP, the client on CLIENT_IP, both addresses of RDMA devices\n"
	"    (xiw or siw; libsiw drives them).  Send/Receive, RDMA Write and\n"
	"    RDMA Read move data byte-exact; the SRQ limit event fires once;\n"
	"    each deliberate error (a Send with no receive posted, a Write to a\n"
	"    bad STag, more Reads at once than the ORD allows, a flush or a\n"
	"    refused Read behind a Read waiting for its response, a QP destroyed\n"
	"    while its connection comes up) runs on its own connection while a\n"
	"    long-lived one keeps carrying traffic, and its completions, the\n"
	"    asynchronous events on both ends and the QP states are checked.\n"
	"    Output is KTAP.\n"
	"\n"
	"    --race runs one case instead: for SECONDS, N client connections at\n"
	"    a time come up; at random a client provokes a TERMINATE (a Write\n"
	"    to a bad STag, a Send with no receive posted), and the server end,\n"
	"    sometimes the client too, is destroyed 0-2 ms (one in four: up to\n"
	"    50 ms) after it came up or right after the accept.  Whatever\n"
	"    removes the devices meanwhile (the caller) is survived: every id\n"
	"    that gets DEVICE_REMOVAL is destroyed and the listener comes back\n"
	"    with its device.  It fails if a destroy call fails, or no\n"
	"    connection came up, no TERMINATE was provoked or no server end was\n"
	"    destroyed on its timer; it prints what it did.\n"
	"\n"
	"OPTIONS\n"
	"    -s SERVER_IP  the server's address (IPv4 or IPv6 literal)\n"
	"    -c CLIENT_IP  the client's address\n"
	"    -p PORT       the server's port, 1..65535 (default 7471)\n"
	"    --race SECONDS  run the race for SECONDS (1..86400)\n"
	"    --conns N     client connections in flight in the race, 1..256\n"
	"                  (default 8)\n"
	"    --seed N      the race's random seed (default: from the clock)\n"
	"    -h, --help    this text\n"
	"\n"
	"EXIT STATUS\n"
	"    0 every case passed, 1 otherwise, 2 bad usage or a setup error\n",
};

} // namespace

int main(int argc, char **argv)
{
	enum { OPT_RACE = 256, OPT_CONNS, OPT_SEED };
	static const option longopts[] = {
		{ "help", no_argument, nullptr, 'h' },
		{ "race", required_argument, nullptr, OPT_RACE },
		{ "conns", required_argument, nullptr, OPT_CONNS },
		{ "seed", required_argument, nullptr, OPT_SEED },
		{ nullptr, 0, nullptr, 0 },
	};
	const char *srv_ip = nullptr, *cli_ip = nullptr;
	uint16_t port = 7471;
	xiw::cm_race::Options race = {};
	bool have_seed = false;
	race.conns = 8;
	for (int opt; (opt = getopt_long(argc, argv, "s:c:p:h", longopts, nullptr)) != -1;) {
		switch (opt) {
		case 's': srv_ip = optarg; break;
		case 'c': cli_ip = optarg; break;
		case 'p': port = uint16_t(xiw::cli::uint_opt(kUsage, "-p", optarg, 1, 65535)); break;
		case OPT_RACE:
			race.seconds = xiw::cli::secs_opt(kUsage, "--race", optarg, 1, 86400);
			break;
		case OPT_CONNS:
			race.conns = unsigned(xiw::cli::uint_opt(kUsage, "--conns", optarg, 1, 256));
			break;
		case OPT_SEED:
			race.seed = xiw::cli::uint_opt(kUsage, "--seed", optarg, 0, UINT64_MAX);
			have_seed = true;
			break;
		case 'h': xiw::cli::help(kUsage);
		default: xiw::cli::usage_error(kUsage, "");
		}
	}
	if (!srv_ip || !cli_ip)
		xiw::cli::usage_error(kUsage, "-s and -c are required");
	if (optind != argc)
		xiw::cli::usage_error(kUsage, std::string("unexpected argument '") + argv[optind] + "'");
	g_srv = parse_addr(srv_ip, port);
	g_cli = parse_addr(cli_ip, 0);
	std::setvbuf(stdout, nullptr, _IOLBF, 0);

	if (race.seconds > 0) {
		race.srv = g_srv;
		race.cli = g_cli;
		if (!have_seed)
			race.seed = uint64_t(std::chrono::system_clock::now().time_since_epoch().count());
		return xiw::cm_race::run(race);
	}

	std::printf("KTAP version 1\n1..10\n");
	if (!g_ev.open() || !(g_listen = g_ev.create_id()) ||
	    rdma_bind_addr(g_listen.get(), reinterpret_cast<sockaddr *>(&g_srv)) ||
	    rdma_listen(g_listen.get(), 16)) {
		std::printf("# listen on %s:%u: %s\n", srv_ip, port, strerror(errno));
		return 2;
	}

	Conn keep;
	run("Send, RDMA Write and RDMA Read carry data byte-exact", [&](Case &c) {
		if (keep.connect(c))
			traffic(c, keep, "first connection", 0x10);
	});
	if (!keep.up)
		return 1;

	run("SRQ limit event: fires once below the limit, then disarmed", [&](Case &c) {
		// Destroyed after k, the SRQ before the PD.
		xiw::Pd pd(ibv_alloc_pd(keep.srv.id->verbs));
		ibv_srq_init_attr sia = {};
		sia.attr.max_wr = 16;
		sia.attr.max_sge = 1;
		xiw::Srq srq(pd ? ibv_create_srq(pd.get(), &sia) : nullptr);
		c.check(bool(srq), "create_srq: %s", strerror(errno));
		if (!srq)
			return;
		Conn k;
		if (k.connect(c, srq.get(), pd.get())) {
			for (uint32_t i = 0; i < 16; i++)
				c.check(!k.srv.post_recv(100 + i, i * 1024, 1024), "post_srq_recv %u", i);
			ibv_srq_attr sa = {};
			sa.srq_limit = 8;
			c.check(!ibv_modify_srq(srq.get(), &sa, IBV_SRQ_LIMIT), "arm limit: %s",
				strerror(errno));
			// 8 receives consumed: 8 left, not below the limit yet.
			for (uint32_t i = 0; i < 8; i++)
				k.cli.post_send(200 + i, IBV_WR_SEND, 0, 64);
			c.check(k.srv.poll(8).size() == 8 && k.cli.poll(8).size() == 8, "8 sends");
			c.check(!async_event(k.srv.id->verbs, srq.get(), IBV_EVENT_SRQ_LIMIT_REACHED, 300),
				"limit event with 8 of 16 receives left (limit 8)");
			k.cli.post_send(300, IBV_WR_SEND, 0, 64);
			c.check(k.srv.poll(1).size() == 1 && k.cli.poll(1).size() == 1, "9th send");
			c.check(async_event(k.srv.id->verbs, srq.get(), IBV_EVENT_SRQ_LIMIT_REACHED, 5000),
				"no SRQ limit event with 7 receives left");
			// libsiw offers no query_srq; where a provider does, the
			// limit reads 0 (disarmed) now.
			ibv_srq_attr q = {};
			int qrv = ibv_query_srq(srq.get(), &q);
			c.check(qrv == EOPNOTSUPP || qrv == ENOSYS || (!qrv && q.srq_limit == 0),
				"query_srq %d: limit %u after the event", qrv, q.srq_limit);
			k.cli.post_send(301, IBV_WR_SEND, 0, 64);
			c.check(k.srv.poll(1).size() == 1, "10th send");
			c.check(!async_event(k.srv.id->verbs, srq.get(), IBV_EVENT_SRQ_LIMIT_REACHED, 300),
				"a second limit event without re-arming");
		}
		k.close();
		async_forget(srq.get());
	});

	run("Send with no receive posted: TERMINATE, both QPs fail, others go on", [&](Case &c) {
		error_case(c, keep, "no receive", [&](Conn &k) {
			c.check(!k.cli.post_send(1, IBV_WR_SEND, 0, 512), "post send");
		}, IBV_EVENT_QP_REQ_ERR, IBV_EVENT_QP_REQ_ERR);
	});

	run("RDMA Write to a bad STag: TERMINATE, both QPs fail, others go on", [&](Case &c) {
		error_case(c, keep, "bad STag", [&](Conn &k) {
			// Same index, another key: a STag the server never issued.
			uint32_t bad = k.srv.mr->rkey ^ 0x5a;
			c.check(!k.cli.post_send(1, IBV_WR_RDMA_WRITE, 0, 4096, k.srv.addr(0), bad),
				"post write");
		}, IBV_EVENT_QP_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
	});

	run("RDMA Write beyond the MR: TERMINATE, both QPs fail, others go on", [&](Case &c) {
		error_case(c, keep, "bounds", [&](Conn &k) {
			c.check(!k.cli.post_send(1, IBV_WR_RDMA_WRITE, 0, 4096,
						 k.srv.addr(kBuf - 1024), k.srv.mr->rkey),
				"post write");
		}, IBV_EVENT_QP_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
	});

	run("16 RDMA Reads at once with ORD 1: held back by the requester, all complete", [&](Case &c) {
		Conn k;
		if (!k.connect(c, nullptr, nullptr, 1, 1))
			return;
		for (uint32_t i = 0; i < 16; i++) {
			fill(k.srv.buf, i * 2048, 2048, static_cast<uint8_t>(i));
			c.check(!k.cli.post_send(i, IBV_WR_RDMA_READ, 32768 + i * 2048, 2048,
						 k.srv.addr(i * 2048), k.srv.mr->rkey), "post read %u", i);
		}
		auto wc = k.cli.poll(16);
		size_t good = 0;
		for (size_t i = 0; i < wc.size(); i++)
			good += wc[i].status == IBV_WC_SUCCESS && wc[i].wr_id == i;
		c.check(good == 16, "%zu of 16 reads completed in order", good);
		c.check(same(k.cli.buf, 32768, k.srv.buf, 0, 16 * 2048), "Read data differs");
		c.check(k.cli.state() == IBV_QPS_RTS && k.srv.state() == IBV_QPS_RTS,
			"QPs left RTS: client %d server %d", k.cli.state(), k.srv.state());
		k.close();
		traffic(c, keep, "the other connection", 0x50);
	});

	// With ORD 1 the requester keeps one Read waiting for its response in
	// the ORQ and takes the next into its hands, where it waits for the
	// slot; a flush then must complete the older one first.  After the
	// first completion the pipeline is in that state nearly all the time.
	run("flush with a Read waiting for its response and one held back by ORD 1: posting order",
	    [&](Case &c) {
		for (int round = 0; round < 4 && c.ok; round++) {
			Conn k;
			if (!k.connect(c, nullptr, nullptr, 1, 1))
				return;
			for (uint32_t i = 0; i < 16; i++)
				c.check(!k.cli.post_send(i, IBV_WR_RDMA_READ, 32768 + i * 2048, 2048,
							 k.srv.addr(i * 2048), k.srv.mr->rkey),
					"post read %u", i);
			auto wc = k.cli.poll(1);
			ibv_qp_attr a = {};
			a.qp_state = IBV_QPS_ERR;
			c.check(!ibv_modify_qp(k.cli.id->qp, &a, IBV_QP_STATE), "modify to ERR");
			auto rest = k.cli.poll(16 - wc.size());
			wc.insert(wc.end(), rest.begin(), rest.end());
			c.check(wc.size() == 16, "round %d: %zu of 16 reads completed", round,
				wc.size());
			std::string order;
			bool in_order = true;
			for (size_t i = 0; i < wc.size(); i++) {
				in_order &= wc[i].wr_id == i;
				order += (i ? " " : "") + std::to_string(wc[i].wr_id) +
					 (wc[i].status == IBV_WC_SUCCESS ? "" : "F");
			}
			c.check(in_order, "round %d: completions out of posting order: %s (F: flushed)",
				round, order.c_str());
			if (c.ok)
				diag("round %d: %s (F: flushed)", round, order.c_str());
			k.close();
		}
		traffic(c, keep, "the other connection", 0x58);
	});

	// A Read of two SGEs is refused when the requester takes it (one sink
	// SGE only): its error completion, and the QP's ERROR, come while the
	// Read before it waits for its response, which must complete first.
	run("a refused Read behind a Read waiting for its response: posting order", [&](Case &c) {
		for (int round = 0; round < 4 && c.ok; round++) {
			Conn k;
			if (!k.connect(c))
				return;
			c.check(!k.cli.post_send(1, IBV_WR_RDMA_READ, 32768, 2048, k.srv.addr(0),
						 k.srv.mr->rkey), "post read");
			ibv_sge sge[2] = {
				{ k.cli.addr(40960), 1024, k.cli.mr->lkey },
				{ k.cli.addr(45056), 1024, k.cli.mr->lkey },
			};
			ibv_send_wr wr = {}, *bad = nullptr;
			wr.wr_id = 2;
			wr.sg_list = sge;
			wr.num_sge = 2;
			wr.opcode = IBV_WR_RDMA_READ;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.wr.rdma.remote_addr = k.srv.addr(2048);
			wr.wr.rdma.rkey = k.srv.mr->rkey;
			c.check(!ibv_post_send(k.cli.id->qp, &wr, &bad), "post read of 2 SGEs");
			auto wc = k.cli.poll(2);
			c.check(wc.size() == 2, "round %d: %zu completions", round, wc.size());
			if (wc.size() == 2) {
				c.check(wc[0].wr_id == 1 && wc[1].wr_id == 2,
					"round %d: completions %lu (%s), %lu (%s): out of posting order",
					round, (unsigned long)wc[0].wr_id,
					ibv_wc_status_str(wc[0].status), (unsigned long)wc[1].wr_id,
					ibv_wc_status_str(wc[1].status));
				c.check(wc[1].wr_id != 2 || wc[1].status == IBV_WC_LOC_QP_OP_ERR,
					"round %d: the refused Read completed with %s", round,
					ibv_wc_status_str(wc[1].status));
				diag("round %d: %lu %s, %lu %s", round, (unsigned long)wc[0].wr_id,
				     ibv_wc_status_str(wc[0].status), (unsigned long)wc[1].wr_id,
				     ibv_wc_status_str(wc[1].status));
			}
			k.close();
		}
		traffic(c, keep, "the other connection", 0x5c);
	});

	run("Client QP destroyed while its connection comes up (40 times): each end hears of it, others go on",
	    [&](Case &c) {
		constexpr int kRounds = 40;
		int early = 0;
		for (int i = 0; i < kRounds && c.ok; i++) {
			Conn k;
			if (!k.begin(c)) {
				k.close();
				break;
			}
			// From at once to well after the MPA Reply: the data
			// path's start on the client races the destroy.
			if (i % 8)
				usleep((i % 8) * 150);
			async_forget(k.cli.id->qp);
			k.cli.qp.reset();
			std::optional<xiw::CmEvent> ev = next_event(k.cli.id.get(), 10000);
			c.check(ev.has_value(), "round %d: the client heard nothing", i);
			if (ev && ev->type != RDMA_CM_EVENT_ESTABLISHED) {
				early++;
			} else if (ev) {	// established first: the close must follow
				ev = next_event(k.cli.id.get(), 10000);
				c.check(ev && ev->type == RDMA_CM_EVENT_DISCONNECTED,
					"round %d: client established, then no disconnect", i);
			}
			// The server's end was up (accepted) and must see it end.
			bool got = wait_event(k.srv.id.get(), RDMA_CM_EVENT_ESTABLISHED, nullptr);
			c.check(got && wait_event(k.srv.id.get(), RDMA_CM_EVENT_DISCONNECTED, nullptr),
				"round %d: the server end did not see the connection end", i);
			k.close();
		}
		diag("%d of %d rounds: the destroy came before the client was established",
		     early, kRounds);
		traffic(c, keep, "the other connection", 0x60);
	});

	// RDMA CM reserves the port in its own space only: a plain TCP
	// listener on the client's address holds the same number.
	run("the client's RDMA CM port held by a TCP listener: connected from another TCP port",
	    [&](Case &c) {
		xiw::Fd tcp(socket(g_cli.ss_family, SOCK_STREAM, 0));
		sockaddr_storage held = g_cli;
		socklen_t len = sizeof(held);
		bool listening = tcp &&
				 !bind(tcp.get(), reinterpret_cast<sockaddr *>(&held),
				       g_cli.ss_family == AF_INET ? sizeof(sockaddr_in) :
								    sizeof(sockaddr_in6)) &&
				 !listen(tcp.get(), 1) &&
				 !getsockname(tcp.get(), reinterpret_cast<sockaddr *>(&held), &len);
		c.check(listening, "TCP listener on the client's address: %s", strerror(errno));
		if (!listening)
			return;
		uint16_t port = ntohs(held.ss_family == AF_INET ?
					      reinterpret_cast<sockaddr_in *>(&held)->sin_port :
					      reinterpret_cast<sockaddr_in6 *>(&held)->sin6_port);
		Conn k;
		k.src = held;
		if (k.connect(c)) {
			uint16_t seen = ntohs(rdma_get_dst_port(k.srv.id.get()));
			c.check(seen && seen != port,
				"the server saw the client at port %u (TCP listener at %u)", seen, port);
			diag("RDMA CM port %u held by TCP; the connection came from port %u", port,
			     seen);
			traffic(c, k, "connection from another port", 0x64);
		}
		k.close();
		traffic(c, keep, "the other connection", 0x68);
	});

	keep.close();
	g_listen.reset();
	std::printf("# %d of %d failed\n", g_failed, g_num);
	return g_failed ? 1 : 0;
}
