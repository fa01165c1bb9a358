// SPDX-License-Identifier: GPL-2.0
/*
 * xiw_kunit: KUnit suites for xiw.  The suites register themselves with
 * kunit_test_suites() in their own files; this file only names the module
 * and imports xiw.ko's test-only symbol namespace.
 */
#include <linux/module.h>

MODULE_DESCRIPTION("KUnit tests for the xiw software iWARP driver");
MODULE_LICENSE("GPL");
/* xiw.ko's EXPORT_SYMBOL_IF_KUNIT() functions (objects, skb, tx suites). */
XIW_IMPORT_KUNIT_NS;
