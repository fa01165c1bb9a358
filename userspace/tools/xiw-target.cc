// SPDX-License-Identifier: GPL-2.0
//
// xiw-target: the VM side of the iWARP conformance test.  A scriptable
// RDMA responder that xiw-peer (which speaks raw iWARP over a plain TCP
// socket) drives line by line through stdin and stdout.  It uses only
// librdmacm and libibverbs, so it behaves the same on siw and xiw devices.
//
//   xiw-target [-p PORT] [-T TIMEOUT_SECS] ADDR
//
// It listens on ADDR (IPv4 or IPv6 literal) port PORT (default 18700),
// prints "ready ADDR PORT" and reads one command per line.  Each command
// answers with one line, "ok ..." or "err REASON"; diagnostics go to
// stderr.  Options follow the positional arguments as key=value; numbers
// are decimal or 0x hex, timeouts seconds (fractional allowed, default
// -T, 10 s).  EOF or quit tears everything down and exits 0.
//
//   accept [ird=N] [ord=N] [recvs=N] [rlen=N] [reject=1] [pdata=HEX] [serve=1]
//	[timeout=S]
//	-> ok rejected pdata=HEX, or, having set up the connection, posted
//	   the receives and accepted:
//	   ok pdata=HEX rw=STAG:ADDR ro=.. wo=.. foreign=.. dead=.. len=65536
//	serve=1: a thread of the connection keeps its receives posted: it
//	waits for the CQ's completion events, polls it and posts a new
//	receive of rlen for every one that completes successfully, until the
//	first completion in error (see served); poll and post_recv are
//	refused meanwhile (xiw-peer fuzz)
//   served [min=N] [timeout=S]	wait until a serving connection has had
//	N receives complete successfully -> ok recvs=K errors=E; err
//	timeout ... when that does not happen in time, err stopped ... when
//	a receive completed in error first (none succeeds after that)
//   connect ADDR PORT [ird=N] [ord=N] [recvs=N] [rlen=N] [qpn=N] [timeout=S]
//	the active side instead: resolves ADDR, sets up the connection as
//	accept does, posts the receives and calls rdma_connect(); answers
//	as accept, without pdata; established follows once the peer replied.
//	qpn=N: no QP or regions of its own, rdma_connect() names QP N
//	(what the kernel must refuse unless QP N is the caller's) -> ok
//   idle [cqe=N]	a QP on the listener's device that is never connected
//	(PD, CQ of N entries, by default 256, regions as for accept)
//	-> ok qpn=N
//   established [timeout=S]	the next CM event must be ESTABLISHED
//   cmevent [timeout=S]	-> ok event=RDMA_CM_EVENT_... status=N
//   post send|send_inv|write|read LEN [off=O] [seed=S] [stag=X] [to=X]
//	[inv=X] [id=N] [unsignaled=1] [solicited=1] [fence=1] [sges=N stride=B]
//	-> ok id=N; sges: the payload cut into N SGEs of (about) LEN/N octets
//	at OFF, OFF+B, OFF+2B... of snd (not of rw for a read), holding the
//	pattern as one message
//   dereg REGION [timeout=S]	deregister REGION's MR, in a thread of its
//	own -> ok ms=N, or err timeout ms=N if it has not returned (then it
//	is left running, and close destroys the QP before it waits for it)
//   post_recv N LEN		N more receives into rcv
//   poll N [timeout=S]	-> ok n=K ID:STATUS:OPCODE:LEN[:imm=X][:inv=X]...
//   check|fill REGION OFF LEN SEED [first=F]	compare with / write a pattern
//   state			-> ok state=RESET|INIT|RTR|RTS|SQD|SQE|ERR
//   async [timeout=S]	-> ok event=QP_FATAL|...  (device async events)
//   disconnect, close, quit
//
// One connection at a time.  Its regions, 64 KiB and page aligned each:
// rw (remote read and write, zeroed), ro (remote read only, pattern 1),
// wo (remote write only, zeroed), foreign (read and write in a second PD,
// pattern 2), dead (deregistered right away: a stale STag), snd (256 KiB,
// source of Sends and Writes; Reads land in rw) and rcv (256 KiB: receive
// i, counted over the connection, has wr_id 1000+i at offset i*LEN).
// Patterns are those of xiw_pattern.h; seed 0 is zeros.

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "xiw_cli.h"
#include "xiw_pattern.h"
#include "xiw_verbs_util.h"

namespace {

const char *const prog = "xiw-target";
constexpr size_t kRegionLen = 65536;
constexpr size_t kRcvLen = 262144;
constexpr uint64_t kRecvWrid = 1000;
constexpr unsigned kMaxSges = 6;	// what siw and libsiw offer

using Clock = std::chrono::steady_clock;

std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char *f, ...)
{
	va_list ap, ap2;
	va_start(ap, f);
	va_copy(ap2, ap);
	int n = std::vsnprintf(nullptr, 0, f, ap);
	va_end(ap);
	std::string s(n > 0 ? size_t(n) : 0, '\0');
	if (n > 0)
		std::vsnprintf(s.data(), s.size() + 1, f, ap2);
	va_end(ap2);
	return s;
}

[[noreturn]] void fatal(const std::string &what)
{
	std::fprintf(stderr, "%s: %s: %s\n", prog, what.c_str(), strerror(errno));
	std::exit(1);
}

