// SPDX-License-Identifier: GPL-2.0
/*
 * Linux 6.18: a KUnit parameter generator (kunit_case.generate_params)
 * takes the test's struct kunit * before the previous parameter and the
 * description buffer.
 */
#include <kunit/test.h>

static const void *probe_gen(struct kunit *test, const void *prev, char *desc)
{
	return NULL;
}

static struct kunit_case probe_case __maybe_unused = {
	.generate_params = probe_gen,
};
