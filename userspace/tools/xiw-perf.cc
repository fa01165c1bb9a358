// SPDX-License-Identifier: GPL-2.0
//
// xiw-perf: RDMA Write, Read and Send bandwidth and latency between two
// hosts (or namespaces) over librdmacm, IPv4 or IPv6, with every byte
// optionally verified.  Written because Debian 12's perftest resolves its
// rdma_cm addresses as IPv4 only.
//
//   server: xiw-perf -a ADDR [-p PORT] [-T SECS]
//   client: xiw-perf -c ADDR [-p PORT] -t write|read|send -m bw|lat
//                    [-s SIZE] [-n ITERS] [-w WINDOW] [-V] [-b SRC] [-T SECS]
//
// The server binds ADDR (which selects its RDMA device), serves one
// connection and exits.  The client carries the test parameters in its
// connect private data; the server answers with its buffer's address and
// STag, the number of receives it posted and the RDMA Read depth it
// accepted.  Both ends register their buffers anew for every connection.
//
// What moves on the wire:
//   write bw: WINDOW RDMA Writes in flight into the server's slots;
//   read bw:  WINDOW (at most the accepted Read depth) RDMA Reads in
//             flight from the server's slots;
//   send bw:  Sends, at most as many as the server has receives posted:
//             the server returns credits (its cumulative count of posted
//             receives) in small Sends as it reposts;
//   write lat: ping-pong of RDMA Writes; each end watches the last byte
//             of its buffer for the peer's sequence marker;
//   read lat: one RDMA Read at a time;
//   send lat: ping-pong of Sends.
// Every test ends with a DONE Send from the client; the server answers
// with RESULT, which carries the number of messages it checked and how
// many of them were wrong.
//
// With -V every message carries a pattern derived from a seed and its
// sequence number, and the receiving end compares all of it: the server
// for Writes and Sends (the last Write into each of its slots, every
// Send), the client for Reads and for the ping-pong replies.  The server's
// RESULT, and the client's own checks, decide both exit statuses.
//
// The client prints one result line:
//   xiw-perf: write bw 65536 B x 200, window 16: 123.45 MB/s 1883.7 msg/s ...
//   xiw-perf: send lat 64 B x 200: median 31.20 us p99 ... (half round trip)
// Exit 0 on success, 1 on a failed transfer or a verification error, 2 on
// bad usage or a setup error (no device, address, connection).

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <getopt.h>
#include <netdb.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xiw_cli.h"
#include "xiw_verbs_util.h"

namespace {

enum class Test : uint8_t { write = 1, read = 2, send = 3 };
enum class Mode : uint8_t { bw = 1, lat = 2 };

constexpr uint32_t kMagic = 0x5849'5750;	// "XIWP"
constexpr uint8_t kVersion = 1;
constexpr size_t kCtrlSize = 64;
constexpr int kCtrlRecvs = 4;
constexpr size_t kMaxSize = 16u << 20;
constexpr size_t kMaxBuf = 64u << 20;		// per buffer: slots x size
constexpr uint32_t kMaxSlots = 64;

// wr_id: kind in the upper 32 bits, index in the lower.
enum Kind : uint64_t { kData = 1, kCtrlSend, kCtrlRecv, kDataRecv };
uint64_t wrid(Kind k, uint32_t i) { return (uint64_t)k << 32 | i; }
Kind wr_kind(uint64_t id) { return (Kind)(id >> 32); }
uint32_t wr_index(uint64_t id) { return (uint32_t)id; }

const char *prog = "xiw-perf";

[[noreturn]] void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
[[noreturn]] void die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	std::fprintf(stderr, "%s: ", prog);
	std::vfprintf(stderr, fmt, ap);
	std::fputc('\n', stderr);
	va_end(ap);
	std::exit(code);
}

// Big-endian field access for the private data and control messages.
void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, (uint32_t)v);
}

uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) << 32 | get32(p + 4); }

// Connect private data (client to server), 40 bytes:
//   0 magic, 4 version, 5 test, 6 mode, 7 verify, 8 size, 12 iters,
//   16 window, 20 seed, 24 client buffer address, 32 its STag, 36 pad.
struct Request {
	Test test = Test::write;
	Mode mode = Mode::bw;
	bool verify = false;
	uint32_t size = 65536, iters = 1000, window = 16, seed = 1;
	uint64_t addr = 0;
	uint32_t rkey = 0;

	static constexpr size_t len = 40;
	void encode(uint8_t *p) const
	{
		std::memset(p, 0, len);
		put32(p, kMagic);
		p[4] = kVersion;
		p[5] = (uint8_t)test;
		p[6] = (uint8_t)mode;
		p[7] = verify;
		put32(p + 8, size);
		put32(p + 12, iters);
		put32(p + 16, window);
		put32(p + 20, seed);
		put64(p + 24, addr);
		put32(p + 32, rkey);
	}
	// Empty string when @p holds a usable request, the reason otherwise.
	std::string decode(const uint8_t *p, size_t n)
	{
		if (n < len || get32(p) != kMagic)
			return "not an xiw-perf request";
		if (p[4] != kVersion)
			return "request version " + std::to_string(p[4]);
		test = (Test)p[5];
		mode = (Mode)p[6];
		verify = p[7];
		size = get32(p + 8);
		iters = get32(p + 12);
		window = get32(p + 16);
		seed = get32(p + 20);
		addr = get64(p + 24);
		rkey = get32(p + 32);
		if (p[5] < 1 || p[5] > 3 || p[6] < 1 || p[6] > 2)
			return "unknown test or mode";
		if (!size || size > kMaxSize || !iters || !window || window > 1024)
			return "size, iterations or window out of range";
		return "";
	}
};

