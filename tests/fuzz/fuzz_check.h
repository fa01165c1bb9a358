// SPDX-License-Identifier: GPL-2.0
// Invariant checks for the fuzz targets: abort (a crash libFuzzer and the
// corpus replayer both report) with a message naming the broken rule.
#ifndef XIW_FUZZ_CHECK_H
#define XIW_FUZZ_CHECK_H

#include <cstdio>
#include <cstdlib>

#define XIW_FUZZ_CHECK(cond)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: invariant failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

#endif
