// SPDX-License-Identifier: GPL-2.0
//
// xiw-verbs-fuzz: random verbs against an xiw device from an unprivileged
// process's point of view, through rdma-core's unmodified libsiw provider
// (and librdmacm for connected QPs), while a second thread writes random
// bytes into the queue rings the process shares with the kernel.
//
//   xiw-verbs-fuzz [-d DEV] [-a ADDR [-p PORT]] [--seed N] [--ops N]
//                  [--time S] [--no-scribble] [--hang S] [-v]
//   xiw-verbs-fuzz --ring-race N [-d DEV] [-a ADDR [-p PORT]]
//                  [--race-limit S] [-v]
//
// Fuzz mode.  One thread runs a seeded random sequence of verbs: PDs, MRs
// (odd addresses and lengths, every access flag, unmapped memory), CQs
// (sizes, completion channels, vectors, resize), QPs (legal and illegal
// capabilities and types, legal and illegal state transitions), SRQs,
// post send/recv with random opcodes, flags and SGE lists (valid and
// invalid lkeys, addresses, lengths), poll, arm and event reads, the send
// doorbell as a bare system call, mmap() of live, destroyed and reserved
// ring keys, and with -a loopback connections through rdma_cm on ADDR
// (connect, accept or reject, disconnect, abort), which carry the posted
// work.  Every object is "clean" or "dirty": a second thread (the
// scribbler) writes into the rings of dirty CQs, QPs and SRQs through a
// mapping of its own (found in /proc/self/maps, mapped again through the
// verbs device file, so libsiw's munmap at destroy does not pull the
// memory from under it): random bytes, plausible work requests, VALID
// flags set and cleared, the CQ's notification word.  Dirty QPs use dirty
// CQs only, so the completions of clean CQs are kernel-made and are
// checked:
//   - every completion names a live QP of this CQ (or one destroyed
//     after its last completion could have been written), and a work
//     request that QP has outstanding on that queue, each once;
//   - completions of a queue come in posting order (RDMA Reads, which
//     complete with their response, among themselves, the other send
//     work requests among themselves): a later one never overtakes a
//     signalled earlier one unless the CQ may have overflowed;
//   - a status libsiw can report, a successful opcode that matches the
//     request, no more bytes than posted;
//   - never a success on a QP that was never connected, and flushes only
//     there;
//   - a never-connected QP moved to ERROR returns all its work at once
//     (when its CQs cannot have overflowed);
//   - at most one CQ event per arming.
// Also checked: a never-connected QP's state is what its last successful
// modify left (RTS and SQE refused, ERROR and RESET as the state table
// says), attributes of a refused modify do not take effect, out-of-range
// capabilities are refused, destroying an object nothing uses succeeds
// and one in use fails, mmap() of a destroyed or reserved key, of a wrong
// size or private fails, the CM ends every connection with an event on
// both sides, async events name live objects.  Errors of single verbs
// are expected (that is the point) and only counted.  Any call that does
// not return within --hang seconds (60), or a CM event that does not come,
// is a kernel hang: the tool prints the main thread's kernel stack and
// fails.  Without --ops and --time it runs 10000 operations; an operation
// is one verbs, rdma_cm, mmap or doorbell call.  The last line is the
// summary: operations, wall time, operations per second and the seed.
//
// Ring-race mode (issue 32, finding 4): user QPs whose SQ and RQ slots a
// racing thread keeps marking VALID, as fast as it can, while the main
// thread moves the QP to ERROR (the flush), rings the doorbell in ERROR
// (a flush again), or destroys it; with -a also a connected QP whose RQ
// is raced while its peer disconnects (the flush then runs in the kernel's
// own context).  The racer and the main thread run on different CPUs
// (for the connected QP the racer may run on any).
// A flush that follows the racer (unbounded) keeps the call in the kernel
// for as long as the racer goes on: the racer gives up after --race-limit
// seconds (10) of one call and the run fails; a bounded one returns at
// once and completes no more than one ring's worth per queue, which is
// checked as well.
//
// Exit status: 0 passed, 1 a kernel bug was seen, 2 usage or setup error,
// 4 the device (or a second CPU for --ring-race) is missing.

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/xiw-abi.h>

#include <arpa/inet.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "xiw_cli.h"
#include "xiw_verbs_util.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Opts {
	std::string dev = "xiw0";
	std::string addr;
	uint16_t port = 7174;
	uint64_t seed = 0;
	bool seed_given = false;
	uint64_t ops = 0;
	double time = 0;
	bool scribble = true;
	double hang = 60;
	unsigned race_rounds = 0;
	double race_limit = 10;
	bool verbose = false;
};

Opts g_opt;
pid_t g_main_tid;
std::atomic<uint64_t> g_ops{0};

// libsiw's post calls return negative errnos, the others positive ones.
const char *err_str(int rv)
{
	return strerror(rv < 0 ? -rv : rv);
}

double secs_since(Clock::time_point t)
{
	return std::chrono::duration<double>(Clock::now() - t).count();
}

int64_t now_ns()
{
	return std::chrono::duration_cast<std::chrono::nanoseconds>(
		       Clock::now().time_since_epoch()).count();
}

// The last operations, for the report of a failure.
class OpLog {
public:
	void add(const char *fmt, ...) __attribute__((format(printf, 2, 3)))
	{
		char buf[256];
		va_list ap;
		va_start(ap, fmt);
		std::vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
		std::lock_guard<std::mutex> l(mu_);
		ring_[n_++ % ring_.size()] = buf;
		if (g_opt.verbose)
			std::printf("# %s\n", buf);
	}

	void dump()
	{
		std::lock_guard<std::mutex> l(mu_);
		size_t first = n_ > ring_.size() ? n_ - ring_.size() : 0;
		std::printf("# the last %zu operations:\n", n_ - first);
		for (size_t i = first; i < n_; i++)
			std::printf("#   %s\n", ring_[i % ring_.size()].c_str());
	}

private:
	std::mutex mu_;
	std::array<std::string, 40> ring_;
	size_t n_ = 0;
};

OpLog g_log;

// The call the main thread is in (for the hang watchdog).
std::atomic<int64_t> g_call_start{0};
std::atomic<const char *> g_call_name{""};

struct InCall {
	explicit InCall(const char *name)
	{
		g_call_name = name;
		g_call_start = now_ns();
	}
	~InCall() { g_call_start = 0; }
	InCall(const InCall &) = delete;
	InCall &operator=(const InCall &) = delete;
};

// @fn() (a library or system call) run as @name's call in progress; its
// result.
template <class F>
auto in_call(const char *name, F &&fn)
{
	InCall ic(name);
	return fn();
}

void print_kernel_stack()
{
	char path[64];
	std::snprintf(path, sizeof(path), "/proc/self/task/%d/stack", (int)g_main_tid);
	FILE *f = std::fopen(path, "r");
	if (!f)
		return;
	std::printf("# kernel stack of the main thread:\n");
	char line[256];
	while (std::fgets(line, sizeof(line), f))
		std::printf("#   %s", line);
	std::fclose(f);
}

// A kernel bug (or what can only be one): report and end the process at
// once, leaving every object to the kernel's cleanup.
[[noreturn]] void bug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] void bug(const char *fmt, ...)
{
	static std::mutex once;
	once.lock();	// never unlocked: one report
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	std::vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	std::printf("not ok - xiw-verbs-fuzz: %s\n", buf);
	std::printf("# seed %" PRIu64 ", after %" PRIu64 " operations\n", g_opt.seed,
		    g_ops.load());
	g_log.dump();
	if (syscall(SYS_gettid) != g_main_tid)
		print_kernel_stack();	// where the main thread hangs
	std::fflush(stdout);
	std::_Exit(1);
}

[[noreturn]] void setup_failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] void setup_failed(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	std::fputs("xiw-verbs-fuzz: ", stderr);
	std::vfprintf(stderr, fmt, ap);
	std::fputs("\n", stderr);
	va_end(ap);
	std::exit(2);
}

// Fails the run when the main thread stays in one call for --hang seconds.
class Watchdog {
public:
	void start()
	{
		thr_ = std::thread([this] {
			const auto limit = static_cast<int64_t>(g_opt.hang * 1e9);
			while (!stop_) {
				std::this_thread::sleep_for(std::chrono::milliseconds(200));
				int64_t t = g_call_start;
				if (t && now_ns() - t > limit)
					bug("%s has not returned after %.0f s", g_call_name.load(),
					    g_opt.hang);
			}
		});
	}
	~Watchdog()
	{
		stop_ = true;
		if (thr_.joinable())
			thr_.join();
	}

private:
	std::thread thr_;
	std::atomic<bool> stop_{false};
};

struct Rng {
	std::mt19937_64 g;

	explicit Rng(uint64_t seed) : g(seed) {}
	uint64_t next() { return g(); }
	// Uniform in [0, n); 0 for n == 0.
	uint64_t below(uint64_t n) { return n ? g() % n : 0; }
	uint64_t range(uint64_t lo, uint64_t hi) { return lo + below(hi - lo + 1); }
	bool pct(unsigned p) { return below(100) < p; }
	template <class V> auto &pick(V &v) { return v[below(v.size())]; }
};

// ---- the rings: where libsiw mapped them, a mapping of our own -------------

struct MapEntry {
	uintptr_t start, end;
	uint64_t off;
	size_t len() const { return end - start; }
};

// The mappings of @path (the verbs device file) in this process.
std::vector<MapEntry> uverbs_maps(const std::string &path)
{
	std::vector<MapEntry> out;
	FILE *f = std::fopen("/proc/self/maps", "r");
	if (!f)
		return out;
	char line[512];
	while (std::fgets(line, sizeof(line), f)) {
		unsigned long start, end, off;
		int pos = 0;
		if (std::sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &start, &end, &off, &pos) < 3 ||
		    !pos)
			continue;
		std::string name = line + pos;
		while (!name.empty() && (name.back() == '\n' || name.back() == ' '))
			name.pop_back();
		if (name == path)
			out.push_back({ start, end, off });
	}
	std::fclose(f);
	return out;
}

// Entries of @after that @before does not have.
std::vector<MapEntry> new_maps(const std::vector<MapEntry> &before,
			       const std::vector<MapEntry> &after)
{
	std::vector<MapEntry> out;
	for (const MapEntry &a : after) {
		bool old = false;
		for (const MapEntry &b : before)
			old |= b.start == a.start && b.off == a.off;
		if (!old)
			out.push_back(a);
	}
	std::sort(out.begin(), out.end(),
		  [](const MapEntry &x, const MapEntry &y) { return x.off < y.off; });
	return out;
}

enum class RingKind { sq, rq, cq, srq };

size_t stride(RingKind k)
{
	switch (k) {
	case RingKind::sq:
		return sizeof(xiw_sqe);
	case RingKind::cq:
		return sizeof(xiw_cqe);
	default:
		return sizeof(xiw_rqe);
	}
}

// A ring as this process sees it through a mapping of its own.
struct Ring {
	RingKind kind;
	uint64_t key;		// the mmap offset
	uint32_t slots;
	xiw::Mapping map;

	uint8_t *slot(uint32_t i) const { return map.data() + (size_t)i * stride(kind); }
	uint16_t *flags16(uint32_t i) const
	{
		return reinterpret_cast<uint16_t *>(slot(i) + offsetof(xiw_sqe, flags));
	}
	uint32_t *cq_ctrl() const
	{
		return reinterpret_cast<uint32_t *>(map.data() + (size_t)slots * sizeof(xiw_cqe));
	}
};

size_t page_size()
{
	static const size_t ps = static_cast<size_t>(sysconf(_SC_PAGESIZE));
	return ps;
}

size_t page_align(size_t n)
{
	return (n + page_size() - 1) & ~(page_size() - 1);
}

std::shared_ptr<Ring> map_ring(int fd, const MapEntry &e, RingKind kind, uint32_t slots)
{
	void *p = mmap(nullptr, e.len(), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       static_cast<off_t>(e.off));
	if (p == MAP_FAILED)
		return nullptr;
	auto r = std::make_shared<Ring>();
	r->kind = kind;
	r->key = e.off;
	r->slots = slots;
	r->map = xiw::Mapping(p, e.len());
	return r;
}