// Accept private data (server to client), 32 bytes:
//   0 magic, 4 status (0 = accepted), 8 server buffer address, 16 STag,
//   20 slots, 24 receives posted, 28 Read depth accepted.
struct Reply {
	uint32_t status = 0;
	uint64_t addr = 0;
	uint32_t rkey = 0, slots = 0, recvs = 0, ird = 0;

	static constexpr size_t len = 32;
	void encode(uint8_t *p) const
	{
		std::memset(p, 0, len);
		put32(p, kMagic);
		put32(p + 4, status);
		put64(p + 8, addr);
		put32(p + 16, rkey);
		put32(p + 20, slots);
		put32(p + 24, recvs);
		put32(p + 28, ird);
	}
	bool decode(const uint8_t *p, size_t n)
	{
		if (n < len || get32(p) != kMagic)
			return false;
		status = get32(p + 4);
		addr = get64(p + 8);
		rkey = get32(p + 16);
		slots = get32(p + 20);
		recvs = get32(p + 24);
		ird = get32(p + 28);
		return true;
	}
};

// Control messages (Sends): 0 magic, 4 type, 8 value, 16 value2.
enum Ctrl : uint32_t { kDone = 1, kResult = 2, kCredit = 3 };

// The pattern of message @seq: a xorshift stream seeded by seed and seq;
// the pattern of n bytes is the head of every longer one.
void pattern(uint8_t *p, size_t n, uint32_t seed, uint32_t seq)
{
	uint32_t x = seed * 0x9e37'79b1u ^ (seq + 1) * 0x85eb'ca6bu;
	if (!x)
		x = 1;
	size_t i = 0;
	for (; i + 4 <= n; i += 4) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		std::memcpy(p + i, &x, 4);
	}
	if (i < n) {	// the head of the next word: a shorter pattern is a prefix
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		std::memcpy(p + i, &x, n - i);
	}
}

// Does @p hold the first @n bytes of message @seq's pattern?
bool matches(const uint8_t *p, size_t n, uint32_t seed, uint32_t seq, std::vector<uint8_t> &tmp)
{
	tmp.resize(n);
	pattern(tmp.data(), n, seed, seq);
	return !std::memcmp(p, tmp.data(), n);
}

// The sequence marker in the last byte of a write-latency message: never
// 0 (the buffer's initial value) and never the previous one.
uint8_t marker(uint32_t seq) { return (uint8_t)(seq % 255 + 1); }

const char *test_name(Test t)
{
	return t == Test::write ? "write" : t == Test::read ? "read" : "send";
}

const xiw::cli::Usage kUsage = {
	"xiw-perf",
	"usage: xiw-perf -a ADDR [-p PORT] [-T SECS] [-e] [-U]       (server)\n"
	"       xiw-perf -c ADDR [-p PORT] [-t write|read|send] [-m bw|lat]\n"
	"                [-s SIZE] [-n ITERS] [-w WINDOW] [-V] [-b SRC] [-T SECS]\n"
	"                [-D MS] [-e] [-U]\n",
	"NAME\n"
	"    xiw-perf - RDMA Write, Read and Send bandwidth and latency over\n"
	"    librdmacm, IPv4 or IPv6, every byte optionally verified\n"
	"\n"
	"SYNOPSIS\n"
	"    xiw-perf -a ADDR [-p PORT] [-T SECS] [-e] [-U]\n"
	"    xiw-perf -c ADDR [-p PORT] [-t write|read|send] [-m bw|lat]\n"
	"             [-s SIZE] [-n ITERS] [-w WINDOW] [-V] [-b SRC] [-T SECS]\n"
	"             [-D MS] [-e] [-U]\n"
	"\n"
	"DESCRIPTION\n"
	"    The server binds ADDR (which selects its RDMA device), serves one\n"
	"    connection and exits.  The client carries the test's parameters in\n"
	"    its connect private data.  Bandwidth keeps WINDOW operations in\n"
	"    flight (Sends never more than the server has receives posted);\n"
	"    latency is a ping-pong of Writes or Sends, or one Read at a time.\n"
	"    The client prints one result line, e.g.\n"
	"      xiw-perf: write bw 65536 B x 200, window 16: 123.45 MB/s ...\n"
	"      xiw-perf: send lat 64 B x 200: median 31.20 us p99 ...\n"
	"\n"
	"OPTIONS\n"
	"    -a, --address ADDR  serve on ADDR\n"
	"    -c, --connect ADDR  connect to the server at ADDR\n"
	"    -p, --port PORT     port, 1..65535 (default 18600)\n"
	"    -t, --test TEST     write, read or send (default write)\n"
	"    -m, --mode MODE     bw or lat (default bw)\n"
	"    -s, --size SIZE     message size, 1..16777216 bytes (default 65536)\n"
	"    -n, --iters ITERS   messages, 1..100000000 (default 1000)\n"
	"    -w, --window N      operations in flight, 1..1024 (default 16)\n"
	"    -V, --verify        every message carries a pattern that the\n"
	"                        receiving end checks byte for byte\n"
	"    -b, --bind SRC      client: bind to the source address SRC\n"
	"    -D, --start-delay MS\n"
	"                        client: wait MS milliseconds, 0..10000, once\n"
	"                        connected, before the first message (a server\n"
	"                        whose receive path is not ready when its\n"
	"                        accept completes, such as siw's, leaves a\n"
	"                        first message that comes too early unread,\n"
	"                        and a ping-pong sends no second one)\n"
	"    -T, --timeout SECS  give up after SECS, 1..3600 (default 60)\n"
	"    -e, --events        sleep on a completion channel until the CQ has\n"
	"                        a completion, instead of polling it; each end\n"
	"                        decides for itself (give it to both)\n"
	"    -U, --cpu           add \"busy S s\" to the result line: the CPU\n"
	"                        time every CPU of this machine spent outside\n"
	"                        the idle task (/proc/stat: user, nice, system,\n"
	"                        irq, softirq, steal), the client's from its\n"
	"                        first message to its last completion, the\n"
	"                        server's from the connection to the DONE\n"
	"    -h, --help          this text\n"
	"\n"
	"EXIT STATUS\n"
	"    0 success, 1 a failed transfer or a verification error, 2 bad\n"
	"    usage or a setup error (no device, address, connection)\n",
};