const xiw::cli::Usage kUsage = {
	"xiw-target",
	"usage: xiw-target [-p PORT] [-T TIMEOUT_SECS] ADDR\n",
	"NAME\n"
	"    xiw-target - a scriptable RDMA responder, driven line by line\n"
	"\n"
	"SYNOPSIS\n"
	"    xiw-target [-p PORT] [-T TIMEOUT_SECS] ADDR\n"
	"\n"
	"DESCRIPTION\n"
	"    The device's side of xiw-peer's conformance scenarios.  Listens on\n"
	"    ADDR (an IPv4 or IPv6 literal of the RDMA device) and PORT through\n"
	"    librdmacm, prints \"ready ADDR PORT\" and reads one command per line\n"
	"    on stdin; each answers with one line, \"ok ...\" or \"err REASON\".\n"
	"    Options follow a command's positional arguments as key=value;\n"
	"    numbers are decimal or 0x hex, timeouts seconds.  One connection at\n"
	"    a time, with regions rw, ro, wo, foreign (a second PD), dead (a\n"
	"    stale STag), snd and rcv.  EOF or quit tears everything down.\n"
	"\n"
	"COMMANDS\n"
	"    accept [ird=N] [ord=N] [recvs=N] [rlen=N] [reject=1] [pdata=HEX]\n"
	"        [serve=1]\n"
	"    served [min=N] [timeout=S]\n"
	"    connect ADDR PORT [ird=N] [ord=N] [recvs=N] [rlen=N] [qpn=N]\n"
	"    idle [cqe=N]\n"
	"    established, cmevent, async         [timeout=S]\n"
	"    post send|send_inv|write|read LEN [off=O] [seed=S] [stag=X] [to=X]\n"
	"        [inv=X] [id=N] [unsignaled=1] [solicited=1] [fence=1]\n"
	"        [sges=N stride=B]\n"
	"    post_recv N LEN\n"
	"    poll N [timeout=S]\n"
	"    dereg REGION [timeout=S]\n"
	"    check|fill REGION OFF LEN SEED [first=F]\n"
	"    state, disconnect, close, quit\n"
	"    (userspace/tools/xiw-target.cc says what each answers)\n"
	"\n"
	"OPTIONS\n"
	"    -p PORT          port, 1..65535 (default 18700)\n"
	"    -T TIMEOUT_SECS  default timeout of the commands that wait,\n"
	"                     0..86400 seconds, fractions allowed (default 10)\n"
	"    -h, --help       this text\n"
	"\n"
	"EXIT STATUS\n"
	"    0 after EOF or quit, 1 a setup error, 2 bad usage\n",
};

// The error of a call that returns an errno value, or -1 and sets errno.
int err_of(int rv) { return rv > 0 ? rv : errno; }

// A failed teardown call: only stderr can be told.
void warn(const char *what, int rv)
{
	std::fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(err_of(rv)));
}

// Destroy what @o (an xiw::Owned) owns through @what; a failure is told
// and the object given up, as teardown cannot do more.
template <class O> void destroy_or_warn(O &o, const char *what)
{
	if (int rv = o.destroy()) {
		warn(what, rv);
		o.release();
	}
}

// Wait until @fd is readable or @deadline; false once @deadline passed.
bool wait_readable(int fd, Clock::time_point deadline)
{
	auto ms = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
	if (ms <= 0)
		return false;
	pollfd p = { fd, POLLIN, 0 };
	::poll(&p, 1, int(std::min<long long>(ms, INT_MAX)));	// on EINTR: go round
	return true;
}

bool set_nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0;
}

bool again() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

std::string to_hex(const uint8_t *p, size_t n)
{
	std::string s;
	for (size_t i = 0; p && i < n; i++)
		s += fmt("%02x", p[i]);
	return s.empty() ? "-" : s;
}

// Short names of verbs enum values.
struct Name {
	int value;
	const char *name;
};

#define XIW_NAME(prefix, x) { prefix##x, #x }
#define XIW_WC(x) XIW_NAME(IBV_WC_, x)
#define XIW_EV(x) XIW_NAME(IBV_EVENT_, x)
constexpr Name kWcStatus[] = {
	XIW_WC(SUCCESS), XIW_WC(LOC_LEN_ERR), XIW_WC(LOC_QP_OP_ERR), XIW_WC(LOC_EEC_OP_ERR),
	XIW_WC(LOC_PROT_ERR), XIW_WC(WR_FLUSH_ERR), XIW_WC(MW_BIND_ERR), XIW_WC(BAD_RESP_ERR),
	XIW_WC(LOC_ACCESS_ERR), XIW_WC(REM_INV_REQ_ERR), XIW_WC(REM_ACCESS_ERR), XIW_WC(REM_OP_ERR),
	XIW_WC(RETRY_EXC_ERR), XIW_WC(RNR_RETRY_EXC_ERR), XIW_WC(LOC_RDD_VIOL_ERR),
	XIW_WC(REM_INV_RD_REQ_ERR), XIW_WC(REM_ABORT_ERR), XIW_WC(INV_EECN_ERR),
	XIW_WC(INV_EEC_STATE_ERR), XIW_WC(FATAL_ERR), XIW_WC(RESP_TIMEOUT_ERR), XIW_WC(GENERAL_ERR),
};
constexpr Name kWcOpcode[] = {
	XIW_WC(SEND), XIW_WC(RDMA_WRITE), XIW_WC(RDMA_READ), XIW_WC(COMP_SWAP), XIW_WC(FETCH_ADD),
	XIW_WC(BIND_MW), XIW_WC(LOCAL_INV), XIW_WC(RECV), XIW_WC(RECV_RDMA_WITH_IMM),
};
constexpr Name kQpState[] = {
	XIW_NAME(IBV_QPS_, RESET), XIW_NAME(IBV_QPS_, INIT), XIW_NAME(IBV_QPS_, RTR),
	XIW_NAME(IBV_QPS_, RTS), XIW_NAME(IBV_QPS_, SQD), XIW_NAME(IBV_QPS_, SQE),
	XIW_NAME(IBV_QPS_, ERR),
};
constexpr Name kAsyncEvent[] = {
	XIW_EV(QP_FATAL), XIW_EV(QP_REQ_ERR), XIW_EV(QP_ACCESS_ERR), XIW_EV(COMM_EST),
	XIW_EV(SQ_DRAINED), XIW_EV(PATH_MIG), XIW_EV(PATH_MIG_ERR), XIW_EV(DEVICE_FATAL),
	XIW_EV(PORT_ACTIVE), XIW_EV(PORT_ERR), XIW_EV(LID_CHANGE), XIW_EV(PKEY_CHANGE),
	XIW_EV(SM_CHANGE), XIW_EV(SRQ_ERR), XIW_EV(SRQ_LIMIT_REACHED), XIW_EV(QP_LAST_WQE_REACHED),
	XIW_EV(CLIENT_REREGISTER), XIW_EV(GID_CHANGE), XIW_EV(CQ_ERR),
};
#undef XIW_EV
#undef XIW_WC
#undef XIW_NAME

