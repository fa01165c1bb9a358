// SPDX-License-Identifier: GPL-2.0
//
// Small libibverbs helpers shared by the xiw test tools.

#ifndef XIW_VERBS_UTIL_H
#define XIW_VERBS_UTIL_H

#include <infiniband/verbs.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace xiw {

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