void store16(uint16_t *p, uint16_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

// ---- the scribbler ----------------------------------------------------------

// What a plausible work request may point at: a live MR.
struct KeyHint {
	uint32_t key;
	uint64_t addr;
	uint64_t len;
};

class Scribbler {
public:
	void start(uint64_t seed)
	{
		thr_ = std::thread([this, seed] { run(seed); });
	}

	void stop()
	{
		stop_ = true;
		if (thr_.joinable())
			thr_.join();
	}

	~Scribbler() { stop(); }

	void add(const std::shared_ptr<Ring> &r)
	{
		std::lock_guard<std::mutex> l(mu_);
		rings_.push_back(r);
	}

	void remove(const Ring *r)
	{
		std::lock_guard<std::mutex> l(mu_);
		std::erase_if(rings_, [r](const std::shared_ptr<Ring> &x) { return x.get() == r; });
	}

	void hints(std::vector<KeyHint> h)
	{
		std::lock_guard<std::mutex> l(mu_);
		hints_ = std::move(h);
	}

	uint64_t writes() const { return writes_; }

private:
	void run(uint64_t seed)
	{
		Rng rng(seed);
		while (!stop_) {
			std::shared_ptr<Ring> r;
			std::vector<KeyHint> h;
			{
				std::lock_guard<std::mutex> l(mu_);
				if (!rings_.empty())
					r = rng.pick(rings_);
				if (!hints_.empty() && rng.pct(25))
					h = hints_;
			}
			if (!r) {
				std::this_thread::sleep_for(std::chrono::milliseconds(1));
				continue;
			}
			for (unsigned n = static_cast<unsigned>(rng.range(1, 64)); n--;)
				mutate(*r, rng, h);
			if (rng.pct(20))
				std::this_thread::sleep_for(std::chrono::microseconds(rng.below(300)));
		}
	}

	void random_bytes(Ring &r, Rng &rng)
	{
		size_t len = rng.range(1, 32);
		size_t off = rng.below(r.map.size() - len + 1);
		for (size_t i = 0; i < len; i++)
			r.map.data()[off + i] = static_cast<uint8_t>(rng.next());
	}

	void sge(Rng &rng, const std::vector<KeyHint> &h, xiw_sge *s)
	{
		if (!h.empty() && rng.pct(70)) {
			const KeyHint &k = h[rng.below(h.size())];
			uint64_t off = rng.below(k.len + 1);
			s->laddr = k.addr + off;
			s->length = static_cast<uint32_t>(rng.pct(90) ? rng.below(k.len - off + 1) :
									 rng.next());
			s->lkey = rng.pct(90) ? k.key : static_cast<uint32_t>(rng.next());
		} else {
			s->laddr = rng.next();
			s->length = static_cast<uint32_t>(rng.pct(50) ? rng.below(65536) : rng.next());
			s->lkey = static_cast<uint32_t>(rng.next());
		}
	}

	// A work request that passes for a posted one more often than not.
	void plausible(Ring &r, Rng &rng, const std::vector<KeyHint> &h, uint32_t i)
	{
		uint8_t *p = r.slot(i);
		uint16_t flags = XIW_WQE_VALID | (rng.below(0x80) & ~XIW_WQE_VALID);
		if (r.kind == RingKind::sq) {
			xiw_sqe s = {};
			s.id = rng.next();
			s.num_sge = static_cast<uint8_t>(rng.pct(90) ? rng.below(XIW_MAX_SGE_USER + 1) :
								    rng.next());
			s.opcode = static_cast<uint8_t>(rng.pct(80) ? rng.below(XIW_OP_RECEIVE + 1) :
								   rng.next());
			if (!h.empty() && rng.pct(70)) {
				const KeyHint &k = h[rng.below(h.size())];
				s.rkey = k.key;
				s.raddr = k.addr + rng.below(k.len + 1);
			} else {
				s.rkey = static_cast<uint32_t>(rng.next());
				s.raddr = rng.next();
			}
			if (flags & XIW_WQE_INLINE) {
				s.sge[0].length = static_cast<uint32_t>(
					rng.pct(90) ? rng.below(XIW_MAX_INLINE_USER + 1) : rng.next());
				for (unsigned b = 0; b < XIW_MAX_INLINE_USER; b++)
					reinterpret_cast<uint8_t *>(&s.sge[1])[b] =
						static_cast<uint8_t>(rng.next());
			} else {
				for (auto &g : s.sge)
					sge(rng, h, &g);
			}
			std::memcpy(p, &s, sizeof(s));
		} else {
			xiw_rqe q = {};
			q.id = rng.next();
			q.num_sge = static_cast<uint8_t>(rng.pct(90) ? rng.below(XIW_MAX_SGE_USER + 1) :
								    rng.next());
			q.opcode = static_cast<uint8_t>(rng.next());
			for (auto &g : q.sge)
				sge(rng, h, &g);
			std::memcpy(p, &q, sizeof(q));
			flags = rng.pct(80) ? XIW_WQE_VALID : flags;
		}
		store16(r.flags16(i), flags);
	}

	void mutate(Ring &r, Rng &rng, const std::vector<KeyHint> &h)
	{
		uint32_t i = static_cast<uint32_t>(rng.below(r.slots));
		unsigned what = static_cast<unsigned>(rng.below(100));
		writes_++;
		if (r.kind == RingKind::cq) {
			uint8_t *f = r.slot(i) + offsetof(xiw_cqe, flags);
			if (what < 30)
				random_bytes(r, rng);
			else if (what < 75)
				__atomic_store_n(f, 0, __ATOMIC_RELEASE);	// consumed
			else if (what < 85)
				__atomic_store_n(f, static_cast<uint8_t>(XIW_WQE_VALID),
						 __ATOMIC_RELEASE);		// looks full
			else if (what < 97)
				__atomic_store_n(r.cq_ctrl(),
						 static_cast<uint32_t>(rng.pct(80) ?
							rng.below(8) : rng.next()),
						 __ATOMIC_RELEASE);
			else
				for (uint32_t k = 0; k < r.slots; k++)
					__atomic_store_n(r.slot(k) + offsetof(xiw_cqe, flags), 0,
							 __ATOMIC_RELEASE);
			return;
		}
		if (what < 25) {
			random_bytes(r, rng);
		} else if (what < 60) {
			plausible(r, rng, h, i);
		} else if (what < 80) {
			uint16_t *f = r.flags16(i);
			store16(f, static_cast<uint16_t>(__atomic_load_n(f, __ATOMIC_RELAXED) |
							 XIW_WQE_VALID));
		} else if (what < 97) {
			store16(r.flags16(i), 0);
		} else {
			for (uint32_t k = 0; k < r.slots; k++)
				store16(r.flags16(k), XIW_WQE_VALID);
		}
	}

	std::thread thr_;
	std::atomic<bool> stop_{false};
	std::atomic<uint64_t> writes_{0};
	std::mutex mu_;
	std::vector<std::shared_ptr<Ring>> rings_;
	std::vector<KeyHint> hints_;
};

// ---- commands of the verbs device file, bypassing libsiw -------------------

// One command of the verbs device file's write() interface
// (<rdma/ib_user_verbs.h>): the header, then @cmd, whose response pointer
// is set to @resp.  0 or the errno of write().
template <class Cmd, class Resp>
int uverbs_write(int fd, uint32_t command, Cmd cmd, Resp *resp)
{
	ib_uverbs_cmd_hdr hdr = {};
	alignas(8) uint8_t buf[sizeof(hdr) + sizeof(Cmd)];

	hdr.command = command;
	hdr.in_words = sizeof(buf) / 4;
	hdr.out_words = sizeof(Resp) / 4;
	cmd.response = reinterpret_cast<uintptr_t>(resp);
	std::memcpy(buf, &hdr, sizeof(hdr));
	std::memcpy(buf + sizeof(hdr), &cmd, sizeof(cmd));
	ssize_t n = write(fd, buf, sizeof(buf));
	return n == (ssize_t)sizeof(buf) ? 0 : errno;
}

// The send doorbell, what libsiw rings after writing SQEs: POST_SEND
// without work requests.  libsiw rings it only when it posted something
// into a free slot; this rings it whatever the ring holds.
int doorbell(ibv_qp *qp)
{
	ib_uverbs_post_send cmd = {};
	ib_uverbs_post_send_resp resp = {};

	cmd.qp_handle = qp->handle;
	cmd.wqe_size = sizeof(ib_uverbs_send_wr);
	return uverbs_write(qp->context->cmd_fd, IB_USER_VERBS_CMD_POST_SEND, cmd, &resp);
}

// DESTROY_CQ past libsiw, for a CQ that must not go: libsiw unmaps the
// ring before it asks the kernel, and would poll an unmapped ring after
// the refusal.
int destroy_cq_raw(ibv_cq *cq)
{
	ib_uverbs_destroy_cq cmd = {};
	ib_uverbs_destroy_cq_resp resp = {};

	cmd.cq_handle = cq->handle;
	return uverbs_write(cq->context->cmd_fd, IB_USER_VERBS_CMD_DESTROY_CQ, cmd, &resp);
}

std::string fd_path(int fd)
{
	char link[64], path[256];
	std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return {};
	path[n] = 0;
	return path;
}

sockaddr_storage parse_addr(const std::string &ip, uint16_t port)
{
	sockaddr_storage ss;
	if (int rv = xiw::numeric_addr(ip, std::to_string(port), ss))
		setup_failed("bad address '%s': %s", ip.c_str(), gai_strerror(rv));
	return ss;
}

cpu_set_t g_cpus;	// the CPUs the process may use, as it started

// Keep the calling thread on @cpu; -1: on any CPU of g_cpus.
bool pin_to_cpu(int cpu)
{
	cpu_set_t set = g_cpus;
	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
	}
	return !pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

// The libsiw completion statuses (its status map's values).
bool known_status(ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_SUCCESS:
	case IBV_WC_LOC_LEN_ERR:
	case IBV_WC_LOC_PROT_ERR:
	case IBV_WC_LOC_QP_OP_ERR:
	case IBV_WC_WR_FLUSH_ERR:
	case IBV_WC_BAD_RESP_ERR:
	case IBV_WC_LOC_ACCESS_ERR:
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_GENERAL_ERR:
		return true;
	default:
		return false;
	}
}

const char *state_name(int s)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };
	return s >= 0 && s < 7 ? names[s] : "?";
}

} // namespace

// ---- the fuzzer --------------------------------------------------------------

namespace {

enum Op : unsigned {
	PD_ALLOC, PD_DEALLOC, MR_REG, MR_DEREG, CQ_CREATE, CQ_DESTROY, CQ_RESIZE,
	CQ_POLL, CQ_NOTIFY, CQ_EVENT, QP_CREATE, QP_DESTROY, QP_MODIFY, QP_QUERY,
	POST_SEND, POST_RECV, DOORBELL, SRQ_CREATE, SRQ_DESTROY, SRQ_MODIFY,
	SRQ_POST, MMAP, QUERY_DEV, ASYNC_EVENT, CM_CONNECT, CM_EVENT,
	CM_DISCONNECT, CM_DESTROY, CM_ABORT, NUM_OPS
};

const char *const kOpName[NUM_OPS] = {
	"alloc_pd", "dealloc_pd", "reg_mr", "dereg_mr", "create_cq", "destroy_cq",
	"resize_cq", "poll_cq", "req_notify_cq", "get_cq_event", "create_qp",
	"destroy_qp", "modify_qp", "query_qp", "post_send", "post_recv", "doorbell",
	"create_srq", "destroy_srq", "modify_srq", "post_srq_recv", "mmap",
	"query_device", "get_async_event", "rdma_cm connect", "rdma_cm event",
	"rdma_disconnect", "rdma_destroy_id", "connection abort",
};

constexpr unsigned kMaxPd = 6, kMaxMr = 24, kMaxCq = 12, kMaxQp = 16, kMaxSrq = 3,
		   kMaxConn = 3;
constexpr size_t kArena = 8u << 20;

struct PdRec {
	xiw::Pd pd;
	int users = 0;		// MRs, QPs, SRQs
};

struct MrRec {
	xiw::Mr mr;
	PdRec *pd;
	uint64_t addr, len;
};

struct CqRec {
	xiw::CompChannel ch;	// declared first: it goes after the CQ
	xiw::Cq cq;
	int cqe = 0;
	bool dirty = false;
	int users = 0;		// QPs (a QP with both CQs here counts twice)
	std::shared_ptr<Ring> ring;
	uint64_t key = 0;	// its mmap offset (never 0)
	// No more CQEs can be in the ring than @bound (what was outstanding at
	// the last poll that found it empty, plus what was posted since); when
	// it passed the ring size, a CQE may have been dropped: @lossy.
	int bound = 0;
	bool lossy = false;
	uint64_t arms = 0, events = 0;
};

struct Wr {
	uint64_t id;
	ibv_wr_opcode op;
	bool signaled;
	uint64_t len;
};

struct SrqRec {
	xiw::Srq srq;
	PdRec *pd;
	bool dirty = false;
	int users = 0;
	uint32_t max_wr = 0;
	std::unordered_map<uint64_t, uint64_t> outstanding;	// wr_id -> length
	std::shared_ptr<Ring> ring;
	uint64_t key = 0;
};

struct Conn;
struct End;

struct QpRec {
	xiw::Qp own;		// a connection's QP belongs to its cm id instead
	ibv_qp *qp = nullptr;
	uint32_t qpn = 0;
	PdRec *pd = nullptr;
	CqRec *scq = nullptr, *rcq = nullptr;
	SrqRec *srq = nullptr;
	bool dirty = false;
	Conn *conn = nullptr;	// set for a connection's QP (it may have traffic)
	End *end = nullptr;	// ... and the end whose id holds it
	bool sig_all = false;
	ibv_qp_cap cap = {};
	// What a never-connected QP must report (verbs view).
	ibv_qp_state state = IBV_QPS_INIT;
	unsigned access = 0, ord = 0, ird = 0;
	std::deque<Wr> sq, rq;
	// Signalled requests given up as lost to an overflowing CQ when a
	// later one completed: any completion of theirs comes out of order.
	std::unordered_set<uint64_t> lost;
	std::vector<std::shared_ptr<Ring>> rings;
	std::vector<uint64_t> keys;
};

struct End {
	xiw::CmId id;
	QpRec *qp = nullptr;
	bool addr = false, route = false, established = false, gone = false;
	const char *why = "";	// the event that ended it
};

struct Conn {
	End cli, srv;
	bool dirty = false;
	bool requested = false;	// the server saw the request
};

class Fuzzer {
public:
	explicit Fuzzer(uint64_t seed) : rng_(seed), seed_(seed) {}
	int run();

private:
	// -- setup and accounting
	void open_device();
	void count(Op op, bool ok) { calls_[op]++; fails_[op] += !ok; g_ops++; }
	template <class Owner>
	int destroy_used(Op op, const char *call, Owner &obj, int users, const char *user_kinds,
			 const char *what);
	bool out_of_budget() const;
	Op pick_op();
	void step(Op op);

	// -- helpers
	std::vector<MapEntry> maps() { return uverbs_maps(dev_path_); }
	void live_key(uint64_t key, size_t len) { live_keys_[key] = len; dead_keys_.erase(key); }
	void kill_key(uint64_t key)
	{
		auto it = live_keys_.find(key);
		if (it != live_keys_.end()) {
			dead_keys_[key] = it->second;
			live_keys_.erase(it);
		}
	}
	void update_hints();
	CqRec *pick_cq(bool dirty);
	ibv_sge rand_sge(PdRec *pd, bool inl);
	void rand_remote(QpRec &q, uint64_t &raddr, uint32_t &rkey);
	uint64_t wr_len(const ibv_sge *sg, int n);
	int pending(const CqRec &c) const;
	void posted(CqRec *c, int n);
	void drain(CqRec &c);
	void check_wc(CqRec &c, const ibv_wc &wc);
	void retire_sq(QpRec &q, CqRec &c, const ibv_wc &wc);
	void retire_rq(QpRec &q, CqRec &c, const ibv_wc &wc);
	void flush_check(QpRec &q, bool sq_ok, bool rq_ok);
	void query_check(QpRec &q, const char *what);
	void attach(QpRec &q);
	void detach(QpRec &q);
	QpRec *create_qp_rec(PdRec *pd, bool dirty, rdma_cm_id *cm, bool legal);
	void destroy_qp_rec(QpRec *q);
	bool pump(int timeout_ms);
	void on_cm_event(const xiw::CmEvent &ev);
	void wait_for(const char *what, const std::function<bool()> &done);
	void teardown_conn(Conn *c);
	void end_side(End &e);

	// -- operations
	void op_alloc_pd();
	void op_dealloc_pd();
	void op_reg_mr();
	void op_dereg_mr();
	void op_create_cq();
	void op_destroy_cq();
	void op_resize_cq();
	void op_poll_cq();
	void op_notify_cq();
	void op_cq_event();
	void op_create_qp();
	void op_destroy_qp();
	void op_modify_qp();
	void op_query_qp();
	void op_post_send();
	void op_post_recv();
	void op_doorbell();
	void op_create_srq();
	void op_destroy_srq();
	void op_modify_srq();
	void op_post_srq();
	void op_mmap();
	void op_query_dev();
	void op_async();
	void op_connect();
	void op_disconnect();
	void op_abort();
	void teardown();

	Rng rng_;
	uint64_t seed_;
	Scribbler scr_;
	Clock::time_point t0_;

	xiw::DeviceList list_;
	xiw::Context own_ctx_;
	xiw::CmEvents events_;
	xiw::CmId listen_;
	ibv_context *ctx_ = nullptr;
	ibv_device_attr dattr_ = {};
	std::string dev_path_;
	sockaddr_storage dst_ = {};

	xiw::Mapping arena_map_;
	uint8_t *arena_ = nullptr;

	// Destroyed in reverse: connections and QPs before what they use.
	std::vector<std::unique_ptr<PdRec>> pds_;
	std::vector<std::unique_ptr<CqRec>> cqs_;
	std::vector<std::unique_ptr<MrRec>> mrs_;
	std::vector<std::unique_ptr<SrqRec>> srqs_;
	std::vector<std::unique_ptr<QpRec>> qps_;	// connections' QPs too
	std::vector<std::unique_ptr<Conn>> conns_;

	std::unordered_map<uint32_t, QpRec *> by_qpn_;
	std::unordered_set<uint32_t> dead_qpn_;
	std::unordered_map<rdma_cm_id *, End *> ends_;
	Conn *connecting_ = nullptr;
	std::map<uint64_t, size_t> live_keys_, dead_keys_;

