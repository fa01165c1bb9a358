// SPDX-License-Identifier: GPL-2.0
//
// xiw-verbs-test [-d DEV]: verbs conformance of an xiw device, driven
// through rdma-core's unmodified libsiw provider.
//
// Covers PDs, memory registration (access flag combinations), CQ sizes and
// limits, QP capability rounding and limits, the mapped receive and send
// rings, flushing on ERROR (every WR comes back with WR_FLUSH_ERR and its
// own wr_id), completion channel events, SRQs (and QPs on them: the rq_key
// 0 path of libsiw), and a few hundred queues in one context, which proves
// that the mmap key libsiw reads as "failed" is never handed out.
//
// Output is KTAP ("ok N - desc" / "not ok N - desc"); exit 0 when every
// case passed, 1 otherwise, 4 when the device does not exist.

#include <infiniband/verbs.h>
#include <rdma/siw-abi.h>

#include <getopt.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "xiw_cli.h"
#include "xiw_ktap.h"
#include "xiw_verbs_util.h"

namespace {

using namespace xiw::ktap;

struct Ctx {
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_device_attr attr = {};
};

Ctx g;

ibv_cq *make_cq(int cqe, ibv_comp_channel *ch = nullptr)
{
	return ibv_create_cq(g.ctx, cqe, nullptr, ch, 0);
}

ibv_qp *make_qp(ibv_cq *scq, ibv_cq *rcq, uint32_t swr, uint32_t rwr,
		uint32_t ssge = 1, uint32_t rsge = 1, uint32_t inl = 0,
		ibv_srq *srq = nullptr, ibv_qp_type type = IBV_QPT_RC)
{
	ibv_qp_init_attr ia = {};
	ia.send_cq = scq;
	ia.recv_cq = rcq;
	ia.srq = srq;
	ia.qp_type = type;
	ia.cap.max_send_wr = swr;
	ia.cap.max_recv_wr = rwr;
	ia.cap.max_send_sge = ssge;
	ia.cap.max_recv_sge = rsge;
	ia.cap.max_inline_data = inl;
	return ibv_create_qp(g.pd, &ia);
}

int modify_state(ibv_qp *qp, ibv_qp_state st)
{
	ibv_qp_attr a = {};
	a.qp_state = st;
	int mask = IBV_QP_STATE;
	if (st == IBV_QPS_INIT) {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_LOCAL_WRITE;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(qp, &a, mask);
}

ibv_qp_state query_state(ibv_qp *qp)
{
	ibv_qp_attr a = {};
	ibv_qp_init_attr ia = {};
	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return static_cast<ibv_qp_state>(-1);
	return a.qp_state;
}

// Poll until @want completions arrived or ~5 s passed.
std::vector<ibv_wc> poll_n(ibv_cq *cq, size_t want)
{
	return xiw::poll_cq(cq, want, 5000);
}

int post_recv(ibv_qp *qp, uint64_t id, void *buf, uint32_t len, uint32_t lkey)
{
	ibv_sge sge = { reinterpret_cast<uintptr_t>(buf), len, lkey };
	ibv_recv_wr wr = {}, *bad = nullptr;
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_recv(qp, &wr, &bad);
}

int post_send(ibv_qp *qp, uint64_t id, void *buf, uint32_t len, uint32_t lkey,
	      bool signaled)
{
	ibv_sge sge = { reinterpret_cast<uintptr_t>(buf), len, lkey };
	ibv_send_wr wr = {}, *bad = nullptr;
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
	return ibv_post_send(qp, &wr, &bad);
}

void test_mr()
{
	static char buf[64 * 1024];

	run("reg_mr with valid access flag combinations", [](Case &c) {
		const int flags[] = {
			0, IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_READ,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ,
			// no windows exist, but the right may be granted
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND,
		};
		std::set<uint32_t> keys;
		std::vector<ibv_mr *> mrs;
		for (int f : flags) {
			ibv_mr *mr = ibv_reg_mr(g.pd, buf, sizeof(buf), f);
			c.check(mr, "reg_mr(access %#x): %s", f, strerror(errno));
			if (!mr)
				continue;
			c.check(mr->lkey == mr->rkey, "lkey %#x != rkey %#x", mr->lkey, mr->rkey);
			c.check(mr->lkey >> 8, "STag index 0 in %#x", mr->lkey);
			keys.insert(mr->lkey);
			mrs.push_back(mr);
		}
		c.check(keys.size() == mrs.size(), "STags not unique");
		for (ibv_mr *mr : mrs)
			c.check(!ibv_dereg_mr(mr), "dereg_mr");
	});

	run("reg_mr remote write without local write is EINVAL", [](Case &c) {
		errno = 0;
		ibv_mr *mr = ibv_reg_mr(g.pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE);
		c.check(!mr && errno == EINVAL, "got %p errno %d", (void *)mr, errno);
		if (mr)
			ibv_dereg_mr(mr);
	});

	run("reg_mr of unmapped memory fails", [](Case &c) {
		long ps = sysconf(_SC_PAGESIZE);
		void *p = mmap(nullptr, ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		c.check(p != MAP_FAILED, "mmap");
		munmap(p, ps);
		ibv_mr *mr = ibv_reg_mr(g.pd, p, ps, IBV_ACCESS_LOCAL_WRITE);
		c.check(!mr, "reg_mr of unmapped page succeeded");
		if (mr)
			ibv_dereg_mr(mr);
	});

	run("256 MRs get distinct STags", [](Case &c) {
		std::vector<ibv_mr *> mrs;
		std::set<uint32_t> keys;
		for (int i = 0; i < 256; i++) {
			ibv_mr *mr = ibv_reg_mr(g.pd, buf + i, 128, IBV_ACCESS_LOCAL_WRITE);
			c.check(mr, "reg_mr %d: %s", i, strerror(errno));
			if (!mr)
				break;
			mrs.push_back(mr);
			keys.insert(mr->lkey);
		}
		c.check(keys.size() == mrs.size(), "%zu keys for %zu MRs", keys.size(), mrs.size());
		for (ibv_mr *mr : mrs)
			c.check(!ibv_dereg_mr(mr), "dereg_mr");
	});
}

void test_cq()
{
	run("create_cq sizes 1, 100, 4096 report at least the request", [](Case &c) {
		for (int n : { 1, 100, 4096 }) {
			ibv_cq *cq = make_cq(n);
			c.check(cq, "create_cq(%d): %s", n, strerror(errno));
			if (!cq)
				continue;
			c.check(cq->cqe >= n, "cqe %d < %d", cq->cqe, n);
			c.check(!ibv_destroy_cq(cq), "destroy_cq");
		}
	});

	run("create_cq beyond max_cqe or of size 0 is EINVAL", [](Case &c) {
		for (int n : { g.attr.max_cqe + 1, 0 }) {
			errno = 0;
			ibv_cq *cq = make_cq(n);
			c.check(!cq && errno == EINVAL, "create_cq(%d): %p errno %d", n,
				(void *)cq, errno);
			if (cq)
				ibv_destroy_cq(cq);
		}
	});
}

void test_qp_caps()
{
	run("create_qp rounds capabilities up and reports them", [](Case &c) {
		ibv_cq *cq = make_cq(64);
		c.check(cq, "create_cq");
		ibv_qp_init_attr ia = {};
		ia.send_cq = ia.recv_cq = cq;
		ia.qp_type = IBV_QPT_RC;
		ia.cap = { 5, 3, 2, 6, 80 };
		ibv_qp *qp = ibv_create_qp(g.pd, &ia);
		c.check(qp, "create_qp: %s", strerror(errno));
		if (qp) {
			c.check(ia.cap.max_send_wr >= 5 && ia.cap.max_recv_wr >= 3,
				"cap wr %u/%u", ia.cap.max_send_wr, ia.cap.max_recv_wr);
			c.check(ia.cap.max_send_sge >= 2 && ia.cap.max_recv_sge >= 6,
				"cap sge %u/%u", ia.cap.max_send_sge, ia.cap.max_recv_sge);
			c.check(ia.cap.max_inline_data >= 80, "inline %u", ia.cap.max_inline_data);
			ibv_qp_attr a = {};
			ibv_qp_init_attr qia = {};
			c.check(!ibv_query_qp(qp, &a, IBV_QP_CAP, &qia), "query_qp");
			c.check(a.cap.max_send_wr == ia.cap.max_send_wr &&
				a.cap.max_recv_wr == ia.cap.max_recv_wr,
				"query_qp cap %u/%u, create said %u/%u", a.cap.max_send_wr,
				a.cap.max_recv_wr, ia.cap.max_send_wr, ia.cap.max_recv_wr);
			c.check(qp->qp_num != 0, "qp_num 0");
			c.check(!ibv_destroy_qp(qp), "destroy_qp");
		}
		if (cq)
			ibv_destroy_cq(cq);
	});

	run("create_qp out of limits is refused (EINVAL/EOPNOTSUPP)", [](Case &c) {
		ibv_cq *cq = make_cq(16);
		struct {
			const char *what;
			uint32_t swr, rwr, ssge, rsge, inl;
			ibv_qp_type type;
		} bad[] = {
			{ "send SGEs > max_sge", 4, 4, (uint32_t)g.attr.max_sge + 1, 1, 0, IBV_QPT_RC },
			{ "recv SGEs > max_sge", 4, 4, 1, (uint32_t)g.attr.max_sge + 1, 0, IBV_QPT_RC },
			{ "81 inline bytes", 4, 4, 1, 1, 81, IBV_QPT_RC },
			{ "send WRs > max_qp_wr", (uint32_t)g.attr.max_qp_wr + 1, 4, 1, 1, 0, IBV_QPT_RC },
			{ "recv WRs > max_qp_wr", 4, (uint32_t)g.attr.max_qp_wr + 1, 1, 1, 0, IBV_QPT_RC },
			{ "UD QP", 4, 4, 1, 1, 0, IBV_QPT_UD },
		};
		for (auto &b : bad) {
			errno = 0;
			ibv_qp *qp = make_qp(cq, cq, b.swr, b.rwr, b.ssge, b.rsge, b.inl,
					     nullptr, b.type);
			c.check(!qp && (errno == EINVAL || errno == EOPNOTSUPP),
				"%s: %p errno %d", b.what, (void *)qp, errno);
			if (qp)
				ibv_destroy_qp(qp);
		}
		ibv_destroy_cq(cq);
	});

	run("QP states: created INIT (RNIC), RTS refused without a connection, ERR -> RESET -> INIT", [](Case &c) {
		ibv_cq *cq = make_cq(16);
		ibv_qp *qp = make_qp(cq, cq, 4, 4);
		c.check(qp, "create_qp");
		if (qp) {
			// iWARP QPs start IDLE, which verbs see as INIT.
			c.check(query_state(qp) == IBV_QPS_INIT, "initial state %d", query_state(qp));
			c.check(!modify_state(qp, IBV_QPS_INIT), "to INIT");
			c.check(query_state(qp) == IBV_QPS_INIT, "state %d", query_state(qp));
			c.check(modify_state(qp, IBV_QPS_RTS) != 0, "RTS without connection accepted");
			c.check(modify_state(qp, IBV_QPS_SQD) != 0, "INIT -> SQD accepted");
			c.check(!modify_state(qp, IBV_QPS_ERR), "to ERR");
			c.check(query_state(qp) == IBV_QPS_ERR, "state %d", query_state(qp));
			c.check(!modify_state(qp, IBV_QPS_RESET), "ERR -> RESET");
			c.check(query_state(qp) == IBV_QPS_RESET, "state %d", query_state(qp));
			c.check(!modify_state(qp, IBV_QPS_INIT), "RESET -> INIT");
			c.check(query_state(qp) == IBV_QPS_INIT, "state %d", query_state(qp));
			ibv_destroy_qp(qp);
		}
		ibv_destroy_cq(cq);
	});
}

void test_modify_atomic()
{
	run("a refused modify_qp changes no attribute; an accepted one all", [](Case &c) {
		ibv_cq *cq = make_cq(16);
		ibv_qp *qp = cq ? make_qp(cq, cq, 4, 4) : nullptr;
		c.check(qp, "setup: %s", strerror(errno));
		if (!qp) {
			if (cq)
				ibv_destroy_cq(cq);
			return;
		}
		auto attrs = [&](unsigned &access, unsigned &ord, unsigned &ird) {
			ibv_qp_attr a = {};
			ibv_qp_init_attr ia = {};
			c.check(!ibv_query_qp(qp, &a, IBV_QP_ACCESS_FLAGS |
						     IBV_QP_MAX_QP_RD_ATOMIC |
						     IBV_QP_MAX_DEST_RD_ATOMIC, &ia),
				"query_qp");
			access = a.qp_access_flags;
			ord = a.max_rd_atomic;
			ird = a.max_dest_rd_atomic;
		};
		unsigned access0, ord0, ird0, access, ord, ird;
		attrs(access0, ord0, ird0);
		ibv_qp_attr a = {};
		a.qp_access_flags = access0 ^ IBV_ACCESS_REMOTE_READ;
		a.max_rd_atomic = static_cast<uint8_t>(ord0 + 3);
		a.max_dest_rd_atomic = static_cast<uint8_t>(ird0 + 5);
		const int mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_MAX_QP_RD_ATOMIC |
				 IBV_QP_MAX_DEST_RD_ATOMIC;
		// RTS without a connection, and SQD from INIT: both refused.
		for (ibv_qp_state st : { IBV_QPS_RTS, IBV_QPS_SQD }) {
			a.qp_state = st;
			c.check(ibv_modify_qp(qp, &a, mask) != 0, "modify_qp to %d accepted", st);
			attrs(access, ord, ird);
			c.check(access == access0 && ord == ord0 && ird == ird0,
				"refused modify_qp to %d changed access %#x -> %#x, ORD %u -> %u, "
				"IRD %u -> %u", st, access0, access, ord0, ord, ird0, ird);
		}
		a.qp_state = IBV_QPS_INIT;
		c.check(!ibv_modify_qp(qp, &a, mask), "modify_qp to INIT: %s", strerror(errno));
		attrs(access, ord, ird);
		c.check(access == a.qp_access_flags && ord == a.max_rd_atomic &&
			ird == a.max_dest_rd_atomic,
			"after modify_qp to INIT: access %#x ORD %u IRD %u, want %#x %u %u", access,
			ord, ird, a.qp_access_flags, a.max_rd_atomic, a.max_dest_rd_atomic);
		ibv_destroy_qp(qp);
		ibv_destroy_cq(cq);
	});
}

void test_flush()
{
	run("modify to ERROR flushes every posted WR with its wr_id", [](Case &c) {
		static char buf[4096];
		ibv_mr *mr = ibv_reg_mr(g.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
		ibv_cq *scq = make_cq(64), *rcq = make_cq(64);
		ibv_qp *qp = make_qp(scq, rcq, 8, 8);
		c.check(mr && scq && rcq && qp, "setup");
		if (!(mr && scq && rcq && qp))
			return;
		c.check(!modify_state(qp, IBV_QPS_INIT), "to INIT");
		std::set<uint64_t> rids, sids;
		for (uint64_t i = 0; i < 6; i++) {
			c.check(!post_recv(qp, 0x1000 + i, buf, 64, mr->lkey), "post_recv %lu",
				(unsigned long)i);
			rids.insert(0x1000 + i);
		}
		for (uint64_t i = 0; i < 5; i++) {
			/* Unsignaled ones are flushed too. */
			c.check(!post_send(qp, 0x2000 + i, buf, 64, mr->lkey, i & 1),
				"post_send %lu: %s", (unsigned long)i, strerror(errno));
			sids.insert(0x2000 + i);
		}
		ibv_wc wc;
		c.check(ibv_poll_cq(rcq, 1, &wc) == 0, "completion before ERROR");
		c.check(!modify_state(qp, IBV_QPS_ERR), "to ERR");

		auto r = poll_n(rcq, rids.size());
		c.check(r.size() == rids.size(), "%zu receive completions, want %zu", r.size(),
			rids.size());
		uint64_t expect = 0x1000;
		for (auto &w : r) {
			c.check(w.status == IBV_WC_WR_FLUSH_ERR, "recv status %d", w.status);
			c.check(w.wr_id == expect++, "recv wr_id %#lx out of order",
				(unsigned long)w.wr_id);
			c.check(w.qp_num == qp->qp_num, "qp_num %u want %u", w.qp_num, qp->qp_num);
			rids.erase(w.wr_id);
		}
		c.check(rids.empty(), "%zu receives not flushed", rids.size());

		auto s = poll_n(scq, sids.size());
		c.check(s.size() == sids.size(), "%zu send completions, want %zu", s.size(),
			sids.size());
		for (auto &w : s) {
			c.check(w.status == IBV_WC_WR_FLUSH_ERR, "send status %d", w.status);
			c.check(w.qp_num == qp->qp_num, "qp_num %u", w.qp_num);
			sids.erase(w.wr_id);
		}
		c.check(sids.empty(), "%zu sends not flushed", sids.size());

		/* In ERROR the doorbell flushes new sends at once (drain). */
		c.check(!post_send(qp, 0x3000, buf, 8, mr->lkey, false), "post_send in ERR");
		s = poll_n(scq, 1);
		c.check(s.size() == 1 && s[0].wr_id == 0x3000 &&
			s[0].status == IBV_WC_WR_FLUSH_ERR, "send posted in ERR not flushed");
		c.check(ibv_poll_cq(scq, 1, &wc) == 0 && ibv_poll_cq(rcq, 1, &wc) == 0,
			"extra completions");

		ibv_destroy_qp(qp);
		ibv_destroy_cq(scq);
		ibv_destroy_cq(rcq);
		ibv_dereg_mr(mr);
	});

	run("a full SQ refuses more sends; flush returns exactly the posted ones", [](Case &c) {
		static char buf[64];
		ibv_mr *mr = ibv_reg_mr(g.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
		ibv_cq *cq = make_cq(64);
		ibv_qp *qp = make_qp(cq, cq, 4, 1);
		c.check(mr && cq && qp, "setup");
		if (!(mr && cq && qp))
			return;
		ibv_qp_attr a = {};
		ibv_qp_init_attr ia = {};
		ibv_query_qp(qp, &a, IBV_QP_CAP, &ia);
		uint32_t n = a.cap.max_send_wr, posted = 0;
		for (uint32_t i = 0; i < n + 2; i++)
			if (!post_send(qp, i, buf, 8, mr->lkey, true))
				posted++;
		c.check(posted == n, "posted %u into an SQ of %u", posted, n);
		c.check(!modify_state(qp, IBV_QPS_ERR), "to ERR");
		auto s = poll_n(cq, n + 1);
		c.check(s.size() == n, "%zu flushed, want %u", s.size(), n);
		ibv_destroy_qp(qp);
		ibv_destroy_cq(cq);
		ibv_dereg_mr(mr);
	});
}

bool wait_cq_event(ibv_comp_channel *ch, ibv_cq *want, int timeout_ms)
{
	pollfd pfd = { ch->fd, POLLIN, 0 };
	if (poll(&pfd, 1, timeout_ms) != 1)
		return false;
	ibv_cq *cq;
	void *ctx;
	if (ibv_get_cq_event(ch, &cq, &ctx))
		return false;
	ibv_ack_cq_events(cq, 1);
	return cq == want;
}

void test_notify()
{
	run("req_notify_cq delivers one completion channel event", [](Case &c) {
		static char buf[64];
		ibv_mr *mr = ibv_reg_mr(g.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
		ibv_comp_channel *ch = ibv_create_comp_channel(g.ctx);
		ibv_cq *cq = ch ? make_cq(16, ch) : nullptr;
		ibv_qp *qp = cq ? make_qp(cq, cq, 4, 4) : nullptr;
		c.check(mr && ch && cq && qp, "setup");
		if (!(mr && ch && cq && qp))
			return;
		/* Not armed: a completion must not raise an event. */
		c.check(!post_recv(qp, 1, buf, 8, mr->lkey), "post_recv");
		c.check(!modify_state(qp, IBV_QPS_ERR), "to ERR");
		c.check(poll_n(cq, 1).size() == 1, "flush completion");
		c.check(!wait_cq_event(ch, cq, 300), "event without req_notify");

		/* Armed for the next completion: exactly one event. */
		c.check(!ibv_req_notify_cq(cq, 0), "req_notify_cq");
		c.check(!post_send(qp, 2, buf, 8, mr->lkey, true), "post_send (flushed)");
		c.check(wait_cq_event(ch, cq, 5000), "no event after req_notify_cq");
		c.check(poll_n(cq, 1).size() == 1, "completion");
		c.check(!post_send(qp, 3, buf, 8, mr->lkey, true), "post_send (flushed)");
		c.check(poll_n(cq, 1).size() == 1, "completion");
		c.check(!wait_cq_event(ch, cq, 300), "second event without re-arming");

		/* Solicited-only arming ignores unsolicited completions. */
		c.check(!ibv_req_notify_cq(cq, 1), "req_notify_cq(solicited)");
		c.check(!post_send(qp, 4, buf, 8, mr->lkey, true), "post_send (flushed)");
		c.check(poll_n(cq, 1).size() == 1, "completion");
		c.check(!wait_cq_event(ch, cq, 300), "event for an unsolicited completion");

		ibv_destroy_qp(qp);
		ibv_destroy_cq(cq);
		ibv_destroy_comp_channel(ch);
		ibv_dereg_mr(mr);
	});
}

void test_srq()
{
	run("SRQ create/modify/query and QPs on it (rq_key 0)", [](Case &c) {
		static char buf[256];
		ibv_mr *mr = ibv_reg_mr(g.pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
		ibv_srq_init_attr sia = {};
		sia.attr.max_wr = 10;
		sia.attr.max_sge = 2;
		ibv_srq *srq = ibv_create_srq(g.pd, &sia);
		c.check(srq, "create_srq: %s", strerror(errno));
		ibv_cq *cq = make_cq(32);
		if (!(srq && cq && mr))
			return;
		c.check(sia.attr.max_wr >= 10, "srq max_wr %u", sia.attr.max_wr);

		std::vector<ibv_qp *> qps;
		for (int i = 0; i < 3; i++) {
			ibv_qp *qp = make_qp(cq, cq, 4, 0, 1, 0, 0, srq);
			c.check(qp, "create_qp on SRQ: %s", strerror(errno));
			if (qp)
				qps.push_back(qp);
		}
		for (uint64_t i = 0; i < 5; i++) {
			ibv_sge sge = { reinterpret_cast<uintptr_t>(buf), 16, mr->lkey };
			ibv_recv_wr wr = {}, *bad = nullptr;
			wr.wr_id = 0x500 + i;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			c.check(!ibv_post_srq_recv(srq, &wr, &bad), "post_srq_recv");
		}
		ibv_srq_attr a = {};
		a.srq_limit = 2;
		c.check(!ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT), "arm limit");
		/* libsiw 1.0 does not implement query_srq; check it if present. */
		ibv_srq_attr q = {};
		int qrv = ibv_query_srq(srq, &q);
		if (qrv == EOPNOTSUPP || qrv == ENOSYS)
			std::printf("# query_srq not offered by the provider\n");
		else
			c.check(!qrv && q.srq_limit == 2 && q.max_wr >= 10,
				"query_srq rv %d limit %u max_wr %u", qrv, q.srq_limit,
				q.max_wr);
		a.srq_limit = 100000;
		c.check(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT) != 0, "limit above size accepted");
		a.max_wr = 64;
		c.check(ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR) != 0, "SRQ resize accepted");

		/* A QP on an SRQ flushes only its own (empty) queues. */
		c.check(!modify_state(qps[0], IBV_QPS_ERR), "to ERR");
		ibv_wc wc;
		usleep(100000);
		c.check(ibv_poll_cq(cq, 1, &wc) == 0, "SRQ receives were flushed by one QP");

		c.check(ibv_destroy_srq(srq) != 0, "destroy_srq with QPs attached succeeded");
		for (ibv_qp *qp : qps)
			ibv_destroy_qp(qp);
		c.check(!ibv_destroy_srq(srq), "destroy_srq");
		ibv_destroy_cq(cq);
		ibv_dereg_mr(mr);
	});

	run("create_srq beyond the limits is EINVAL", [](Case &c) {
		ibv_srq_init_attr sia = {};
		sia.attr.max_wr = g.attr.max_srq_wr + 1;
		sia.attr.max_sge = 1;
		errno = 0;
		ibv_srq *srq = ibv_create_srq(g.pd, &sia);
		c.check(!srq && errno == EINVAL, "max_wr: %p errno %d", (void *)srq, errno);
		if (srq)
			ibv_destroy_srq(srq);
		sia.attr.max_wr = 4;
		sia.attr.max_sge = g.attr.max_srq_sge + 1;
		errno = 0;
		srq = ibv_create_srq(g.pd, &sia);
		c.check(!srq && errno == EINVAL, "max_sge: %p errno %d", (void *)srq, errno);
		if (srq)
			ibv_destroy_srq(srq);
	});
}

void test_many()
{
	run("300 CQs and 200 QPs in one context (mmap key 0x90000 never used)", [](Case &c) {
		std::vector<ibv_cq *> cqs;
		std::vector<ibv_qp *> qps;
		for (int i = 0; i < 300; i++) {
			ibv_cq *cq = make_cq(8);
			c.check(cq, "CQ %d: %s", i, strerror(errno));
			if (!cq)
				break;
			cqs.push_back(cq);
		}
		for (int i = 0; i < 200 && !cqs.empty(); i++) {
			ibv_cq *cq = cqs[i % cqs.size()];
			ibv_qp *qp = make_qp(cq, cq, 4, 4);
			c.check(qp, "QP %d: %s", i, strerror(errno));
			if (!qp)
				break;
			qps.push_back(qp);
		}
		std::set<uint32_t> qpns;
		for (ibv_qp *qp : qps)
			qpns.insert(qp->qp_num);
		c.check(qpns.size() == qps.size(), "QP numbers not unique");
		for (ibv_qp *qp : qps)
			c.check(!ibv_destroy_qp(qp), "destroy_qp");
		for (ibv_cq *cq : cqs)
			c.check(!ibv_destroy_cq(cq), "destroy_cq");
	});
}

// Every advertised per-object limit: an object at the limit can be created,
// one past it is refused.
void test_limits()
{
	run("objects at each advertised limit are created, one past is refused", [](Case &c) {
		const ibv_device_attr &a = g.attr;
		ibv_cq *cq = make_cq(a.max_cqe);
		c.check(cq, "CQ of max_cqe %d: %s", a.max_cqe, strerror(errno));
		if (cq)
			c.check(cq->cqe >= a.max_cqe, "cqe %d", cq->cqe);
		if (cq)
			ibv_destroy_cq(cq);

		cq = make_cq(16);
		ibv_qp *qp = make_qp(cq, cq, a.max_qp_wr, a.max_qp_wr, a.max_sge, a.max_sge,
				     (uint32_t)SIW_MAX_INLINE);
		c.check(qp, "QP with max_qp_wr %d, max_sge %d, inline %u: %s", a.max_qp_wr,
			a.max_sge, (uint32_t)SIW_MAX_INLINE, strerror(errno));
		if (qp) {
			ibv_qp_attr qa = {};
			qa.max_rd_atomic = a.max_qp_rd_atom;
			qa.max_dest_rd_atomic = a.max_qp_init_rd_atom;
			c.check(!ibv_modify_qp(qp, &qa, IBV_QP_MAX_QP_RD_ATOMIC |
						 IBV_QP_MAX_DEST_RD_ATOMIC),
				"ORD %d / IRD %d at the limit refused", a.max_qp_rd_atom,
				a.max_qp_init_rd_atom);
			qa.max_rd_atomic = a.max_qp_rd_atom + 1;
			c.check(ibv_modify_qp(qp, &qa, IBV_QP_MAX_QP_RD_ATOMIC) == EINVAL,
				"ORD past max_qp_rd_atom accepted");
			qa.max_dest_rd_atomic = a.max_qp_init_rd_atom + 1;
			c.check(ibv_modify_qp(qp, &qa, IBV_QP_MAX_DEST_RD_ATOMIC) == EINVAL,
				"IRD past max_qp_init_rd_atom accepted");
			ibv_destroy_qp(qp);
		}
		ibv_destroy_cq(cq);

		ibv_srq_init_attr sia = {};
		sia.attr.max_wr = a.max_srq_wr;
		sia.attr.max_sge = a.max_srq_sge;
		ibv_srq *srq = ibv_create_srq(g.pd, &sia);
		c.check(srq, "SRQ of max_srq_wr %d, max_srq_sge %d: %s", a.max_srq_wr,
			a.max_srq_sge, strerror(errno));
		if (srq)
			ibv_destroy_srq(srq);
	});

	run("max_pd PDs can be allocated, the next one is ENOMEM", [](Case &c) {
		std::vector<ibv_pd *> pds;
		// g.pd is one of them.
		for (int i = 1; i < g.attr.max_pd; i++) {
			ibv_pd *pd = ibv_alloc_pd(g.ctx);
			if (!pd) {
				c.check(false, "PD %d of %d: %s", i + 1, g.attr.max_pd, strerror(errno));
				break;
			}
			pds.push_back(pd);
		}
		errno = 0;
		ibv_pd *pd = ibv_alloc_pd(g.ctx);
		c.check(!pd && errno == ENOMEM, "PD past max_pd: %p errno %d", (void *)pd, errno);
		if (pd)
			ibv_dealloc_pd(pd);
		for (ibv_pd *p : pds)
			c.check(!ibv_dealloc_pd(p), "dealloc_pd");
	});
}

// Thousands of objects created and destroyed in turn: the device's object
// counts and mmap keys must come back (the selftest checks for leaks with
// rmmod and, on the debug kernel, kmemleak).
void test_churn()
{
	run("2000 rounds of PD, MR, CQ, SRQ, QP create and destroy", [](Case &c) {
		static char buf[8192];
		int round = 0;
		for (; round < 2000 && c.ok; round++) {
			ibv_pd *pd = ibv_alloc_pd(g.ctx);
			ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : nullptr;
			ibv_cq *cq = make_cq(4 + round % 64);
			ibv_srq_init_attr sia = {};
			sia.attr.max_wr = 4;
			sia.attr.max_sge = 1;
			ibv_srq *srq = (round & 1) && pd ? ibv_create_srq(pd, &sia) : nullptr;
			ibv_qp *qp = nullptr;
			if (pd && cq) {
				ibv_qp_init_attr ia = {};
				ia.send_cq = ia.recv_cq = cq;
				ia.srq = srq;
				ia.qp_type = IBV_QPT_RC;
				ia.cap.max_send_wr = ia.cap.max_recv_wr = 1 + round % 32;
				ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
				qp = ibv_create_qp(pd, &ia);
			}
			c.check(pd && mr && cq && qp && (srq || !(round & 1)),
				"round %d: pd %p mr %p cq %p srq %p qp %p: %s", round, (void *)pd,
				(void *)mr, (void *)cq, (void *)srq, (void *)qp, strerror(errno));
			if (qp)
				c.check(!ibv_destroy_qp(qp), "destroy_qp");
			if (srq)
				c.check(!ibv_destroy_srq(srq), "destroy_srq");
			if (cq)
				c.check(!ibv_destroy_cq(cq), "destroy_cq");
			if (mr)
				c.check(!ibv_dereg_mr(mr), "dereg_mr");
			if (pd)
				c.check(!ibv_dealloc_pd(pd), "dealloc_pd");
		}
		std::printf("# %d rounds\n", round);
	});
}

const xiw::cli::Usage kUsage = {
	"xiw-verbs-test",
	"usage: xiw-verbs-test [-d DEV]\n",
	"NAME\n"
	"    xiw-verbs-test - verbs conformance of an xiw device through libsiw\n"
	"\n"
	"SYNOPSIS\n"
	"    xiw-verbs-test [-d DEV]\n"
	"\n"
	"DESCRIPTION\n"
	"    Drives the device through rdma-core's unmodified libsiw provider:\n"
	"    PDs, memory registration (access flag combinations), CQ sizes and\n"
	"    limits, QP capability rounding and limits, the mapped receive and\n"
	"    send rings, flushing on ERROR, completion channel events, SRQs and\n"
	"    QPs on them, and a few hundred queues in one context.  Output is\n"
	"    KTAP.\n"
	"\n"
	"OPTIONS\n"
	"    -d DEV      the RDMA device (default xiw0)\n"
	"    -h, --help  this text\n"
	"\n"
	"EXIT STATUS\n"
	"    0 every case passed, 1 otherwise, 2 bad usage, 4 (skip) the device\n"
	"    does not exist\n",
};

} // namespace

int main(int argc, char **argv)
{
	static const option longopts[] = {
		{ "help", no_argument, nullptr, 'h' },
		{ nullptr, 0, nullptr, 0 },
	};
	std::string name = "xiw0";
	for (int opt; (opt = getopt_long(argc, argv, "d:h", longopts, nullptr)) != -1;) {
		if (opt == 'd')
			name = optarg;
		else if (opt == 'h')
			xiw::cli::help(kUsage);
		else
			xiw::cli::usage_error(kUsage, "");
	}
	if (optind != argc)
		xiw::cli::usage_error(kUsage, std::string("unexpected argument '") + argv[optind] + "'");

	std::printf("KTAP version 1\n");
	int num = 0;
	ibv_device **list = ibv_get_device_list(&num);
	ibv_device *dev = nullptr;
	for (int i = 0; list && i < num; i++)
		if (name == ibv_get_device_name(list[i]))
			dev = list[i];
	if (!dev) {
		std::printf("1..0 # SKIP device %s not found\n", name.c_str());
		return 4;
	}
	std::printf("1..21\n");
	run("open device, query limits, alloc PD", [&](Case &c) {
		g.ctx = ibv_open_device(dev);
		c.check(g.ctx, "open_device: %s", strerror(errno));
		if (!g.ctx)
			return;
		c.check(!ibv_query_device(g.ctx, &g.attr), "query_device");
		c.check(g.attr.max_qp > 0 && g.attr.max_cqe > 0 && g.attr.max_qp_wr > 0 &&
			g.attr.max_srq_wr > 0 && g.attr.max_sge == SIW_MAX_SGE &&
			g.attr.max_srq_sge == SIW_MAX_SGE,
			"limits qp %d cqe %d qp_wr %d srq_wr %d sge %d", g.attr.max_qp,
			g.attr.max_cqe, g.attr.max_qp_wr, g.attr.max_srq_wr, g.attr.max_sge);
		g.pd = ibv_alloc_pd(g.ctx);
		c.check(g.pd, "alloc_pd: %s", strerror(errno));
	});
	if (!g.pd) {
		std::printf("# cannot continue without a PD\n");
		return 1;
	}
	test_mr();
	test_cq();
	test_qp_caps();
	test_modify_atomic();
	test_flush();
	test_notify();
	test_srq();
	test_many();
	test_limits();
	test_churn();
	run("dealloc PD and close device", [](Case &c) {
		c.check(!ibv_dealloc_pd(g.pd), "dealloc_pd");
		c.check(!ibv_close_device(g.ctx), "close_device");
	});
	ibv_free_device_list(list);
	std::printf("# %d of %d failed\n", g_failed, g_num);
	return g_failed ? 1 : 0;
}
