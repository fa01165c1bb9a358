// SPDX-License-Identifier: GPL-2.0
//
// xiw-cm-test --race: the teardown of a connection raced against its own
// TERMINATE and against the removal of the device under it.
//
// One process keeps CONNS client connections in flight to its own
// listener (both ends on RDMA devices, driven through librdmacm and
// libsiw), all on one event loop with nothing ever waited for without a
// bound.  Once a client is up it picks at random: an RDMA Write to an
// STag nobody issued, two Sends into one posted receive (both make the
// server end send a TERMINATE), one Send, or nothing.  The server end is
// destroyed at a random moment: after its ESTABLISHED, or (one in four)
// right after its accept, while the client's MPA Reply is still in
// flight; three in four of those delays are 0-2 ms, the rest 2-50 ms; one
// destroy in four is preceded by rdma_disconnect() (a graceful close
// racing the destroy).  One client in four is destroyed the same way
// after it posted; the others wait for their DISCONNECTED.  Meanwhile
// something else (xiw_faults.sh) deletes the netdevs under the devices
// and brings them back: every id then gets DEVICE_REMOVAL, the kernel
// destroys what is left of the QPs, and the listener is opened again
// once its address has a device.
//
// What fails the run here: a destroy call that fails (libibverbs already
// treats the EIO of a removed device as success), no connection up, no
// TERMINATE provoked or no server end destroyed on its timer.  Hangs,
// splats and leftover QPs are for the caller to see.

#include "xiw_cm_race.h"

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <memory>
#include <random>
#include <vector>

#include "xiw_ktap.h"
#include "xiw_verbs_util.h"

namespace xiw::cm_race {
namespace {

using namespace xiw::ktap;
using Clock = std::chrono::steady_clock;
using std::chrono::microseconds;
using std::chrono::milliseconds;

constexpr size_t kBuf = 4096;
// A connection that neither came up nor failed by then is destroyed.
constexpr milliseconds kSetupLimit{15000};
// An established client waits this long for its DISCONNECTED.
constexpr milliseconds kCloseLimit{10000};
// After a failed bind or client start: when to try again.
constexpr milliseconds kListenRetry{100};
constexpr milliseconds kClientRetry{50};
// Address and route resolution timeouts.
constexpr int kResolveMs = 2000;

struct Counts {
	unsigned long started;		// client ids created
	unsigned long established;	// clients that saw ESTABLISHED
	unsigned long provoked;		// of them, posted what makes a TERMINATE
	unsigned long accepted;		// server ends accepted
	unsigned long srv_timed;	// server ends destroyed on their timer
	unsigned long srv_disc;		// of them, after rdma_disconnect()
	unsigned long cli_timed;	// clients destroyed on their timer
	unsigned long disconnected;	// ends destroyed after DISCONNECTED
	unsigned long removals;		// DEVICE_REMOVAL events (listener too)
	unsigned long listens;		// listeners opened
	unsigned long failed;		// setups that failed (device gone, ...)
	unsigned long expired;		// ends destroyed at a limit
	unsigned long destroy_errors;	// destroy calls that failed
};

// One end of a connection and its verbs objects.
struct End {
	bool client;
	rdma_cm_id *id;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_mr *mr = nullptr;
	std::vector<uint8_t> buf = std::vector<uint8_t>(kBuf);
	bool up = false;			// ESTABLISHED seen
	Clock::time_point due;			// destroyed then
	bool timed = false;			// @due is a random delay, not a limit
};

class Race {
public:
	explicit Race(const Options &o) : o_(o), rng_(o.seed) {}
	~Race();
	int run();

private:
	const Options &o_;
	std::mt19937_64 rng_;
	rdma_event_channel *ch_ = nullptr;
	rdma_cm_id *listen_ = nullptr;
	Clock::time_point listen_retry_{}, client_retry_{};
	std::map<rdma_cm_id *, std::unique_ptr<End>> ends_;
	unsigned clients_ = 0;
	Counts n_ = {};
	Clock::time_point t0_;
	// Why setups failed: count and the first time, per reason.
	std::map<std::string, std::pair<unsigned long, double>> why_;