	uint64_t next_wr_ = 1;
	std::array<uint64_t, NUM_OPS> calls_ = {}, fails_ = {};
	uint64_t wcs_ = 0, flush_checks_ = 0, established_ = 0, rejected_ = 0;
};

bool Fuzzer::out_of_budget() const
{
	if (g_opt.ops && g_ops >= g_opt.ops)
		return true;
	return g_opt.time > 0 && secs_since(t0_) >= g_opt.time;
}

void Fuzzer::open_device()
{
	if (!g_opt.addr.empty()) {
		if (!events_.open())
			setup_failed("rdma_create_event_channel: %s", strerror(errno));
		if (!(listen_ = events_.create_id()))
			setup_failed("rdma_create_id: %s", strerror(errno));
		rdma_cm_id *id = listen_.get();
		dst_ = parse_addr(g_opt.addr, g_opt.port);
		if (rdma_bind_addr(id, reinterpret_cast<sockaddr *>(&dst_)) || rdma_listen(id, 8))
			setup_failed("listen on %s port %u: %s", g_opt.addr.c_str(), g_opt.port,
				     strerror(errno));
		ctx_ = id->verbs;
		if (!ctx_ || g_opt.dev != ibv_get_device_name(ctx_->device))
			setup_failed("%s is not an address of %s", g_opt.addr.c_str(),
				     g_opt.dev.c_str());
	} else {
		int n = 0;
		list_.reset(ibv_get_device_list(&n));
		for (int i = 0; list_ && i < n && !ctx_; i++)
			if (g_opt.dev == ibv_get_device_name(list_.get()[i])) {
				own_ctx_.reset(ibv_open_device(list_.get()[i]));
				ctx_ = own_ctx_.get();
				if (!ctx_)
					setup_failed("open %s: %s", g_opt.dev.c_str(), strerror(errno));
			}
		if (!ctx_) {
			std::printf("1..0 # SKIP device %s not found\n", g_opt.dev.c_str());
			std::exit(4);
		}
	}
	if (ibv_query_device(ctx_, &dattr_))
		setup_failed("query_device: %s", strerror(errno));
	dev_path_ = fd_path(ctx_->cmd_fd);
	if (dev_path_.empty())
		setup_failed("no path for the verbs device file");

	// The memory MRs and SGEs point into, between two inaccessible pages.
	size_t ps = page_size();
	void *p = mmap(nullptr, kArena + 2 * ps, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	arena_map_ = xiw::Mapping(p, kArena + 2 * ps);
	if (!arena_map_)
		setup_failed("mmap: %s", strerror(errno));
	mprotect(arena_map_.data(), ps, PROT_NONE);
	mprotect(arena_map_.data() + ps + kArena, ps, PROT_NONE);
	arena_ = arena_map_.data() + ps;
	for (size_t i = 0; i < kArena; i++)
		arena_[i] = static_cast<uint8_t>(i * 131 + (i >> 12));
}

void Fuzzer::update_hints()
{
	std::vector<KeyHint> h;
	for (auto &m : mrs_)
		h.push_back({ m->mr->lkey, m->addr, m->len });
	scr_.hints(std::move(h));
}

CqRec *Fuzzer::pick_cq(bool dirty)
{
	std::vector<CqRec *> v;
	for (auto &c : cqs_)
		if (c->dirty == dirty)
			v.push_back(c.get());
	return v.empty() ? nullptr : rng_.pick(v);
}

// An SGE: mostly inside a registered region of @pd, else of another PD, a
// wrong key, unregistered memory, nonsense.  Inline SGEs always point at
// readable memory (libsiw copies them).
ibv_sge Fuzzer::rand_sge(PdRec *pd, bool inl)
{
	ibv_sge s = {};
	if (inl) {
		s.length = static_cast<uint32_t>(rng_.pct(90) ? rng_.below(41) : rng_.range(41, 200));
		s.addr = reinterpret_cast<uintptr_t>(arena_ + rng_.below(kArena - 200));
		s.lkey = static_cast<uint32_t>(rng_.next());
		return s;
	}
	std::vector<MrRec *> mine, any;
	for (auto &m : mrs_) {
		any.push_back(m.get());
		if (m->pd == pd)
			mine.push_back(m.get());
	}
	unsigned r = static_cast<unsigned>(rng_.below(100));
	MrRec *m = nullptr;
	if (r < 70 && !mine.empty())
		m = rng_.pick(mine);
	else if (r < 80 && !any.empty())
		m = rng_.pick(any);
	if (m) {
		uint64_t off = rng_.below(m->len + 1);
		uint64_t rest = m->len - off;
		s.addr = m->addr + off;
		s.length = static_cast<uint32_t>(
			rng_.pct(85) ? rng_.below(std::min<uint64_t>(rest, 65536) + 1) :
			rng_.pct(50) ? rest + rng_.range(1, 4096) : rng_.below(1u << 20));
		s.lkey = m->mr->lkey;
		if (rng_.pct(5))
			s.lkey ^= static_cast<uint32_t>(rng_.range(1, 255));	// wrong key byte
		return s;
	}
	if (r < 90) {
		s.addr = reinterpret_cast<uintptr_t>(arena_ + rng_.below(kArena));
		s.length = static_cast<uint32_t>(rng_.below(8192));
	} else {
		s.addr = rng_.next();
		s.length = static_cast<uint32_t>(rng_.next());
	}
	s.lkey = static_cast<uint32_t>(rng_.next());
	return s;
}

// A remote address and key: the peer's regions mostly (any PD), or not.
void Fuzzer::rand_remote(QpRec &q, uint64_t &raddr, uint32_t &rkey)
{
	(void)q;
	if (!mrs_.empty() && rng_.pct(80)) {
		MrRec &m = *rng_.pick(mrs_);
		raddr = m.addr + rng_.below(m.len + 1);
		rkey = m.mr->rkey;
		if (rng_.pct(5))
			raddr = rng_.next();
		return;
	}
	raddr = rng_.next();
	rkey = static_cast<uint32_t>(rng_.next());
}

uint64_t Fuzzer::wr_len(const ibv_sge *sg, int n)
{
	uint64_t len = 0;
	for (int i = 0; i < n; i++)
		len += sg[i].length;
	return len;
}

// Work requests that may still put a CQE into @c.
int Fuzzer::pending(const CqRec &c) const
{
	int n = 0;
	for (auto &q : qps_) {
		if (q->scq == &c)
			n += static_cast<int>(q->sq.size());
		if (q->rcq == &c)
			n += static_cast<int>(q->srq ? q->srq->outstanding.size() : q->rq.size());
	}
	return n;
}

void Fuzzer::posted(CqRec *c, int n)
{
	c->bound += n;
	if (c->bound > c->cqe)
		c->lossy = true;
}

void Fuzzer::drain(CqRec &c)
{
	if (c.dirty)
		return;	// the scribbler consumes those
	for (;;) {
		ibv_wc wc[16];
		int n;
		n = in_call("ibv_poll_cq", [&] { return ibv_poll_cq(c.cq.get(), 16, wc); });
		count(CQ_POLL, n >= 0);
		if (n < 0)
			bug("poll_cq of CQ %p: %d", (void *)c.cq.get(), n);
		for (int i = 0; i < n; i++)
			check_wc(c, wc[i]);
		if (n < 16)
			break;
	}
	c.bound = pending(c);
	if (!c.bound)
		c.lossy = false;
}

// A send completion: @wc's WR must be outstanding on @q's SQ.  What was
// posted before it completed earlier, silently if unsignalled and
// successful; except that RDMA Reads complete when their response is
// in, so that they and the other requests keep their order only among
// themselves (as in siw: a Send behind a Read may complete first, and a
// flush completes the Reads still waiting for their responses after the
// request in progress).
void Fuzzer::retire_sq(QpRec &q, CqRec &c, const ibv_wc &wc)
{
	auto it = std::find_if(q.sq.begin(), q.sq.end(),
			       [&](const Wr &w) { return w.id == wc.wr_id; });
	if (it == q.sq.end() && q.lost.count(wc.wr_id))
		bug("QP %u: send %#" PRIx64 " completed (%s) after a later request of its kind",
		    q.qpn, wc.wr_id, ibv_wc_status_str(wc.status));
	if (it == q.sq.end())
		bug("CQ %p: send completion %#" PRIx64 " (%s) of QP %u, which has no such "
		    "work request outstanding", (void *)c.cq.get(), wc.wr_id,
		    ibv_wc_status_str(wc.status), q.qpn);
	const Wr w = *it;
	const bool read = w.op == IBV_WR_RDMA_READ;
	for (auto e = q.sq.begin(); e->id != w.id;) {
		if ((e->op == IBV_WR_RDMA_READ) != read) {
			++e;
			continue;
		}
		if (e->signaled && !c.lossy)
			bug("QP %u: send %#" PRIx64 " (op %d) completed (%s) before the signalled "
			    "%#" PRIx64 " (op %d) posted ahead of it, which got no completion", q.qpn,
			    wc.wr_id, w.op, ibv_wc_status_str(wc.status), e->id, e->op);
		if (e->signaled && q.lost.size() < 4096)
			q.lost.insert(e->id);
		e = q.sq.erase(e);
	}
	q.sq.erase(std::find_if(q.sq.begin(), q.sq.end(),
				[&](const Wr &x) { return x.id == w.id; }));
	if (wc.status == IBV_WC_SUCCESS) {
		ibv_wc_opcode want;
		switch (w.op) {
		case IBV_WR_RDMA_WRITE:
			want = IBV_WC_RDMA_WRITE;
			break;
		case IBV_WR_RDMA_READ:
			want = IBV_WC_RDMA_READ;
			break;
		default:
			want = IBV_WC_SEND;
			break;
		}
		if (wc.opcode != want)
			bug("QP %u: send %#" PRIx64 " of WR opcode %d completed as WC opcode %d",
			    q.qpn, w.id, w.op, wc.opcode);
		if (wc.byte_len > w.len)
			bug("QP %u: send %#" PRIx64 " of %" PRIu64 " bytes completed with %u",
			    q.qpn, w.id, w.len, wc.byte_len);
	}
}

void Fuzzer::retire_rq(QpRec &q, CqRec &c, const ibv_wc &wc)
{
	uint64_t len;
	if (q.srq) {
		auto it = q.srq->outstanding.find(wc.wr_id);
		if (it == q.srq->outstanding.end())
			bug("CQ %p: receive completion %#" PRIx64 " of QP %u, which its SRQ does "
			    "not have outstanding", (void *)c.cq.get(), wc.wr_id, q.qpn);
		len = it->second;
		q.srq->outstanding.erase(it);
	} else {
		auto it = std::find_if(q.rq.begin(), q.rq.end(),
				       [&](const Wr &w) { return w.id == wc.wr_id; });
		if (it == q.rq.end() && q.lost.count(wc.wr_id))
			bug("QP %u: receive %#" PRIx64 " completed (%s) after a later one", q.qpn,
			    wc.wr_id, ibv_wc_status_str(wc.status));
		if (it == q.rq.end())
			bug("CQ %p: receive completion %#" PRIx64 " (%s) of QP %u, which has no "
			    "such receive outstanding", (void *)c.cq.get(), wc.wr_id,
			    ibv_wc_status_str(wc.status), q.qpn);
		if (it != q.rq.begin() && !c.lossy)
			bug("QP %u: receive %#" PRIx64 " completed (%s) before %#" PRIx64
			    " posted ahead of it", q.qpn, wc.wr_id, ibv_wc_status_str(wc.status),
			    q.rq.front().id);
		len = it->len;
		for (auto e = q.rq.begin(); e != it && q.lost.size() < 4096; ++e)
			q.lost.insert(e->id);
		q.rq.erase(q.rq.begin(), it + 1);
	}
	if (wc.status == IBV_WC_SUCCESS && wc.byte_len > len)
		bug("QP %u: receive %#" PRIx64 " into %" PRIu64 " bytes completed with %u",
		    q.qpn, wc.wr_id, len, wc.byte_len);
}

void Fuzzer::check_wc(CqRec &c, const ibv_wc &wc)
{
	wcs_++;
	if (!known_status(wc.status))
		bug("CQ %p: completion %#" PRIx64 " with status %d, which xiw never reports",
		    (void *)c.cq.get(), wc.wr_id, wc.status);
	auto it = by_qpn_.find(wc.qp_num);
	if (it == by_qpn_.end()) {
		if (dead_qpn_.count(wc.qp_num))
			bug("CQ %p: completion %#" PRIx64 " of QP %u after that QP was destroyed "
			    "and its CQs drained", (void *)c.cq.get(), wc.wr_id, wc.qp_num);
		bug("CQ %p: completion %#" PRIx64 " of QP number %u, which this process "
		    "never had", (void *)c.cq.get(), wc.wr_id, wc.qp_num);
	}
	QpRec &q = *it->second;
	bool recv = wc.opcode & IBV_WC_RECV;
	if ((recv ? q.rcq : q.scq) != &c)
		bug("CQ %p: %s completion %#" PRIx64 " of QP %u, whose %s CQ is %p",
		    (void *)c.cq.get(), recv ? "receive" : "send", wc.wr_id, q.qpn,
		    recv ? "receive" : "send", (void *)(recv ? q.rcq : q.scq)->cq.get());
	if (!q.conn && wc.status != IBV_WC_WR_FLUSH_ERR)
		bug("QP %u, never connected: completion %#" PRIx64 " with %s (only a flush "
		    "can complete its work)", q.qpn, wc.wr_id, ibv_wc_status_str(wc.status));
	if (recv)
		retire_rq(q, c, wc);
	else
		retire_sq(q, c, wc);
}

// After a never-connected QP entered ERROR: its work came back at once.
void Fuzzer::flush_check(QpRec &q, bool sq_ok, bool rq_ok)
{
	if (q.dirty || q.conn)
		return;
	drain(*q.scq);
	if (q.rcq != q.scq)
		drain(*q.rcq);
	flush_checks_++;
	if (sq_ok && !q.sq.empty())
		bug("QP %u entered ERROR; %zu send work requests (first %#" PRIx64 ") were "
		    "not flushed", q.qpn, q.sq.size(), q.sq.front().id);
	if (rq_ok && !q.srq && !q.rq.empty())
		bug("QP %u entered ERROR; %zu receives (first %#" PRIx64 ") were not flushed",
		    q.qpn, q.rq.size(), q.rq.front().id);
}

void Fuzzer::attach(QpRec &q)
{
	q.qpn = q.qp->qp_num;
	by_qpn_[q.qpn] = &q;
	dead_qpn_.erase(q.qpn);
	q.pd->users++;
	q.scq->users++;
	q.rcq->users++;
	if (q.srq)
		q.srq->users++;
	for (auto &r : q.rings)
		scr_.add(r);
}

// The QP is destroyed: drain its CQs (completions it left are still
// checked), then forget it.  A completion of it after this is a bug.
void Fuzzer::detach(QpRec &q)
{
	drain(*q.scq);
	if (q.rcq != q.scq)
		drain(*q.rcq);
	by_qpn_.erase(q.qpn);
	dead_qpn_.insert(q.qpn);
	q.pd->users--;
	q.scq->users--;
	q.rcq->users--;
	if (q.srq)
		q.srq->users--;
	for (auto &r : q.rings)
		scr_.remove(r.get());
	for (uint64_t k : q.keys)
		kill_key(k);
}

uint32_t rand_wr(Rng &r, uint32_t max)
{
	unsigned x = static_cast<unsigned>(r.below(100));
	if (x < 40)
		return static_cast<uint32_t>(r.range(1, 16));
	if (x < 70)
		return static_cast<uint32_t>(r.range(17, 256));
	if (x < 80)
		return 0;
	if (x < 93)
		return static_cast<uint32_t>(r.range(257, 2048));
	if (x < 95)
		return max;
	if (x < 98)
		return max + 1;
	return static_cast<uint32_t>(r.next());
}

uint32_t rand_sges(Rng &r)
{
	return static_cast<uint32_t>(r.pct(88) ? r.below(XIW_MAX_SGE_USER + 1) : r.range(7, 300));
}

// A QP of @pd on CQs of its class (nullptr if there are none, or it was
// refused); through @cm's rdma_create_qp() for a connection, then with
// capabilities within the limits (@legal).
QpRec *Fuzzer::create_qp_rec(PdRec *pd, bool dirty, rdma_cm_id *cm, bool legal)
{
	CqRec *scq = pick_cq(dirty);
	if (!scq)
		return nullptr;
	CqRec *rcq = rng_.pct(50) ? scq : pick_cq(dirty);
	SrqRec *srq = nullptr;
	if (rng_.pct(20)) {
		std::vector<SrqRec *> v;
		for (auto &x : srqs_)
			if (x->dirty == dirty)
				v.push_back(x.get());
		if (!v.empty())
			srq = rng_.pick(v);
	}
	const uint32_t max_wr = static_cast<uint32_t>(dattr_.max_qp_wr);
	ibv_qp_init_attr ia = {};
	ia.send_cq = scq->cq.get();
	ia.recv_cq = rcq->cq.get();
	ia.srq = srq ? srq->srq.get() : nullptr;
	ia.qp_type = IBV_QPT_RC;
	ia.sq_sig_all = rng_.pct(30);
	if (legal) {
		ia.cap.max_send_wr = static_cast<uint32_t>(rng_.range(1, 64));
		ia.cap.max_recv_wr = static_cast<uint32_t>(rng_.range(1, 64));
		ia.cap.max_send_sge = static_cast<uint32_t>(rng_.range(1, XIW_MAX_SGE_USER));
		ia.cap.max_recv_sge = static_cast<uint32_t>(rng_.range(1, XIW_MAX_SGE_USER));
		ia.cap.max_inline_data = static_cast<uint32_t>(rng_.below(XIW_MAX_INLINE_USER + 1));
	} else {
		ia.cap.max_send_wr = rand_wr(rng_, max_wr);
		ia.cap.max_recv_wr = rand_wr(rng_, max_wr);
		ia.cap.max_send_sge = rand_sges(rng_);
		ia.cap.max_recv_sge = rand_sges(rng_);
		unsigned x = static_cast<unsigned>(rng_.below(100));
		ia.cap.max_inline_data = static_cast<uint32_t>(
			x < 55 ? 0 : x < 92 ? rng_.range(1, XIW_MAX_INLINE_USER) :
			x < 96 ? XIW_MAX_INLINE_USER + 1 : rng_.range(82, 5000));
		if (rng_.pct(6)) {
			const ibv_qp_type t[] = { IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_RAW_PACKET };
			ia.qp_type = t[rng_.below(3)];
		}
	}
	const ibv_qp_cap want = ia.cap;
	bool bad = ia.qp_type != IBV_QPT_RC || want.max_send_wr > max_wr ||
		   want.max_send_sge > XIW_MAX_SGE_USER ||
		   want.max_inline_data > XIW_MAX_INLINE_USER ||
		   (!srq && (want.max_recv_wr > max_wr || want.max_recv_sge > XIW_MAX_SGE_USER));

	auto before = maps();
	ibv_qp *qp;
	int err;
	if (cm)
		qp = in_call("rdma_create_qp", [&] {
			return rdma_create_qp(cm, pd->pd.get(), &ia) ? nullptr : cm->qp;
		});
	else
		qp = in_call("ibv_create_qp", [&] { return ibv_create_qp(pd->pd.get(), &ia); });
	err = qp ? 0 : errno;
	count(QP_CREATE, qp);
	g_log.add("create_qp(%s, type %d, wr %u/%u, sge %u/%u, inline %u, srq %d, %s)%s: %s %u",
		  cm ? "rdma_cm" : "verbs", ia.qp_type, want.max_send_wr, want.max_recv_wr,
		  want.max_send_sge, want.max_recv_sge, want.max_inline_data, !!srq,
		  dirty ? "dirty" : "clean", bad ? " out of range" : "",
		  qp ? "qpn" : strerror(err), qp ? qp->qp_num : 0);
	if (qp && bad)
		bug("create_qp with out-of-range capabilities or type succeeded: type %d, wr "
		    "%u/%u, sge %u/%u, inline %u (limits: wr %u, sge %u, inline %zu)",
		    ia.qp_type, want.max_send_wr, want.max_recv_wr, want.max_send_sge,
		    want.max_recv_sge, want.max_inline_data, max_wr, XIW_MAX_SGE_USER,
		    XIW_MAX_INLINE_USER);
	if (!qp)
		return nullptr;
	if (ia.cap.max_send_wr < want.max_send_wr || ia.cap.max_send_sge < want.max_send_sge ||
	    ia.cap.max_inline_data < want.max_inline_data ||
	    (!srq && (ia.cap.max_recv_wr < want.max_recv_wr ||
		      ia.cap.max_recv_sge < want.max_recv_sge)))
		bug("QP %u: capabilities %u/%u wr, %u/%u sge, %u inline, asked for %u/%u, "
		    "%u/%u, %u", qp->qp_num, ia.cap.max_send_wr, ia.cap.max_recv_wr,
		    ia.cap.max_send_sge, ia.cap.max_recv_sge, ia.cap.max_inline_data,
		    want.max_send_wr, want.max_recv_wr, want.max_send_sge, want.max_recv_sge,
		    want.max_inline_data);

	auto rec = std::make_unique<QpRec>();
	if (!cm)
		rec->own.reset(qp);
	rec->qp = qp;
	rec->pd = pd;
	rec->scq = scq;
	rec->rcq = rcq;
	rec->srq = srq;
	rec->dirty = dirty;
	rec->sig_all = ia.sq_sig_all;
	rec->cap = ia.cap;

	// Its rings: the SQ, and the RQ unless it has an SRQ.  Told apart by
	// size; of two of the same size the one of the lower key is taken for
	// the SQ (xiw allocates that first).
	auto fresh = new_maps(before, maps());
	size_t nrings = srq ? 1 : 2;
	if (fresh.size() != nrings) {
		std::printf("# QP %u: %zu new ring mappings, expected %zu\n", qp->qp_num,
			    fresh.size(), nrings);
	} else {
		size_t sq_len = page_align(ia.cap.max_send_wr * sizeof(xiw_sqe));
		if (nrings == 2 && fresh[0].len() != sq_len && fresh[1].len() == sq_len)
			std::swap(fresh[0], fresh[1]);
		for (size_t i = 0; i < nrings; i++) {
			live_key(fresh[i].off, fresh[i].len());
			rec->keys.push_back(fresh[i].off);
			if (!dirty)
				continue;
			auto r = map_ring(ctx_->cmd_fd, fresh[i], i ? RingKind::rq : RingKind::sq,
					  i ? ia.cap.max_recv_wr : ia.cap.max_send_wr);
			if (r)
				rec->rings.push_back(r);
		}
	}
	QpRec *q = rec.get();
	qps_.push_back(std::move(rec));
	attach(*q);
	return q;
}

void Fuzzer::destroy_qp_rec(QpRec *q)
{
	int rv;
	rv = in_call("ibv_destroy_qp",
		     [&] { return q->end ? ibv_destroy_qp(q->qp) : q->own.destroy(); });
	count(QP_DESTROY, !rv);
	g_log.add("destroy_qp(%u): %s", q->qpn, rv ? err_str(rv) : "ok");
	if (rv)
		bug("destroy_qp of QP %u failed: %s", q->qpn, strerror(rv));
	if (q->end) {
		q->end->id->qp = nullptr;	// what rdma_destroy_qp() does
		q->end->qp = nullptr;
	}
	detach(*q);
	std::erase_if(qps_, [q](const std::unique_ptr<QpRec> &x) { return x.get() == q; });
}

// ---- PDs and MRs ----

void Fuzzer::op_alloc_pd()
{
	if (pds_.size() >= kMaxPd)
		return op_dealloc_pd();
	ibv_pd *pd;
	pd = in_call("ibv_alloc_pd", [&] { return ibv_alloc_pd(ctx_); });
	count(PD_ALLOC, pd);
	g_log.add("alloc_pd: %s", pd ? "ok" : strerror(errno));
	if (pd)
		pds_.push_back(std::make_unique<PdRec>(PdRec{ xiw::Pd(pd) }));
}

// Destroys @obj (an xiw::Owned) through @call, counted under @op, and
// returns 0 or the error.  A verbs destroy succeeds exactly when nothing
// uses the object: @users of @user_kinds still using the @what is a
// bug if the call succeeds, none is one if it fails.
template <class Owner>
int Fuzzer::destroy_used(Op op, const char *call, Owner &obj, int users, const char *user_kinds,
			 const char *what)
{
	const char *name = call + std::strlen("ibv_");
	int rv = in_call(call, [&] { return obj.destroy(); });
	count(op, !rv);
	g_log.add("%s(%d users): %s", name, users, rv ? err_str(rv) : "ok");
	if (!rv && users)
		bug("%s succeeded while %d %s use the %s", name, users, user_kinds, what);
	if (rv && !users)
		bug("%s of an unused %s failed: %s", name, what, strerror(rv));
	return rv;
}

void Fuzzer::op_dealloc_pd()
{
	if (pds_.empty())
		return op_alloc_pd();
	size_t i = rng_.below(pds_.size());
	PdRec &pd = *pds_[i];
	if (!destroy_used(PD_DEALLOC, "ibv_dealloc_pd", pd.pd, pd.users, "MRs, QPs or SRQs", "PD"))
		pds_.erase(pds_.begin() + static_cast<long>(i));
}

void Fuzzer::op_reg_mr()
{
	if (pds_.empty())
		return op_alloc_pd();
	if (mrs_.size() >= kMaxMr)
		return op_dereg_mr();
	PdRec *pd = rng_.pick(pds_).get();
	const size_t ps = page_size();
	uint8_t *addr;
	size_t len;
	bool must_fail = false;
	unsigned r = static_cast<unsigned>(rng_.below(100));
	if (r < 55) {
		size_t off = rng_.below(kArena);
		len = std::min(kArena - off, static_cast<size_t>(
			rng_.pct(70) ? rng_.range(1, 8192) : rng_.range(1, 1u << 20)));
		addr = arena_ + off;
	} else if (r < 72) {
		size_t pages = kArena / ps;
		size_t first = rng_.below(pages);
		addr = arena_ + first * ps;
		len = rng_.range(1, std::min<size_t>(pages - first, 64)) * ps;
	} else if (r < 78) {
		addr = arena_ + rng_.below(kArena);
		len = 0;
	} else if (r < 85) {
		// Runs into the inaccessible page behind the arena.
		len = rng_.range(2, 3 * ps);
		addr = arena_ + kArena - rng_.range(1, len - 1);
		must_fail = true;
	} else if (r < 90) {
		addr = arena_ - ps + rng_.below(ps);	// starts in the page before
		len = rng_.range(1, 2 * ps);
		must_fail = true;
	} else if (r < 95) {
		addr = arena_;
		len = kArena;
	} else {
		addr = arena_ + rng_.below(kArena);
		len = static_cast<size_t>(1) << rng_.range(33, 46);
		must_fail = true;
	}
	int access = 0;
	const int bits[] = { IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE,
			     IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_ATOMIC, IBV_ACCESS_MW_BIND,
			     IBV_ACCESS_ZERO_BASED, IBV_ACCESS_ON_DEMAND, IBV_ACCESS_HUGETLB,
			     IBV_ACCESS_RELAXED_ORDERING };
	for (size_t b = 0; b < std::size(bits); b++)
		if (rng_.pct(b < 3 ? 60 : 8))
			access |= bits[b];
	if (rng_.pct(3))
		access = static_cast<int>(rng_.next());
	ibv_mr *mr;
	mr = in_call("ibv_reg_mr", [&] { return ibv_reg_mr(pd->pd.get(), addr, len, access); });
	count(MR_REG, mr);
	g_log.add("reg_mr(+%td, %zu, access %#x): %s", addr - arena_, len, access,
		  mr ? "ok" : strerror(errno));
	if (mr && must_fail)
		bug("reg_mr of %zu bytes at arena%+td succeeded, which takes in inaccessible "
		    "memory", len, addr - arena_);
	if (!mr)
		return;
	mrs_.push_back(std::make_unique<MrRec>(MrRec{ xiw::Mr(mr), pd,
						      reinterpret_cast<uintptr_t>(addr), len }));
	pd->users++;
	update_hints();
}

void Fuzzer::op_dereg_mr()
{
	if (mrs_.empty())
		return op_reg_mr();
	size_t i = rng_.below(mrs_.size());
	MrRec &m = *mrs_[i];
	uint32_t key = m.mr->lkey;
	int rv;
	rv = in_call("ibv_dereg_mr", [&] { return m.mr.destroy(); });
	count(MR_DEREG, !rv);
	g_log.add("dereg_mr(%#x): %s", key, rv ? err_str(rv) : "ok");
	if (rv)
		bug("dereg_mr of STag %#x failed: %s", key, strerror(rv));
	m.pd->users--;
	mrs_.erase(mrs_.begin() + static_cast<long>(i));
	update_hints();
}

// ---- CQs ----

void Fuzzer::op_create_cq()
{
	if (cqs_.size() >= kMaxCq)
		return op_destroy_cq();
	int cqe;
	bool must_fail = false;
	unsigned r = static_cast<unsigned>(rng_.below(100));
	if (r < 50) {
		cqe = static_cast<int>(rng_.range(1, 32));
	} else if (r < 80) {
		cqe = static_cast<int>(rng_.range(33, 512));
	} else if (r < 89) {
		cqe = static_cast<int>(rng_.range(513, 8192));
	} else if (r < 93) {
		cqe = 0;
		must_fail = true;
	} else if (r < 97) {
		cqe = dattr_.max_cqe + 1;
		must_fail = true;
	} else {
		cqe = -static_cast<int>(rng_.range(1, 1000));
		must_fail = true;
	}
	auto rec = std::make_unique<CqRec>();
	if (rng_.pct(30)) {
		InCall ic("ibv_create_comp_channel");
		rec->ch.reset(ibv_create_comp_channel(ctx_));
		count(CQ_CREATE, !!rec->ch);
	}
	int vec = rng_.pct(90) ? 0 : static_cast<int>(rng_.below(5));
	if (vec >= ctx_->num_comp_vectors)
		must_fail = true;
	rec->dirty = g_opt.scribble && rng_.pct(35);
	auto before = maps();
	ibv_cq *cq;
	cq = in_call("ibv_create_cq",
		     [&] { return ibv_create_cq(ctx_, cqe, nullptr, rec->ch.get(), vec); });
	count(CQ_CREATE, cq);
	g_log.add("create_cq(%d, vector %d, channel %d, %s): %s", cqe, vec, !!rec->ch,
		  rec->dirty ? "dirty" : "clean", cq ? "ok" : strerror(errno));
	if (cq && must_fail)
		bug("create_cq of %d entries on vector %d succeeded (max_cqe %d, %d vectors)",
		    cqe, vec, dattr_.max_cqe, ctx_->num_comp_vectors);
	if (!cq)
		return;
	rec->cq.reset(cq);
	rec->cqe = cq->cqe;
	if (cq->cqe < cqe)
		bug("create_cq of %d entries made %d", cqe, cq->cqe);
	auto fresh = new_maps(before, maps());
	if (fresh.size() != 1) {
		std::printf("# CQ: %zu new ring mappings, expected 1\n", fresh.size());
	} else {
		live_key(fresh[0].off, fresh[0].len());
		rec->key = fresh[0].off;
		if (rec->dirty) {
			rec->ring = map_ring(ctx_->cmd_fd, fresh[0], RingKind::cq,
					     static_cast<uint32_t>(cq->cqe));
			if (rec->ring)
				scr_.add(rec->ring);
		}
	}
	cqs_.push_back(std::move(rec));
}

void Fuzzer::op_destroy_cq()
{
	if (cqs_.empty())
		return op_create_cq();
	size_t i = rng_.below(cqs_.size());
	CqRec &c = *cqs_[i];
	int rv;
	if (c.users) {
		// libsiw would unmap the ring first: ask the kernel directly.
		rv = in_call("DESTROY_CQ", [&] { return destroy_cq_raw(c.cq.get()); });
		count(CQ_DESTROY, !rv);
		g_log.add("destroy_cq(in use by %d): %s", c.users, rv ? err_str(rv) : "ok");
		if (!rv)
			bug("destroy_cq succeeded while %d QPs use the CQ", c.users);
		return;
	}
	drain(c);
	rv = in_call("ibv_destroy_cq", [&] { return c.cq.destroy(); });
	count(CQ_DESTROY, !rv);
	g_log.add("destroy_cq: %s", rv ? err_str(rv) : "ok");
	if (rv)
		bug("destroy_cq of an unused CQ failed: %s", strerror(rv));
	if (c.key)
		kill_key(c.key);
	if (c.ring)
		scr_.remove(c.ring.get());
	if (c.ch) {
		InCall ic("ibv_destroy_comp_channel");
		rv = c.ch.destroy();
		count(CQ_DESTROY, !rv);
		if (rv)
			bug("destroy_comp_channel of a channel without CQs failed: %s",
			    strerror(rv));
	}
	cqs_.erase(cqs_.begin() + static_cast<long>(i));
}

void Fuzzer::op_resize_cq()
{
	if (cqs_.empty())
		return op_create_cq();
	CqRec &c = *rng_.pick(cqs_);
	int n = static_cast<int>(rng_.range(1, 1024)), rv;
	rv = in_call("ibv_resize_cq", [&] { return ibv_resize_cq(c.cq.get(), n); });
	count(CQ_RESIZE, !rv);
	g_log.add("resize_cq(%d): %d", n, rv);
	if (!rv)
		c.cqe = c.cq->cqe;
}

void Fuzzer::op_poll_cq()
{
	std::vector<CqRec *> v;
	for (auto &c : cqs_)
		if (!c->dirty)
			v.push_back(c.get());
	if (v.empty())
		return op_create_cq();
	CqRec &c = *rng_.pick(v);
	ibv_wc wc[16];
	int want = static_cast<int>(rng_.range(1, 16)), n;
	n = in_call("ibv_poll_cq", [&] { return ibv_poll_cq(c.cq.get(), want, wc); });
	count(CQ_POLL, n >= 0);
	if (n < 0)
		bug("poll_cq: %d", n);
	for (int i = 0; i < n; i++)
		check_wc(c, wc[i]);
	if (n < want) {
		c.bound = pending(c);
		if (!c.bound)
			c.lossy = false;
	}
}

void Fuzzer::op_notify_cq()
{
	if (cqs_.empty())
		return op_create_cq();
	CqRec &c = *rng_.pick(cqs_);
	int solicited = rng_.pct(30), rv;
	rv = in_call("ibv_req_notify_cq", [&] { return ibv_req_notify_cq(c.cq.get(), solicited); });
	count(CQ_NOTIFY, !rv);
	if (!rv)
		c.arms++;
}

void Fuzzer::op_cq_event()
{
	std::vector<CqRec *> v;
	for (auto &c : cqs_)
		if (c->ch)
			v.push_back(c.get());
	if (v.empty())
		return op_notify_cq();
	CqRec &c = *rng_.pick(v);
	pollfd p = { c.ch->fd, POLLIN, 0 };
	if (poll(&p, 1, 0) != 1)
		return;
	ibv_cq *cq = nullptr;
	void *cq_ctx;
	int rv;
	rv = in_call("ibv_get_cq_event", [&] { return ibv_get_cq_event(c.ch.get(), &cq, &cq_ctx); });
	count(CQ_EVENT, !rv);
	if (rv)
		bug("get_cq_event after poll() said readable: %s", strerror(errno));
	if (cq != c.cq.get())
		bug("completion channel of CQ %p delivered an event for %p", (void *)c.cq.get(),
		    (void *)cq);
	ibv_ack_cq_events(cq, 1);
	c.events++;
	if (!c.dirty && c.events > c.arms)
		bug("CQ %p: %" PRIu64 " events for %" PRIu64 " armings", (void *)cq, c.events,
		    c.arms);
}

// ---- QPs ----

unsigned unconnected(const std::vector<std::unique_ptr<QpRec>> &qps)
{
	unsigned n = 0;
	for (auto &q : qps)
		n += !q->end;
	return n;
}

void Fuzzer::op_create_qp()
{
	if (unconnected(qps_) >= kMaxQp)
		return op_destroy_qp();
	if (pds_.empty())
		return op_alloc_pd();
	bool dirty = g_opt.scribble && rng_.pct(35);
	if (!pick_cq(dirty))
		return op_create_cq();
	create_qp_rec(rng_.pick(pds_).get(), dirty, nullptr, false);
}

void Fuzzer::op_destroy_qp()
{
	std::vector<QpRec *> v;
	for (auto &q : qps_)
		if (!q->end)
			v.push_back(q.get());
	if (v.empty())
		return op_create_qp();
	destroy_qp_rec(rng_.pick(v));
}

ibv_qp_state rand_state(Rng &r)
{
	unsigned x = static_cast<unsigned>(r.below(100));
	if (x < 25)
		return IBV_QPS_ERR;
	if (x < 40)
		return IBV_QPS_RESET;
	if (x < 58)
		return IBV_QPS_INIT;
	if (x < 66)
		return IBV_QPS_RTR;
	if (x < 76)
		return IBV_QPS_RTS;
	if (x < 86)
		return IBV_QPS_SQD;
	if (x < 93)
		return IBV_QPS_SQE;
	return static_cast<ibv_qp_state>(r.range(IBV_QPS_UNKNOWN, 255));
}

unsigned rand_qp_access(Rng &r)
{
	if (r.pct(5))
		return static_cast<unsigned>(r.next());
	unsigned a = 0;
	for (unsigned b : { IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_READ,
			    IBV_ACCESS_REMOTE_ATOMIC })
		if (r.pct(50))
			a |= b;
	return a;
}

// query_qp of a never-connected QP: what its creation and its last
// successful modify_qp said.  @what says which call came before.
void Fuzzer::query_check(QpRec &q, const char *what)
{
	ibv_qp_attr a = {};
	ibv_qp_init_attr ia = {};
	int rv;
	{
		InCall ic("ibv_query_qp");
		rv = ibv_query_qp(q.qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_CAP |
					    IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC,
				  &ia);
	}
	count(QP_QUERY, !rv);
	if (rv)
		bug("query_qp of QP %u failed: %s", q.qpn, strerror(rv));
	if (q.end)
		return;
	if (a.qp_state != q.state || a.qp_access_flags != q.access ||
	    a.max_rd_atomic != q.ord || a.max_dest_rd_atomic != q.ird)
		bug("QP %u (never connected), after %s: state %s, access %#x, ORD %u, IRD %u; "
		    "want %s, %#x, %u, %u", q.qpn, what, state_name(a.qp_state),
		    a.qp_access_flags, a.max_rd_atomic, a.max_dest_rd_atomic,
		    state_name(q.state), q.access, q.ord, q.ird);
	if (a.cap.max_send_wr != q.cap.max_send_wr || a.cap.max_recv_wr != q.cap.max_recv_wr ||
	    a.cap.max_send_sge != q.cap.max_send_sge ||
	    a.cap.max_recv_sge != q.cap.max_recv_sge ||
	    a.cap.max_inline_data != q.cap.max_inline_data)
		bug("QP %u: query_qp reports capabilities %u/%u/%u/%u/%u, create said "
		    "%u/%u/%u/%u/%u", q.qpn, a.cap.max_send_wr, a.cap.max_recv_wr,
		    a.cap.max_send_sge, a.cap.max_recv_sge, a.cap.max_inline_data,
		    q.cap.max_send_wr, q.cap.max_recv_wr, q.cap.max_send_sge,
		    q.cap.max_recv_sge, q.cap.max_inline_data);
}

void Fuzzer::op_modify_qp()
{
	if (qps_.empty())
		return op_create_qp();
	QpRec &q = *rng_.pick(qps_);
	ibv_qp_attr a = {};
	int mask = 0;
	if (rng_.pct(92)) {
		mask |= IBV_QP_STATE;
		a.qp_state = rand_state(rng_);
	}
	if (rng_.pct(30)) {
		mask |= IBV_QP_ACCESS_FLAGS;
		a.qp_access_flags = rand_qp_access(rng_);
	}
	if (rng_.pct(15)) {
		mask |= IBV_QP_MAX_QP_RD_ATOMIC;
		a.max_rd_atomic = static_cast<uint8_t>(rng_.below(150));
	}
	if (rng_.pct(15)) {
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC;
		a.max_dest_rd_atomic = static_cast<uint8_t>(rng_.below(150));
	}
	if (rng_.pct(12)) {
		// Attributes an iWARP QP has no use for, with any value.
		const int other[] = { IBV_QP_CUR_STATE, IBV_QP_EN_SQD_ASYNC_NOTIFY,
				      IBV_QP_PKEY_INDEX, IBV_QP_PORT, IBV_QP_QKEY,
				      IBV_QP_PATH_MTU, IBV_QP_TIMEOUT, IBV_QP_RETRY_CNT,
				      IBV_QP_RNR_RETRY, IBV_QP_RQ_PSN, IBV_QP_MIN_RNR_TIMER,
				      IBV_QP_SQ_PSN, IBV_QP_PATH_MIG_STATE, IBV_QP_CAP,
				      IBV_QP_DEST_QPN, IBV_QP_AV, IBV_QP_ALT_PATH };
		mask |= other[rng_.below(std::size(other))];
		a.cur_qp_state = static_cast<ibv_qp_state>(rng_.below(8));
		a.pkey_index = static_cast<uint16_t>(rng_.below(4));
		a.port_num = static_cast<uint8_t>(rng_.below(4));
		a.alt_port_num = static_cast<uint8_t>(rng_.below(4));
		a.qkey = static_cast<uint32_t>(rng_.next());
		a.path_mtu = static_cast<ibv_mtu>(rng_.range(1, 7));
		a.timeout = static_cast<uint8_t>(rng_.below(32));
		a.retry_cnt = static_cast<uint8_t>(rng_.below(8));
		a.rnr_retry = static_cast<uint8_t>(rng_.below(8));
		a.rq_psn = a.sq_psn = static_cast<uint32_t>(rng_.next());
		a.min_rnr_timer = static_cast<uint8_t>(rng_.below(32));
		a.path_mig_state = static_cast<ibv_mig_state>(rng_.below(4));
		a.dest_qp_num = static_cast<uint32_t>(rng_.next());
		a.ah_attr.port_num = static_cast<uint8_t>(rng_.below(4));
		a.ah_attr.is_global = static_cast<uint8_t>(rng_.below(2));
		a.ah_attr.grh.sgid_index = static_cast<uint8_t>(rng_.below(4));
		a.alt_ah_attr = a.ah_attr;
		a.cap.max_send_wr = static_cast<uint32_t>(rng_.next());
	}
	if (rng_.pct(2))
		mask |= 1 << rng_.range(21, 30);

	// A never-connected QP about to enter ERROR: its CQs are drained now,
	// so that whether they can have overflowed is known.
	const bool tracked = !q.end;
	bool to_err = tracked && (mask & IBV_QP_STATE) && a.qp_state == IBV_QPS_ERR &&
		      q.state != IBV_QPS_ERR;
	if (to_err && !q.dirty) {
		drain(*q.scq);
		if (q.rcq != q.scq)
			drain(*q.rcq);
	}
	bool sq_ok = !q.scq->lossy, rq_ok = !q.rcq->lossy;
	int rv;
	rv = in_call("ibv_modify_qp", [&] { return ibv_modify_qp(q.qp, &a, mask); });
	count(QP_MODIFY, !rv);
	g_log.add("modify_qp(%u, mask %#x, state %s, access %#x, ord %u, ird %u): %s", q.qpn,
		  mask, (mask & IBV_QP_STATE) ? state_name(a.qp_state) : "-", a.qp_access_flags,
		  a.max_rd_atomic, a.max_dest_rd_atomic, rv ? err_str(rv) : "ok");
	if (!tracked)
		return;
	if (!rv && (mask & IBV_QP_STATE)) {
		const ibv_qp_state st = a.qp_state;
		if (st == IBV_QPS_RTS || st == IBV_QPS_SQE || st > IBV_QPS_ERR)
			bug("QP %u, never connected, in %s: modify_qp to %s succeeded", q.qpn,
			    state_name(q.state), state_name(st));
		if (st == IBV_QPS_SQD && q.state != IBV_QPS_ERR)
			bug("QP %u in %s: modify_qp to SQD succeeded", q.qpn, state_name(q.state));
		// SQD of a QP in ERROR is accepted and changes nothing.
		if (st != IBV_QPS_SQD)
			q.state = st;
	}
	if (!rv) {
		if (mask & IBV_QP_ACCESS_FLAGS)
			q.access = a.qp_access_flags;
		if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
			q.ord = a.max_rd_atomic;
		if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
			q.ird = a.max_dest_rd_atomic;
	}
	if (to_err && !rv)
		flush_check(q, sq_ok, rq_ok);
	query_check(q, rv ? "a refused modify_qp" : "modify_qp");
}

void Fuzzer::op_query_qp()
{
	if (qps_.empty())
		return op_create_qp();
	query_check(*rng_.pick(qps_), "its last modify_qp");
}

// A QP to post to: one of a connection half the time (they carry traffic).
QpRec *post_target(Rng &r, std::vector<std::unique_ptr<QpRec>> &qps)
{
	std::vector<QpRec *> conn, all;
	for (auto &q : qps) {
		all.push_back(q.get());
		if (q->end)
			conn.push_back(q.get());
	}
	if (all.empty())
		return nullptr;
	return !conn.empty() && r.pct(50) ? r.pick(conn) : r.pick(all);
}

void Fuzzer::op_post_send()
{
	QpRec *qp = post_target(rng_, qps_);
	if (!qp)
		return op_create_qp();
	QpRec &q = *qp;
	const size_t n = rng_.range(1, 4);
	std::vector<ibv_send_wr> wrs(n);
	std::vector<std::array<ibv_sge, 12>> sges(n);
	for (size_t i = 0; i < n; i++) {
		ibv_send_wr &w = wrs[i];
		w.wr_id = next_wr_++;
		w.next = i + 1 < n ? &wrs[i + 1] : nullptr;
		unsigned x = static_cast<unsigned>(rng_.below(100));
		// libsiw's opcode table ends at IBV_WR_DRIVER1.
		w.opcode = x < 30 ? IBV_WR_SEND : x < 50 ? IBV_WR_RDMA_WRITE :
			   x < 70 ? IBV_WR_RDMA_READ : x < 76 ? IBV_WR_SEND_WITH_INV :
			   static_cast<ibv_wr_opcode>(rng_.below(IBV_WR_DRIVER1 + 1));
		if (rng_.pct(70))
			w.send_flags |= IBV_SEND_SIGNALED;
		if (rng_.pct(15))
			w.send_flags |= IBV_SEND_SOLICITED;
		if (rng_.pct(15))
			w.send_flags |= IBV_SEND_FENCE;
		bool inl = rng_.pct(15);
		if (inl)
			w.send_flags |= IBV_SEND_INLINE;
		unsigned y = static_cast<unsigned>(rng_.below(100));
		int nsge = inl ? static_cast<int>(rng_.pct(95) ? rng_.below(5) : rng_.range(5, 12)) :
			   y < 8 ? 0 : y < 85 ? static_cast<int>(rng_.range(1, 3)) :
			   y < 95 ? static_cast<int>(rng_.range(4, 6)) :
				    static_cast<int>(rng_.range(7, 12));
		for (int k = 0; k < nsge; k++)
			sges[i][k] = rand_sge(q.pd, inl);
		w.sg_list = sges[i].data();
		w.num_sge = nsge;
		rand_remote(q, w.wr.rdma.remote_addr, w.wr.rdma.rkey);
		if (w.opcode == IBV_WR_SEND_WITH_INV)
			w.invalidate_rkey = !mrs_.empty() && rng_.pct(70) ?
				rng_.pick(mrs_)->mr->rkey : static_cast<uint32_t>(rng_.next());
	}
	ibv_send_wr *bad = nullptr;
	int rv;
	rv = in_call("ibv_post_send", [&] { return ibv_post_send(q.qp, wrs.data(), &bad); });
	// libsiw wrote every WR ahead of @bad into the ring, whatever it
	// returns (a doorbell error comes after the WRs are in place).
	size_t done = bad ? static_cast<size_t>(bad - wrs.data()) : n;
	count(POST_SEND, !rv);
	g_log.add("post_send(%u, %zu WRs, op %d, flags %#x, %d SGEs): %s, %zu posted", q.qpn,
		  n, wrs[0].opcode, wrs[0].send_flags, wrs[0].num_sge, rv ? err_str(rv) : "ok",
		  done);
	if (q.dirty)
		return;
	for (size_t i = 0; i < done; i++) {
		const ibv_send_wr &w = wrs[i];
		q.sq.push_back({ w.wr_id, w.opcode,
				 q.sig_all || (w.send_flags & IBV_SEND_SIGNALED),
				 wr_len(w.sg_list, w.num_sge) });
	}
	posted(q.scq, static_cast<int>(done));
}

void Fuzzer::op_post_recv()
{
	// libsiw divides by the RQ size: never post_recv on an SRQ QP.
	std::vector<QpRec *> conn, all;
	for (auto &q : qps_) {
		if (q->srq)
			continue;
		all.push_back(q.get());
		if (q->end)
			conn.push_back(q.get());
	}
	if (all.empty())
		return op_create_qp();
	QpRec &q = !conn.empty() && rng_.pct(50) ? *rng_.pick(conn) : *rng_.pick(all);
	const size_t n = rng_.range(1, 4);
	std::vector<ibv_recv_wr> wrs(n);
	std::vector<std::array<ibv_sge, 12>> sges(n);
	for (size_t i = 0; i < n; i++) {
		ibv_recv_wr &w = wrs[i];
		w.wr_id = next_wr_++;
		w.next = i + 1 < n ? &wrs[i + 1] : nullptr;
		unsigned y = static_cast<unsigned>(rng_.below(100));
		int nsge = y < 5 ? 0 : y < 85 ? static_cast<int>(rng_.range(1, 3)) :
			   y < 96 ? static_cast<int>(rng_.range(4, 6)) :
				    static_cast<int>(rng_.range(7, 12));
		for (int k = 0; k < nsge; k++)
			sges[i][k] = rand_sge(q.pd, false);
		w.sg_list = sges[i].data();
		w.num_sge = nsge;
	}
	ibv_recv_wr *bad = nullptr;
	int rv;
	rv = in_call("ibv_post_recv", [&] { return ibv_post_recv(q.qp, wrs.data(), &bad); });
	size_t done = bad ? static_cast<size_t>(bad - wrs.data()) : n;
	count(POST_RECV, !rv);
	g_log.add("post_recv(%u, %zu WRs, %d SGEs): %s, %zu posted", q.qpn, n, wrs[0].num_sge,
		  rv ? err_str(rv) : "ok", done);
	if (q.dirty)
		return;
	for (size_t i = 0; i < done; i++)
		q.rq.push_back({ wrs[i].wr_id, IBV_WR_SEND, true,
				 wr_len(wrs[i].sg_list, wrs[i].num_sge) });
	posted(q.rcq, static_cast<int>(done));
}

void Fuzzer::op_doorbell()
{
	if (qps_.empty())
		return op_create_qp();
	QpRec &q = *rng_.pick(qps_);
	int rv;
	rv = in_call("doorbell", [&] { return doorbell(q.qp); });
	count(DOORBELL, !rv);
	g_log.add("doorbell(%u): %s", q.qpn, rv ? err_str(rv) : "ok");
}

// ---- SRQs ----

void Fuzzer::op_create_srq()
{
	if (srqs_.size() >= kMaxSrq)
		return op_destroy_srq();
	if (pds_.empty())
		return op_alloc_pd();
	PdRec *pd = rng_.pick(pds_).get();
	ibv_srq_init_attr sia = {};
	unsigned x = static_cast<unsigned>(rng_.below(100));
	const uint32_t max_wr = static_cast<uint32_t>(dattr_.max_srq_wr);
	sia.attr.max_wr = x < 85 ? static_cast<uint32_t>(rng_.range(1, 128)) :
			  x < 88 ? max_wr : x < 95 ? max_wr + 1 :
			  x < 97 ? 0 : static_cast<uint32_t>(rng_.next());
	sia.attr.max_sge = rng_.pct(90) ? static_cast<uint32_t>(rng_.range(1, XIW_MAX_SGE_USER)) :
					  static_cast<uint32_t>(rng_.range(7, 100));
	sia.attr.srq_limit = rng_.pct(70) ? 0 : static_cast<uint32_t>(rng_.below(sia.attr.max_wr + 5u));
	const ibv_srq_attr want = sia.attr;
	bool bad = want.max_wr > max_wr || want.max_sge > (uint32_t)dattr_.max_srq_sge ||
		   want.srq_limit > want.max_wr;
	bool dirty = g_opt.scribble && rng_.pct(35);
	auto before = maps();
	ibv_srq *srq;
	srq = in_call("ibv_create_srq", [&] { return ibv_create_srq(pd->pd.get(), &sia); });
	count(SRQ_CREATE, srq);
	g_log.add("create_srq(%u, %u sge, limit %u, %s): %s", want.max_wr, want.max_sge,
		  want.srq_limit, dirty ? "dirty" : "clean", srq ? "ok" : strerror(errno));
	if (srq && bad)
		bug("create_srq of %u WRs, %u SGEs, limit %u succeeded (limits %u, %d)",
		    want.max_wr, want.max_sge, want.srq_limit, max_wr, dattr_.max_srq_sge);
	if (!srq)
		return;
	auto rec = std::make_unique<SrqRec>();
	rec->srq.reset(srq);
	rec->pd = pd;
	rec->dirty = dirty;
	rec->max_wr = sia.attr.max_wr;
	pd->users++;
	auto fresh = new_maps(before, maps());
	if (fresh.size() == 1) {
		live_key(fresh[0].off, fresh[0].len());
		rec->key = fresh[0].off;
		if (dirty) {
			rec->ring = map_ring(ctx_->cmd_fd, fresh[0], RingKind::srq, rec->max_wr);
			if (rec->ring)
				scr_.add(rec->ring);
		}
	} else {
		std::printf("# SRQ: %zu new ring mappings, expected 1\n", fresh.size());
	}
	srqs_.push_back(std::move(rec));
}

void Fuzzer::op_destroy_srq()
{
	if (srqs_.empty())
		return op_create_srq();
	size_t i = rng_.below(srqs_.size());
	SrqRec &s = *srqs_[i];
	if (destroy_used(SRQ_DESTROY, "ibv_destroy_srq", s.srq, s.users, "QPs", "SRQ"))
		return;
	s.pd->users--;
	if (s.key)
		kill_key(s.key);
	if (s.ring)
		scr_.remove(s.ring.get());
	srqs_.erase(srqs_.begin() + static_cast<long>(i));
}

void Fuzzer::op_modify_srq()
{
	if (srqs_.empty())
		return op_create_srq();
	SrqRec &s = *rng_.pick(srqs_);
	ibv_srq_attr a = {};
	int mask = 0;
	if (rng_.pct(85)) {
		mask |= IBV_SRQ_LIMIT;
		a.srq_limit = static_cast<uint32_t>(rng_.pct(90) ? rng_.below(s.max_wr + 3) :
								   rng_.next());
	}
	if (rng_.pct(20)) {
		mask |= IBV_SRQ_MAX_WR;
		a.max_wr = static_cast<uint32_t>(rng_.range(1, 1024));
	}
	int rv;
	rv = in_call("ibv_modify_srq", [&] { return ibv_modify_srq(s.srq.get(), &a, mask); });
	count(SRQ_MODIFY, !rv);
	g_log.add("modify_srq(mask %#x, limit %u): %s", mask, a.srq_limit,
		  rv ? err_str(rv) : "ok");
	if (!rv && (mask & IBV_SRQ_LIMIT) && a.srq_limit > s.max_wr)
		bug("modify_srq to limit %u of an SRQ of %u succeeded", a.srq_limit, s.max_wr);
}

void Fuzzer::op_post_srq()
{
	if (srqs_.empty())
		return op_create_srq();
	SrqRec &s = *rng_.pick(srqs_);
	const size_t n = rng_.range(1, 4);
	std::vector<ibv_recv_wr> wrs(n);
	std::vector<std::array<ibv_sge, 12>> sges(n);
	for (size_t i = 0; i < n; i++) {
		ibv_recv_wr &w = wrs[i];
		w.wr_id = next_wr_++;
		w.next = i + 1 < n ? &wrs[i + 1] : nullptr;
		int nsge = rng_.pct(5) ? 0 : static_cast<int>(rng_.pct(95) ? rng_.range(1, 3) :
										 rng_.range(4, 12));
		for (int k = 0; k < nsge; k++)
			sges[i][k] = rand_sge(s.pd, false);
		w.sg_list = sges[i].data();
		w.num_sge = nsge;
	}
	ibv_recv_wr *bad = nullptr;
	int rv;
	rv = in_call("ibv_post_srq_recv",
		     [&] { return ibv_post_srq_recv(s.srq.get(), wrs.data(), &bad); });
	size_t done = bad ? static_cast<size_t>(bad - wrs.data()) : n;
	count(SRQ_POST, !rv);
	g_log.add("post_srq_recv(%zu WRs): %s, %zu posted", n, rv ? err_str(rv) : "ok", done);
	if (s.dirty)
		return;
	for (size_t i = 0; i < done; i++)
		s.outstanding[wrs[i].wr_id] = wr_len(wrs[i].sg_list, wrs[i].num_sge);
	for (auto &q : qps_)
		if (q->srq == &s)
			posted(q->rcq, static_cast<int>(done));
}

// ---- mmap of ring keys, device queries, async events ----

void Fuzzer::op_mmap()
{
	const size_t ps = page_size();
	uint64_t off;
	size_t len = ps;
	int flags = MAP_SHARED;
	const char *what;
	bool must_work = false;
	unsigned x = static_cast<unsigned>(rng_.below(100));
	auto pick_key = [&](std::map<uint64_t, size_t> &m) {
		auto it = m.begin();
		std::advance(it, static_cast<long>(rng_.below(m.size())));
		off = it->first;
		len = it->second;
	};
	if (x < 40 && !live_keys_.empty()) {
		pick_key(live_keys_);
		what = "a live ring";
		must_work = true;
	} else if (x < 55 && !live_keys_.empty()) {
		pick_key(live_keys_);
		len = len > ps && rng_.pct(50) ? len - ps : len + ps;
		what = "a live ring with the wrong size";
	} else if (x < 65 && !live_keys_.empty()) {
		pick_key(live_keys_);
		flags = MAP_PRIVATE;
		what = "a live ring, private";
	} else if (x < 82 && !dead_keys_.empty()) {
		pick_key(dead_keys_);
		what = "a destroyed ring";
	} else if (x < 92) {
		off = XIW_INVAL_UOBJ_KEY;
		what = "the reserved key";
	} else {
		off = rng_.below(1u << 12) * ps;
		len = rng_.range(1, 4) * ps;
		what = "a random offset";
		auto it = live_keys_.find(off);
		must_work = it != live_keys_.end() && it->second == len;
	}
	void *p;
	{
		InCall ic("mmap");
		p = mmap(nullptr, len, PROT_READ | PROT_WRITE, flags, ctx_->cmd_fd,
			 static_cast<off_t>(off));
	}
	count(MMAP, p != MAP_FAILED);
	g_log.add("mmap(key %#" PRIx64 ", %zu, %s: %s): %s", off, len,
		  flags == MAP_SHARED ? "shared" : "private", what,
		  p != MAP_FAILED ? "mapped" : strerror(errno));
	if (p != MAP_FAILED) {
		(void)*static_cast<volatile uint8_t *>(p);
		munmap(p, len);
	}
	if (must_work && p == MAP_FAILED)
		bug("mmap of %s (key %#" PRIx64 ", %zu bytes) failed: %s", what, off, len,
		    strerror(errno));
	if (!must_work && p != MAP_FAILED)
		bug("mmap of %s (key %#" PRIx64 ", %zu bytes, %s) succeeded", what, off, len,
		    flags == MAP_SHARED ? "shared" : "private");
}

void Fuzzer::op_query_dev()
{
	ibv_device_attr a;
	ibv_port_attr pa;
	int rv;
	rv = in_call("ibv_query_device", [&] { return ibv_query_device(ctx_, &a); });
	count(QUERY_DEV, !rv);
	if (rv)
		bug("query_device failed: %s", strerror(rv));
	rv = in_call("ibv_query_port", [&] { return ibv_query_port(ctx_, 1, &pa); });
	count(QUERY_DEV, !rv);
	if (rv)
		bug("query_port 1 failed: %s", strerror(rv));
}

void Fuzzer::op_async()
{
	pollfd p = { ctx_->async_fd, POLLIN, 0 };
	if (poll(&p, 1, 0) != 1)
		return;
	ibv_async_event ev;
	int rv;
	rv = in_call("ibv_get_async_event", [&] { return ibv_get_async_event(ctx_, &ev); });
	count(ASYNC_EVENT, !rv);
	if (rv)
		bug("get_async_event after poll() said readable: %s", strerror(errno));
	const char *name = ibv_event_type_str(ev.event_type);
	g_log.add("async event %s", name);
	switch (ev.event_type) {
	case IBV_EVENT_CQ_ERR:
		if (std::none_of(cqs_.begin(), cqs_.end(),
				 [&](auto &c) { return c->cq.get() == ev.element.cq; }))
			bug("%s for CQ %p, which this process does not have", name,
			    (void *)ev.element.cq);
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		if (std::none_of(qps_.begin(), qps_.end(),
				 [&](auto &q) { return q->qp == ev.element.qp; }))
			bug("%s for QP %p, which this process does not have", name,
			    (void *)ev.element.qp);
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		if (std::none_of(srqs_.begin(), srqs_.end(),
				 [&](auto &s) { return s->srq.get() == ev.element.srq; }))
			bug("%s for SRQ %p, which this process does not have", name,
			    (void *)ev.element.srq);
		break;
	case IBV_EVENT_DEVICE_FATAL:
		bug("%s", name);
	default:
		break;
	}
	ibv_ack_async_event(&ev);
}

// ---- connections ----

// Every CM event there is, the first waited for up to @timeout_ms.
bool Fuzzer::pump(int timeout_ms)
{
	if (!events_.get())
		return false;
	bool any = false;
	auto deadline = xiw::CmEvents::in_ms(std::max(timeout_ms, 0));
	for (;; deadline = Clock::now()) {
		std::optional<xiw::CmEvent> ev = events_.next(deadline);
		if (!ev) {
			if (errno != ETIMEDOUT)
				bug("rdma_get_cm_event: %s", strerror(errno));
			break;
		}
		count(CM_EVENT, true);
		on_cm_event(*ev);
		any = true;
	}
	return any;
}

void Fuzzer::on_cm_event(const xiw::CmEvent &ev)
{
	g_log.add("CM event %s (status %d) on id %p", ev.name(), ev.status, (void *)ev.id);
	if (ev.type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		Conn *c = connecting_;
		if (!c || c->requested) {
			std::printf("# a connection request nobody made: rejected\n");
			xiw::CmId id(ev.id);
			rdma_reject(ev.id, nullptr, 0);
			return;
		}
		c->requested = true;
		End &s = c->srv;
		s.id.reset(ev.id);
		ends_[ev.id] = &s;
		QpRec *q = nullptr;
		if (rng_.pct(92)) {
			q = create_qp_rec(rng_.pick(pds_).get(), c->dirty, ev.id, true);
			if (q) {
				q->conn = c;
				q->end = &s;
				s.qp = q;
			}
		}
		int rv;
		if (q) {
			uint8_t pdata[32];
			for (auto &b : pdata)
				b = static_cast<uint8_t>(rng_.next());
			rdma_conn_param p = {};
			p.responder_resources = static_cast<uint8_t>(rng_.below(9));
			p.initiator_depth = static_cast<uint8_t>(rng_.below(9));
			p.private_data = pdata;
			p.private_data_len = static_cast<uint8_t>(rng_.below(sizeof(pdata) + 1));
			InCall ic("rdma_accept");
			rv = rdma_accept(ev.id, &p);
			s.why = "accept failed";
		} else {
			InCall ic("rdma_reject");
			rv = rdma_reject(ev.id, nullptr, 0);
			rejected_++;
			s.why = "rejected";
			s.gone = true;
		}
		count(CM_CONNECT, !rv);
		if (rv)
			s.gone = true;
		return;
	}
	auto it = ends_.find(ev.id);
	if (it == ends_.end())
		bug("CM event %s for id %p, which this process does not have", ev.name(),
		    (void *)ev.id);
	End &e = *it->second;
	switch (ev.type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		e.addr = true;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		e.route = true;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		e.established = true;
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DISCONNECTED:
		e.gone = true;
		e.why = ev.name();
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		bug("%s", ev.name());
	default:
		break;
	}
}

// Pump CM events until @done; a kernel bug if they do not come.
void Fuzzer::wait_for(const char *what, const std::function<bool()> &done)
{
	auto t = Clock::now();
	while (!done()) {
		if (secs_since(t) > g_opt.hang)
			bug("%s: the CM events did not come within %.0f s", what, g_opt.hang);
		pump(100);
	}
}

void Fuzzer::end_side(End &e)
{
	if (e.qp)
		destroy_qp_rec(e.qp);
	if (!e.id)
		return;
	rdma_cm_id *id = e.id.get();
	ends_.erase(id);
	int rv;
	rv = in_call("rdma_destroy_id", [&] { return e.id.destroy(); });
	count(CM_DESTROY, !rv);
	if (rv)
		bug("rdma_destroy_id(%p) failed: %s", (void *)id, strerror(errno));
}

void Fuzzer::teardown_conn(Conn *c)
{
	if (connecting_ == c)
		connecting_ = nullptr;
	end_side(c->cli);
	end_side(c->srv);
	std::erase_if(conns_, [c](const std::unique_ptr<Conn> &x) { return x.get() == c; });
}

void Fuzzer::op_connect()
{
	if (!events_.get())
		return op_query_dev();
	if (conns_.size() >= kMaxConn)
		return op_disconnect();
	if (pds_.empty())
		return op_alloc_pd();
	bool dirty = g_opt.scribble && rng_.pct(35);
	if (!pick_cq(dirty))
		return op_create_cq();
	conns_.push_back(std::make_unique<Conn>());
	Conn *c = conns_.back().get();
	c->dirty = dirty;
	rdma_cm_id *id;
	int rv;
	rv = in_call("rdma_create_id",
		     [&] { return rdma_create_id(events_.get(), &id, nullptr, RDMA_PS_TCP); });
	count(CM_CONNECT, !rv);
	if (rv)
		return teardown_conn(c);
	c->cli.id.reset(id);
	ends_[id] = &c->cli;
	rv = in_call("rdma_resolve_addr", [&] {
		return rdma_resolve_addr(id, nullptr, reinterpret_cast<sockaddr *>(&dst_), 5000);
	});
	count(CM_CONNECT, !rv);
	if (rv)
		return teardown_conn(c);
	wait_for("address resolution", [c] { return c->cli.addr || c->cli.gone; });
	if (c->cli.gone)
		return teardown_conn(c);
	rv = in_call("rdma_resolve_route", [&] { return rdma_resolve_route(id, 5000); });
	count(CM_CONNECT, !rv);
	if (rv)
		return teardown_conn(c);
	wait_for("route resolution", [c] { return c->cli.route || c->cli.gone; });
	if (c->cli.gone)
		return teardown_conn(c);
	if (id->verbs != ctx_)
		setup_failed("%s resolves to another device than %s", g_opt.addr.c_str(),
			     g_opt.dev.c_str());
	QpRec *q = create_qp_rec(rng_.pick(pds_).get(), dirty, id, true);
	if (!q)
		return teardown_conn(c);
	q->conn = c;
	q->end = &c->cli;
	c->cli.qp = q;

	uint8_t pdata[32];
	for (auto &b : pdata)
		b = static_cast<uint8_t>(rng_.next());
	rdma_conn_param p = {};
	p.initiator_depth = static_cast<uint8_t>(rng_.below(9));
	p.responder_resources = static_cast<uint8_t>(rng_.below(9));
	p.retry_count = 7;
	p.private_data = pdata;
	p.private_data_len = static_cast<uint8_t>(rng_.below(sizeof(pdata) + 1));
	connecting_ = c;
	rv = in_call("rdma_connect", [&] { return rdma_connect(id, &p); });
	count(CM_CONNECT, !rv);
	g_log.add("rdma_connect(qpn %u, %s): %s", q->qpn, dirty ? "dirty" : "clean",
		  rv ? strerror(errno) : "ok");
	if (rv)
		return teardown_conn(c);
	wait_for("connection setup", [c] {
		bool cli = c->cli.established || c->cli.gone;
		bool srv = !c->requested || c->srv.established || c->srv.gone;
		return cli && srv;
	});
	connecting_ = nullptr;
	if (c->cli.established && c->srv.established) {
		established_++;
		return;
	}
	g_log.add("connection not made: client %s, server %s", c->cli.why,
		  c->requested ? c->srv.why : "no request");
	teardown_conn(c);
}

// Both ends that were established have heard the end of the connection.
bool ended(const Conn &c)
{
	return (!c.cli.established || c.cli.gone) && (!c.srv.established || c.srv.gone);
}

void Fuzzer::op_disconnect()
{
	if (conns_.empty())
		return op_connect();
	Conn *c = rng_.pick(conns_).get();
	End &e = rng_.pct(50) ? c->cli : c->srv;
	if (e.id && e.established && !e.gone) {
		int rv;
		rv = in_call("rdma_disconnect", [&] { return rdma_disconnect(e.id.get()); });
		count(CM_DISCONNECT, !rv);
		g_log.add("rdma_disconnect(%s): %s", &e == &c->cli ? "client" : "server",
			  rv ? strerror(errno) : "ok");
	}
	wait_for("disconnection", [c] { return ended(*c); });
	teardown_conn(c);
}

// One end goes without a disconnect (its QP and id destroyed while
// connected): the other must hear of it.
void Fuzzer::op_abort()
{
	std::vector<Conn *> v;
	for (auto &c : conns_)
		if (c->cli.established && c->srv.established && !c->cli.gone && !c->srv.gone)
			v.push_back(c.get());
	if (v.empty())
		return op_connect();
	Conn *c = rng_.pick(v);
	bool cli = rng_.pct(50);
	End &gone = cli ? c->cli : c->srv, &other = cli ? c->srv : c->cli;
	g_log.add("abort the %s end", cli ? "client" : "server");
	calls_[CM_ABORT]++;
	end_side(gone);
	wait_for("the peer of an aborted end", [&other] { return other.gone; });
	teardown_conn(c);
}

// ---- the loop ----

struct Weight {
	Op op;
	unsigned w;
};

const Weight kWeights[] = {
	{ PD_ALLOC, 10 },   { PD_DEALLOC, 6 },   { MR_REG, 40 },	  { MR_DEREG, 30 },
	{ CQ_CREATE, 30 },  { CQ_DESTROY, 22 },  { CQ_RESIZE, 4 },	  { CQ_POLL, 140 },
	{ CQ_NOTIFY, 40 },  { CQ_EVENT, 20 },    { QP_CREATE, 45 },	  { QP_DESTROY, 35 },
	{ QP_MODIFY, 80 },  { QP_QUERY, 25 },    { POST_SEND, 170 },	  { POST_RECV, 110 },
	{ DOORBELL, 40 },   { SRQ_CREATE, 8 },   { SRQ_DESTROY, 6 },	  { SRQ_MODIFY, 6 },
	{ SRQ_POST, 25 },   { MMAP, 15 },	 { QUERY_DEV, 5 },	  { ASYNC_EVENT, 15 },
	{ CM_CONNECT, 3 },  { CM_DISCONNECT, 2 }, { CM_ABORT, 1 },
};

Op Fuzzer::pick_op()
{
	unsigned total = 0;
	for (const Weight &w : kWeights)
		total += w.w;
	unsigned x = static_cast<unsigned>(rng_.below(total));
	for (const Weight &w : kWeights) {
		if (x < w.w)
			return w.op;
		x -= w.w;
	}
	return CQ_POLL;
}

void Fuzzer::step(Op op)
{
	switch (op) {
	case PD_ALLOC: return op_alloc_pd();
	case PD_DEALLOC: return op_dealloc_pd();
	case MR_REG: return op_reg_mr();
	case MR_DEREG: return op_dereg_mr();
	case CQ_CREATE: return op_create_cq();
	case CQ_DESTROY: return op_destroy_cq();
	case CQ_RESIZE: return op_resize_cq();
	case CQ_POLL: return op_poll_cq();
	case CQ_NOTIFY: return op_notify_cq();
	case CQ_EVENT: return op_cq_event();
	case QP_CREATE: return op_create_qp();
	case QP_DESTROY: return op_destroy_qp();
	case QP_MODIFY: return op_modify_qp();
	case QP_QUERY: return op_query_qp();
	case POST_SEND: return op_post_send();
	case POST_RECV: return op_post_recv();
	case DOORBELL: return op_doorbell();
	case SRQ_CREATE: return op_create_srq();
	case SRQ_DESTROY: return op_destroy_srq();
	case SRQ_MODIFY: return op_modify_srq();
	case SRQ_POST: return op_post_srq();
	case MMAP: return op_mmap();
	case QUERY_DEV: return op_query_dev();
	case ASYNC_EVENT: return op_async();
	case CM_CONNECT: return op_connect();
	case CM_DISCONNECT: return op_disconnect();
	case CM_ABORT: return op_abort();
	case CM_EVENT:
	case CM_DESTROY:
	case NUM_OPS:
		break;
	}
}

// Everything goes, in an order that lets each destroy succeed; each must.
void Fuzzer::teardown()
{
	while (!conns_.empty()) {
		Conn *c = conns_.back().get();
		if (c->cli.id && c->cli.established && !c->cli.gone) {
			InCall ic("rdma_disconnect");
			int rv = rdma_disconnect(c->cli.id.get());
			count(CM_DISCONNECT, !rv);
		}
		wait_for("disconnection at the end", [c] { return ended(*c); });
		teardown_conn(c);
	}
	while (!qps_.empty())
		destroy_qp_rec(qps_.back().get());
	InCall ic("the final destroy calls");
	while (!srqs_.empty()) {
		int rv = srqs_.back()->srq.destroy();
		count(SRQ_DESTROY, !rv);
		if (rv)
			bug("destroy_srq at the end: %s", strerror(rv));
		srqs_.back()->pd->users--;
		srqs_.pop_back();
	}
	while (!mrs_.empty()) {
		int rv = mrs_.back()->mr.destroy();
		count(MR_DEREG, !rv);
		if (rv)
			bug("dereg_mr at the end: %s", strerror(rv));
		mrs_.back()->pd->users--;
		mrs_.pop_back();
	}
	while (!cqs_.empty()) {
		CqRec &c = *cqs_.back();
		drain(c);
		int rv = c.cq.destroy();
		count(CQ_DESTROY, !rv);
		if (!rv)
			rv = c.ch.destroy();
		if (rv)
			bug("destroy_cq at the end: %s", strerror(rv));
		if (c.ring)
			scr_.remove(c.ring.get());
		cqs_.pop_back();
	}
	while (!pds_.empty()) {
		int rv = pds_.back()->pd.destroy();
		count(PD_DEALLOC, !rv);
		if (rv)
			bug("dealloc_pd at the end: %s", strerror(rv));
		pds_.pop_back();
	}
	if (listen_) {
		int rv = listen_.destroy();
		count(CM_DESTROY, !rv);
		if (rv)
			bug("rdma_destroy_id of the listener: %s", strerror(errno));
	}
}

int Fuzzer::run()
{
	open_device();
	t0_ = Clock::now();
	std::printf("# xiw-verbs-fuzz: seed %" PRIu64 ", device %s, %s%s%s\n", seed_,
		    g_opt.dev.c_str(), g_opt.scribble ? "scribbler on" : "no scribbler",
		    g_opt.addr.empty() ? "" : ", connections on ", g_opt.addr.c_str());
	Watchdog wd;
	wd.start();
	if (g_opt.scribble)
		scr_.start(seed_ ^ 0x9e3779b97f4a7c15ULL);
	for (unsigned i = 1; !out_of_budget(); i++) {
		step(pick_op());
		if (i % 16 == 0)
			pump(0);
	}
	teardown();
	scr_.stop();
	double t = secs_since(t0_);
	std::printf("# %-18s %10s %10s\n", "operation", "calls", "failed");
	for (unsigned op = 0; op < NUM_OPS; op++)
		if (calls_[op])
			std::printf("# %-18s %10" PRIu64 " %10" PRIu64 "\n", kOpName[op], calls_[op],
				    fails_[op]);
	std::printf("# %" PRIu64 " completions checked, %" PRIu64 " flushes checked whole, "
		    "%" PRIu64 " connections established, %" PRIu64 " rejected, %" PRIu64
		    " ring writes by the scribbler\n", wcs_, flush_checks_, established_,
		    rejected_, scr_.writes());
	std::printf("ok - xiw-verbs-fuzz: %" PRIu64 " operations in %.1f s (%.0f ops/s), "
		    "seed %" PRIu64 "\n", g_ops.load(), t, g_ops / t, seed_);
	return 0;
}

} // namespace

// ---- ring race (issue 32, finding 4) ------------------------------------------

namespace {

// Marks every slot of its rings VALID, over and over, as fast as it can.
// It gives up, and says so, when one call of the main thread (InCall)
// has been running for --race-limit seconds: a flush that follows it
// would otherwise keep that call in the kernel for as long as it runs.
class Racer {
public:
	Racer(std::vector<std::shared_ptr<Ring>> rings, int cpu) : rings_(std::move(rings))
	{
		thr_ = std::thread([this, cpu] {
			pin_to_cpu(cpu);
			run();
		});
		while (sweeps_ < 64 && !gave_up_)
			std::this_thread::yield();
	}
	~Racer() { stop(); }

