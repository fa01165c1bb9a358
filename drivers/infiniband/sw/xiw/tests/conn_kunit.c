// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the table of a connection's life (xiw_conn_next()).  Every cell
 * is written out below, the properties design.rst states are checked on
 * every cell, and every sequence of XIW_KPATH_LEN events is walked from
 * STARTING to check that close_work is queued exactly once on any path
 * that closes, and term_work and the cause at most once.
 */
#include <kunit/test.h>
#include <linux/bitops.h>

#include "xiw_dp.h"

#define S	XIW_CONN_STARTING
#define R	XIW_CONN_RUNNING
#define P	XIW_CONN_PEER_FIN
#define Q	XIW_CONN_TERM_QUEUED
#define O	XIW_CONN_TERM_OUT
#define F	XIW_CONN_CLOSE_FIN
#define X	XIW_CONN_CLOSE_RST
#define C	XIW_CONN_CLOSED

/*
 * The next state for each event (rows) from each state (columns, in enum
 * order: STARTING, RUNNING, PEER_FIN, TERM_QUEUED, TERM_OUT, CLOSE_FIN,
 * CLOSE_RST, CLOSED), with no Send held by soft-RNR.
 */
static const enum xiw_conn_state xiw_kconn_want[XIW_CEV_NUM][XIW_CONN_NUM_STATES] = {
	[XIW_CEV_STARTED]	= { R, R, P, Q, O, F, X, C },
	[XIW_CEV_QP_CLOSING]	= { F, F, F, Q, O, F, X, C },
	[XIW_CEV_QP_ERROR]	= { X, X, X, X, X, F, X, C },
	[XIW_CEV_DESTROY]	= { X, X, X, X, X, F, X, C },
	[XIW_CEV_PEER_FIN]	= { F, F, P, X, X, F, X, C },
	[XIW_CEV_LLP_ERR]	= { X, X, X, X, X, X, X, C },
	[XIW_CEV_LOCAL_ERR]	= { X, X, X, X, X, F, X, C },
	[XIW_CEV_TERMINATE]	= { Q, Q, Q, Q, O, F, X, C },
	[XIW_CEV_TERM_BUILT]	= { S, R, P, O, O, F, X, C },
	[XIW_CEV_TERM_SENT]	= { S, R, P, Q, F, F, X, C },
	[XIW_CEV_TERM_TIMEOUT]	= { S, R, P, X, X, F, X, C },
	[XIW_CEV_PEER_TERM]	= { F, F, F, F, X, F, X, C },
	[XIW_CEV_RX_RESUMED]	= { S, R, F, Q, O, F, X, C },
	[XIW_CEV_COMMIT]	= { S, R, P, Q, O, C, C, C },
};

/* With a Send held, only the peer's FIN differs: the close waits. */
static const enum xiw_conn_state xiw_kconn_want_held_fin[XIW_CONN_NUM_STATES] = {
	P, P, P, X, X, F, X, C
};

#undef S
#undef R
#undef P
#undef Q
#undef O
#undef F
#undef X
#undef C

static bool xiw_kconn_open(enum xiw_conn_state s)
{
	return s < XIW_CONN_CLOSE_FIN;
}

static void xiw_conn_every_cell(struct kunit *test)
{
	int ev, held, st;

	for (ev = 0; ev < XIW_CEV_NUM; ev++)
		for (held = 0; held < 2; held++)
			for (st = 0; st < XIW_CONN_NUM_STATES; st++) {
				struct xiw_conn_step got = xiw_conn_next(st, ev, held);
				enum xiw_conn_state want = held && ev == XIW_CEV_PEER_FIN ?
					xiw_kconn_want_held_fin[st] :
					xiw_kconn_want[ev][st];

				KUNIT_EXPECT_EQ_MSG(test, (int)got.state, (int)want,
						    "event %d from %s, held %d", ev,
						    xiw_conn_state_name(st), held);
			}
}