	unsigned pick(unsigned n) { return std::uniform_int_distribution<unsigned>(0, n - 1)(rng_); }
	microseconds delay();
	void listen(Clock::time_point now);
	void drop_listener();
	void start_client(Clock::time_point now);
	const char *setup(End &e);
	void destroy(rdma_cm_id *id);
	void accept(rdma_cm_id *id, Clock::time_point now);
	void established(End &e, Clock::time_point now);
	void event(const rdma_cm_event &ev, Clock::time_point now);
	void expire(Clock::time_point now);
	void failed(const End *e, const std::string &why, Clock::time_point now);
};

Race::~Race()
{
	if (ch_)
		rdma_destroy_event_channel(ch_);
}

// Three in four 0-2 ms, the rest 2-50 ms.
microseconds Race::delay()
{
	if (pick(4))
		return microseconds(pick(2001));
	return microseconds(2000 + pick(48001));
}

// A setup failed: counted, and why (the first time each reason came).
void Race::failed(const End *e, const std::string &why, Clock::time_point now)
{
	auto &w = why_[std::string(e && !e->client ? "server " : "client ") + why];

	if (!w.first++)
		w.second = std::chrono::duration<double>(now - t0_).count();
	n_.failed++;
}

void Race::listen(Clock::time_point now)
{
	if (listen_ || now < listen_retry_)
		return;
	if (rdma_create_id(ch_, &listen_, nullptr, RDMA_PS_TCP)) {
		listen_ = nullptr;
		listen_retry_ = now + kListenRetry;
		return;
	}
	// Fails while the address has no RDMA device (removed, not back yet).
	if (rdma_bind_addr(listen_, reinterpret_cast<sockaddr *>(const_cast<sockaddr_storage *>(&o_.srv))) ||
	    rdma_listen(listen_, 64)) {
		drop_listener();
		listen_retry_ = now + kListenRetry;
		return;
	}
	n_.listens++;
}

void Race::drop_listener()
{
	if (!listen_)
		return;
	if (rdma_destroy_id(listen_)) {
		diag("rdma_destroy_id(listener): %s", strerror(errno));
		n_.destroy_errors++;
	}
	listen_ = nullptr;
}

void Race::start_client(Clock::time_point now)
{
	rdma_cm_id *id;

	if (rdma_create_id(ch_, &id, nullptr, RDMA_PS_TCP)) {
		client_retry_ = now + kClientRetry;
		return;
	}
	auto e = std::make_unique<End>();
	e->client = true;
	e->id = id;
	e->due = now + kSetupLimit;
	ends_[id] = std::move(e);
	clients_++;
	n_.started++;
	if (rdma_resolve_addr(id, reinterpret_cast<sockaddr *>(const_cast<sockaddr_storage *>(&o_.cli)),
			      reinterpret_cast<sockaddr *>(const_cast<sockaddr_storage *>(&o_.srv)),
			      kResolveMs)) {
		failed(ends_[id].get(), std::string("rdma_resolve_addr: ") + strerror(errno), now);
		destroy(id);
		client_retry_ = now + kClientRetry;
	}
}

// PD, CQ, MR and QP on the id's device; a server end posts one receive.
// nullptr, or the call that failed.
const char *Race::setup(End &e)
{
	ibv_context *ctx = e.id->verbs;

	if (!ctx)
		return "no verbs context";
	e.pd = ibv_alloc_pd(ctx);
	if (!e.pd)
		return "ibv_alloc_pd";
	e.cq = ibv_create_cq(ctx, 32, nullptr, nullptr, 0);
	if (!e.cq)
		return "ibv_create_cq";
	e.mr = ibv_reg_mr(e.pd, e.buf.data(), e.buf.size(),
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!e.mr)
		return "ibv_reg_mr";
	ibv_qp_init_attr ia = {};
	ia.send_cq = ia.recv_cq = e.cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 8;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	if (rdma_create_qp(e.id, e.pd, &ia))
		return "rdma_create_qp";
	if (!e.client && post_one_recv(e.id->qp, 1, e.buf.data(), 64, e.mr->lkey))
		return "ibv_post_recv";
	return nullptr;
}

// Destroy @id's end: its QP, MR, CQ, PD and the id.  Every call's result
// counts: after a device removal libibverbs reports success for what the
// kernel destroyed already.
void Race::destroy(rdma_cm_id *id)
{
	auto it = ends_.find(id);

	if (it == ends_.end())
		return;
	End &e = *it->second;
	auto bad = [&](const char *what, int rv) {
		if (!rv)
			return;
		diag("%s end: %s: %s", e.client ? "client" : "server", what, strerror(rv));
		n_.destroy_errors++;
	};
	if (id->qp) {
		// Not rdma_destroy_qp(), which drops the result.
		bad("ibv_destroy_qp", ibv_destroy_qp(id->qp));
		id->qp = nullptr;
	}
	if (e.mr)
		bad("ibv_dereg_mr", ibv_dereg_mr(e.mr));
	if (e.cq)
		bad("ibv_destroy_cq", ibv_destroy_cq(e.cq));
	if (e.pd)
		bad("ibv_dealloc_pd", ibv_dealloc_pd(e.pd));
	bad("rdma_destroy_id", rdma_destroy_id(id) ? errno : 0);
	if (e.client)
		clients_--;
	ends_.erase(it);
}

void Race::accept(rdma_cm_id *id, Clock::time_point now)
{
	auto e = std::make_unique<End>();
	e->client = false;
	e->id = id;
	e->due = now + kSetupLimit;
	End &s = *e;
	ends_[id] = std::move(e);
	rdma_conn_param p = {};
	p.responder_resources = 1;
	p.initiator_depth = 1;
	const char *bad = setup(s);
	if (bad || rdma_accept(id, &p)) {
		failed(&s, std::string(bad ? bad : "rdma_accept") + ": " + strerror(errno), now);
		if (!id->qp)
			rdma_reject(id, nullptr, 0);
		destroy(id);
		return;
	}
	n_.accepted++;
	// One in four goes while the client's side still comes up.
	if (!pick(4)) {
		s.due = now + delay();
		s.timed = true;
	}
}

void Race::established(End &e, Clock::time_point now)
{
	e.up = true;
	if (!e.client) {
		if (!e.timed) {
			e.due = now + delay();
			e.timed = true;
		}
		return;
	}
	n_.established++;
	ibv_qp *qp = e.id->qp;
	uint32_t lkey = e.mr->lkey;
	// Posting may fail: the server end may be gone already.
	switch (pick(4)) {
	case 0: {
		// An STag the server never issued (its key byte random too).
		uint32_t stag = static_cast<uint32_t>(rng_());
		n_.provoked++;
		post_one_send(qp, 1, IBV_WR_RDMA_WRITE, e.buf.data(), 1024, lkey, 0x10000, stag);
		break;
	}
	case 1:
		// The server posted one receive: the second Send finds none.
		n_.provoked++;
		post_one_send(qp, 1, IBV_WR_SEND, e.buf.data(), 64, lkey);
		post_one_send(qp, 2, IBV_WR_SEND, e.buf.data(), 64, lkey);
		break;
	case 2:
		post_one_send(qp, 1, IBV_WR_SEND, e.buf.data(), 64, lkey);
		break;
	default:
		break;
	}
	if (!pick(4)) {
		e.due = now + delay();
		e.timed = true;
	} else {
		e.due = now + kCloseLimit;
	}
}

void Race::event(const rdma_cm_event &ev, Clock::time_point now)
{
	if (ev.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		accept(ev.id, now);
		return;
	}
	if (listen_ && ev.id == listen_) {
		if (ev.event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			n_.removals++;
			drop_listener();
			listen_retry_ = now + kListenRetry;
		}
		return;
	}
	auto it = ends_.find(ev.id);
	if (it == ends_.end())
		return;
	End &e = *it->second;
	std::string why = std::string(rdma_event_str(ev.event)) + " " + std::to_string(ev.status);
	switch (ev.event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (!rdma_resolve_route(e.id, kResolveMs))
			return;
		why = std::string("rdma_resolve_route: ") + strerror(errno);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED: {
		rdma_conn_param p = {};
		p.responder_resources = 1;
		p.initiator_depth = 1;
		p.retry_count = 7;
		const char *bad = setup(e);
		if (!bad && !rdma_connect(e.id, &p))
			return;
		why = std::string(bad ? bad : "rdma_connect") + ": " + strerror(errno);
		break;
	}
	case RDMA_CM_EVENT_ESTABLISHED:
		established(e, now);
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
		n_.disconnected++;
		destroy(ev.id);
		return;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		n_.removals++;
		destroy(ev.id);
		return;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return;
	default:
		// Unreachable, rejected, address or route errors: the device
		// or its address went away, or the server end was destroyed
		// before it was up.
		break;
	}
	if (!e.up)
		failed(&e, why, now);
	if (e.client)
		client_retry_ = now + kClientRetry;
	destroy(ev.id);
}

// Destroy the ends whose time has come.
void Race::expire(Clock::time_point now)
{
	std::vector<rdma_cm_id *> due;

	for (auto &[id, e] : ends_)
		if (e->due <= now)
			due.push_back(id);
	for (rdma_cm_id *id : due) {
		End &e = *ends_[id];
		if (!e.timed) {
			n_.expired++;
		} else if (e.client) {
			n_.cli_timed++;
		} else {
			n_.srv_timed++;
			if (e.up && !pick(4)) {
				n_.srv_disc++;
				rdma_disconnect(id);
			}
		}
		destroy(id);
	}
}

int Race::run()
{
	ch_ = rdma_create_event_channel();
	if (!ch_) {
		diag("rdma_create_event_channel: %s", strerror(errno));
		return 2;
	}
	int fl = fcntl(ch_->fd, F_GETFL);
	if (fl < 0 || fcntl(ch_->fd, F_SETFL, fl | O_NONBLOCK)) {
		diag("event channel: O_NONBLOCK: %s", strerror(errno));
		return 2;
	}

	auto t0 = t0_ = Clock::now();
	auto stop = t0 + std::chrono::duration_cast<Clock::duration>(
				 std::chrono::duration<double>(o_.seconds));
	for (;;) {
		auto now = Clock::now();
		if (now >= stop) {
			// Time is up: everything left goes at once.
			drop_listener();
			while (!ends_.empty())
				destroy(ends_.begin()->first);
			break;
		}
		listen(now);
		while (clients_ < o_.conns && now >= client_retry_)
			start_client(now);
		expire(now);

		auto next = std::min(now + milliseconds(10), stop);
		for (auto &[id, e] : ends_)
			next = std::min(next, e->due);
		int ms = static_cast<int>(std::chrono::ceil<milliseconds>(next - now).count());
		pollfd p = { ch_->fd, POLLIN, 0 };
		poll(&p, 1, std::max(ms, 0));
		rdma_cm_event *ev;
		while (!rdma_get_cm_event(ch_, &ev)) {
			rdma_cm_event copy = *ev;
			rdma_ack_cm_event(ev);
			event(copy, Clock::now());
		}
	}
	double secs = std::chrono::duration<double>(Clock::now() - t0).count();

	diag("seed %llu, %.1f s: %lu clients started, %lu established, %lu TERMINATEs provoked",
	     static_cast<unsigned long long>(o_.seed), secs, n_.started, n_.established,
	     n_.provoked);
	diag("%lu server ends accepted, %lu destroyed on their timer (%lu after rdma_disconnect), "
	     "%lu clients destroyed on theirs",
	     n_.accepted, n_.srv_timed, n_.srv_disc, n_.cli_timed);
	diag("%lu ends closed after DISCONNECTED, %lu DEVICE_REMOVAL events, %lu listeners "
	     "opened, %lu setups failed, %lu ends at their time limit",
	     n_.disconnected, n_.removals, n_.listens, n_.failed, n_.expired);

	for (auto &[why, w] : why_)
		diag("setup failed %lu times (first at %.1f s): %s", w.first, w.second, why.c_str());

	Case c;
	c.check(n_.destroy_errors == 0, "%lu destroy calls failed", n_.destroy_errors);
	c.check(n_.established > 0, "no connection came up");
	c.check(n_.provoked > 0, "no TERMINATE provoked");
	c.check(n_.srv_timed > 0, "no server end destroyed on its timer");
	return c.ok ? 0 : 1;
}

} // namespace

int run(const Options &o)
{
	Race r(o);
	int rv;

	std::printf("KTAP version 1\n1..1\n");
	rv = r.run();
	if (rv == 2)
		return rv;
	std::printf("%sok 1 - race: TERMINATE, destroy_qp and device removal\n", rv ? "not " : "");
	return rv;
}

} // namespace xiw::cm_race