// The value named @arg in @names, or a usage error naming the choices.
template <class T>
T pick(const char *what, const char *arg, std::initializer_list<std::pair<const char *, T>> names)
{
	std::string all;
	for (auto &[n, v] : names) {
		if (!std::strcmp(arg, n))
			return v;
		all += all.empty() ? n : std::string(", ") + n;
	}
	xiw::cli::usage_error(kUsage, std::string("unknown ") + what + " '" + arg + "' (" + all + ")");
}

using Clock = std::chrono::steady_clock;

struct Opts {
	bool server = false;
	std::string addr, src;
	std::string port = "18600";
	int timeout_s = 60;
	int start_delay_ms = 0;
	bool events = false;	// -e
	bool cpu = false;	// -U
	Request req;
};

// CPU seconds every CPU of this machine spent outside the idle task so
// far (/proc/stat's first line: user, nice, system, irq, softirq, steal).
double busy_seconds()
{
	unsigned long long v[8] = {};
	FILE *f = std::fopen("/proc/stat", "r");

	if (!f)
		die(2, "/proc/stat: %s", strerror(errno));
	int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			    &v[3], &v[4], &v[5], &v[6], &v[7]);
	std::fclose(f);
	if (n != 8)
		die(2, "/proc/stat: no cpu line");
	return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)sysconf(_SC_CLK_TCK);
}

// " busy S s" for the result line with -U, over the interval that began
// at @b0; nothing without.
std::string busy_note(const Opts &o, double b0)
{
	char s[48];

	if (!o.cpu)
		return "";
	std::snprintf(s, sizeof(s), " busy %.3f s", busy_seconds() - b0);
	return s;
}

sockaddr_storage resolve(const std::string &host, const std::string &port, bool passive)
{
	sockaddr_storage ss;
	if (int rv = xiw::numeric_addr(host, port, ss, passive))
		die(2, "bad address '%s' port '%s': %s", host.c_str(), port.c_str(),
		    gai_strerror(rv));
	return ss;
}

// One end of the connection and everything it owns, destroyed in the
// reverse order of the members: the QP first, the event channel last.
struct Conn {
	Opts o;
	xiw::CmEvents events;
	xiw::CmId listen;
	xiw::CmId id;
	xiw::Memory buf;
	// The control area: kCtrlRecvs receive slots then one send slot per
	// outstanding control Send.
	std::vector<uint8_t> ctrl = std::vector<uint8_t>(kCtrlSize * (kCtrlRecvs + 8));
	xiw::Pd pd;
	xiw::CompChannel ch;	// -e: the CQ's completion events
	xiw::Cq cq;
	xiw::Mr ctrl_mr, mr;
	xiw::CmQp qp;
	uint32_t ctrl_send_next = 0;	// control Sends posted
	uint32_t ctrl_send_done = 0;	// and completed
	bool cq_armed = false;		// -e: since the last event taken
	Clock::time_point deadline;
	uint64_t wrong = 0, checked = 0;
	std::vector<uint8_t> tmp;

	void arm() { deadline = Clock::now() + std::chrono::seconds(o.timeout_s); }
	bool expired() const { return Clock::now() > deadline; }

	// The next CM event, which must be @want.
	xiw::CmEvent event(rdma_cm_event_type want)
	{
		std::optional<xiw::CmEvent> ev = events.next(deadline);
		if (!ev && errno == ETIMEDOUT)
			die(2, "no %s within %d s", rdma_event_str(want), o.timeout_s);
		if (!ev)
			die(2, "rdma_get_cm_event: %s", strerror(errno));
		if (ev->type != want)
			die(2, "waiting for %s, got %s (status %d%s%s)", rdma_event_str(want),
			    ev->name(), ev->status, ev->status < 0 ? ": " : "",
			    ev->status < 0 ? strerror(-ev->status) : "");
		return std::move(*ev);
	}

	// PD, CQ, QP and the registered buffers on id.
	void setup(size_t len, uint32_t sq, uint32_t rq)
	{
		pd.reset(ibv_alloc_pd(id->verbs));
		if (!pd)
			die(2, "ibv_alloc_pd: %s", strerror(errno));
		if (o.events) {
			ch.reset(ibv_create_comp_channel(id->verbs));
			if (!ch)
				die(2, "ibv_create_comp_channel: %s", strerror(errno));
		}
		cq.reset(ibv_create_cq(id->verbs, (int)(sq + rq + 16), nullptr, ch.get(), 0));
		if (!cq)
			die(2, "ibv_create_cq: %s", strerror(errno));
		ibv_qp_init_attr ia = {};
		ia.send_cq = ia.recv_cq = cq.get();
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = sq;
		ia.cap.max_recv_wr = rq;
		ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
		if (rdma_create_qp(id.get(), pd.get(), &ia))
			die(2, "rdma_create_qp (%u send, %u receive WRs): %s", sq, rq,
			    strerror(errno));
		qp.reset(id.get());
		buf = xiw::page_aligned(len);
		if (!buf)
			die(2, "no memory for a %zu byte buffer", len);
		int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
		mr.reset(ibv_reg_mr(pd.get(), buf.get(), len, acc));
		ctrl_mr.reset(ibv_reg_mr(pd.get(), ctrl.data(), ctrl.size(),
					 IBV_ACCESS_LOCAL_WRITE));
		if (!mr || !ctrl_mr)
			die(2, "ibv_reg_mr: %s", strerror(errno));
	}