// The name of @v in @table, or @fallback followed by the number.
std::string name_of(std::span<const Name> table, int v, const char *fallback)
{
	for (const Name &n : table)
		if (n.value == v)
			return n.name;
	return fallback + std::to_string(v);
}

// @s as a number of at most @max: decimal, or hex after 0x.
bool parse_num(const std::string &s, uint64_t max, uint64_t *v)
{
	auto r = xiw::cli::parse_uint(s, 0, max);

	if (r)
		*v = *r;
	return r.has_value();
}

// @s as seconds, fractional allowed (as printf's %g writes them), at
// most a day.
bool parse_secs(const std::string &s, double *v)
{
	auto r = xiw::cli::parse_double(s, 0, 86400);

	if (r)
		*v = *r;
	return r.has_value();
}

// A response that ends a command early: a usage error, no connection.
struct Reply {
	std::string line;
};

[[noreturn]] void usage_error(const std::string &why) { throw Reply{ "err usage: " + why }; }

// One command line: its word, positional arguments and key=value options.
// The accessors throw a usage Reply for a bad argument.
class Args {
public:
	std::string word;

	explicit Args(const std::string &line)
	{
		std::istringstream in(line);
		std::string tok;
		in >> word;
		while (in >> tok) {
			size_t eq = tok.find('=');
			if (eq == tok.npos)
				pos_.push_back(tok);
			else
				opts_.emplace_back(tok.substr(0, eq), tok.substr(eq + 1));
		}
	}

	// Exactly @npos positional arguments, and options among @keys only.
	void shape(size_t npos, std::initializer_list<const char *> keys) const
	{
		if (pos_.size() != npos)
			usage_error(fmt("%s takes %zu positional arguments", word.c_str(), npos));
		for (auto &kv : opts_)
			if (std::none_of(keys.begin(), keys.end(), [&](const char *k) { return kv.first == k; }))
				usage_error("unknown option '" + kv.first + "' for " + word);
	}

	const std::string &pos(size_t i) const { return pos_.at(i); }
	bool has(const char *key) const { return find(key); }
	uint64_t num(size_t i, uint64_t max, const char *what) const { return checked(pos(i), max, what); }

	uint64_t opt(const char *key, uint64_t def, uint64_t max) const
	{
		const std::string *s = find(key);
		return s ? checked(*s, max, key) : def;
	}

	// The end of the wait of timeout=S, by default @def seconds.
	Clock::time_point deadline(double def) const
	{
		const std::string *s = find("timeout");
		if (s && !parse_secs(*s, &def))
			usage_error("bad timeout '" + *s + "'");
		return Clock::now() + std::chrono::duration_cast<Clock::duration>(
					      std::chrono::duration<double>(def));
	}

	// Option @key as hex bytes, at most 255 ("-" or absent: none).
	std::vector<uint8_t> bytes(const char *key) const
	{
		const std::string *s = find(key);
		std::vector<uint8_t> out;
		bool good = !s || *s == "-" ||
			    (s->size() % 2 == 0 && s->size() <= 510 &&
			     s->find_first_not_of("0123456789abcdefABCDEF") == s->npos);
		if (!good)
			usage_error(fmt("bad %s: an even number of hex digits, at most 255 bytes", key));
		for (size_t i = 0; s && *s != "-" && i < s->size(); i += 2)
			out.push_back(uint8_t(std::stoul(s->substr(i, 2), nullptr, 16)));
		return out;
	}

private:
	std::vector<std::string> pos_;
	std::vector<std::pair<std::string, std::string>> opts_;

	const std::string *find(const char *key) const
	{
		for (auto &[k, v] : opts_)
			if (k == key)
				return &v;
		return nullptr;
	}

	static uint64_t checked(const std::string &s, uint64_t max, const char *what)
	{
		uint64_t v;
		if (!parse_num(s, max, &v))
			usage_error(fmt("bad %s '%s' (at most %llu)", what, s.c_str(),
					(unsigned long long)max));
		return v;
	}
};

// A buffer and its memory region; dead keeps its rkey after deregistration.
struct Region {
	xiw::Memory buf;
	xiw::Mr mr;
	uint32_t rkey = 0;
};

// The receive server of a connection accepted with serve=1.
struct Serve {
	xiw::CompChannel ch;		// the CQ's completion events
	std::thread thread;
	std::atomic<bool> stop{ false };
	std::mutex lock;		// guards ok, errors, failed
	std::condition_variable changed;	// ok or errors grew
	uint64_t ok = 0, errors = 0;	// receive completions so far
	std::string failed;		// why the server gave up, if it did
	uint64_t rlen = 0;
};

// The current connection and everything it owns.  Its CM events wait in
// the Target's CmEvents.
struct Conn {
	xiw::CmId id;
	xiw::Pd pd, pd2;
	xiw::Cq cq;
	xiw::CmQp qp;
	Region rw, ro, wo, foreign, dead, snd, rcv;
	uint64_t recv_next = 0;		// running receive index
	uint64_t wr_next = 1;		// default wr_id of the next post
	std::vector<std::thread> deregs;	// dereg commands that timed out
	std::unique_ptr<Serve> serve;	// accept serve=1

	Conn() = default;
	Conn(const Conn &) = delete;
	Conn &operator=(const Conn &) = delete;
	~Conn();
};

constexpr int kAccessAll = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

struct RegionSpec {
	Region Conn::*r;
	const char *name;
	size_t len;
	uint32_t seed;
	bool second_pd;
	int access;
	bool exposed;	// reported on accept
};

const RegionSpec kRegions[] = {
	{ &Conn::rw, "rw", kRegionLen, 0, false, kAccessAll, true },
	{ &Conn::ro, "ro", kRegionLen, 1, false, IBV_ACCESS_REMOTE_READ, true },
	{ &Conn::wo, "wo", kRegionLen, 0, false, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, true },
	{ &Conn::foreign, "foreign", kRegionLen, 2, true, kAccessAll, true },
	{ &Conn::dead, "dead", kRegionLen, 0, false, kAccessAll, true },
	{ &Conn::snd, "snd", kRcvLen, 0, false, IBV_ACCESS_LOCAL_WRITE, false },
	{ &Conn::rcv, "rcv", kRcvLen, 0, false, IBV_ACCESS_LOCAL_WRITE, false },
};

