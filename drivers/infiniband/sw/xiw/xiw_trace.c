// SPDX-License-Identifier: GPL-2.0
/*
 * xiw: the tracepoints of xiw_trace.h are instantiated here.
 */
#define CREATE_TRACE_POINTS
#include "xiw_trace.h"