	void post_send(ibv_wr_opcode op, uint64_t id_, uint8_t *p, size_t n, uint32_t lkey,
		       uint64_t raddr = 0, uint32_t rkey = 0)
	{
		int rv = xiw::post_one_send(id->qp, id_, op, p, (uint32_t)n, lkey, raddr, rkey);
		if (rv)
			die(1, "ibv_post_send: %s", strerror(rv));
	}

	void post_recv(uint64_t id_, uint8_t *p, size_t n, uint32_t lkey)
	{
		int rv = xiw::post_one_recv(id->qp, id_, p, (uint32_t)n, lkey);
		if (rv)
			die(1, "ibv_post_recv: %s", strerror(rv));
	}

	uint8_t *ctrl_recv_slot(uint32_t i) { return ctrl.data() + i * kCtrlSize; }
	void post_ctrl_recv(uint32_t i)
	{
		post_recv(wrid(kCtrlRecv, i), ctrl_recv_slot(i), kCtrlSize, ctrl_mr->lkey);
	}

	// A control Send, in one of 8 send slots; false when all 8 are still
	// in flight.
	bool send_ctrl(uint32_t type, uint64_t v1, uint64_t v2)
	{
		if (ctrl_send_next - ctrl_send_done >= 8)
			return false;
		uint32_t i = ctrl_send_next++;
		uint8_t *p = ctrl.data() + (kCtrlRecvs + i % 8) * kCtrlSize;
		std::memset(p, 0, kCtrlSize);
		put32(p, kMagic);
		put32(p + 4, type);
		put64(p + 8, v1);
		put64(p + 16, v2);
		post_send(IBV_WR_SEND, wrid(kCtrlSend, i), p, 32, ctrl_mr->lkey);
		return true;
	}

	// Completions, any kind; fatal on error status or timeout.  With
	// @flush_ok flushed work requests only set @flushed: the peer may
	// disconnect as soon as it has what it waited for.
	bool flushed = false;
	int poll(ibv_wc *wc, int max, bool flush_ok = false)
	{
		for (;;) {
			int n = ibv_poll_cq(cq.get(), max, wc);
			if (n < 0)
				die(1, "ibv_poll_cq failed");
			for (int i = 0; i < n; i++) {
				if (flush_ok && wc[i].status == IBV_WC_WR_FLUSH_ERR) {
					flushed = true;
					continue;
				}
				if (wc[i].status != IBV_WC_SUCCESS)
					die(1, "completion error: %s (vendor error %u, opcode %d)",
					    ibv_wc_status_str(wc[i].status), wc[i].vendor_err,
					    wc[i].opcode);
				if (wr_kind(wc[i].wr_id) == kCtrlSend)
					ctrl_send_done++;
			}
			if (n)
				return n;
			if (expired())
				die(1, "no completion within %d s", o.timeout_s);
			if (!o.events) {
				sched_yield();
				continue;
			}
			// Arm, then look once more: a completion that came
			// before the arm raises no event.
			if (!cq_armed) {
				if (ibv_req_notify_cq(cq.get(), 0))
					die(1, "ibv_req_notify_cq failed");
				cq_armed = true;
				continue;
			}
			if (xiw::take_cq_event(ch.get(), 100) < 0)
				die(1, "ibv_get_cq_event: %s", strerror(errno));
			cq_armed = false;
		}
	}

	// Parse a control message in receive slot @p: its type and values.
	static uint32_t ctrl_parse(const uint8_t *p, uint32_t len, uint64_t *v1, uint64_t *v2)
	{
		if (len < 24 || get32(p) != kMagic)
			die(1, "malformed control message (%u bytes)", len);
		*v1 = get64(p + 8);
		*v2 = get64(p + 16);
		return get32(p + 4);
	}
};

uint32_t slots_for(uint32_t size, uint32_t iters)
{
	uint32_t s = (uint32_t)std::max<size_t>(1, kMaxBuf / size);
	return std::min({ s, kMaxSlots, iters });
}

// ---- server ----

// Receives for the Send tests: slot size.
size_t recv_slot(const Request &r) { return std::max<size_t>(r.size, kCtrlSize); }

