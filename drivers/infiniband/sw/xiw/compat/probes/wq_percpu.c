// SPDX-License-Identifier: GPL-2.0
/*
 * Linux 6.17 (and 6.12.y stable): WQ_PERCPU names a per-CPU workqueue
 * explicitly; 7.x warns when alloc_workqueue() gets neither WQ_PERCPU nor
 * WQ_UNBOUND.
 */
#include <linux/workqueue.h>

static unsigned int probe_flags __maybe_unused = WQ_PERCPU;