// Teardown in reverse order of setup, every failure told.  The id goes
// last; destroying it also rejects a connection request never answered.
Conn::~Conn()
{
	if (serve && serve->thread.joinable()) {
		serve->stop = true;
		serve->thread.join();
	}
	qp.reset();
	// A deregistration may wait for the QP; it is gone now.
	for (std::thread &t : deregs)
		t.join();
	for (const RegionSpec &s : kRegions)
		destroy_or_warn((this->*s.r).mr, "ibv_dereg_mr");
	destroy_or_warn(cq, "ibv_destroy_cq");
	if (serve)
		destroy_or_warn(serve->ch, "ibv_destroy_comp_channel");
	destroy_or_warn(pd2, "ibv_dealloc_pd");
	destroy_or_warn(pd, "ibv_dealloc_pd");
	destroy_or_warn(id, "rdma_destroy_id");
}

// Allocate, fill and register one region; empty or what failed.
std::string make_region(Conn &c, const RegionSpec &s)
{
	Region &r = c.*s.r;
	if (!(r.buf = xiw::page_aligned(s.len)))
		return fmt("no memory for %s", s.name);
	xiw::pattern_fill(r.buf.get(), s.len, s.seed);
	r.mr.reset(ibv_reg_mr((s.second_pd ? c.pd2 : c.pd).get(), r.buf.get(), s.len, s.access));
	if (!r.mr)
		return fmt("reg_mr %s: %s", s.name, strerror(errno));
	r.rkey = r.mr->rkey;
	return "";
}

// PDs, CQ, QP and regions of a new connection; empty or what failed.
std::string setup(Conn &c, int cqe = 256)
{
	ibv_context *ctx = c.id->verbs;
	if (!(c.pd = xiw::Pd(ibv_alloc_pd(ctx))) || !(c.pd2 = xiw::Pd(ibv_alloc_pd(ctx))))
		return fmt("alloc_pd: %s", strerror(errno));
	ibv_comp_channel *ch = nullptr;
	if (c.serve) {
		c.serve->ch.reset(ibv_create_comp_channel(ctx));
		if (!(ch = c.serve->ch.get()))
			return fmt("create_comp_channel: %s", strerror(errno));
	}
	if (ch && !set_nonblocking(ch->fd))
		return fmt("non-blocking completion channel: %s", strerror(errno));
	if (!(c.cq = xiw::Cq(ibv_create_cq(ctx, cqe, nullptr, ch, 0))))
		return fmt("create_cq: %s", strerror(errno));
	ibv_qp_init_attr ia = {};
	ia.send_cq = ia.recv_cq = c.cq.get();
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 64;
	ia.cap.max_recv_wr = 128;
	ia.cap.max_send_sge = kMaxSges;
	ia.cap.max_recv_sge = 1;
	ia.sq_sig_all = 0;
	if (rdma_create_qp(c.id.get(), c.pd.get(), &ia))
		return fmt("create_qp: %s", strerror(errno));
	c.qp.reset(c.id.get());
	for (const RegionSpec &s : kRegions)
		if (std::string e = make_region(c, s); !e.empty())
			return e;
	int rv = c.dead.mr.destroy();
	return rv ? fmt("dereg_mr dead: %s", strerror(err_of(rv))) : "";
}

// Post @n receives of @len bytes into rcv, continuing the running index;
// a receive that would not fit at its offset goes to offset 0.
std::string post_recvs(Conn &c, uint64_t n, uint64_t len)
{
	for (uint64_t k = 0; k < n; k++, c.recv_next++) {
		size_t off = c.recv_next * len % kRcvLen;
		if (off + len > kRcvLen)
			off = 0;
		int rv = xiw::post_one_recv(c.id->qp, kRecvWrid + c.recv_next, c.rcv.buf.get() + off,
					    uint32_t(len), c.rcv.mr->lkey);
		if (rv)
			return fmt("post_recv: %s", strerror(err_of(rv)));
	}
	return "";
}

// The thread of accept serve=1: reposts every receive that completes
// successfully, so that a peer sending a stream of Sends never finds the
// receive queue empty.  After the first completion in error (the QP went
// to ERROR: flushes follow) it stops posting and only counts.  It sleeps
// in the completion channel (with a timeout, to see stop): the CQ is
// armed before every poll, so a completion after the poll raises an event.
void serve_recvs(Conn &c)
{
	Serve &s = *c.serve;
	bool posting = true;

	auto give_up = [&s](const std::string &why) {
		std::lock_guard<std::mutex> g(s.lock);
		s.failed = why;
		s.changed.notify_all();
	};
	while (!s.stop) {
		if (ibv_req_notify_cq(c.cq.get(), 0))
			return give_up("ibv_req_notify_cq failed");
		for (;;) {
			ibv_wc wc[16];
			int n = ibv_poll_cq(c.cq.get(), 16, wc);
			if (n < 0)
				return give_up("ibv_poll_cq failed");
			if (!n)
				break;
			uint64_t ok = 0, errors = 0;
			std::string failed;
			for (int i = 0; i < n; i++) {
				if (wc[i].wr_id < kRecvWrid)
					continue;	// a send of ours
				if (wc[i].status != IBV_WC_SUCCESS) {
					errors++;
					posting = false;
					continue;
				}
				ok++;
				if (!posting)
					continue;
				if (std::string e = post_recvs(c, 1, s.rlen); !e.empty()) {
					failed = e;
					posting = false;
				}
			}
			std::lock_guard<std::mutex> g(s.lock);
			s.ok += ok;
			s.errors += errors;
			if (s.failed.empty())
				s.failed = failed;
			s.changed.notify_all();
		}
		pollfd p = { s.ch->fd, POLLIN, 0 };
		if (::poll(&p, 1, 100) <= 0)
			continue;
		ibv_cq *cq;
		void *ctx;
		if (!ibv_get_cq_event(s.ch.get(), &cq, &ctx))
			ibv_ack_cq_events(cq, 1);
	}
}