/* The rules design.rst gives, on every cell. */
static void xiw_conn_table_rules(struct kunit *test)
{
	int ev, held, st;

	for (ev = 0; ev < XIW_CEV_NUM; ev++)
		for (held = 0; held < 2; held++)
			for (st = 0; st < XIW_CONN_NUM_STATES; st++) {
				struct xiw_conn_step got = xiw_conn_next(st, ev, held);
				bool moved = got.state != st;
				bool closes = xiw_kconn_open(st) &&
					      !xiw_kconn_open(got.state);

				/* close_work on the edge that closes, only there */
				KUNIT_EXPECT_EQ(test, closes, !!(got.act & XIW_CA_CLOSE));
				/* the cause, its event, term_work: into TERM_QUEUED */
				KUNIT_EXPECT_EQ(test, moved &&
						got.state == XIW_CONN_TERM_QUEUED ?
						XIW_CA_TERM_QUEUE : 0u,
						got.act & XIW_CA_TERM_QUEUE);
				/* the retry runs now on the edge into PEER_FIN */
				KUNIT_EXPECT_EQ(test, moved &&
						got.state == XIW_CONN_PEER_FIN,
						!!(got.act & XIW_CA_RNR_NOW));
				/* the peer's FIN moves the QP to CLOSING */
				KUNIT_EXPECT_EQ(test, moved &&
						got.state == XIW_CONN_CLOSE_FIN &&
						(ev == XIW_CEV_PEER_FIN ||
						 ev == XIW_CEV_RX_RESUMED),
						!!(got.act & XIW_CA_QP_CLOSING));
				/*
				 * The QP to ERROR on every reset but where it is
				 * there already (verbs, destroy) or CLOSING, and
				 * after a TERMINATE either way.
				 */
				KUNIT_EXPECT_EQ(test, moved &&
						((got.state == XIW_CONN_CLOSE_RST &&
						  st != XIW_CONN_CLOSE_FIN &&
						  ev != XIW_CEV_QP_ERROR &&
						  ev != XIW_CEV_DESTROY) ||
						 (got.state == XIW_CONN_CLOSE_FIN &&
						  (ev == XIW_CEV_PEER_TERM ||
						   ev == XIW_CEV_TERM_SENT))),
						!!(got.act & XIW_CA_QP_ERROR));
				/* one move of the QP per edge */
				KUNIT_EXPECT_LE(test, hweight32(got.act &
						(XIW_CA_QP_TERMINATE | XIW_CA_QP_CLOSING |
						 XIW_CA_QP_ERROR)), 1u);
				/* the engine sends a TERMINATE it built in TERM_QUEUED */
				KUNIT_EXPECT_EQ(test, st == XIW_CONN_TERM_QUEUED &&
						got.state == XIW_CONN_TERM_OUT,
						!!(got.act & XIW_CA_SEND_TERM));
				/* a reset is what CLOSE_RST commits to */
				KUNIT_EXPECT_EQ(test, st == XIW_CONN_CLOSE_RST &&
						got.state == XIW_CONN_CLOSED,
						!!(got.act & XIW_CA_ABRUPT));
				/* nothing leaves CLOSED; only the commit enters it */
				if (st == XIW_CONN_CLOSED)
					KUNIT_EXPECT_FALSE(test, moved);
				else if (got.state == XIW_CONN_CLOSED)
					KUNIT_EXPECT_EQ(test, (int)XIW_CEV_COMMIT, ev);
				/* a reset, once decided, stays a reset */
				if (st == XIW_CONN_CLOSE_RST)
					KUNIT_EXPECT_NE(test, (int)XIW_CONN_CLOSE_FIN,
							(int)got.state);
				/* no FIN behind part of our TERMINATE */
				if (st == XIW_CONN_TERM_OUT)
					KUNIT_EXPECT_TRUE(test, got.state != XIW_CONN_CLOSE_FIN ||
							  ev == XIW_CEV_TERM_SENT);
				/* no way back */
				if (moved)
					KUNIT_EXPECT_GT(test, (int)got.state, (int)st);
				/* once closing, only LLP_ERR and the commit move it */
				if (!xiw_kconn_open(st) && moved)
					KUNIT_EXPECT_TRUE(test, ev == XIW_CEV_LLP_ERR ||
							  ev == XIW_CEV_COMMIT);
			}
}

#define XIW_KPATH_LEN	5
/* Every event, and the peer's FIN once more with a Send held. */
#define XIW_KPATH_STEPS	(XIW_CEV_NUM + 1)

/*
 * Every sequence of XIW_KPATH_LEN events from STARTING: close_work is
 * queued at most once, exactly once when the sequence ends closing or
 * closed; term_work is armed and the cause recorded at most once; CLOSED
 * is only reached after close_work was queued.
 */
static void xiw_conn_every_path_acts_once(struct kunit *test)
{
	unsigned int n, total = 1, bad = 0, i;

	for (i = 0; i < XIW_KPATH_LEN; i++)
		total *= XIW_KPATH_STEPS;
	for (n = 0; n < total; n++) {
		enum xiw_conn_state st = XIW_CONN_STARTING;
		unsigned int code = n, closes = 0, records = 0, timers = 0;
		bool closed_early = false;

		for (i = 0; i < XIW_KPATH_LEN; i++) {
			unsigned int step = code % XIW_KPATH_STEPS;
			struct xiw_conn_step got;

			code /= XIW_KPATH_STEPS;
			if (step == XIW_CEV_NUM)
				got = xiw_conn_next(st, XIW_CEV_PEER_FIN, true);
			else
				got = xiw_conn_next(st, step, false);
			closes += !!(got.act & XIW_CA_CLOSE);
			records += !!(got.act & XIW_CA_RECORD);
			timers += !!(got.act & XIW_CA_TERM_TIMER);
			if (got.state == XIW_CONN_CLOSED && !closes)
				closed_early = true;
			st = got.state;
		}
		if (closes > 1 || records > 1 || timers > 1 || closed_early ||
		    (!xiw_kconn_open(st) && closes != 1) ||
		    (xiw_kconn_open(st) && closes)) {
			if (!bad)
				kunit_info(test, "path %u: %u closes, %u records, %u timers, ends %s\n",
					   n, closes, records, timers,
					   xiw_conn_state_name(st));
			bad++;
		}
	}
	KUNIT_EXPECT_EQ(test, 0u, bad);
}

static void xiw_conn_state_names(struct kunit *test)
{
	int st;

	for (st = 0; st < XIW_CONN_NUM_STATES; st++)
		KUNIT_EXPECT_STRNEQ(test, "?", xiw_conn_state_name(st));
	KUNIT_EXPECT_STREQ(test, "TERM_OUT",
			   xiw_conn_state_name(XIW_CONN_TERM_OUT));
	KUNIT_EXPECT_STREQ(test, "?", xiw_conn_state_name(XIW_CONN_NUM_STATES));
	KUNIT_EXPECT_STREQ(test, "?", xiw_conn_state_name(-1));
}

static struct kunit_case xiw_conn_state_cases[] = {
	KUNIT_CASE(xiw_conn_every_cell),
	KUNIT_CASE(xiw_conn_table_rules),
	KUNIT_CASE(xiw_conn_every_path_acts_once),
	KUNIT_CASE(xiw_conn_state_names),
	{}
};

static struct kunit_suite xiw_conn_state_suite = {
	.name = "xiw_conn_state",
	.test_cases = xiw_conn_state_cases,
};

kunit_test_suites(&xiw_conn_state_suite);