int serve(Opts &o)
{
	Conn c;
	c.o = o;
	if (!c.events.open())
		die(2, "rdma_create_event_channel: %s", strerror(errno));
	c.listen = c.events.create_id();
	if (!c.listen)
		die(2, "rdma_create_id: %s", strerror(errno));
	sockaddr_storage sa = resolve(o.addr, o.port, true);
	if (rdma_bind_addr(c.listen.get(), reinterpret_cast<sockaddr *>(&sa)))
		die(2, "rdma_bind_addr %s port %s: %s", o.addr.c_str(), o.port.c_str(),
		    strerror(errno));
	if (rdma_listen(c.listen.get(), 4))
		die(2, "rdma_listen: %s", strerror(errno));
	std::printf("%s: listening on %s port %s\n", prog, o.addr.c_str(), o.port.c_str());
	std::fflush(stdout);

	c.arm();
	xiw::CmEvent ev = c.event(RDMA_CM_EVENT_CONNECT_REQUEST);
	c.arm();
	c.id.reset(ev.id);
	Request r;
	std::string why = r.decode(ev.pdata.data(), ev.pdata.size());
	// The client's IRD and ORD (as our ORD and IRD at most).
	uint8_t cli_ird = ev.conn.initiator_depth;
	uint8_t cli_ord = ev.conn.responder_resources;
	if (!why.empty()) {
		rdma_reject(c.id.get(), nullptr, 0);
		die(2, "rejected a connection: %s", why.c_str());
	}
	ibv_device_attr da;
	if (ibv_query_device(c.id->verbs, &da))
		die(2, "ibv_query_device: %s", strerror(errno));

	uint32_t slots = 1, recvs = 2;
	size_t len = r.size;
	if (r.mode == Mode::bw && r.test != Test::send) {
		slots = slots_for(r.size, r.iters);
		len = (size_t)slots * r.size;
	} else if (r.test == Test::send) {
		recvs = r.mode == Mode::bw ? std::min<uint32_t>(r.window, 512) : 2;
		slots = recvs;
		len = recvs * recv_slot(r);
	} else if (r.test == Test::write) {
		len = 2 * (size_t)r.size;	// receive area, then the source
	}
	c.setup(len, 16 + (r.test == Test::write && r.mode == Mode::lat ? 2 : 0),
		recvs + kCtrlRecvs);
	if (r.test == Test::read && r.mode == Mode::bw) {
		for (uint32_t s = 0; s < slots; s++)
			pattern(c.buf.get() + (size_t)s * r.size, r.size, r.seed, s);
	} else if (r.test == Test::read) {
		pattern(c.buf.get(), r.size, r.seed, 0);
	}
	if (r.test == Test::send) {
		for (uint32_t i = 0; i < recvs; i++)
			c.post_recv(wrid(kDataRecv, i), c.buf.get() + i * recv_slot(r),
				    recv_slot(r), c.mr->lkey);
	} else {
		for (uint32_t i = 0; i < kCtrlRecvs; i++)
			c.post_ctrl_recv(i);
	}

	Reply rep;
	rep.addr = (uintptr_t)c.buf.get();
	rep.rkey = c.mr->rkey;
	rep.slots = slots;
	rep.recvs = recvs;
	uint32_t ird = std::min<uint32_t>(cli_ord, (uint32_t)da.max_qp_rd_atom);
	rep.ird = ird;
	uint8_t pd[Reply::len];
	rep.encode(pd);
	rdma_conn_param cp = {};
	cp.private_data = pd;
	cp.private_data_len = sizeof(pd);
	cp.responder_resources = (uint8_t)ird;
	cp.initiator_depth = (uint8_t)std::min<uint32_t>(cli_ird, (uint32_t)da.max_qp_init_rd_atom);
	if (rdma_accept(c.id.get(), &cp))
		die(2, "rdma_accept: %s", strerror(errno));
	c.event(RDMA_CM_EVENT_ESTABLISHED);

	ibv_wc wc[32];
	uint64_t v1 = 0, v2 = 0;
	bool done = false;
	const char *what = test_name(r.test);
	double busy0 = o.cpu ? busy_seconds() : 0;

	if (r.test == Test::send) {
		// Data receives in order; message iters is the DONE.
		uint32_t got = 0, posted = recvs, credited = recvs;
		uint32_t need = r.iters + 1;	// receives the client will use
		while (!done) {
			int n = c.poll(wc, 32);
			for (int k = 0; k < n; k++) {
				if (wr_kind(wc[k].wr_id) != kDataRecv)
					continue;	// our Sends
				uint32_t slot = wr_index(wc[k].wr_id);
				uint8_t *p = c.buf.get() + slot * recv_slot(r);
				if (got == r.iters) {
					if (c.ctrl_parse(p, wc[k].byte_len, &v1, &v2) != kDone)
						die(1, "expected DONE after %u messages", got);
					done = true;
					break;
				}
				if (wc[k].byte_len != r.size) {
					c.wrong++;
				} else if (r.verify) {
					c.checked++;
					if (!matches(p, r.size, r.seed, got, c.tmp))
						c.wrong++;
				}
				got++;
				if (r.mode == Mode::lat) {
					c.post_recv(wc[k].wr_id, p, recv_slot(r), c.mr->lkey);
					// The reply carries the same pattern back.
					c.post_send(IBV_WR_SEND, wrid(kData, 0), p, r.size, c.mr->lkey);
					continue;
				}
				if (posted < need) {
					c.post_recv(wc[k].wr_id, p, recv_slot(r), c.mr->lkey);
					posted++;
				}
			}
			// Credits: one message for the whole batch, cumulative, so
			// one left out while 8 are in flight is covered by the next.
			if (r.mode == Mode::bw && !done &&
			    (posted - credited >= std::max(1u, recvs / 2) ||
			     (posted == need && credited < need)) &&
			    c.send_ctrl(kCredit, posted, 0))
				credited = posted;
		}
	} else if (r.test == Test::write && r.mode == Mode::lat) {
		// Wait for the marker of ping i, send pong i.
		volatile uint8_t *last = c.buf.get() + r.size - 1;
		uint8_t *src = c.buf.get() + r.size;
		for (uint32_t i = 0; i < r.iters; i++) {
			while (*last != marker(i)) {
				if (c.expired())
					die(1, "write lat: no message %u within %d s", i, o.timeout_s);
				sched_yield();
			}
			if (r.verify) {
				c.checked++;
				if (!matches(c.buf.get(), r.size - 1, r.seed, i, c.tmp))
					c.wrong++;
			}
			if (r.verify)
				pattern(src, r.size, r.seed, i);
			src[r.size - 1] = marker(i);
			c.post_send(IBV_WR_RDMA_WRITE, wrid(kData, i), src, r.size, c.mr->lkey,
				    r.addr, r.rkey);
			c.poll(wc, 1);
		}
	}
	if (r.test != Test::send) {
		// Writes and Reads: the client's DONE ends it.
		while (!done) {
			int n = c.poll(wc, 32);
			for (int k = 0; k < n; k++) {
				if (wr_kind(wc[k].wr_id) != kCtrlRecv)
					continue;
				uint8_t *p = c.ctrl_recv_slot(wr_index(wc[k].wr_id));
				if (c.ctrl_parse(p, wc[k].byte_len, &v1, &v2) != kDone)
					die(1, "expected DONE");
				done = true;
			}
		}
		if (r.test == Test::write && r.mode == Mode::bw && r.verify) {
			// Each slot holds the last Write into it.
			for (uint32_t s = 0; s < slots; s++) {
				uint32_t last = s + (r.iters - 1 - s) / slots * slots;
				c.checked++;
				if (!matches(c.buf.get() + (size_t)s * r.size, r.size, r.seed, last,
					     c.tmp))
					c.wrong++;
			}
		}
	}
	std::string busy = busy_note(o, busy0);
	while (!c.send_ctrl(kResult, c.checked, c.wrong))
		c.poll(wc, 32);
	// Every Send, the RESULT last, has completed, or the client, which
	// disconnects once it has the RESULT, got it first.
	while (c.ctrl_send_done != c.ctrl_send_next && !c.flushed)
		c.poll(wc, 32, true);
	std::printf("%s: %s %s %u B x %u: %" PRIu64 " checked, %" PRIu64 " wrong%s\n", prog,
		    what, r.mode == Mode::bw ? "bw" : "lat", r.size, r.iters, c.checked, c.wrong,
		    busy.c_str());
	c.event(RDMA_CM_EVENT_DISCONNECTED);
	return c.wrong ? 1 : 0;
}