// " ID:STATUS:OPCODE:LEN[:imm=X][:inv=X]" of one completion.
std::string describe(const ibv_wc &wc)
{
	std::string s = fmt(" %llu:%s:%s:%u", (unsigned long long)wc.wr_id,
			    name_of(kWcStatus, wc.status, "STATUS_").c_str(),
			    name_of(kWcOpcode, wc.opcode, "OP_").c_str(), wc.byte_len);
	if (wc.wc_flags & IBV_WC_WITH_IMM)
		s += fmt(":imm=0x%08x", ntohl(wc.imm_data));
	if (wc.wc_flags & IBV_WC_WITH_INV)
		s += fmt(":inv=0x%08x", wc.invalidated_rkey);
	return s;
}

class Target {
public:
	bool done = false;

	explicit Target(double timeout) : timeout_(timeout) {}
	~Target() { shutdown(); }

	// Listen on @sa; any failure is fatal.
	void listen(const sockaddr *sa, const char *addr, unsigned port)
	{
		if (!events_.open())
			fatal("rdma_create_event_channel");
		if (!(listener_ = events_.create_id()))
			fatal("rdma_create_id");
		if (rdma_bind_addr(listener_.get(), const_cast<sockaddr *>(sa)))
			fatal(fmt("rdma_bind_addr %s port %u", addr, port));
		if (rdma_listen(listener_.get(), 8))
			fatal("rdma_listen");
	}

	// One command line in, one response line (without newline) out.
	std::string run(const std::string &line)
	{
		using Handler = std::string (Target::*)(const Args &);
		static const std::pair<const char *, Handler> commands[] = {
			{ "accept", &Target::accept }, { "established", &Target::established },
			{ "cmevent", &Target::cmevent }, { "post", &Target::post },
			{ "post_recv", &Target::post_recv }, { "poll", &Target::poll },
			{ "check", &Target::check }, { "fill", &Target::fill },
			{ "state", &Target::state }, { "async", &Target::async },
			{ "disconnect", &Target::disconnect }, { "close", &Target::close },
			{ "connect", &Target::connect }, { "dereg", &Target::dereg },
			{ "idle", &Target::idle }, { "served", &Target::served },
			{ "quit", &Target::quit },
		};
		Args a(line);
		try {
			for (auto &[word, fn] : commands)
				if (a.word == word)
					return (this->*fn)(a);
			usage_error(a.word.empty() ? "empty line" : "unknown command '" + a.word + "'");
		} catch (const Reply &r) {
			return r.line;
		} catch (const std::exception &e) {
			return fmt("err internal: %s", e.what());
		}
	}

	void shutdown()
	{
		close_conn();
		for (xiw::CmEvent &e : events_.drop([this](auto &e) { return is_request(e); })) {
			xiw::CmId id(e.id);
			destroy_or_warn(id, "rdma_destroy_id");
		}
		destroy_or_warn(listener_, "rdma_destroy_id");
		events_ = xiw::CmEvents();
	}

private:
	double timeout_;
	// Connection requests wait in events_ until accepted, as do the
	// events of the current connection's id until asked for.
	xiw::CmEvents events_;
	xiw::CmId listener_;
	std::unique_ptr<Conn> conn_;
	ibv_context *ctx_ = nullptr;	// of the last accepted connection

	Conn &need_conn() const
	{
		if (!conn_)
			throw Reply{ "err noconn" };
		return *conn_;
	}

	bool is_request(const xiw::CmEvent &e) const
	{
		return e.type == RDMA_CM_EVENT_CONNECT_REQUEST && e.listen_id == listener_.get();
	}

	// The current connection goes, with what was kept of its id's events.
	void close_conn()
	{
		if (conn_ && conn_->id)
			events_.forget(conn_->id.get());
		conn_.reset();
	}

	// The first CM event @match accepts before @deadline; a Reply when it
	// passed or the channel failed.  Events that are neither a connection
	// request nor the current connection's are dropped.
	template <class F> xiw::CmEvent wait_cm(F match, Clock::time_point deadline)
	{
		std::optional<xiw::CmEvent> ev = events_.take(match, deadline);
		int err = errno;
		auto nobodys = [this](const xiw::CmEvent &e) {
			return !is_request(e) && !(conn_ && e.id == conn_->id.get());
		};

		for (const xiw::CmEvent &e : events_.drop(nobodys))
			std::fprintf(stderr, "%s: dropped %s (status %d)\n", prog, e.name(), e.status);
		if (!ev && err == ETIMEDOUT)
			throw Reply{ "err timeout" };
		if (!ev)
			throw Reply{ fmt("err get_cm_event: %s", strerror(err)) };
		return std::move(*ev);
	}

	std::string accept(const Args &a)
	{
		a.shape(0, { "ird", "ord", "recvs", "rlen", "reject", "pdata", "serve", "timeout" });
		rdma_conn_param p = {};
		p.responder_resources = uint8_t(a.opt("ird", 4, 255));
		p.initiator_depth = uint8_t(a.opt("ord", 4, 255));
		p.retry_count = p.rnr_retry_count = 7;
		uint64_t recvs = a.opt("recvs", 4, 1 << 20), rlen = a.opt("rlen", 1024, kRcvLen);
		bool reject = a.opt("reject", 0, 1), serve = a.opt("serve", 0, 1);
		std::vector<uint8_t> pdata = a.bytes("pdata");
		p.private_data = pdata.empty() ? nullptr : pdata.data();
		p.private_data_len = uint8_t(pdata.size());
		Clock::time_point deadline = a.deadline(timeout_);
		if (conn_)
			return "err busy";
		xiw::CmEvent ev = wait_cm([this](auto &e) { return is_request(e); }, deadline);

		auto c = std::make_unique<Conn>();	// its destructor cleans up on errors
		c->id.reset(ev.id);
		std::string got = to_hex(ev.pdata.data(), ev.pdata.size());
		if (reject && rdma_reject(c->id.get(), p.private_data, p.private_data_len))
			return fmt("err reject: %s", strerror(errno));
		if (reject)
			return "ok rejected pdata=" + got;
		if (serve) {
			c->serve = std::make_unique<Serve>();
			c->serve->rlen = rlen;
		}
		std::string e = setup(*c);
		if (e.empty())
			e = post_recvs(*c, recvs, rlen);
		if (e.empty() && rdma_accept(c->id.get(), &p))
			e = fmt("accept: %s", strerror(errno));
		if (!e.empty())
			return "err " + e;
		if (serve)
			c->serve->thread = std::thread(serve_recvs, std::ref(*c));

		ctx_ = c->id->verbs;
		std::string resp = "ok pdata=" + got;
		for (const RegionSpec &s : kRegions)
			if (s.exposed)
				resp += fmt(" %s=0x%08x:0x%llx", s.name, ((*c).*s.r).rkey,
					    (unsigned long long)(uintptr_t)((*c).*s.r).buf.get());
		conn_ = std::move(c);
		return resp + fmt(" len=%zu", kRegionLen);
	}

