// SPDX-License-Identifier: GPL-2.0
//
// Small libibverbs helpers shared by the xiw test tools, the RAII owners
// of verbs (and, where librdmacm's header exists, rdma_cm) objects, of
// memory, memory mappings and file descriptors, and the tools' one wait
// for rdma_cm events (CmEvents).

#ifndef XIW_VERBS_UTIL_H
#define XIW_VERBS_UTIL_H

#include <infiniband/verbs.h>
#if __has_include(<rdma/rdma_cma.h>)
#include <rdma/rdma_cma.h>
#endif
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace xiw {

// Owner of one object that @Destroy (ibv_dealloc_pd, ibv_destroy_qp, ...)
// destroys: move-only, the object goes with its owner.  destroy() is for
// callers that want the result: it destroys now and, if the call fails,
// keeps the object (a verbs destroy that fails leaves it alive).
template <class T, auto Destroy>
class Owned {
public:
	Owned() = default;
	explicit Owned(T *p) : p_(p) {}
	Owned(const Owned &) = delete;
	Owned &operator=(const Owned &) = delete;
	Owned(Owned &&o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
	Owned &operator=(Owned &&o) noexcept
	{
		if (this != &o) {
			reset();
			p_ = std::exchange(o.p_, nullptr);
		}
		return *this;
	}
	~Owned() { reset(); }

	T *get() const { return p_; }
	T *operator->() const { return p_; }
	explicit operator bool() const { return p_ != nullptr; }
	// Give the object up without destroying it.
	T *release() { return std::exchange(p_, nullptr); }

	// Destroy the object now: 0, or the destroy call's error (the
	// object is kept).  Destroy calls without a result count as 0.
	int destroy()
	{
		if (!p_)
			return 0;
		if constexpr (std::is_void_v<decltype(Destroy(p_))>) {
			Destroy(std::exchange(p_, nullptr));
			return 0;
		} else {
			int rv = Destroy(p_);
			if (!rv)
				p_ = nullptr;
			return rv;
		}
	}

	// Destroy the object (ignoring the result) and own @p instead.
	void reset(T *p = nullptr)
	{
		if (p_ && p_ != p)
			Destroy(p_);
		p_ = p;
	}

private:
	T *p_ = nullptr;
};

using DeviceList = Owned<ibv_device *, ibv_free_device_list>;
using Context = Owned<ibv_context, ibv_close_device>;
using Pd = Owned<ibv_pd, ibv_dealloc_pd>;
using Mr = Owned<ibv_mr, ibv_dereg_mr>;
using Cq = Owned<ibv_cq, ibv_destroy_cq>;
using Qp = Owned<ibv_qp, ibv_destroy_qp>;
using Srq = Owned<ibv_srq, ibv_destroy_srq>;
using CompChannel = Owned<ibv_comp_channel, ibv_destroy_comp_channel>;
#if __has_include(<rdma/rdma_cma.h>)
using CmChannel = Owned<rdma_event_channel, rdma_destroy_event_channel>;
using CmId = Owned<rdma_cm_id, rdma_destroy_id>;
// The QP rdma_create_qp() gave an id: its owner holds the id and, when it
// goes, calls rdma_destroy_qp() on it (the id stays).  An id's QP must go
// before its CQs, PD and MRs, and before the id itself: declare this
// owner after theirs.
using CmQp = Owned<rdma_cm_id, rdma_destroy_qp>;
#endif

inline void free_memory(uint8_t *p) { std::free(p); }

// Memory of malloc()'s family, freed when its owner goes.
using Memory = Owned<uint8_t, free_memory>;

// @len bytes aligned to a page of 4096 and zeroed; empty when there is no
// memory.
inline Memory page_aligned(size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len))
		return Memory();
	std::memset(p, 0, len);
	return Memory(static_cast<uint8_t *>(p));
}

// A memory mapping (mmap()'s result), unmapped when its owner goes.
class Mapping {
public:
	Mapping() = default;
	// Owns [@addr, @addr + @len); MAP_FAILED or nullptr: nothing.
	Mapping(void *addr, size_t len)
		: addr_(addr == MAP_FAILED ? nullptr : addr), len_(addr_ ? len : 0)
	{
	}
	Mapping(const Mapping &) = delete;
	Mapping &operator=(const Mapping &) = delete;
	Mapping(Mapping &&o) noexcept
		: addr_(std::exchange(o.addr_, nullptr)), len_(std::exchange(o.len_, 0))
	{
	}
	Mapping &operator=(Mapping &&o) noexcept
	{
		if (this != &o) {
			reset();
			addr_ = std::exchange(o.addr_, nullptr);
			len_ = std::exchange(o.len_, 0);
		}
		return *this;
	}
	~Mapping() { reset(); }

