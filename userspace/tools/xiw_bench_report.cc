// SPDX-License-Identifier: GPL-2.0
//
// The report of one `make bench` run (see xiw_bench_report.h): the JSON
// through nlohmann-json, the markdown tables, and the gnuplot data and
// script, run by gnuplot itself without a shell.
#include "xiw_bench_report.h"
#include "xiw_cli.h"

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

extern char **environ;

namespace xiw::bench {
namespace {

double Median(std::vector<double> v)
{
	if (v.empty())
		return NAN;
	std::sort(v.begin(), v.end());
	size_t n = v.size();
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// @v with @prec decimals; "null" (gnuplot's missing value) if not finite.
std::string Num(double v, int prec = 3)
{
	if (!std::isfinite(v))
		return "null";
	char b[64];
	snprintf(b, sizeof(b), "%.*f", prec, v);
	return b;
}

std::string SizeName(long s)
{
	if (s >= 1048576 && s % 1048576 == 0)
		return std::to_string(s / 1048576) + " MiB";
	if (s >= 1024 && s % 1024 == 0)
		return std::to_string(s / 1024) + " KiB";
	return std::to_string(s) + " B";
}

class Report {
public:
	Report(const Data &d) : d_(d) {}

	double Med(const std::string &drv, const std::string &test, long size,
		   const std::string &metric) const
	{
		auto it = d_.values.find({ drv, test, metric, size });
		return it == d_.values.end() ? NAN : Median(it->second);
	}

	std::set<long> Sizes(const std::string &test, const std::string &metric) const
	{
		std::set<long> s;

		for (auto &[k, v] : d_.values)
			if (k.test == test && k.metric == metric)
				s.insert(k.size);
		return s;
	}

	nlohmann::ordered_json Json(const std::string &kernel, const std::string &date) const
	{
		nlohmann::ordered_json j, points = nlohmann::ordered_json::array(),
					  failures = nlohmann::ordered_json::array();

		for (auto &[k, v] : d_.values)
			points.push_back({ { "driver", k.driver },
					   { "test", k.test },
					   { "size", k.size },
					   { "metric", k.metric },
					   { "median", Median(v) },
					   { "values", v } });
		for (auto &f : d_.failures)
			failures.push_back({ { "driver", f.driver },
					     { "test", f.test },
					     { "size", f.size },
					     { "rep", f.rep },
					     { "reason", f.reason } });
		j["date"] = date;
		j["kernel"] = kernel;
		j["points"] = std::move(points);
		j["failures"] = std::move(failures);
		return j;
	}

	// A table row: xiw, siw, ratio and the target it is held to.
	void Row(std::ostream &o, const std::string &what, double x, double s, int prec,
		 double target, bool higher_better) const
	{
		double r = x / s;
		std::string verdict = "";

		if (target > 0 && std::isfinite(r))
			verdict = (higher_better ? r >= target : r <= target) ? "met" : "missed";
		o << "| " << what << " | " << Num(x, prec) << " | " << Num(s, prec) << " | "
		  << (std::isfinite(r) ? Num(r, 2) + "x" : "-") << " | "
		  << (target > 0 ? std::string(higher_better ? ">= " : "<= ") + Num(target, 2) + "x" : "")
		  << " | " << verdict << " |\n";
	}

	void Markdown(std::ostream &o, const std::string &kernel, const std::string &date,
		      const std::string &proto) const
	{
		double tcp = Med("tcp", "iperf3", 0, "tcp_MBps");
		double tcpz = Med("tcp", "iperf3-Z", 0, "tcp_MBps");

		o << "# xiw benchmark, " << date << ", kernel " << kernel << "\n\n"
		  << "One VM run (qemu TCG, 2 vCPUs), two network namespaces joined by one veth\n"
		  << "pair; xiw and siw devices on the same veths in turn; medians of every\n"
		  << "repetition. Ratios are xiw over siw (and xiw over raw TCP) from this run.\n\n";

		o << "## Bandwidth (perftest over RDMA CM, MB/s)\n\n"
		  << "| test, size | xiw | siw | xiw/siw | target | |\n|---|---|---|---|---|---|\n";
		for (const char *t : { "ib_write_bw", "ib_read_bw", "ib_send_bw" })
			for (long s : Sizes(t, "bw_MBps"))
				Row(o, std::string(t) + ", " + SizeName(s), Med("xiw", t, s, "bw_MBps"),
				    Med("siw", t, s, "bw_MBps"), 1, s >= 65536 ? 1.25 : 0, true);

		o << "\n## Message rate at 64 B (Mpps)\n\n"
		  << "| test | xiw | siw | xiw/siw | target | |\n|---|---|---|---|---|---|\n";
		for (const char *t : { "ib_write_bw", "ib_read_bw", "ib_send_bw" })
			Row(o, t, Med("xiw", t, 64, "mpps"), Med("siw", t, 64, "mpps"), 4, 1.25, true);

		o << "\n## Latency (typical, microseconds)\n\n"
		  << "| test, size | xiw | siw | xiw/siw | target | |\n|---|---|---|---|---|---|\n";
		for (const char *t : { "ib_write_lat", "ib_read_lat", "ib_send_lat" })
			for (long s : Sizes(t, "lat_typ_us"))
				Row(o, std::string(t) + ", " + SizeName(s), Med("xiw", t, s, "lat_typ_us"),
				    Med("siw", t, s, "lat_typ_us"), 2,
				    std::string(t) == "ib_write_lat" && s == 64 ? 0.8 : 0, false);

		o << "\n## Connection setup (cmtime, connections per second)\n\n"
		  << "| | xiw | siw | xiw/siw | target | |\n|---|---|---|---|---|---|\n";
		for (long s : Sizes("cmtime", "conn_per_s"))
			Row(o, std::to_string(s) + " connections", Med("xiw", "cmtime", s, "conn_per_s"),
			    Med("siw", "cmtime", s, "conn_per_s"), 1, 1.5, true);

		o << "\n## Scale (xiw-scale: connections open at once)\n\n"
		  << "Both ends in the VM: kernel memory per QP is the Slab and VmallocUsed\n"
		  << "growth while all are up, over 2N QPs.\n\n"
		  << "| connections, measure | xiw | siw | xiw/siw | target | |\n|---|---|---|---|---|---|\n";
		for (long s : Sizes("scale", "conn_per_s")) {
			std::string n = std::to_string(s);
			Row(o, n + ", connections/s", Med("xiw", "scale", s, "conn_per_s"),
			    Med("siw", "scale", s, "conn_per_s"), 1, 0, true);
			Row(o, n + ", slab KiB per QP", Med("xiw", "scale", s, "slab_KiB_per_qp"),
			    Med("siw", "scale", s, "slab_KiB_per_qp"), 1, 0, false);
			Row(o, n + ", vmalloc KiB per QP", Med("xiw", "scale", s, "vmalloc_KiB_per_qp"),
			    Med("siw", "scale", s, "vmalloc_KiB_per_qp"), 1, 0, false);
		}

		o << "\n## Against raw TCP on the same veth pair\n\n"
		  << "iperf3: " << Num(tcp, 1) << " MB/s plain, " << Num(tcpz, 1)
		  << " MB/s with -Z (zero-copy send).\n\n"
		  << "| test, size | xiw MB/s | xiw/TCP | siw/TCP |\n|---|---|---|---|\n";
		for (const char *t : { "ib_write_bw", "ib_read_bw", "ib_send_bw" }) {
			for (long s : Sizes(t, "bw_MBps")) {
				if (s < 65536)
					continue;
				double x = Med("xiw", t, s, "bw_MBps"), y = Med("siw", t, s, "bw_MBps");
				o << "| " << t << ", " << SizeName(s) << " | " << Num(x, 1) << " | "
				  << Num(x / tcp, 2) << "x | " << Num(y / tcp, 2) << "x |\n";
			}
		}

		if (!d_.failures.empty()) {
			o << "\n## Runs that failed\n\n";
			for (auto &f : d_.failures)
				o << "- " << f.driver << " " << f.test << " " << SizeName(f.size) << " rep "
				  << f.rep << ": " << f.reason << "\n";
		}
		if (!proto.empty())
			o << "\n## Protocol core (userspace, this host's CPU)\n\n```\n" << proto << "```\n";
	}

	// gnuplot data and script; returns the script text.
	std::string Plots(const std::string &prefix) const
	{
		std::ofstream bw(prefix + "-bw.dat"), lat(prefix + "-lat.dat");
		std::ostringstream gp;

		bw << "# size";
		for (const char *d : { "xiw", "siw" })
			for (const char *t : { "write", "read", "send" })
				bw << " " << d << "_" << t;
		bw << "\n";
		for (long s : Sizes("ib_write_bw", "bw_MBps")) {
			bw << s;
			for (const char *d : { "xiw", "siw" })
				for (const char *t : { "ib_write_bw", "ib_read_bw", "ib_send_bw" })
					bw << " " << Num(Med(d, t, s, "bw_MBps"), 2);
			bw << "\n";
		}
		lat << "# test xiw siw\n";
		for (const char *t : { "ib_write_lat", "ib_read_lat", "ib_send_lat" })
			for (long s : Sizes(t, "lat_typ_us"))
				lat << "\"" << std::string(t).substr(3) << " " << SizeName(s) << "\" "
				    << Num(Med("xiw", t, s, "lat_typ_us"), 2) << " "
				    << Num(Med("siw", t, s, "lat_typ_us"), 2) << "\n";

		double tcp = Med("tcp", "iperf3", 0, "tcp_MBps");
		gp << "set terminal pngcairo size 1000,600\nset datafile missing 'null'\n"
		   << "set output " << gnuplot_quote(prefix + "-bw.png")
		   << "\nset logscale x 2\nset key left top\n"
		   << "set xlabel 'message size (bytes)'\nset ylabel 'MB/s'\n"
		   << "set title 'perftest bandwidth, xiw vs siw (same VM, same veth pair)'\n"
		   << "plot " << gnuplot_quote(prefix + "-bw.dat")
		   << " using 1:2 with linespoints title 'xiw write', "
		   << "'' using 1:3 with linespoints title 'xiw read', "
		   << "'' using 1:4 with linespoints title 'xiw send', "
		   << "'' using 1:5 with linespoints dt 2 title 'siw write', "
		   << "'' using 1:6 with linespoints dt 2 title 'siw read', "
		   << "'' using 1:7 with linespoints dt 2 title 'siw send'";
		if (std::isfinite(tcp))
			gp << ", " << Num(tcp, 1) << " with lines lc 'black' title 'TCP (iperf3)'";
		gp << "\nunset logscale x\nset output " << gnuplot_quote(prefix + "-lat.png") << "\n"
		   << "set style data histogram\nset style histogram clustered\n"
		   << "set style fill solid 0.6\nset xtics rotate by -30\nset key right top\n"
		   << "set xlabel ''\nset ylabel 'microseconds (typical)'\n"
		   << "set title 'perftest latency, xiw vs siw'\n"
		   << "plot " << gnuplot_quote(prefix + "-lat.dat")
		   << " using 2:xtic(1) title 'xiw', '' using 3 title 'siw'\n";
		return gp.str();
	}

private:
	const Data &d_;
};

} // namespace

bool parse(const std::string &path, Data *d, std::string *why)
{
	std::ifstream in(path);
	std::string line;
	int lineno = 0;

	if (!in) {
		*why = "cannot read " + path;
		return false;
	}
	while (std::getline(in, line)) {
		std::vector<std::string> f;
		std::stringstream ss(line);
		std::string cell;

		lineno++;
		while (std::getline(ss, cell, '\t'))
			f.push_back(cell);
		if (f.empty() || line.empty())
			continue;
		if (f.size() != 6) {
			*why = path + ":" + std::to_string(lineno) + ": want 6 fields, got " +
			       std::to_string(f.size());
			return false;
		}
		auto size = xiw::cli::parse_uint(f[2], 0, LONG_MAX);
		auto rep = xiw::cli::parse_uint(f[3], 0, INT_MAX);
		if (!size || !rep) {
			*why = path + ":" + std::to_string(lineno) + ": size and repetition must be numbers";
			return false;
		}
		if (f[4] == "fail") {
			d->failures.push_back({ f[0], f[1], f[5], long(*size), int(*rep) });
			continue;
		}
		auto v = xiw::cli::parse_double(f[5], -DBL_MAX, DBL_MAX);
		if (!v) {
			*why = path + ":" + std::to_string(lineno) + ": not a number: " + f[5];
			return false;
		}
		d->values[{ f[0], f[1], f[4], long(*size) }].push_back(*v);
	}
	return true;
}

std::string compare(const Data &d, const std::string &a, const std::string &b)
{
	std::ostringstream o;
	char x[32], y[32];

	o << "| point, metric | " << a << " (A) | " << b << " (B) | B/A | repetitions |\n"
	  << "|---|---|---|---|---|\n";
	for (auto &[k, va] : d.values) {
		if (k.driver != a)
			continue;
		auto vb = d.values.find({ b, k.test, k.metric, k.size });
		if (vb == d.values.end())
			continue;
		double ma = Median(va), mb = Median(vb->second);

		snprintf(x, sizeof(x), "%.4g", ma);
		snprintf(y, sizeof(y), "%.4g", mb);
		o << "| " << k.test << " " << SizeName(k.size) << ", " << k.metric << " | " << x
		  << " | " << y << " | " << (ma > 0 ? Num(mb / ma, 2) + "x" : "-") << " | "
		  << va.size() << ", " << vb->second.size() << " |\n";
	}
	return o.str();
}

std::string json(const Data &d, const std::string &kernel, const std::string &date)
{
	// Bytes that are not UTF-8 (a tool's raw output in a reason) become
	// U+FFFD instead of making dump() throw.
	return Report(d).Json(kernel, date).dump(2, ' ', false,
						  nlohmann::json::error_handler_t::replace) + "\n";
}

std::string markdown(const Data &d, const std::string &kernel, const std::string &date,
		     const std::string &proto)
{
	std::ostringstream o;

	Report(d).Markdown(o, kernel, date, proto);
	return o.str();
}

std::string plots(const Data &d, const std::string &prefix)
{
	return Report(d).Plots(prefix);
}

std::string gnuplot_quote(const std::string &s)
{
	std::string o = "'";

	for (char c : s) {
		o += c;
		if (c == '\'')
			o += '\'';
	}
	return o + "'";
}

int run_gnuplot(const std::string &script, std::string *why)
{
	std::string prog = "gnuplot";
	char *argv[] = { prog.data(), const_cast<char *>(script.c_str()), nullptr };
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv, environ);
	int st;

	if (rc == ENOENT) {
		*why = "gnuplot not installed";
		return -1;
	}
	if (rc) {
		*why = std::string("cannot run gnuplot: ") + std::strerror(rc);
		return 1;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			*why = std::string("waitpid: ") + std::strerror(errno);
			return 1;
		}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	*why = WIFEXITED(st) ? "gnuplot exited with " + std::to_string(WEXITSTATUS(st))
			     : "gnuplot killed by signal " + std::to_string(WTERMSIG(st));
	return 1;
}

} // namespace xiw::bench