	// The active side: the peer listens on ADDR PORT.
	std::string connect(const Args &a)
	{
		a.shape(2, { "ird", "ord", "recvs", "rlen", "qpn", "timeout" });
		rdma_conn_param p = {};
		p.responder_resources = uint8_t(a.opt("ird", 4, 255));
		p.initiator_depth = uint8_t(a.opt("ord", 4, 255));
		p.retry_count = p.rnr_retry_count = 7;
		uint64_t recvs = a.opt("recvs", 4, 1 << 20), rlen = a.opt("rlen", 1024, kRcvLen);
		uint64_t port = a.num(1, 65535, "PORT");
		Clock::time_point deadline = a.deadline(timeout_);
		if (conn_)
			return "err busy";
		addrinfo hints = {}, *res;
		hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
		hints.ai_socktype = SOCK_STREAM;
		if (getaddrinfo(a.pos(0).c_str(), std::to_string(port).c_str(), &hints, &res))
			usage_error("ADDR must be an IPv4 or IPv6 literal");
		sockaddr_storage dst = {};
		std::memcpy(&dst, res->ai_addr, std::min<size_t>(res->ai_addrlen, sizeof dst));
		freeaddrinfo(res);

		// Events of the new id are sorted into its queue from the start.
		conn_ = std::make_unique<Conn>();
		Conn &c = *conn_;
		std::string e;
		auto step = [&](rdma_cm_event_type want) {
			xiw::CmEvent ev = wait_cm([&c](auto &ev) { return ev.id == c.id.get(); },
						  deadline);
			if (ev.type != want)
				e = fmt("%s (status %d), not %s", ev.name(), ev.status,
					rdma_event_str(want));
		};
		try {
			if (!(c.id = events_.create_id()))
				e = fmt("create_id: %s", strerror(errno));
			else if (rdma_resolve_addr(c.id.get(), nullptr,
						   reinterpret_cast<sockaddr *>(&dst), 2000))
				e = fmt("resolve_addr: %s", strerror(errno));
			if (e.empty())
				step(RDMA_CM_EVENT_ADDR_RESOLVED);
			if (e.empty() && rdma_resolve_route(c.id.get(), 2000))
				e = fmt("resolve_route: %s", strerror(errno));
			if (e.empty())
				step(RDMA_CM_EVENT_ROUTE_RESOLVED);
		} catch (const Reply &r) {
			e = r.line;
		}
		bool foreign = a.has("qpn");
		p.qp_num = uint32_t(a.opt("qpn", 0, 0xffffff));
		if (e.empty() && !foreign)
			e = setup(c);
		if (e.empty() && !foreign)
			e = post_recvs(c, recvs, rlen);
		if (e.empty() && rdma_connect(c.id.get(), &p))
			e = fmt("connect: %s", strerror(errno));
		if (!e.empty()) {
			close_conn();
			return e.rfind("err ", 0) ? "err " + e : e;
		}
		ctx_ = c.id->verbs;
		std::string resp = "ok";
		for (const RegionSpec &s : kRegions)
			if (s.exposed && !foreign)
				resp += fmt(" %s=0x%08x:0x%llx", s.name, (c.*s.r).rkey,
					    (unsigned long long)(uintptr_t)(c.*s.r).buf.get());
		return resp + fmt(" len=%zu", kRegionLen);
	}

	// A QP that stays idle, on the device of the listener's address.
	std::string idle(const Args &a)
	{
		a.shape(0, { "cqe" });
		int cqe = int(a.opt("cqe", 256, 1 << 24));
		if (conn_)
			return "err busy";
		sockaddr_storage ss = {};
		std::memcpy(&ss, rdma_get_local_addr(listener_.get()), sizeof(sockaddr_in6));
		if (ss.ss_family == AF_INET)
			reinterpret_cast<sockaddr_in *>(&ss)->sin_port = 0;
		else
			reinterpret_cast<sockaddr_in6 *>(&ss)->sin6_port = 0;
		conn_ = std::make_unique<Conn>();
		Conn &c = *conn_;
		std::string e;
		if (!(c.id = events_.create_id()))
			e = fmt("create_id: %s", strerror(errno));
		else if (rdma_bind_addr(c.id.get(), reinterpret_cast<sockaddr *>(&ss)))
			e = fmt("bind_addr: %s", strerror(errno));
		if (e.empty())
			e = setup(c, cqe);
		if (!e.empty()) {
			close_conn();
			return "err " + e;
		}
		return fmt("ok qpn=%u", c.id->qp->qp_num);
	}