	void stop()
	{
		stop_ = true;
		if (thr_.joinable())
			thr_.join();
	}

	bool gave_up() const { return gave_up_; }
	uint64_t sweeps() const { return sweeps_; }

private:
	void run()
	{
		const auto limit = static_cast<int64_t>(g_opt.race_limit * 1e9);
		while (!stop_) {
			for (auto &r : rings_)
				for (uint32_t i = 0; i < r->slots; i++)
					store16(r->flags16(i), XIW_WQE_VALID | XIW_WQE_SIGNALLED);
			// The clock only now and then: every pause is a chance
			// for a flush that follows VALID to find a slot clear.
			if (++sweeps_ % 1024)
				continue;
			int64_t t = g_call_start;
			if (t && now_ns() - t > limit) {
				gave_up_ = true;
				return;
			}
		}
	}

	std::vector<std::shared_ptr<Ring>> rings_;
	std::thread thr_;
	std::atomic<bool> stop_{false}, gave_up_{false};
	std::atomic<uint64_t> sweeps_{0};
};

struct RoundSpec;

class RingRace {
public:
	int run();

private:
	struct Qp {
		ibv_qp *qp = nullptr;
		rdma_cm_id *id = nullptr;	// a connection's, which owns the QP
		std::shared_ptr<Ring> sq, rq;
	};