	uint8_t *data() const { return static_cast<uint8_t *>(addr_); }
	size_t size() const { return len_; }
	explicit operator bool() const { return addr_ != nullptr; }

	void reset()
	{
		if (addr_)
			munmap(addr_, len_);
		addr_ = nullptr;
		len_ = 0;
	}

private:
	void *addr_ = nullptr;
	size_t len_ = 0;
};

// A file descriptor, closed when its owner goes.
class Fd {
public:
	Fd() = default;
	explicit Fd(int fd) : fd_(fd) {}
	Fd(const Fd &) = delete;
	Fd &operator=(const Fd &) = delete;
	Fd(Fd &&o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
	Fd &operator=(Fd &&o) noexcept
	{
		if (this != &o) {
			reset();
			fd_ = std::exchange(o.fd_, -1);
		}
		return *this;
	}
	~Fd() { reset(); }

	int get() const { return fd_; }
	explicit operator bool() const { return fd_ >= 0; }

	void reset(int fd = -1)
	{
		if (fd_ >= 0 && fd_ != fd)
			::close(fd_);
		fd_ = fd;
	}

private:
	int fd_ = -1;
};

#if __has_include(<rdma/rdma_cma.h>)
// One rdma_cm event as the tools keep it: taken off its channel and acked
// at once, because rdma_destroy_id() waits until every event of its id is
// acked (an event held is a destroy that hangs), with its private data
// copied, because the event's own is valid only until the ack.
struct CmEvent {
	rdma_cm_event_type type = {};
	int status = 0;
	// A CONNECT_REQUEST's id is the new one, on the listener's channel;
	// its owner is whoever takes the event.
	rdma_cm_id *id = nullptr;
	rdma_cm_id *listen_id = nullptr;
	rdma_conn_param conn = {};	// without private_data: that is pdata
	std::vector<uint8_t> pdata;

	CmEvent() = default;
	explicit CmEvent(const rdma_cm_event &ev)
		: type(ev.event), status(ev.status), id(ev.id), listen_id(ev.listen_id),
		  conn(ev.param.conn)
	{
		const auto *p = static_cast<const uint8_t *>(conn.private_data);

		if (p)
			pdata.assign(p, p + conn.private_data_len);
		conn.private_data = nullptr;
		conn.private_data_len = 0;
	}

	const char *name() const { return rdma_event_str(type); }
};

// An rdma_cm event channel (its descriptor non-blocking) and the events
// taken off it that were not wanted yet.  Every wait goes through take():
// what is kept first, then whatever comes before a deadline.  The channel
// must outlive every id on it: declare the owner of this before theirs.
class CmEvents {
public:
	using Clock = std::chrono::steady_clock;

	// A new channel: false, with errno, when it cannot be had.
	bool open()
	{
		ch_.reset(rdma_create_event_channel());
		if (!ch_)
			return false;
		int fl = fcntl(ch_->fd, F_GETFL);

		if (fl < 0 || fcntl(ch_->fd, F_SETFL, fl | O_NONBLOCK)) {
			int e = errno;

			ch_.reset();
			errno = e;
			return false;
		}
		return true;
	}

	rdma_event_channel *get() const { return ch_.get(); }

	// A new id (of RDMA_PS_TCP, @context its context) whose events come
	// here: empty, with errno, when it cannot be had.
	CmId create_id(void *context = nullptr)
	{
		rdma_cm_id *id;

		if (rdma_create_id(ch_.get(), &id, context, RDMA_PS_TCP))
			return CmId();
		return CmId(id);
	}

	// The deadline @ms milliseconds from now.
	static Clock::time_point in_ms(long long ms)
	{
		return Clock::now() + std::chrono::milliseconds(ms);
	}

	// The first event @match accepts: the oldest of those kept, or the
	// next one off the channel before @deadline (a deadline passed: what
	// is there already); each it passes over is kept, in order.
	// Nothing, with errno ETIMEDOUT, once @deadline passed, or with
	// rdma_get_cm_event()'s when the channel failed.
	template <class Match>
	std::optional<CmEvent> take(Match &&match, Clock::time_point deadline)
	{
		for (auto it = kept_.begin(); it != kept_.end(); ++it) {
			if (match(std::as_const(*it))) {
				CmEvent ev = std::move(*it);

				kept_.erase(it);
				return ev;
			}
		}
		for (;;) {
			std::optional<CmEvent> ev = get_one(deadline);

			if (!ev || match(std::as_const(*ev)))
				return ev;
			kept_.push_back(std::move(*ev));
		}
	}

