// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the table of a connection's life (xiw_conn_next()).  Every cell
 * is written out below, the properties design.rst states are checked on
 * every cell, and every sequence of events up to XIW_KPATH_LEN long is
 * walked from STARTING to check that close_work is queued exactly once
 * on any path that closes.
 */
#include <kunit/test.h>

#include "xiw_dp.h"

#define S	XIW_CONN_STARTING
#define R	XIW_CONN_RUNNING
#define F	XIW_CONN_CLOSE_FIN
#define X	XIW_CONN_CLOSE_RST
#define C	XIW_CONN_CLOSED

/*
 * The next state for each event (rows) from each state (columns, in enum
 * order: STARTING, RUNNING, CLOSE_FIN, CLOSE_RST, CLOSED), without and
 * with a TERMINATE done.
 */
static const enum xiw_conn_state xiw_kconn_want[XIW_CEV_NUM][2][XIW_CONN_NUM_STATES] = {
	[XIW_CEV_STARTED]	= { { R, R, F, X, C }, { R, R, F, X, C } },
	[XIW_CEV_QP_CLOSING]	= { { F, F, F, X, C }, { F, F, F, X, C } },
	[XIW_CEV_QP_ERROR]	= { { X, X, F, X, C }, { F, F, F, X, C } },
	[XIW_CEV_DESTROY]	= { { X, X, F, X, C }, { F, F, F, X, C } },
	[XIW_CEV_PEER_FIN]	= { { F, F, F, X, C }, { F, F, F, X, C } },
	[XIW_CEV_LLP_ERR]	= { { X, X, X, X, C }, { X, X, X, X, C } },
	[XIW_CEV_COMMIT]	= { { S, R, C, C, C }, { S, R, C, C, C } },
};

#undef S
#undef R
#undef F
#undef X
#undef C

static bool xiw_kconn_open(enum xiw_conn_state s)
{
	return s == XIW_CONN_STARTING || s == XIW_CONN_RUNNING;
}

static void xiw_conn_every_cell(struct kunit *test)
{
	int ev, td, st;

	for (ev = 0; ev < XIW_CEV_NUM; ev++)
		for (td = 0; td < 2; td++)
			for (st = 0; st < XIW_CONN_NUM_STATES; st++) {
				struct xiw_conn_step got = xiw_conn_next(st, ev, td);

				KUNIT_EXPECT_EQ_MSG(test, (int)got.state,
						    (int)xiw_kconn_want[ev][td][st],
						    "event %d from %s, term_done %d",
						    ev, xiw_conn_state_name(st), td);
			}
}

/* The rules design.rst gives, on every cell. */
static void xiw_conn_table_rules(struct kunit *test)
{
	int ev, td, st;

	for (ev = 0; ev < XIW_CEV_NUM; ev++)
		for (td = 0; td < 2; td++)
			for (st = 0; st < XIW_CONN_NUM_STATES; st++) {
				struct xiw_conn_step got = xiw_conn_next(st, ev, td);
				bool closes = xiw_kconn_open(st) &&
					      !xiw_kconn_open(got.state);

				/* close_work on the edge that closes, only there */
				KUNIT_EXPECT_EQ(test, closes,
						!!(got.act & XIW_CA_CLOSE));
				KUNIT_EXPECT_EQ(test, 0u, got.act & ~XIW_CA_CLOSE);
				/* nothing leaves CLOSED; only the commit enters it */
				if (st == XIW_CONN_CLOSED)
					KUNIT_EXPECT_EQ(test, (int)XIW_CONN_CLOSED,
							(int)got.state);
				else if (got.state == XIW_CONN_CLOSED)
					KUNIT_EXPECT_EQ(test, (int)XIW_CEV_COMMIT, ev);
				/* a reset, once decided, stays a reset */
				if (st == XIW_CONN_CLOSE_RST)
					KUNIT_EXPECT_NE(test, (int)XIW_CONN_CLOSE_FIN,
							(int)got.state);
				/* no way back to STARTING; RUNNING only by the start */
				if (got.state == XIW_CONN_STARTING)
					KUNIT_EXPECT_EQ(test, (int)XIW_CONN_STARTING, st);
				if (got.state == XIW_CONN_RUNNING && st != XIW_CONN_RUNNING)
					KUNIT_EXPECT_EQ(test, (int)XIW_CEV_STARTED, ev);
				/* once closing, only LLP_ERR and the commit move it */
				if (!xiw_kconn_open(st) && got.state != st)
					KUNIT_EXPECT_TRUE(test, ev == XIW_CEV_LLP_ERR ||
							  ev == XIW_CEV_COMMIT);
			}
}

#define XIW_KPATH_LEN	5
#define XIW_KPATH_STEPS	(XIW_CEV_NUM * 2)

/*
 * Every sequence of XIW_KPATH_LEN events (each with or without a TERMINATE
 * done) from STARTING: close_work is queued at most once, exactly once
 * when the sequence ends closing or closed, and CLOSED is only reached
 * after it was queued.
 */
static void xiw_conn_every_path_closes_once(struct kunit *test)
{
	unsigned int n, total = 1, bad = 0, i;

	for (i = 0; i < XIW_KPATH_LEN; i++)
		total *= XIW_KPATH_STEPS;
	for (n = 0; n < total; n++) {
		enum xiw_conn_state st = XIW_CONN_STARTING;
		unsigned int code = n, queued = 0;
		bool closed_early = false;

		for (i = 0; i < XIW_KPATH_LEN; i++) {
			unsigned int step = code % XIW_KPATH_STEPS;
			struct xiw_conn_step got;

			code /= XIW_KPATH_STEPS;
			got = xiw_conn_next(st, step / 2, step % 2);
			queued += !!(got.act & XIW_CA_CLOSE);
			if (got.state == XIW_CONN_CLOSED && !queued)
				closed_early = true;
			st = got.state;
		}
		if (queued > 1 || closed_early ||
		    (!xiw_kconn_open(st) && queued != 1) ||
		    (xiw_kconn_open(st) && queued)) {
			if (!bad)
				kunit_info(test, "path %u: %u queued, ends %s\n",
					   n, queued, xiw_conn_state_name(st));
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
	KUNIT_EXPECT_STREQ(test, "CLOSE_RST",
			   xiw_conn_state_name(XIW_CONN_CLOSE_RST));
	KUNIT_EXPECT_STREQ(test, "?", xiw_conn_state_name(XIW_CONN_NUM_STATES));
	KUNIT_EXPECT_STREQ(test, "?", xiw_conn_state_name(-1));
}

static struct kunit_case xiw_conn_state_cases[] = {
	KUNIT_CASE(xiw_conn_every_cell),
	KUNIT_CASE(xiw_conn_table_rules),
	KUNIT_CASE(xiw_conn_every_path_closes_once),
	KUNIT_CASE(xiw_conn_state_names),
	{}
};

static struct kunit_suite xiw_conn_state_suite = {
	.name = "xiw_conn_state",
	.test_cases = xiw_conn_state_cases,
};

kunit_test_suites(&xiw_conn_state_suite);