	void open();
	Qp make_qp(ibv_cq *cq, rdma_cm_id *id, uint32_t swr, uint32_t rwr);
	void destroy(Qp &q);
	unsigned drain(ibv_cq *cq);
	template <class F> double timed(const char *name, F f);
	bool wait_event(rdma_cm_id *id, rdma_cm_event_type type, xiw::CmEvent *out = nullptr);
	bool round(unsigned n, const RoundSpec &spec);
	bool connected_round(unsigned n, const RoundSpec &spec);

	xiw::DeviceList list_;
	xiw::Context own_ctx_;
	xiw::CmEvents events_;
	xiw::CmId listen_;
	ibv_context *ctx_ = nullptr;
	std::string path_;
	xiw::Pd pd_;
	xiw::Cq big_, small_;
	sockaddr_storage dst_ = {};
	double longest_ = 0;
	uint64_t completions_ = 0;
};

void RingRace::open()
{
	if (!g_opt.addr.empty()) {
		if (!events_.open() || !(listen_ = events_.create_id()))
			setup_failed("rdma_cm: %s", strerror(errno));
		rdma_cm_id *id = listen_.get();
		dst_ = parse_addr(g_opt.addr, g_opt.port);
		if (rdma_bind_addr(id, reinterpret_cast<sockaddr *>(&dst_)) || rdma_listen(id, 4))
			setup_failed("listen on %s: %s", g_opt.addr.c_str(), strerror(errno));
		ctx_ = id->verbs;
	} else {
		int n = 0;
		list_.reset(ibv_get_device_list(&n));
		for (int i = 0; list_ && i < n && !ctx_; i++)
			if (g_opt.dev == ibv_get_device_name(list_.get()[i])) {
				own_ctx_.reset(ibv_open_device(list_.get()[i]));
				ctx_ = own_ctx_.get();
			}
		if (!ctx_) {
			std::printf("1..0 # SKIP device %s not found\n", g_opt.dev.c_str());
			std::exit(4);
		}
	}
	path_ = fd_path(ctx_->cmd_fd);
	pd_.reset(ibv_alloc_pd(ctx_));
	big_.reset(ibv_create_cq(ctx_, 16384, nullptr, nullptr, 0));
	small_.reset(ibv_create_cq(ctx_, 4, nullptr, nullptr, 0));
	if (!pd_ || !big_ || !small_)
		setup_failed("PD and CQs: %s", strerror(errno));
}

// A QP with an SQ of @swr and an RQ of @rwr slots, and mappings of both
// rings of our own.  Rings of different page counts are told apart by
// size; of two of the same size the lower key is the SQ's (xiw allocates
// it first), and where both have one slot it would not matter: VALID
// sits at the same offset of both element types.
RingRace::Qp RingRace::make_qp(ibv_cq *cq, rdma_cm_id *id, uint32_t swr, uint32_t rwr)
{
	ibv_qp_init_attr ia = {};
	ia.send_cq = ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = swr;
	ia.cap.max_recv_wr = rwr;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	Qp q;
	auto before = uverbs_maps(path_);
	if (id) {
		if (rdma_create_qp(id, pd_.get(), &ia))
			setup_failed("rdma_create_qp: %s", strerror(errno));
		q.qp = id->qp;
		q.id = id;
	} else {
		q.qp = ibv_create_qp(pd_.get(), &ia);
		if (!q.qp)
			setup_failed("create_qp: %s", strerror(errno));
	}
	g_ops++;
	auto fresh = new_maps(before, uverbs_maps(path_));
	size_t sq_len = page_align(ia.cap.max_send_wr * sizeof(xiw_sqe));
	size_t rq_len = page_align(ia.cap.max_recv_wr * sizeof(xiw_rqe));
	if (fresh.size() != 2)
		setup_failed("QP %u: %zu new ring mappings", q.qp->qp_num, fresh.size());
	if (sq_len != rq_len && fresh[0].len() != sq_len)
		std::swap(fresh[0], fresh[1]);
	if (fresh[0].len() != sq_len || fresh[1].len() != rq_len)
		setup_failed("QP %u: ring mappings of %zu and %zu bytes, want %zu and %zu",
			     q.qp->qp_num, fresh[0].len(), fresh[1].len(), sq_len, rq_len);
	q.sq = map_ring(ctx_->cmd_fd, fresh[0], RingKind::sq, ia.cap.max_send_wr);
	q.rq = map_ring(ctx_->cmd_fd, fresh[1], RingKind::rq, ia.cap.max_recv_wr);
	if (!q.sq || !q.rq)
		setup_failed("mmap of a ring: %s", strerror(errno));
	// Well-formed work requests but for VALID, which the racer sets.
	for (uint32_t i = 0; i < q.sq->slots; i++) {
		xiw_sqe s = {};
		s.id = 0x5100000000ULL | i;
		s.opcode = XIW_OP_SEND;
		std::memcpy(q.sq->slot(i), &s, sizeof(s));
	}
	for (uint32_t i = 0; i < q.rq->slots; i++) {
		xiw_rqe r = {};
		r.id = 0x5200000000ULL | i;
		std::memcpy(q.rq->slot(i), &r, sizeof(r));
	}
	return q;
}

void RingRace::destroy(Qp &q)
{
	if (!q.qp)
		return;
	int rv;
	rv = in_call("ibv_destroy_qp", [&] { return ibv_destroy_qp(q.qp); });
	g_ops++;
	if (rv)
		bug("destroy_qp: %s", strerror(rv));
	if (q.id)
		q.id->qp = nullptr;
	q.qp = nullptr;
}

// Poll @cq empty: the number of completions.
unsigned RingRace::drain(ibv_cq *cq)
{
	unsigned n = 0;
	for (;;) {
		ibv_wc wc[32];
		int k = ibv_poll_cq(cq, 32, wc);
		g_ops++;
		if (k < 0)
			bug("poll_cq: %d", k);
		for (int i = 0; i < k; i++)
			if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
				bug("completion %#" PRIx64 " of a never-connected QP with %s",
				    wc[i].wr_id, ibv_wc_status_str(wc[i].status));
		n += static_cast<unsigned>(k);
		if (k < 32)
			break;
	}
	completions_ += n;
	return n;
}

template <class F>
double RingRace::timed(const char *name, F f)
{
	auto t = Clock::now();
	{
		InCall ic(name);
		f();
	}
	g_ops++;
	double s = secs_since(t);
	longest_ = std::max(longest_, s);
	return s;
}

bool RingRace::wait_event(rdma_cm_id *id, rdma_cm_event_type type, xiw::CmEvent *out)
{
	std::optional<xiw::CmEvent> e =
		events_.take_of(id, xiw::CmEvents::in_ms(static_cast<long long>(g_opt.hang * 1000)));
	if (!e && errno == ETIMEDOUT)
		bug("no %s within %.0f s", rdma_event_str(type), g_opt.hang);
	if (!e)
		bug("rdma_get_cm_event: %s", strerror(errno));
	if (e->type != type)
		std::printf("# waiting for %s, got %s (status %d)\n", rdma_event_str(type),
			    e->name(), e->status);
	bool want = e->type == type;
	if (out)
		*out = std::move(*e);
	return want;
}

// The rounds, in turn.  Rings of 4096 slots are the sure test: a flush
// takes milliseconds to go round one, while the racer sweeps it many
// times over, so a flush that follows VALID finds every slot set again
// and never ends (the CQ of 16384 counts well past a ring's worth); that
// holds however the host schedules the two CPUs.  With one-slot rings the
// racer must hit the slot between two looks of the kernel's; the rings
// of 32 and 64 and the CQ of 4 cover the stop at a full CQ.
struct RoundSpec {
	const char *name;
	enum { modify, doorbell, destroy, connected } what;
	uint32_t swr, rwr;
	bool small_cq, race_rq;
};

const RoundSpec kRounds[] = {
	{ "modify_qp(ERR) while an SQ and an RQ of 4096 are raced", RoundSpec::modify, 4096,
	  4096, false, true },
	{ "modify_qp(ERR) while one-slot SQ and RQ are raced", RoundSpec::modify, 1, 1,
	  false, true },
	{ "modify_qp(ERR) while an SQ of 32 and an RQ of 64 are raced, CQ of 4",
	  RoundSpec::modify, 32, 64, true, true },
	{ "doorbell in ERROR while an SQ of 4096 is raced", RoundSpec::doorbell, 4096, 1, false,
	  false },
	{ "destroy_qp while the SQ and RQ are raced", RoundSpec::destroy, 32, 64, false, true },
	{ "peer disconnects while an RQ of 4096 is raced (flush in kernel context)",
	  RoundSpec::connected, 32, 4096, false, true },
};

// One round on a never-connected QP.  Every flush takes at most one
// ring's worth per queue: checked in the completions of each call.
bool RingRace::round(unsigned n, const RoundSpec &spec)
{
	ibv_cq *cq = spec.small_cq ? small_.get() : big_.get();
	Qp q = make_qp(cq, nullptr, spec.swr, spec.rwr);
	const unsigned sq_max = q.sq->slots, both = sq_max + q.rq->slots;
	std::vector<std::shared_ptr<Ring>> rings{ q.sq };
	if (spec.race_rq)
		rings.push_back(q.rq);
	const char *failed = nullptr;
	unsigned most = 0;
	double slowest = 0;
	Racer racer(rings, 1);
	auto modify = [&](ibv_qp_state st) {
		ibv_qp_attr a = {};
		a.qp_state = st;
		int rv = 0;
		slowest = std::max(slowest, timed(st == IBV_QPS_ERR ? "modify_qp(ERR)" :
							   "modify_qp(RESET)",
						  [&] { rv = ibv_modify_qp(q.qp, &a, IBV_QP_STATE); }));
		if (rv)
			bug("modify_qp to %s: %s", state_name(st), strerror(rv));
	};
	switch (spec.what) {
	case RoundSpec::modify:
		for (int rep = 0; rep < 4 && !racer.gave_up(); rep++) {
			modify(IBV_QPS_ERR);
			unsigned k = drain(cq);
			most = std::max(most, k);
			if (k > both)
				failed = "one flush completed more than a ring's worth";
			modify(IBV_QPS_RESET);
		}
		break;
	case RoundSpec::doorbell:
		modify(IBV_QPS_ERR);
		most = drain(cq);
		for (int rep = 0; rep < 6 && !racer.gave_up(); rep++) {
			int rv = 0;
			slowest = std::max(slowest, timed("doorbell", [&] { rv = doorbell(q.qp); }));
			if (rv)
				bug("doorbell in ERROR: %s", strerror(rv));
			unsigned k = drain(cq);
			most = std::max(most, k);
			if (k > sq_max)
				failed = "one doorbell flushed more than the SQ holds";
		}
		break;
	case RoundSpec::destroy:
		slowest = timed("destroy_qp", [&] { destroy(q); });
		break;
	case RoundSpec::connected:
		break;
	}
	racer.stop();
	if (racer.gave_up())
		failed = "a call did not return while the racer ran";
	destroy(q);
	drain(cq);
	std::printf("%sok %u - %s: slowest call %.1f ms, at most %u completions per call "
		    "(rings %u+%u), racer %" PRIu64 " sweeps%s%s\n", failed ? "not " : "", n,
		    spec.name, slowest * 1e3, most, sq_max, both - sq_max, racer.sweeps(),
		    failed ? ": " : "", failed ? failed : "");
	return !failed;
}

// A connected QP's RQ raced while the peer disconnects: the QP goes to
// ERROR, and is flushed, from the kernel's connection handling.
bool RingRace::connected_round(unsigned n, const RoundSpec &spec)
{
	rdma_cm_id *cli;
	if (rdma_create_id(events_.get(), &cli, nullptr, RDMA_PS_TCP) ||
	    rdma_resolve_addr(cli, nullptr, reinterpret_cast<sockaddr *>(&dst_), 5000) ||
	    !wait_event(cli, RDMA_CM_EVENT_ADDR_RESOLVED) || rdma_resolve_route(cli, 5000) ||
	    !wait_event(cli, RDMA_CM_EVENT_ROUTE_RESOLVED))
		setup_failed("resolving %s: %s", g_opt.addr.c_str(), strerror(errno));
	Qp c = make_qp(big_.get(), cli, spec.swr, spec.rwr);
	rdma_conn_param p = {};
	p.retry_count = 7;
	xiw::CmEvent ev;
	if (rdma_connect(cli, &p) || !wait_event(listen_.get(), RDMA_CM_EVENT_CONNECT_REQUEST, &ev))
		bug("no connection request: %s", strerror(errno));
	rdma_cm_id *srv = ev.id;
	ibv_qp_init_attr ia = {};
	ia.send_cq = ia.recv_cq = big_.get();
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	if (rdma_create_qp(srv, pd_.get(), &ia) || rdma_accept(srv, &p))
		setup_failed("server end: %s", strerror(errno));
	if (!wait_event(srv, RDMA_CM_EVENT_ESTABLISHED) || !wait_event(cli, RDMA_CM_EVENT_ESTABLISHED))
		bug("connection not established");
	g_ops += 8;
	const char *failed = nullptr;
	double took;
	uint64_t sweeps;
	unsigned k = 0;
	{
		// The flush comes from the close work, after the CM events:
		// race on until its first completion, and a little longer.
		Racer racer({ c.rq }, -1);
		took = timed("the disconnection and flush while the RQ is raced", [&] {
			if (rdma_disconnect(srv))
				bug("rdma_disconnect: %s", strerror(errno));
			wait_event(cli, RDMA_CM_EVENT_DISCONNECTED);
			wait_event(srv, RDMA_CM_EVENT_DISCONNECTED);
			auto t = Clock::now();
			while (!k && secs_since(t) < 5 && !racer.gave_up())
				k += drain(big_.get());
			std::this_thread::sleep_for(std::chrono::milliseconds(100));
		});
		racer.stop();
		sweeps = racer.sweeps();
		k += drain(big_.get());
		if (!k)
			failed = "the raced RQ was not flushed after the disconnection";
		// Nothing else was posted on either end: only the raced RQ
		// has work to flush.
		if (k > c.rq->slots)
			failed = "the flush completed more than the RQ holds";
		if (racer.gave_up())
			failed = "the flush did not end while the racer ran";
	}
	destroy(c);
	ibv_destroy_qp(srv->qp);
	srv->qp = nullptr;
	rdma_destroy_id(srv);
	rdma_destroy_id(cli);
	drain(big_.get());
	std::printf("%sok %u - %s: disconnection and flush took %.1f ms, %u completions "
		    "(RQ %u), racer %" PRIu64 " sweeps%s%s\n", failed ? "not " : "", n, spec.name,
		    took * 1e3, k, c.rq->slots, sweeps, failed ? ": " : "", failed ? failed : "");
	return !failed;
}

int RingRace::run()
{
	if (sched_getaffinity(0, sizeof(g_cpus), &g_cpus) || CPU_COUNT(&g_cpus) < 2 ||
	    !CPU_ISSET(0, &g_cpus) || !CPU_ISSET(1, &g_cpus)) {
		std::printf("1..0 # SKIP the ring race needs CPUs 0 and 1\n");
		return 4;
	}
	open();
	pin_to_cpu(0);
	Watchdog wd;
	wd.start();
	// Without -a no connections: the last round is left out.
	const unsigned kinds = std::size(kRounds) - !events_.get();
	auto t0 = Clock::now();
	std::printf("1..%u\n", g_opt.race_rounds);
	unsigned failed = 0;
	for (unsigned n = 1; n <= g_opt.race_rounds; n++) {
		const RoundSpec &spec = kRounds[(n - 1) % kinds];
		bool ok = spec.what == RoundSpec::connected ? connected_round(n, spec) :
							       round(n, spec);
		failed += !ok;
		if (!ok)
			break;	// a flush that runs away is not worth repeating
	}
	small_.reset();
	big_.reset();
	pd_.reset();
	double t = secs_since(t0);
	std::printf("# %" PRIu64 " calls in %.1f s, the slowest %.1f ms, %" PRIu64
		    " completions\n", g_ops.load(), t, longest_ * 1e3, completions_);
	std::printf("%s - xiw-verbs-fuzz --ring-race: %u rounds, %u failed\n",
		    failed ? "not ok" : "ok", g_opt.race_rounds, failed);
	return failed ? 1 : 0;
}

const xiw::cli::Usage kUsage = {
	"xiw-verbs-fuzz",
	"usage: xiw-verbs-fuzz [-d DEV] [-a ADDR [-p PORT]] [--seed N] [--ops N] [--time S]\n"
	"                      [--no-scribble] [--hang S] [-v]\n"
	"       xiw-verbs-fuzz --ring-race N [-d DEV] [-a ADDR [-p PORT]] [--race-limit S]\n",
	"NAME\n"
	"    xiw-verbs-fuzz - random user verbs against an xiw device, with the\n"
	"    rings written from a second thread; the ring race of the flushes\n"
	"\n"
	"SYNOPSIS\n"
	"    xiw-verbs-fuzz [-d DEV] [-a ADDR [-p PORT]] [--seed N] [--ops N]\n"
	"                   [--time S] [--no-scribble] [--hang S] [-v]\n"
	"    xiw-verbs-fuzz --ring-race N [-d DEV] [-a ADDR [-p PORT]]\n"
	"                   [--race-limit S]\n"
	"\n"
	"DESCRIPTION\n"
	"    Runs a seeded random sequence of verbs through libsiw (PDs, MRs,\n"
	"    CQs, QPs, SRQs, work requests, polls, events, the doorbell, mmap of\n"
	"    ring keys, with -a connections through rdma_cm) while a second\n"
	"    thread writes into the rings of part of the objects, and checks\n"
	"    what only a kernel bug explains: a call or CM event that does not\n"
	"    come, a completion that makes no sense, a refused destroy of an\n"
	"    unused object, an mmap of a destroyed ring, state that does not\n"
	"    follow the verbs' rules.  Errors of single verbs are counted, not\n"
	"    failures.  Ends with a summary: operations, time, operations per\n"
	"    second, seed.  --ring-race runs N rounds of a thread marking every\n"
	"    SQ and RQ slot VALID while the QP is flushed; each call must\n"
	"    return at once and complete at most a ring's worth.\n"
	"\n"
	"OPTIONS\n"
	"    -d, --dev DEV      the xiw device (xiw0)\n"
	"    -a, --addr ADDR    an address of DEV: connections over loopback on it\n"
	"    -p, --port PORT    the listener's port (7174)\n"
	"    --seed N           the seed (default: random, printed)\n"
	"    --ops N            stop after N operations (default 10000 without\n"
	"                       --time)\n"
	"    --time S           stop after S seconds\n"
	"    --no-scribble      no second thread writing the rings\n"
	"    --hang S           a call or CM event longer than S seconds is a\n"
	"                       hang (60)\n"
	"    --ring-race N      N rounds of the ring race instead of fuzzing\n"
	"    --race-limit S     the racer gives up after one call of S seconds\n"
	"                       (10)\n"
	"    -v, --verbose      print every operation\n"
	"    -h, --help         this text\n"
	"\n"
	"EXIT STATUS\n"
	"    0 passed, 1 a kernel bug was seen, 2 usage or setup error, 4 the\n"
	"    device (or, for --ring-race, a second CPU) is missing.\n",
};

} // namespace

int main(int argc, char **argv)
{
	enum { O_SEED = 256, O_OPS, O_TIME, O_NO_SCRIBBLE, O_HANG, O_RACE, O_RACE_LIMIT };
	static const option longopts[] = {
		{ "dev", required_argument, nullptr, 'd' },
		{ "addr", required_argument, nullptr, 'a' },
		{ "port", required_argument, nullptr, 'p' },
		{ "seed", required_argument, nullptr, O_SEED },
		{ "ops", required_argument, nullptr, O_OPS },
		{ "time", required_argument, nullptr, O_TIME },
		{ "no-scribble", no_argument, nullptr, O_NO_SCRIBBLE },
		{ "hang", required_argument, nullptr, O_HANG },
		{ "ring-race", required_argument, nullptr, O_RACE },
		{ "race-limit", required_argument, nullptr, O_RACE_LIMIT },
		{ "verbose", no_argument, nullptr, 'v' },
		{ "help", no_argument, nullptr, 'h' },
		{ nullptr, 0, nullptr, 0 },
	};
	using xiw::cli::secs_opt;
	using xiw::cli::uint_opt;
	for (int opt; (opt = getopt_long(argc, argv, "d:a:p:vh", longopts, nullptr)) != -1;) {
		switch (opt) {
		case 'd': g_opt.dev = optarg; break;
		case 'a': g_opt.addr = optarg; break;
		case 'p':
			g_opt.port = static_cast<uint16_t>(uint_opt(kUsage, "-p", optarg, 1, 65535));
			break;
		case 'v': g_opt.verbose = true; break;
		case O_SEED:
			g_opt.seed = uint_opt(kUsage, "--seed", optarg, 0, UINT64_MAX);
			g_opt.seed_given = true;
			break;
		case O_OPS: g_opt.ops = uint_opt(kUsage, "--ops", optarg, 1, 1ULL << 40); break;
		case O_TIME: g_opt.time = secs_opt(kUsage, "--time", optarg, 0.001, 1e6); break;
		case O_NO_SCRIBBLE: g_opt.scribble = false; break;
		case O_HANG: g_opt.hang = secs_opt(kUsage, "--hang", optarg, 1, 3600); break;
		case O_RACE:
			g_opt.race_rounds = static_cast<unsigned>(
				uint_opt(kUsage, "--ring-race", optarg, 1, 1000000));
			break;
		case O_RACE_LIMIT:
			g_opt.race_limit = secs_opt(kUsage, "--race-limit", optarg, 0.1, 600);
			break;
		case 'h': xiw::cli::help(kUsage);
		default: xiw::cli::usage_error(kUsage, "");
		}
	}
	if (optind != argc)
		xiw::cli::usage_error(kUsage, std::string("unexpected argument '") + argv[optind] + "'");
	std::setvbuf(stdout, nullptr, _IOLBF, 0);
	g_main_tid = static_cast<pid_t>(syscall(SYS_gettid));
	if (g_opt.race_rounds)
		return RingRace().run();
	if (!g_opt.seed_given)
		g_opt.seed = std::random_device{}() ^
			     static_cast<uint64_t>(Clock::now().time_since_epoch().count());
	if (!g_opt.ops && !g_opt.time)
		g_opt.ops = 10000;
	return Fuzzer(g_opt.seed).run();
}