// ---- client ----

double pct(std::vector<double> &v, double p)
{
	std::sort(v.begin(), v.end());
	size_t i = std::min(v.size() - 1, (size_t)(p * (double)(v.size() - 1) + 0.5));
	return v[i];
}

int run_client(Opts &o)
{
	Request &r = o.req;
	Conn c;
	c.o = o;
	c.arm();
	if (!c.events.open())
		die(2, "rdma_create_event_channel: %s", strerror(errno));
	c.id = c.events.create_id();
	if (!c.id)
		die(2, "rdma_create_id: %s", strerror(errno));
	rdma_cm_id *id = c.id.get();
	sockaddr_storage dst = resolve(o.addr, o.port, false), src;
	sockaddr *srcp = nullptr;
	if (!o.src.empty()) {
		src = resolve(o.src, "0", false);
		srcp = reinterpret_cast<sockaddr *>(&src);
	}
	if (rdma_resolve_addr(id, srcp, reinterpret_cast<sockaddr *>(&dst), 5000))
		die(2, "rdma_resolve_addr %s: %s", o.addr.c_str(), strerror(errno));
	c.event(RDMA_CM_EVENT_ADDR_RESOLVED);
	if (rdma_resolve_route(id, 5000))
		die(2, "rdma_resolve_route: %s", strerror(errno));
	c.event(RDMA_CM_EVENT_ROUTE_RESOLVED);

	ibv_device_attr da;
	if (ibv_query_device(c.id->verbs, &da))
		die(2, "ibv_query_device: %s", strerror(errno));
	uint32_t win = r.mode == Mode::bw ? r.window : 1;
	win = std::min<uint32_t>(win, (uint32_t)std::max<size_t>(1, kMaxBuf / r.size));
	size_t len = (size_t)win * r.size;
	if (r.mode == Mode::lat)
		len = 2 * (size_t)std::max<size_t>(r.size, kCtrlSize);
	c.setup(len, win + 16, kCtrlRecvs + 2);
	r.addr = (uintptr_t)c.buf.get();
	r.rkey = c.mr->rkey;
	if (r.seed == 1)
		r.seed = (uint32_t)getpid() * 2654435761u | 1;

	// Send latency: replies land in two receives of full size; all other
	// tests receive only control messages.
	bool data_recvs = r.test == Test::send && r.mode == Mode::lat;
	size_t rslot = std::max<size_t>(r.size, kCtrlSize);
	if (data_recvs) {
		for (uint32_t i = 0; i < 2; i++)
			c.post_recv(wrid(kDataRecv, i), c.buf.get() + i * rslot, rslot, c.mr->lkey);
	} else {
		for (uint32_t i = 0; i < kCtrlRecvs; i++)
			c.post_ctrl_recv(i);
	}

	uint8_t pd[Request::len];
	r.encode(pd);
	rdma_conn_param cp = {};
	cp.private_data = pd;
	cp.private_data_len = sizeof(pd);
	cp.initiator_depth = (uint8_t)std::min(da.max_qp_init_rd_atom, 255);
	cp.responder_resources = (uint8_t)std::min(da.max_qp_rd_atom, 255);
	if (rdma_connect(id, &cp))
		die(2, "rdma_connect: %s", strerror(errno));
	xiw::CmEvent ev = c.event(RDMA_CM_EVENT_ESTABLISHED);
	Reply rep;
	bool ok = rep.decode(ev.pdata.data(), ev.pdata.size());
	if (!ok || rep.status)
		die(2, "the server's accept carries no usable reply");
	if (r.test == Test::read && r.mode == Mode::bw) {
		if (!rep.ird)
			die(2, "the server accepted no RDMA Reads (IRD 0)");
		win = std::min(win, rep.ird);
	}

	ibv_wc wc[32];
	uint64_t v1 = 0, v2 = 0;
	uint8_t *mine = c.buf.get();
	std::vector<double> lat;
	if (o.start_delay_ms)
		std::this_thread::sleep_for(std::chrono::milliseconds(o.start_delay_ms));
	double busy0 = o.cpu ? busy_seconds() : 0;
	auto t0 = Clock::now();
	const char *what = test_name(r.test);

	if (r.mode == Mode::bw) {
		uint32_t posted = 0, done = 0;
		uint64_t credit = r.test == Test::send ? rep.recvs : UINT64_MAX;
		auto note_ctrl = [&](const ibv_wc &w) {
			uint8_t *p = c.ctrl_recv_slot(wr_index(w.wr_id));
			uint32_t t = c.ctrl_parse(p, w.byte_len, &v1, &v2);
			if (t != kCredit)
				die(1, "unexpected control message %u", t);
			credit = std::max<uint64_t>(credit, v1);
			c.post_ctrl_recv(wr_index(w.wr_id));
		};
		while (done < r.iters) {
			while (posted < r.iters && posted - done < win && posted < credit) {
				uint8_t *p = mine + (size_t)(posted % win) * r.size;
				if (r.verify && r.test != Test::read)
					pattern(p, r.size, r.seed, posted);
				uint32_t rs = posted % rep.slots;
				uint64_t ra = rep.addr + (uint64_t)rs * r.size;
				if (r.test == Test::write)
					c.post_send(IBV_WR_RDMA_WRITE, wrid(kData, posted), p, r.size,
						    c.mr->lkey, ra, rep.rkey);
				else if (r.test == Test::read)
					c.post_send(IBV_WR_RDMA_READ, wrid(kData, posted), p, r.size,
						    c.mr->lkey, ra, rep.rkey);
				else
					c.post_send(IBV_WR_SEND, wrid(kData, posted), p, r.size,
						    c.mr->lkey);
				posted++;
			}
			int n = c.poll(wc, 32);
			for (int k = 0; k < n; k++) {
				Kind kd = wr_kind(wc[k].wr_id);
				if (kd == kCtrlRecv) {
					note_ctrl(wc[k]);
					continue;
				}
				if (kd != kData)
					continue;
				uint32_t i = wr_index(wc[k].wr_id);
				if (i != done)
					die(1, "completion %u out of order (expected %u)", i, done);
				if (r.test == Test::read && r.verify) {
					c.checked++;
					if (!matches(mine + (size_t)(i % win) * r.size, r.size, r.seed,
						     i % rep.slots, c.tmp))
						c.wrong++;
				}
				done++;
			}
		}
		auto t1 = Clock::now();
		std::string busy = busy_note(o, busy0);
		// The DONE needs a credit in the Send test.
		while (r.iters >= credit) {
			int n = c.poll(wc, 32);
			for (int k = 0; k < n; k++)
				if (wr_kind(wc[k].wr_id) == kCtrlRecv)
					note_ctrl(wc[k]);
		}
		double s = std::chrono::duration<double>(t1 - t0).count();
		double bytes = (double)r.size * r.iters;
		std::printf("%s: %s bw %u B x %u, window %u: %.2f MB/s %.1f msg/s %.3f s%s%s\n",
			    prog, what, r.size, r.iters, win, bytes / s / 1e6, r.iters / s, s,
			    r.verify ? " (verified)" : "", busy.c_str());
	} else {
		volatile uint8_t *last = mine + r.size - 1;
		uint8_t *src = mine + std::max<size_t>(r.size, kCtrlSize);
		for (uint32_t i = 0; i < r.iters; i++) {
			if (r.verify && r.test != Test::read)
				pattern(src, r.size, r.seed, i);
			auto a = Clock::now();
			if (r.test == Test::write) {
				src[r.size - 1] = marker(i);
				c.post_send(IBV_WR_RDMA_WRITE, wrid(kData, i), src, r.size, c.mr->lkey,
					    rep.addr, rep.rkey);
				c.poll(wc, 1);
				while (*last != marker(i)) {
					if (c.expired())
						die(1, "write lat: no reply %u within %d s", i, o.timeout_s);
					sched_yield();
				}
				if (r.verify) {
					c.checked++;
					if (!matches(mine, r.size - 1, r.seed, i, c.tmp))
						c.wrong++;
				}
			} else if (r.test == Test::read) {
				c.post_send(IBV_WR_RDMA_READ, wrid(kData, i), mine, r.size, c.mr->lkey,
					    rep.addr, rep.rkey);
				c.poll(wc, 1);
				if (r.verify) {
					c.checked++;
					if (!matches(mine, r.size, r.seed, 0, c.tmp))
						c.wrong++;
				}
			} else {
				c.post_send(IBV_WR_SEND, wrid(kData, i), src, r.size, c.mr->lkey);
				bool sent = false, back = false;
				while (!sent || !back) {
					int n = c.poll(wc, 2);
					for (int k = 0; k < n; k++) {
						if (wr_kind(wc[k].wr_id) == kData) {
							sent = true;
							continue;
						}
						uint32_t slot = wr_index(wc[k].wr_id);
						uint8_t *p = c.buf.get() + slot * rslot;
						if (wc[k].byte_len != r.size)
							die(1, "send lat: reply %u has %u bytes", i,
							    wc[k].byte_len);
						if (r.verify) {
							c.checked++;
							if (!matches(p, r.size, r.seed, i, c.tmp))
								c.wrong++;
						}
						c.post_recv(wc[k].wr_id, p, rslot, c.mr->lkey);
						back = true;
					}
				}
			}
			auto b = Clock::now();
			double us = std::chrono::duration<double, std::micro>(b - a).count();
			lat.push_back(r.test == Test::read ? us : us / 2);
		}
		double avg = 0;
		for (double v : lat)
			avg += v;
		avg /= (double)lat.size();
		double mn = pct(lat, 0), med = pct(lat, 0.5), p99 = pct(lat, 0.99), mx = pct(lat, 1);
		std::printf("%s: %s lat %u B x %u: median %.2f us avg %.2f min %.2f p99 %.2f max %.2f (%s)%s\n",
			    prog, what, r.size, r.iters, med, avg, mn, p99, mx,
			    r.test == Test::read ? "round trip" : "half round trip",
			    r.verify ? " (verified)" : "");
	}

	// DONE, then the server's RESULT.
	c.send_ctrl(kDone, 0, 0);
	bool result = false;
	while (!result) {
		int n = c.poll(wc, 32);
		for (int k = 0; k < n; k++) {
			Kind kd = wr_kind(wc[k].wr_id);
			if (kd != kCtrlRecv && kd != kDataRecv)
				continue;
			uint8_t *p = kd == kCtrlRecv ? c.ctrl_recv_slot(wr_index(wc[k].wr_id)) :
				     c.buf.get() + wr_index(wc[k].wr_id) * rslot;
			uint32_t t = c.ctrl_parse(p, wc[k].byte_len, &v1, &v2);
			if (t == kCredit) {
				c.post_ctrl_recv(wr_index(wc[k].wr_id));
				continue;
			}
			if (t != kResult)
				die(1, "expected RESULT, got control message %u", t);
			result = true;
		}
	}
	if (rdma_disconnect(id))
		die(1, "rdma_disconnect: %s", strerror(errno));
	c.event(RDMA_CM_EVENT_DISCONNECTED);
	int rc = 0;
	if (r.verify) {
		std::printf("%s: server checked %" PRIu64 " messages, %" PRIu64
			    " wrong; client checked %" PRIu64 ", %" PRIu64 " wrong\n",
			    prog, v1, v2, c.checked, c.wrong);
		if (!v1 && !c.checked)
			rc = 1;
	}
	if (v2 || c.wrong)
		rc = 1;
	return rc;
}

} // namespace