	// Deregister a region's MR, waiting at most timeout=S for it.
	std::string dereg(const Args &a)
	{
		a.shape(1, { "timeout" });
		Clock::time_point start = Clock::now(), deadline = a.deadline(timeout_);
		auto s = std::find_if(std::begin(kRegions), std::end(kRegions),
				      [&a](auto &r) { return a.pos(0) == r.name; });
		if (s == std::end(kRegions))
			usage_error("unknown REGION '" + a.pos(0) + "'");
		Conn &c = need_conn();
		Region &r = c.*s->r;
		if (!r.mr)
			return "err not registered";
		// The thread owns the MR from here; the region keeps its rkey.
		auto done = std::make_shared<std::atomic<int>>(-1);
		std::thread t([mr = r.mr.release(), done] {
			int rv = ibv_dereg_mr(mr);
			done->store(rv < 0 ? EIO : rv);
		});
		while (done->load() < 0 && Clock::now() < deadline)
			usleep(1000);
		long ms = long(std::chrono::duration_cast<std::chrono::milliseconds>(
			Clock::now() - start).count());
		if (done->load() < 0) {
			c.deregs.push_back(std::move(t));
			return fmt("err timeout ms=%ld", ms);
		}
		t.join();
		if (int rv = done->load())
			return fmt("err dereg: %s ms=%ld", strerror(err_of(rv)), ms);
		return fmt("ok ms=%ld", ms);
	}

	// The next CM event of the current connection.
	xiw::CmEvent next_event(const Args &a)
	{
		a.shape(0, { "timeout" });
		Clock::time_point deadline = a.deadline(timeout_);
		Conn &c = need_conn();
		return wait_cm([&c](auto &e) { return e.id == c.id.get(); }, deadline);
	}

	std::string established(const Args &a)
	{
		xiw::CmEvent ev = next_event(a);
		return ev.type == RDMA_CM_EVENT_ESTABLISHED ? "ok" : fmt("err %s", ev.name());
	}

	std::string cmevent(const Args &a)
	{
		xiw::CmEvent ev = next_event(a);
		return fmt("ok event=%s status=%d", ev.name(), ev.status);
	}

	std::string post(const Args &a)
	{
		static const std::pair<const char *, ibv_wr_opcode> ops[] = {
			{ "send", IBV_WR_SEND }, { "send_inv", IBV_WR_SEND_WITH_INV },
			{ "write", IBV_WR_RDMA_WRITE }, { "read", IBV_WR_RDMA_READ },
		};
		a.shape(2, { "off", "seed", "stag", "to", "inv", "id", "unsignaled", "solicited",
			     "fence", "sges", "stride" });
		auto op = std::find_if(std::begin(ops), std::end(ops),
				       [&a](auto &o) { return a.pos(0) == o.first; });
		if (op == std::end(ops))
			usage_error("unknown OP '" + a.pos(0) + "'");
		bool read = op->second == IBV_WR_RDMA_READ;
		size_t rlen = read ? kRegionLen : kRcvLen;	// rw or snd
		uint64_t len = a.num(1, kRegionLen, "LEN"), off = a.opt("off", 0, rlen);
		uint64_t nsge = a.opt("sges", 1, kMaxSges), stride = a.opt("stride", 0, rlen);
		if (!nsge || (nsge > 1 && (read || stride < (len + nsge - 1) / nsge)))
			usage_error("sges=N needs a send or write and stride=B of at least LEN/N");
		if (off + (nsge - 1) * stride + (len - len / nsge * (nsge - 1)) > rlen)
			usage_error(fmt("the SGEs exceed the region (%zu bytes)", rlen));
		ibv_send_wr wr = {}, *bad;
		wr.opcode = op->second;
		uint32_t seed = uint32_t(a.opt("seed", 1, UINT32_MAX));
		uint32_t inv = uint32_t(a.opt("inv", 0, UINT32_MAX));
		if (wr.opcode == IBV_WR_SEND_WITH_INV)
			wr.invalidate_rkey = inv;
		wr.wr.rdma.rkey = uint32_t(a.opt("stag", 0, UINT32_MAX));
		wr.wr.rdma.remote_addr = a.opt("to", 0, UINT64_MAX);
		wr.send_flags = a.opt("unsignaled", 0, 1) ? 0 : IBV_SEND_SIGNALED;
		if (a.opt("solicited", 0, 1))
			wr.send_flags |= IBV_SEND_SOLICITED;
		if (a.opt("fence", 0, 1))
			wr.send_flags |= IBV_SEND_FENCE;
		uint64_t id = a.opt("id", 0, UINT64_MAX);
		Conn &c = need_conn();
		wr.wr_id = a.has("id") ? id : c.wr_next;

		Region &r = read ? c.rw : c.snd;
		ibv_sge sge[kMaxSges];
		uint64_t done = 0;
		for (uint64_t i = 0; i < nsge; i++) {
			uint64_t n = i + 1 < nsge ? len / nsge : len - done;
			uint8_t *p = r.buf.get() + off + i * stride;
			if (!read)
				xiw::pattern_fill(p, n, seed, done);
			sge[i] = { uintptr_t(p), uint32_t(n), r.mr->lkey };
			done += n;
		}
		wr.sg_list = sge;
		wr.num_sge = len ? int(nsge) : 0;
		if (int rv = ibv_post_send(c.id->qp, &wr, &bad))
			return fmt("err post: %s", strerror(err_of(rv)));
		if (!a.has("id"))
			c.wr_next++;
		return fmt("ok id=%llu", (unsigned long long)wr.wr_id);
	}

	std::string post_recv(const Args &a)
	{
		a.shape(2, {});
		uint64_t n = a.num(0, 1 << 20, "N"), len = a.num(1, kRcvLen, "LEN");
		if (need_conn().serve)
			return "err serving";
		std::string e = post_recvs(need_conn(), n, len);
		return e.empty() ? "ok" : "err " + e;
	}

	std::string poll(const Args &a)
	{
		a.shape(1, { "timeout" });
		uint64_t want = a.num(0, 1 << 16, "N");
		Clock::time_point deadline = a.deadline(2);
		Conn &c = need_conn();
		if (c.serve)
			return "err serving";
		std::vector<ibv_wc> got;
		while (got.size() < want) {
			ibv_wc wc[16];
			int n = ibv_poll_cq(c.cq.get(), int(std::min<uint64_t>(16, want - got.size())), wc);
			if (n < 0)
				std::fprintf(stderr, "%s: ibv_poll_cq failed (%d)\n", prog, n);
			if (n < 0 || (!n && Clock::now() >= deadline))
				break;
			got.insert(got.end(), wc, wc + n);
			if (!n)
				usleep(100);
		}
		std::string resp = fmt("ok n=%zu", got.size());
		for (const ibv_wc &wc : got)
			resp += describe(wc);
		return resp;
	}

