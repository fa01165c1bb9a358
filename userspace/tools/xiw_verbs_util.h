// SPDX-License-Identifier: GPL-2.0
//
// Small libibverbs helpers shared by the xiw test tools, and the RAII
// owners of verbs (and, where librdmacm's header exists, rdma_cm) objects
// and of memory mappings.

#ifndef XIW_VERBS_UTIL_H
#define XIW_VERBS_UTIL_H

#include <infiniband/verbs.h>
#if __has_include(<rdma/rdma_cma.h>)
#include <rdma/rdma_cma.h>
#endif
#include <netdb.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
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
#endif

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