int main(int argc, char **argv)
{
	Opts o;
	static const option longopts[] = {
		{ "address", required_argument, nullptr, 'a' },
		{ "connect", required_argument, nullptr, 'c' },
		{ "bind", required_argument, nullptr, 'b' },
		{ "port", required_argument, nullptr, 'p' },
		{ "test", required_argument, nullptr, 't' },
		{ "mode", required_argument, nullptr, 'm' },
		{ "size", required_argument, nullptr, 's' },
		{ "iters", required_argument, nullptr, 'n' },
		{ "window", required_argument, nullptr, 'w' },
		{ "verify", no_argument, nullptr, 'V' },
		{ "timeout", required_argument, nullptr, 'T' },
		{ "start-delay", required_argument, nullptr, 'D' },
		{ "events", no_argument, nullptr, 'e' },
		{ "cpu", no_argument, nullptr, 'U' },
		{ "help", no_argument, nullptr, 'h' },
		{ nullptr, 0, nullptr, 0 },
	};
	using xiw::cli::uint_opt;
	int ch;
	bool client = false;
	while ((ch = getopt_long(argc, argv, "a:c:b:p:t:m:s:n:w:VT:D:eUh", longopts, nullptr)) != -1) {
		switch (ch) {
		case 'a':
			o.server = true;
			o.addr = optarg;
			break;
		case 'c':
			client = true;
			o.addr = optarg;
			break;
		case 'b':
			o.src = optarg;
			break;
		case 'p':
			o.port = std::to_string(uint_opt(kUsage, "-p", optarg, 1, 65535));
			break;
		case 't':
			o.req.test = pick<Test>("test", optarg, { { "write", Test::write },
								  { "read", Test::read },
								  { "send", Test::send } });
			break;
		case 'm':
			o.req.mode = pick<Mode>("mode", optarg,
						{ { "bw", Mode::bw }, { "lat", Mode::lat } });
			break;
		case 's':
			o.req.size = (uint32_t)uint_opt(kUsage, "-s", optarg, 1, kMaxSize);
			break;
		case 'n':
			o.req.iters = (uint32_t)uint_opt(kUsage, "-n", optarg, 1, 100000000);
			break;
		case 'w':
			o.req.window = (uint32_t)uint_opt(kUsage, "-w", optarg, 1, 1024);
			break;
		case 'V':
			o.req.verify = true;
			break;
		case 'T':
			o.timeout_s = (int)uint_opt(kUsage, "-T", optarg, 1, 3600);
			break;
		case 'D':
			o.start_delay_ms = (int)uint_opt(kUsage, "-D", optarg, 0, 10000);
			break;
		case 'e':
			o.events = true;
			break;
		case 'U':
			o.cpu = true;
			break;
		case 'h':
			xiw::cli::help(kUsage);
		default:
			xiw::cli::usage_error(kUsage, "");
		}
	}
	if (o.server == client)
		xiw::cli::usage_error(kUsage, "one of -a and -c");
	if (optind != argc)
		xiw::cli::usage_error(kUsage, std::string("unexpected argument '") + argv[optind] + "'");
	return o.server ? serve(o) : run_client(o);
}
