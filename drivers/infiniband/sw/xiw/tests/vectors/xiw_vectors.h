/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Common helpers for the shared test vector tables in this directory.
 * The tables are plain static const C data, valid C and C++, consumed by
 * GoogleTest (tests/unit), the fuzz seed generator and KUnit.
 */
#ifndef XIW_VECTORS_H
#define XIW_VECTORS_H

#define XIW_VEC_COUNT(a)	(sizeof(a) / sizeof((a)[0]))

#endif /* XIW_VECTORS_H */