	// The next event of @id, a connection request on the listener @id
	// among them.
	std::optional<CmEvent> take_of(rdma_cm_id *id, Clock::time_point deadline)
	{
		return take([id](const CmEvent &e) { return e.id == id || e.listen_id == id; },
			    deadline);
	}

	// The next event, whichever it is.
	std::optional<CmEvent> next(Clock::time_point deadline)
	{
		return take([](const CmEvent &) { return true; }, deadline);
	}

	// Take the kept events @match accepts out of the queue (those of an
	// id about to be destroyed, those nobody waits for): what was taken.
	template <class Match>
	std::vector<CmEvent> drop(Match &&match)
	{
		std::vector<CmEvent> out;

		for (auto it = kept_.begin(); it != kept_.end();) {
			if (match(std::as_const(*it))) {
				out.push_back(std::move(*it));
				it = kept_.erase(it);
			} else {
				++it;
			}
		}
		return out;
	}

	// Drop what is kept for @id, which is about to be destroyed (its
	// address may come back as another id's).
	void forget(rdma_cm_id *id)
	{
		drop([id](const CmEvent &e) { return e.id == id; });
	}

private:
	CmChannel ch_;
	std::deque<CmEvent> kept_;

	std::optional<CmEvent> get_one(Clock::time_point deadline)
	{
		for (;;) {
			rdma_cm_event *ev;

			if (!rdma_get_cm_event(ch_.get(), &ev)) {
				CmEvent copy(*ev);

				rdma_ack_cm_event(ev);
				return copy;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				return std::nullopt;

			auto ms = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());

			if (ms.count() <= 0) {
				errno = ETIMEDOUT;
				return std::nullopt;
			}
			pollfd p = { ch_->fd, POLLIN, 0 };

			// EINTR or not: the loop looks again.
			::poll(&p, 1, int(std::min<long long>(ms.count(), INT_MAX)));
		}
	}
};
#endif

// A numeric address and port (empty: none) into @ss; 0 or getaddrinfo()'s
// error (for gai_strerror()).
inline int numeric_addr(const std::string &host, const std::string &port, sockaddr_storage &ss,
			bool passive = false)
{
	addrinfo hints = {}, *res;

	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | (port.empty() ? 0 : AI_NUMERICSERV) |
			 (passive ? AI_PASSIVE : 0);
	int rv = getaddrinfo(host.c_str(), port.empty() ? nullptr : port.c_str(), &hints, &res);
	if (rv)
		return rv;
	ss = {};
	std::memcpy(&ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

// Post one signaled send work request of one SGE; ibv_post_send's result.
inline int post_one_send(ibv_qp *qp, uint64_t wr_id, ibv_wr_opcode op, const void *p,
			 uint32_t len, uint32_t lkey, uint64_t raddr = 0, uint32_t rkey = 0)
{
	ibv_sge sge = { reinterpret_cast<uintptr_t>(p), len, lkey };
	ibv_send_wr wr = {}, *bad;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

// Post one receive of one SGE; ibv_post_recv's result.
inline int post_one_recv(ibv_qp *qp, uint64_t wr_id, void *p, uint32_t len, uint32_t lkey)
{
	ibv_sge sge = { reinterpret_cast<uintptr_t>(p), len, lkey };
	ibv_recv_wr wr = {}, *bad;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_recv(qp, &wr, &bad);
}

// Waits up to @timeout_ms for the next completion event of @ch and takes
// it (ibv_get_cq_event, then ibv_ack_cq_events): 1 when one came, 0 when
// the time passed first, -1 with errno on failure.  The CQ must have been
// armed (ibv_req_notify_cq) for an event to come.
inline int take_cq_event(ibv_comp_channel *ch, int timeout_ms)
{
	pollfd pfd = { ch->fd, POLLIN, 0 };
	ibv_cq *cq;
	void *ctx;
	int n = ::poll(&pfd, 1, timeout_ms);

	if (n <= 0)
		return n;
	if (ibv_get_cq_event(ch, &cq, &ctx))
		return -1;
	ibv_ack_cq_events(cq, 1);
	return 1;
}

// Poll @cq until @want completions arrived or about @timeout_ms passed.
inline std::vector<ibv_wc> poll_cq(ibv_cq *cq, size_t want, int timeout_ms)
{
	std::vector<ibv_wc> out;
	for (int ms = 0; ms < timeout_ms && out.size() < want;) {
		ibv_wc wc[16];
		int n = ibv_poll_cq(cq, 16, wc);
		if (n < 0)
			break;
		out.insert(out.end(), wc, wc + n);
		if (!n) {
			usleep(1000);
			ms++;
		}
	}
	return out;
}

} // namespace xiw

#endif
