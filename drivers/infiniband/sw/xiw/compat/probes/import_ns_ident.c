// SPDX-License-Identifier: GPL-2.0
/*
 * Linux 6.13: MODULE_IMPORT_NS() and EXPORT_SYMBOL_NS() take the symbol
 * namespace as a string literal; before, they took an identifier and
 * stringified it.  A string literal compiles under both (the old macro
 * quotes it once more, naming another namespace), so the probe looks for
 * the old interface: an identifier.
 */
#include <linux/module.h>

MODULE_IMPORT_NS(XIW_PROBE_NS);
