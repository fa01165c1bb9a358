// SPDX-License-Identifier: GPL-2.0
//
// The command line of the xiw tools: numbers checked whole and against
// their range, usage errors and --help, the same in every tool.
//
// A tool describes itself once in a Usage (its name, the synopsis printed
// with every usage error, the manual-style text --help prints) and takes
// its numeric options through uint_opt()/secs_opt(): a value that is not
// a number of the option's range prints "TOOL: OPTION: 'VALUE' is not a
// number in LO..HI", the synopsis, and exits 2 -- never an exception.
#ifndef XIW_CLI_H
#define XIW_CLI_H

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace xiw::cli {

// @s, all of it, as an unsigned number in [@lo, @hi]: decimal, or
// hexadecimal after 0x or 0X.  No sign, no blanks, no suffix.
inline std::optional<uint64_t> parse_uint(std::string_view s, uint64_t lo, uint64_t hi)
{
	int base = 10;
	uint64_t v;

	if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s.remove_prefix(2);
	}
	if (s.empty() || s[0] == '+' || s[0] == '-')
		return std::nullopt;

	auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);

	if (ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi)
		return std::nullopt;
	return v;
}

// @s, all of it, as a finite decimal number in [@lo, @hi]: digits with an
// optional fraction and exponent, as printf's %g writes them.
inline std::optional<double> parse_double(std::string_view s, double lo, double hi)
{
	double v;

	if (s.empty() || s[0] == '+')
		return std::nullopt;

	auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v,
					 std::chars_format::general);

	if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) ||
	    v < lo || v > hi)
		return std::nullopt;
	return v;
}

// What a tool says about its command line.
struct Usage {
	const char *prog;	// the tool's name, as installed
	const char *synopsis;	// "usage: ..." lines, each ending in \n
	const char *help;	// --help: NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXIT STATUS
};

// A bad command line: @why, the synopsis and where the rest is, on
// stderr; exit status 2.
[[noreturn]] inline void usage_error(const Usage &u, const std::string &why)
{
	if (!why.empty())
		std::fprintf(stderr, "%s: %s\n", u.prog, why.c_str());
	std::fprintf(stderr, "%sTry '%s --help' for more information.\n", u.synopsis, u.prog);
	std::exit(2);
}

// --help: the manual-style text on stdout; exit status 0.
[[noreturn]] inline void help(const Usage &u)
{
	std::fputs(u.help, stdout);
	std::exit(std::fflush(stdout) ? 2 : 0);
}

// Option @opt's value @val as a number in [@lo, @hi], or a usage error.
inline uint64_t uint_opt(const Usage &u, const char *opt, const char *val, uint64_t lo,
			 uint64_t hi)
{
	auto v = parse_uint(val ? val : "", lo, hi);

	if (!v)
		usage_error(u, std::string(opt) + ": '" + (val ? val : "") +
				       "' is not a number in " + std::to_string(lo) + ".." +
				       std::to_string(hi));
	return *v;
}

// Option @opt's value @val as seconds in [@lo, @hi] (fractions allowed),
// or a usage error.
inline double secs_opt(const Usage &u, const char *opt, const char *val, double lo, double hi)
{
	auto v = parse_double(val ? val : "", lo, hi);

	if (!v) {
		char range[64];

		std::snprintf(range, sizeof(range), "%g..%g", lo, hi);
		usage_error(u, std::string(opt) + ": '" + (val ? val : "") +
				       "' is not a number of seconds in " + range);
	}
	return *v;
}

}  // namespace xiw::cli

#endif
