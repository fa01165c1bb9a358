// SPDX-License-Identifier: GPL-2.0
//
// Small libibverbs helpers shared by the xiw test tools.

#ifndef XIW_VERBS_UTIL_H
#define XIW_VERBS_UTIL_H

#include <infiniband/verbs.h>
#include <unistd.h>

#include <cstddef>
#include <vector>

namespace xiw {

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
