// SPDX-License-Identifier: GPL-2.0
//
// The report of one `make bench` run, for xiw-bench-report and its tests.
//
// Input (tests/vm/bench-guest.sh): tab-separated lines
//   driver test size rep metric value
// with metric "fail" carrying a reason instead of a number.
#ifndef XIW_BENCH_REPORT_H
#define XIW_BENCH_REPORT_H

#include <map>
#include <string>
#include <vector>

namespace xiw::bench {

struct Key {
	std::string driver, test, metric;
	long size;
	auto operator<=>(const Key &) const = default;
};

struct Failure {
	std::string driver, test, reason;
	long size;
	int rep;
};

struct Data {
	std::map<Key, std::vector<double>> values;
	std::vector<Failure> failures;
};

// Adds the lines of @path to @d; false with the reason in @why for a file
// that cannot be read or a malformed line.
bool parse(const std::string &path, Data *d, std::string *why);

// {"date", "kernel", "points": [{driver, test, size, metric, median,
// values}], "failures": [{driver, test, size, rep, reason}]}, indented;
// strings escaped as JSON wants (control characters as \uXXXX).
std::string json(const Data &d, const std::string &kernel, const std::string &date);

// The ratio tables xiw/siw and xiw/TCP, the targets marked met or missed,
// failed runs, and @proto (xiw-proto-bench's output) verbatim.
std::string markdown(const Data &d, const std::string &kernel, const std::string &date,
		     const std::string &proto);

// Build @b against build @a of one run (driver names of the input, e.g.
// "xiw" and "xiwb" from bench-focus's BENCH_XIW_B): a markdown table with
// the medians of every point both measured, B over A and the counts.
std::string compare(const Data &d, const std::string &a, const std::string &b);

// Writes @prefix-bw.dat and @prefix-lat.dat and returns the gnuplot
// script that draws them into @prefix-bw.png and @prefix-lat.png.
std::string plots(const Data &d, const std::string &prefix);

// @s as a gnuplot single-quoted string (quotes doubled, nothing else is
// special inside one).
std::string gnuplot_quote(const std::string &s);

// Runs `gnuplot SCRIPT` directly (posix_spawnp, no shell) and waits for
// it: 0 when it succeeded, -1 when gnuplot is not installed, 1 when it
// failed; @why says what happened.
int run_gnuplot(const std::string &script, std::string *why);

}  // namespace xiw::bench

#endif