	std::string served(const Args &a)
	{
		a.shape(0, { "min", "timeout" });
		uint64_t min = a.opt("min", 0, UINT64_MAX);
		Clock::time_point deadline = a.deadline(timeout_);
		Conn &c = need_conn();
		if (!c.serve || !c.serve->thread.joinable())
			return "err not serving";
		Serve &s = *c.serve;
		std::unique_lock<std::mutex> g(s.lock);
		bool done = s.changed.wait_until(g, deadline, [&s, min] {
			return s.ok >= min || s.errors || !s.failed.empty();
		});
		std::string counts = fmt("recvs=%llu errors=%llu", (unsigned long long)s.ok,
					 (unsigned long long)s.errors);
		if (!s.failed.empty())
			return "err " + s.failed + " " + counts;
		if (s.ok >= min)
			return "ok " + counts;
		return (done ? "err stopped " : "err timeout ") + counts;
	}

	// check and fill: REGION OFF LEN SEED [first=F].
	std::string pattern(const Args &a, bool check)
	{
		a.shape(4, { "first" });
		auto s = std::find_if(std::begin(kRegions), std::end(kRegions), [&a](auto &r) {
			return a.pos(0) == r.name && r.r != &Conn::dead;
		});
		if (s == std::end(kRegions))
			usage_error("unknown REGION '" + a.pos(0) + "'");
		uint64_t off = a.num(1, kRcvLen, "OFF"), len = a.num(2, kRcvLen, "LEN");
		if (off + len > s->len)
			usage_error(fmt("OFF+LEN exceeds %s (%zu bytes)", s->name, s->len));
		uint32_t seed = uint32_t(a.num(3, UINT32_MAX, "SEED"));
		uint64_t first = a.opt("first", 0, UINT64_MAX);
		uint8_t *p = (need_conn().*s->r).buf.get() + off;
		if (!check) {
			xiw::pattern_fill(p, len, seed, first);
			return "ok";
		}
		long bad = xiw::pattern_mismatch(p, len, seed, first);
		if (bad < 0)
			return "ok";
		return fmt("err mismatch at %ld got 0x%02x want 0x%02x", bad, p[bad],
			   xiw::pattern_byte(seed, first + uint64_t(bad)));
	}

	std::string check(const Args &a) { return pattern(a, true); }
	std::string fill(const Args &a) { return pattern(a, false); }

	std::string state(const Args &a)
	{
		a.shape(0, {});
		ibv_qp_attr attr = {};
		ibv_qp_init_attr init = {};
		if (int rv = ibv_query_qp(need_conn().id->qp, &attr, IBV_QP_STATE, &init))
			return fmt("err query: %s", strerror(err_of(rv)));
		return "ok state=" + name_of(kQpState, attr.qp_state, "STATE_");
	}

	std::string async(const Args &a)
	{
		a.shape(0, { "timeout" });
		Clock::time_point deadline = a.deadline(timeout_);
		if (!ctx_)
			return "err noconn";
		if (!set_nonblocking(ctx_->async_fd))
			return fmt("err async: %s", strerror(errno));
		for (;;) {
			ibv_async_event ev;
			if (!ibv_get_async_event(ctx_, &ev)) {
				std::string name = name_of(kAsyncEvent, ev.event_type, "EVENT_");
				ibv_ack_async_event(&ev);
				return "ok event=" + name;
			}
			if (!again())
				return fmt("err async: %s", strerror(errno));
			if (!wait_readable(ctx_->async_fd, deadline))
				return "err timeout";
		}
	}

	std::string disconnect(const Args &a)
	{
		a.shape(0, {});
		if (rdma_disconnect(need_conn().id.get()))
			return fmt("err disconnect: %s", strerror(errno));
		return "ok";
	}

	std::string close(const Args &a)
	{
		a.shape(0, {});
		close_conn();
		return "ok";
	}

	std::string quit(const Args &a)
	{
		a.shape(0, {});
		shutdown();
		done = true;
		return "ok";
	}
};

sockaddr_storage parse_addr(const char *addr, unsigned port)
{
	addrinfo hints = {}, *res;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	if (getaddrinfo(addr, std::to_string(port).c_str(), &hints, &res))
		xiw::cli::usage_error(kUsage, "ADDR must be an IPv4 or IPv6 literal");
	sockaddr_storage ss = {};
	std::memcpy(&ss, res->ai_addr, std::min<size_t>(res->ai_addrlen, sizeof ss));
	freeaddrinfo(res);
	return ss;
}

} // namespace

int main(int argc, char **argv)
{
	static const option longopts[] = {
		{ "help", no_argument, nullptr, 'h' },
		{ nullptr, 0, nullptr, 0 },
	};
	uint64_t port = 18700;
	double timeout = 10;
	for (int ch; (ch = getopt_long(argc, argv, "p:T:h", longopts, nullptr)) != -1;) {
		if (ch == 'p')
			port = xiw::cli::uint_opt(kUsage, "-p", optarg, 1, 65535);
		else if (ch == 'T')
			timeout = xiw::cli::secs_opt(kUsage, "-T", optarg, 0, 86400);
		else if (ch == 'h')
			xiw::cli::help(kUsage);
		else
			xiw::cli::usage_error(kUsage, "");
	}
	if (optind != argc - 1)
		xiw::cli::usage_error(kUsage, "one ADDR wanted");
	const char *addr = argv[optind];
	sockaddr_storage ss = parse_addr(addr, unsigned(port));

	signal(SIGPIPE, SIG_IGN);	// a vanished peer ends in EOF, not a signal
	Target t(timeout);
	t.listen(reinterpret_cast<sockaddr *>(&ss), addr, unsigned(port));
	std::printf("ready %s %u\n", addr, unsigned(port));
	std::fflush(stdout);

	std::string line;
	while (!t.done && std::getline(std::cin, line)) {
		std::printf("%s\n", t.run(line).c_str());
		std::fflush(stdout);
	}
	t.shutdown();
	return 0;
}
