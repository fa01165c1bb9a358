// SPDX-License-Identifier: GPL-2.0
//
// xiw-bench-report: turn the measurements of one `make bench` run into the
// report: <prefix>.json (every value and its median), <prefix>.md (the
// ratio tables xiw/siw and xiw/TCP with the targets of the performance
// issue marked met or missed), and <prefix>-bw.png / <prefix>-lat.png
// drawn by gnuplot when it is installed.
//
// Input (tests/vm/bench-guest.sh): tab-separated lines
//   driver test size rep metric value
// with metric "fail" carrying a reason instead of a number.
//
// usage: xiw-bench-report --in FILE --out PREFIX --kernel NAME
//                         [--proto FILE] [--date DATE]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

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

double Median(std::vector<double> v)
{
	if (v.empty())
		return NAN;
	std::sort(v.begin(), v.end());
	size_t n = v.size();
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool Parse(const std::string &path, Data *d)
{
	std::ifstream in(path);
	std::string line;
	int lineno = 0;

	if (!in) {
		std::cerr << "xiw-bench-report: cannot read " << path << "\n";
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
			std::cerr << path << ":" << lineno << ": want 6 fields, got " << f.size() << "\n";
			return false;
		}
		long size = std::strtol(f[2].c_str(), nullptr, 10);
		int rep = std::atoi(f[3].c_str());
		if (f[4] == "fail") {
			d->failures.push_back({ f[0], f[1], f[5], size, rep });
			continue;
		}
		char *end = nullptr;
		double v = std::strtod(f[5].c_str(), &end);
		if (end == f[5].c_str() || !std::isfinite(v)) {
			std::cerr << path << ":" << lineno << ": not a number: " << f[5] << "\n";
			return false;
		}
		d->values[{ f[0], f[1], f[4], size }].push_back(v);
	}
	return true;
}

std::string JsonStr(const std::string &s)
{
	std::string o = "\"";

	for (char c : s) {
		if (c == '"' || c == '\\')
			o += '\\';
		if ((unsigned char)c < 0x20)
			continue;
		o += c;
	}
	return o + "\"";
}

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

	void Json(std::ostream &o, const std::string &kernel, const std::string &date) const
	{
		bool first = true;

		o << "{\n  \"date\": " << JsonStr(date) << ",\n  \"kernel\": " << JsonStr(kernel)
		  << ",\n  \"points\": [\n";
		for (auto &[k, v] : d_.values) {
			o << (first ? "" : ",\n") << "    {\"driver\": " << JsonStr(k.driver)
			  << ", \"test\": " << JsonStr(k.test) << ", \"size\": " << k.size
			  << ", \"metric\": " << JsonStr(k.metric) << ", \"median\": "
			  << Num(Median(v)) << ", \"values\": [";
			for (size_t i = 0; i < v.size(); i++)
				o << (i ? ", " : "") << Num(v[i]);
			o << "]}";
			first = false;
		}
		o << "\n  ],\n  \"failures\": [";
		first = true;
		for (auto &f : d_.failures) {
			o << (first ? "\n" : ",\n") << "    {\"driver\": " << JsonStr(f.driver)
			  << ", \"test\": " << JsonStr(f.test) << ", \"size\": " << f.size
			  << ", \"rep\": " << f.rep << ", \"reason\": " << JsonStr(f.reason) << "}";
			first = false;
		}
		o << (first ? "" : "\n  ") << "]\n}\n";
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
		   << "set output '" << prefix << "-bw.png'\nset logscale x 2\nset key left top\n"
		   << "set xlabel 'message size (bytes)'\nset ylabel 'MB/s'\n"
		   << "set title 'perftest bandwidth, xiw vs siw (same VM, same veth pair)'\n"
		   << "plot '" << prefix << "-bw.dat' using 1:2 with linespoints title 'xiw write', "
		   << "'' using 1:3 with linespoints title 'xiw read', "
		   << "'' using 1:4 with linespoints title 'xiw send', "
		   << "'' using 1:5 with linespoints dt 2 title 'siw write', "
		   << "'' using 1:6 with linespoints dt 2 title 'siw read', "
		   << "'' using 1:7 with linespoints dt 2 title 'siw send'";
		if (std::isfinite(tcp))
			gp << ", " << Num(tcp, 1) << " with lines lc 'black' title 'TCP (iperf3)'";
		gp << "\nunset logscale x\nset output '" << prefix << "-lat.png'\n"
		   << "set style data histogram\nset style histogram clustered\n"
		   << "set style fill solid 0.6\nset xtics rotate by -30\nset key right top\n"
		   << "set xlabel ''\nset ylabel 'microseconds (typical)'\n"
		   << "set title 'perftest latency, xiw vs siw'\n"
		   << "plot '" << prefix << "-lat.dat' using 2:xtic(1) title 'xiw', '' using 3 title 'siw'\n";
		return gp.str();
	}

private:
	const Data &d_;
};

std::string Slurp(const std::string &path)
{
	std::ifstream in(path);
	std::stringstream ss;

	ss << in.rdbuf();
	return ss.str();
}

} // namespace

int main(int argc, char **argv)
{
	std::string in, out, kernel = "unknown", proto, date = "unknown";

	for (int i = 1; i + 1 < argc; i += 2) {
		std::string a = argv[i];

		if (a == "--in")
			in = argv[i + 1];
		else if (a == "--out")
			out = argv[i + 1];
		else if (a == "--kernel")
			kernel = argv[i + 1];
		else if (a == "--proto")
			proto = Slurp(argv[i + 1]);
		else if (a == "--date")
			date = argv[i + 1];
		else {
			std::cerr << "xiw-bench-report: unknown option " << a << "\n";
			return 2;
		}
	}
	if (in.empty() || out.empty()) {
		std::cerr << "usage: xiw-bench-report --in FILE --out PREFIX --kernel NAME"
			     " [--proto FILE] [--date DATE]\n";
		return 2;
	}

	Data d;
	if (!Parse(in, &d))
		return 1;
	if (d.values.empty()) {
		std::cerr << "xiw-bench-report: no measurements in " << in << "\n";
		return 1;
	}

	Report r(d);
	std::ofstream json(out + ".json"), md(out + ".md");
	r.Json(json, kernel, date);
	r.Markdown(md, kernel, date, proto);
	std::string script = r.Plots(out);
	std::ofstream(out + ".gp") << script;
	if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) {
		std::string cmd = "gnuplot '" + out + ".gp'";
		if (std::system(cmd.c_str()) != 0)
			std::cerr << "xiw-bench-report: gnuplot failed (" << out << ".gp)\n";
	} else {
		std::cerr << "xiw-bench-report: gnuplot not installed, no PNG plots\n";
	}
	std::cout << Slurp(out + ".md");
	return d.failures.empty() ? 0 : 3;
}
