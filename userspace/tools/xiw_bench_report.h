// SPDX-License-Identifier: GPL-2.0
//
// The report of one `make bench` run, for xiw-bench-report and its tests.
//
// Input (tests/vm/bench-guest.sh): tab-separated lines
//   driver test size rep metric value
// with metric "fail" carrying a reason instead of a number, one file per
// topology.  Metrics "cpu_s" (CPU seconds one guest spent over a run; the
// two guests of the wire each write theirs) and "bytes" (what the run
// moved) are kept per repetition: the report's CPU time per GB is their
// sum over the bytes, repetition by repetition.  Metrics tcp_retrans_segs,
// tcp_rtos and tcp_win_probes (what TCP lost over one perftest run, each
// guest its own) are kept per repetition as well, added up.
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

// One repetition of one point, for the CPU time per GB.
struct RunKey {
	std::string driver, test;
	long size;
	int rep;
	auto operator<=>(const RunKey &) const = default;
};

struct Work {
	double cpu_s = 0, bytes = 0;
};

// What TCP lost over one run: segments it retransmitted, retransmission
// timeouts, zero-window probes.
struct TcpLoss {
	double retrans_segs = 0, rtos = 0, win_probes = 0;
};

struct Data {
	std::map<Key, std::vector<double>> values;
	std::vector<Failure> failures;
	std::map<RunKey, Work> work;
	std::map<RunKey, TcpLoss> tcp;
	// Every repetition's own value of each metric in values.
	std::map<RunKey, std::map<std::string, double>> runs;
};

// The measurements of one topology; @name as bench-guest.sh's BENCH_TOPO
// (veth, veth9000, dummy, wire), empty for a run that did not say.
struct Topology {
	std::string name;
	Data data;
};

// Adds the lines of @path to @d; false with the reason in @why for a file
// that cannot be read or a malformed line.
bool parse(const std::string &path, Data *d, std::string *why);

// CPU seconds per 10^9 bytes of every repetition of @drv's @test at @size
// that has both a CPU time and a byte count, in repetition order.
std::vector<double> cpu_per_gb(const Data &d, const std::string &drv, const std::string &test,
			       long size);

// {"date", "kernel", "topologies": [{name, description, "points": [{driver,
// test, size, metric, median, values}], "failures": [{driver, test, size,
// rep, reason}], "tcp_losses": [{driver, test, size, rep, retrans_segs,
// rtos, win_probes}]}]}, indented; the points include cpu_s_per_GB where a
// test has one; tcp_losses has every run that counted them; strings
// escaped as JSON wants (control characters as \uXXXX).
std::string json(const std::vector<Topology> &run, const std::string &kernel,
		 const std::string &date);

// A summary of the targets per topology, then a section per topology: the
// ratio tables xiw/siw and xiw/TCP, each target marked met or missed (the
// ratio in red when missed, "below the floor" where it is also worse than
// siw), CPU time per GB, the runs in which TCP retransmitted or probed a
// closed window, failed runs; and @proto (xiw-proto-bench's output)
// verbatim.
std::string markdown(const std::vector<Topology> &run, const std::string &kernel,
		     const std::string &date, const std::string &proto);

// Build @b against build @a of one run (driver names of the input, e.g.
// "xiw" and "xiwb" from bench-focus's BENCH_XIW_B): a markdown table with
// the medians of every point both measured, B over A and the counts.
std::string compare(const Data &d, const std::string &a, const std::string &b);

// For every topology T of @run, writes @prefix-T-bw.dat and
// @prefix-T-lat.dat (@prefix-bw.dat, @prefix-lat.dat for an unnamed one)
// and returns the gnuplot script that draws them into the same names with
// .png: bandwidth against message size with raw TCP's, and latency
// against message size, xiw and siw.
std::string plots(const std::vector<Topology> &run, const std::string &prefix);

// @s as a gnuplot single-quoted string (quotes doubled, nothing else is
// special inside one).
std::string gnuplot_quote(const std::string &s);

// Runs `gnuplot SCRIPT` directly (posix_spawnp, no shell) and waits for
// it: 0 when it succeeded, -1 when gnuplot is not installed, 1 when it
// failed; @why says what happened.
int run_gnuplot(const std::string &script, std::string *why);

}  // namespace xiw::bench

#endif
