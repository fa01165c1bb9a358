// SPDX-License-Identifier: GPL-2.0
//
// KTAP output for the xiw test tools: numbered cases, each a function that
// records failed expectations with their diagnostics.

#ifndef XIW_KTAP_H
#define XIW_KTAP_H

#include <cstdarg>
#include <cstdio>
#include <functional>

namespace xiw::ktap {

inline int g_num;
inline int g_failed;

// "# PREFIXfmt..." on stdout.
inline void vdiag(const char *prefix, const char *fmt, va_list ap)
{
	std::fputs("# ", stdout);
	std::fputs(prefix, stdout);
	std::vprintf(fmt, ap);
	std::fputs("\n", stdout);
}

inline void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
inline void diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vdiag("", fmt, ap);
	va_end(ap);
}

// A failed expectation inside a case: prints a diagnostic, marks the case.
struct Case {
	bool ok = true;

	void check(bool cond, const char *fmt, ...) __attribute__((format(printf, 3, 4)))
	{
		if (cond)
			return;
		va_list ap;
		va_start(ap, fmt);
		vdiag("FAIL: ", fmt, ap);
		va_end(ap);
		ok = false;
	}
};

// Run one case and print its "ok N - desc" / "not ok N - desc" line.
inline void run(const char *desc, const std::function<void(Case &)> &fn)
{
	Case c;
	fn(c);
	++g_num;
	if (!c.ok)
		++g_failed;
	std::printf("%sok %d - %s\n", c.ok ? "" : "not ", g_num, desc);
	std::fflush(stdout);
}

} // namespace xiw::ktap

#endif
