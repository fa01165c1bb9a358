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

// A table cell: @v with @prec decimals, "-" where nothing was measured.
std::string Cell(double v, int prec)
{
	return std::isfinite(v) ? Num(v, prec) : "-";
}

std::string SizeName(long s)
{
	if (s >= 1048576 && s % 1048576 == 0)
		return std::to_string(s / 1048576) + " MiB";
	if (s >= 1024 && s % 1024 == 0)
		return std::to_string(s / 1024) + " KiB";
	return std::to_string(s) + " B";
}

// What a topology is, for its section's heading.
std::string Describe(const std::string &name)
{
	if (name == "veth")
		return "veth pair, MTU 1500: two network namespaces joined by one veth pair";
	if (name == "veth9000")
		return "veth pair, MTU 9000: the same with jumbo frames";
	if (name == "dummy")
		return "one device on a dummy netdev: both ends on it, the TCP over lo (MTU 64 KiB)";
	if (name == "wire")
		return "two VMs on a wire: each end in its own guest, virtio-net NICs joined by "
		       "qemu's UDP socket netdev on the host's loopback, MTU 1500";
	if (name == "nvme" || name == "nvme9000")
		return std::string("NVMe over Fabrics against NVMe/TCP across the two-VM wire, MTU ") +
		       (name == "nvme" ? "1500" : "9000");
	if (name == "nvmedummy")
		return "NVMe over Fabrics against NVMe/TCP in one guest: target and host on a dummy "
		       "netdev, the TCP over lo";
	if (name.empty())
		return "Results";
	return name;
}

// A target a ratio xiw/siw (or xiw/TCP) is held to: @goal, and the floor
// below which xiw is worse than siw (0: none).
struct Target {
	double goal = 0, floor = 0;
	bool higher_better = true;
};

struct Tally {
	int met = 0, missed = 0, below_floor = 0;
};

const Target kNone;
const Target kBandwidth = { 1.25, 1.0, true };
const Target kRate = { 1.25, 1.0, true };
const Target kLatency = { 0.8, 1.0, false };
const Target kConnect = { 1.5, 0, true };
const Target kCpu = { 1.0, 0, false };
const Target kVsTcp = { 0.9, 0, true };

class Report {
public:
	Report(const Data &d) : d_(d) {}

	double Med(const std::string &drv, const std::string &test, long size,
		   const std::string &metric) const
	{
		auto it = d_.values.find({ drv, test, metric, size });
		return it == d_.values.end() ? NAN : Median(it->second);
	}

	double CpuMed(const std::string &drv, const std::string &test, long size) const
	{
		return Median(cpu_per_gb(d_, drv, test, size));
	}

	std::set<long> Sizes(const std::string &test, const std::string &metric) const
	{
		std::set<long> s;

		for (auto &[k, v] : d_.values)
			if (k.test == test && k.metric == metric)
				s.insert(k.size);
		return s;
	}

	nlohmann::ordered_json Json(const std::string &name) const
	{
		nlohmann::ordered_json j, points = nlohmann::ordered_json::array(),
					  failures = nlohmann::ordered_json::array(),
					  losses = nlohmann::ordered_json::array();
		std::set<std::tuple<std::string, std::string, long>> cpu;

		for (auto &[k, v] : d_.values)
			points.push_back({ { "driver", k.driver },
					   { "test", k.test },
					   { "size", k.size },
					   { "metric", k.metric },
					   { "median", Median(v) },
					   { "values", v } });
		for (auto &[k, w] : d_.work)
			cpu.insert({ k.driver, k.test, k.size });
		for (auto &[drv, test, size] : cpu) {
			auto v = cpu_per_gb(d_, drv, test, size);

			if (!v.empty())
				points.push_back({ { "driver", drv },
						   { "test", test },
						   { "size", size },
						   { "metric", "cpu_s_per_GB" },
						   { "median", Median(v) },
						   { "values", v } });
		}
		for (auto &f : d_.failures)
			failures.push_back({ { "driver", f.driver },
					     { "test", f.test },
					     { "size", f.size },
					     { "rep", f.rep },
					     { "reason", f.reason } });
		j["name"] = name;
		j["description"] = Describe(name);
		j["points"] = std::move(points);
		j["failures"] = std::move(failures);
		for (auto &[k, l] : d_.tcp)
			losses.push_back({ { "driver", k.driver },
					   { "test", k.test },
					   { "size", k.size },
					   { "rep", k.rep },
					   { "retrans_segs", l.retrans_segs },
					   { "rtos", l.rtos },
					   { "win_probes", l.win_probes } });
		j["tcp_losses"] = std::move(losses);
		return j;
	}

	// A table row: xiw, the reference (siw or TCP), the ratio and the
	// target it is held to; counted in @t.
	void Row(std::ostream &o, const std::string &what, double x, double s, int prec,
		 const Target &tg, Tally *t) const
	{
		double r = x / s;
		std::string verdict, ratio = std::isfinite(r) ? Num(r, 2) + "x" : "-";

		if (tg.goal > 0 && std::isfinite(r)) {
			auto ok = [&](double v) { return tg.higher_better ? r >= v : r <= v; };

			if (ok(tg.goal)) {
				verdict = "met";
				t->met++;
			} else {
				verdict = "missed";
				t->missed++;
				ratio = "<span style=\"color:red\">**" + ratio + "**</span>";
				if (tg.floor > 0 && !ok(tg.floor)) {
					verdict = "**missed, below the floor**";
					t->below_floor++;
				}
			}
		}
		o << "| " << what << " | " << Cell(x, prec) << " | " << Cell(s, prec) << " | " << ratio
		  << " | "
		  << (tg.goal > 0 ? std::string(tg.higher_better ? ">= " : "<= ") + Num(tg.goal, 2) + "x"
				  : "")
		  << " | " << verdict << " |\n";
	}

	bool IsNvme() const
	{
		for (auto &[k, v] : d_.values)
			if (k.test.starts_with("nvme-"))
				return true;
		return false;
	}

	// An NVMe row: xiw, siw and NVMe/TCP; xiw must beat siw (the floor)
	// and, where @vs_tcp, match NVMe/TCP.
	void NvmeRow(std::ostream &o, const std::string &what, const std::string &test, long size,
		     const std::string &metric, int prec, bool higher_better, bool vs_tcp,
		     Tally *t) const
	{
		double x = Med("xiw", test, size, metric), s = Med("siw", test, size, metric);
		double c = Med("tcp", test, size, metric);
		double rs = x / s, rc = x / c;
		auto ok = [&](double r) { return higher_better ? r >= 1.0 : r <= 1.0; };
		auto red = [](const std::string &r) {
			return "<span style=\"color:red\">**" + r + "**</span>";
		};
		std::string vs = std::isfinite(rs) ? Num(rs, 2) + "x" : "-";
		std::string vc = std::isfinite(rc) ? Num(rc, 2) + "x" : "-";
		std::string verdict;

		if (std::isfinite(rs) && (!vs_tcp || std::isfinite(rc))) {
			bool ms = ok(rs), mc = !vs_tcp || ok(rc);

			if (!ms)
				vs = red(vs);
			if (!mc)
				vc = red(vc);
			if (ms && mc) {
				verdict = "met";
				t->met++;
			} else {
				t->missed++;
				verdict = "missed";
				if (!ms) {
					verdict = "**missed, below the floor**";
					t->below_floor++;
				}
			}
		}
		o << "| " << what << " | " << Cell(x, prec) << " | " << Cell(s, prec) << " | "
		  << Cell(c, prec) << " | " << vs << " | " << vc << " | "
		  << (higher_better ? ">= siw" : "<= siw") << (vs_tcp ? ", >= TCP" : "") << " | "
		  << verdict << " |\n";
	}

	void NvmeSection(std::ostream &o, const std::string &name, Tally *t) const
	{
		bool local = name == "nvmedummy";

		o << "null_blk exported by nvmet "
		  << (local ? "and fio in the same guest" : "in guest a, fio in guest b")
		  << " (O_DIRECT, libaio):\n"
		  << "nvme-rdma on xiw, nvme-rdma on siw, nvme-tcp, in turns on the same "
		  << (local ? "netdev" : "NICs") << ".\n\n";
		o << "| fio | xiw | siw | NVMe/TCP | xiw/siw | xiw/TCP | target | |\n"
		  << "|---|---|---|---|---|---|---|---|\n";
		NvmeRow(o, "4 KiB random read, QD 1, p50 latency (us)", "nvme-randread-qd1", 4096,
			"lat_p50_us", 1, false, false, t);
		NvmeRow(o, "4 KiB random read, QD 1, p99 latency (us)", "nvme-randread-qd1", 4096,
			"lat_p99_us", 1, false, false, t);
		NvmeRow(o, "4 KiB random read, QD 1, IOPS", "nvme-randread-qd1", 4096, "iops", 0, true,
			true, t);
		NvmeRow(o, "4 KiB random read, QD 32, IOPS", "nvme-randread-qd32", 4096, "iops", 0, true,
			true, t);
		NvmeRow(o, "128 KiB sequential read, MB/s", "nvme-seqread", 131072, "MBps", 1, true,
			true, t);
		NvmeRow(o, "128 KiB sequential write, MB/s", "nvme-seqwrite", 131072, "MBps", 1, true,
			true, t);
		Failures(o);
	}

	void Failures(std::ostream &o) const
	{
		if (d_.failures.empty())
			return;
		o << "\n### Runs that failed\n\n";
		for (auto &f : d_.failures) {
			// cmtime's and the scale point's size is a connection count.
			bool conns = f.test == "cmtime" || f.test == "scale";

			o << "- " << f.driver << " " << f.test << " "
			  << (conns ? std::to_string(f.size) + " connections" : SizeName(f.size))
			  << " rep " << f.rep << ": " << f.reason << "\n";
		}
	}

	// The runs in which TCP retransmitted or probed a closed window, with
	// their own result: such a run is slow for TCP's reason (a minimum
	// retransmission timeout is 200 ms), which a median of few hides.
	void Losses(std::ostream &o) const
	{
		std::ostringstream rows;
		int n = 0;

		if (d_.tcp.empty())
			return;
		for (auto &[k, l] : d_.tcp) {
			if (!l.retrans_segs && !l.rtos && !l.win_probes)
				continue;
			n++;
			auto r = d_.runs.find(k);
			std::string result = "-";

			if (r != d_.runs.end()) {
				auto &m = r->second;

				if (m.contains("bw_MBps"))
					result = Num(m.at("bw_MBps"), 1) + " MB/s";
				else if (m.contains("lat_typ_us"))
					result = Num(m.at("lat_typ_us"), 2) + " us";
			}
			rows << "| " << k.test << ", " << SizeName(k.size) << " | " << k.driver << " | "
			     << k.rep << " | " << result << " | " << Num(l.retrans_segs, 0) << " | "
			     << Num(l.rtos, 0) << " | " << Num(l.win_probes, 0) << " |\n";
		}
		o << "\n### TCP under the perftest runs\n\n";
		if (!n) {
			o << "No segment retransmitted and no window probed in any of the " << d_.tcp.size()
			  << " runs (nstat in the\nbench namespaces over each run).\n";
			return;
		}
		o << "TCP retransmitted or probed a closed window in " << n << " of " << d_.tcp.size()
		  << " runs (nstat in the\nbench namespaces over each run):\n\n"
		  << "| test, size | driver | rep | result | segments retransmitted | timeouts | "
		     "window probes |\n|---|---|---|---|---|---|---|\n"
		  << rows.str();
	}

	// Every repetition of the 64 B latency points, fastest first: they fall
	// into modes for both drivers, and a median of few lands in whichever
	// mode most of them hit.
	void Spread(std::ostream &o) const
	{
		auto find = [&](const char *drv, const char *tool) -> const std::vector<double> * {
			auto it = d_.values.find({ drv, tool, "lat_typ_us", 64 });

			return it == d_.values.end() ? nullptr : &it->second;
		};
		auto cell = [](const std::vector<double> *v) {
			std::string c;

			if (!v)
				return std::string("-");
			auto sorted = *v;
			std::sort(sorted.begin(), sorted.end());
			for (double x : sorted)
				c += (c.empty() ? "" : " ") + Num(x, 1);
			return c;
		};
		std::string rows;
		bool several = false;

		for (const char *tool : { "ib_write_lat", "ib_read_lat", "ib_send_lat" }) {
			auto *x = find("xiw", tool), *s = find("siw", tool);

			if (!x && !s)
				continue;
			several |= (x && x->size() > 1) || (s && s->size() > 1);
			rows += "| " + std::string(tool) + " | " + cell(x) + " | " + cell(s) + " |\n";
		}
		if (several)
			o << "\nEvery repetition at 64 B, fastest first (microseconds):\n\n"
			  << "| test | xiw | siw |\n|---|---|---|\n"
			  << rows;
	}

	// The section of one topology; its targets counted in @t.
	void Section(std::ostream &o, const std::string &name, Tally *t) const
	{
		if (IsNvme())
			return NvmeSection(o, name, t);

		double tcp = Med("tcp", "iperf3", 0, "tcp_MBps");
		double tcpz = Med("tcp", "iperf3-Z", 0, "tcp_MBps");
		const char *head = "| xiw | siw | xiw/siw | target | |\n|---|---|---|---|---|---|\n";

		o << "### Bandwidth (perftest over RDMA CM, MB/s)\n\n| test, size " << head;
		for (const char *tool : { "ib_write_bw", "ib_read_bw", "ib_send_bw" })
			for (long s : Sizes(tool, "bw_MBps"))
				Row(o, std::string(tool) + ", " + SizeName(s), Med("xiw", tool, s, "bw_MBps"),
				    Med("siw", tool, s, "bw_MBps"), 1,
				    s == 65536 || s == 1048576 ? kBandwidth : kNone, t);

		o << "\n### Message rate at 64 B (Mpps)\n\n| test " << head;
		for (const char *tool : { "ib_write_bw", "ib_read_bw", "ib_send_bw" })
			if (std::isfinite(Med("xiw", tool, 64, "mpps")) ||
			    std::isfinite(Med("siw", tool, 64, "mpps")))
				Row(o, tool, Med("xiw", tool, 64, "mpps"), Med("siw", tool, 64, "mpps"), 4,
				    kRate, t);

		o << "\n### Latency (typical, microseconds)\n\n| test, size " << head;
		for (const char *tool : { "ib_write_lat", "ib_read_lat", "ib_send_lat" })
			for (long s : Sizes(tool, "lat_typ_us"))
				Row(o, std::string(tool) + ", " + SizeName(s),
				    Med("xiw", tool, s, "lat_typ_us"), Med("siw", tool, s, "lat_typ_us"), 2,
				    s == 64 ? kLatency : kNone, t);

		Spread(o);

		o << "\n### Connection setup (cmtime, connections per second)\n\n| " << head;
		for (long s : Sizes("cmtime", "conn_per_s"))
			Row(o, std::to_string(s) + " connections", Med("xiw", "cmtime", s, "conn_per_s"),
			    Med("siw", "cmtime", s, "conn_per_s"), 1, kConnect, t);

		o << "\n### CPU time per GB moved (seconds)\n\n"
		  << "Busy time of every CPU of the guest" << (name == "wire" ? "s" : "")
		  << " (/proc/stat) over 64 KiB transfers, both\nends of xiw-perf sleeping on "
		  << "completion events (-e) instead of polling, over the\nbytes moved; iperf3 over the "
		  << "same path: " << Cell(CpuMed("tcp", "iperf3", 0), 2) << " plain, "
		  << Cell(CpuMed("tcp", "iperf3-Z", 0), 2) << " with -Z.\n\n| test " << head;
		for (const char *tool : { "xiw-perf-write", "xiw-perf-read", "xiw-perf-send" })
			if (std::isfinite(CpuMed("xiw", tool, 65536)) ||
			    std::isfinite(CpuMed("siw", tool, 65536)))
				Row(o, tool, CpuMed("xiw", tool, 65536), CpuMed("siw", tool, 65536), 2, kCpu, t);

		if (!Sizes("scale", "conn_per_s").empty()) {
			o << "\n### Scale (xiw-scale: connections open at once)\n\n"
			  << "Both ends in the VM: kernel memory per QP is the Slab and VmallocUsed\n"
			  << "growth while all are up, over 2N QPs.\n\n| connections, measure " << head;
			for (long s : Sizes("scale", "conn_per_s")) {
				std::string n = std::to_string(s);
				Row(o, n + ", connections/s", Med("xiw", "scale", s, "conn_per_s"),
				    Med("siw", "scale", s, "conn_per_s"), 1, kNone, t);
				Row(o, n + ", slab KiB per QP", Med("xiw", "scale", s, "slab_KiB_per_qp"),
				    Med("siw", "scale", s, "slab_KiB_per_qp"), 1, kNone, t);
				Row(o, n + ", vmalloc KiB per QP", Med("xiw", "scale", s, "vmalloc_KiB_per_qp"),
				    Med("siw", "scale", s, "vmalloc_KiB_per_qp"), 1, kNone, t);
			}
		}

		o << "\n### Against raw TCP on the same path\n\n"
		  << "iperf3: " << Cell(tcp, 1) << " MB/s plain, " << Cell(tcpz, 1)
		  << " MB/s with -Z (zero-copy send).\n\n"
		  << "| test, size | xiw MB/s | iperf3 -Z MB/s | xiw/TCP -Z | target | | xiw/TCP | "
		     "siw/TCP |\n|---|---|---|---|---|---|---|---|\n";
		for (const char *tool : { "ib_write_bw", "ib_read_bw", "ib_send_bw" }) {
			for (long s : Sizes(tool, "bw_MBps")) {
				if (s < 65536)
					continue;
				double x = Med("xiw", tool, s, "bw_MBps"), y = Med("siw", tool, s, "bw_MBps");
				std::ostringstream row;

				// Write and Send at 64 KiB against TCP's zero-copy send.
				Row(row, std::string(tool) + ", " + SizeName(s), x, tcpz, 1,
				    s == 65536 && std::string(tool) != "ib_read_bw" ? kVsTcp : kNone, t);
				std::string r = row.str();
				r.pop_back();
				auto ratio = [](double v) { return std::isfinite(v) ? Num(v, 2) + "x" : "-"; };

				o << r << " " << ratio(x / tcp) << " | " << ratio(y / tcp) << " |\n";
			}
		}

		Losses(o);
		Failures(o);
	}

	// A gnuplot data file: a row per message size of the @tools'
	// @metric, xiw's three columns then siw's.  Returns the rows.
	size_t Dat(const std::string &path, const char *const (&tools)[3],
		   const std::string &metric) const
	{
		std::ofstream f(path);
		std::set<long> sizes;

		for (const char *t : tools)
			sizes.merge(Sizes(t, metric));
		f << "# size";
		for (const char *d : { "xiw", "siw" })
			for (const char *t : tools)
				f << " " << d << "_" << t;
		f << "\n";
		for (long s : sizes) {
			f << s;
			for (const char *d : { "xiw", "siw" })
				for (const char *t : tools)
					f << " " << Num(Med(d, t, s, metric), 2);
			f << "\n";
		}
		return sizes.size();
	}

	// gnuplot data for @base (-bw.dat, -lat.dat) and the script lines
	// that draw them.
	void Plots(const std::string &base, const std::string &title, std::ostream &gp) const
	{
		static const char *const bwt[] = { "ib_write_bw", "ib_read_bw", "ib_send_bw" };
		static const char *const latt[] = { "ib_write_lat", "ib_read_lat", "ib_send_lat" };
		double tcp = Med("tcp", "iperf3", 0, "tcp_MBps");
		double tcpz = Med("tcp", "iperf3-Z", 0, "tcp_MBps");
		// One plot of the six curves of a data file, xiw solid, siw
		// dashed; gnuplot fails a plot without a point, so a run of some
		// points only (bench-focus) draws what it has.  False when empty.
		auto plot = [&](const char *kind, const char *const (&tools)[3],
				const std::string &metric, const char *ylabel) {
			static const char *const names[] = { "write", "read", "send" };
			std::string b = base + "-" + kind;

			if (!Dat(b + ".dat", tools, metric))
				return false;
			gp << "set output " << gnuplot_quote(b + ".png") << "\nset ylabel '" << ylabel
			   << "'\nset title "
			   << gnuplot_quote(std::string("perftest ") +
					    (metric == "bw_MBps" ? "bandwidth, " : "latency, ") + title)
			   << "\nplot " << gnuplot_quote(b + ".dat");
			for (int i = 0; i < 6; i++)
				gp << (i ? ", ''" : "") << " using 1:" << i + 2 << " with linespoints"
				   << (i >= 3 ? " dt 2" : "") << " title '" << (i < 3 ? "xiw " : "siw ")
				   << names[i % 3] << "'";
			return true;
		};

		gp << "set xlabel 'message size (bytes)'\nset key left top\n";
		if (plot("bw", bwt, "bw_MBps", "MB/s")) {
			if (std::isfinite(tcp))
				gp << ", " << Num(tcp, 1) << " with lines lc 'black' title 'TCP (iperf3)'";
			if (std::isfinite(tcpz))
				gp << ", " << Num(tcpz, 1)
				   << " with lines lc 'black' dt 3 title 'TCP (iperf3 -Z)'";
			gp << "\n";
		}
		if (plot("lat", latt, "lat_typ_us", "microseconds (typical)"))
			gp << "\n";
	}

private:
	const Data &d_;
};

// The suffix of a topology's files: "-NAME", nothing for an unnamed one.
std::string Suffix(const std::string &name)
{
	return name.empty() ? "" : "-" + name;
}

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
			// A tool's own garbage (perftest's "inf" under TCG) is a
			// failed run, listed as such; the rest still makes a report.
			d->failures.push_back({ f[0], f[1], f[4] + " was '" + f[5] + "', not a number",
						long(*size), int(*rep) });
			continue;
		}
		RunKey run = { f[0], f[1], long(*size), int(*rep) };

		if (f[4].starts_with("tcp_") && f[4] != "tcp_MBps") {
			TcpLoss &l = d->tcp[run];

			if (f[4] == "tcp_retrans_segs")
				l.retrans_segs += *v;
			else if (f[4] == "tcp_rtos")
				l.rtos += *v;
			else if (f[4] == "tcp_win_probes")
				l.win_probes += *v;
			else {
				*why = path + ":" + std::to_string(lineno) + ": unknown metric " + f[4];
				return false;
			}
			continue;
		}
		if (f[4] == "cpu_s" || f[4] == "bytes") {
			Work &w = d->work[run];

			// Each guest of the wire has its own CPU time.
			if (f[4] == "cpu_s")
				w.cpu_s += *v;
			else
				w.bytes = *v;
			continue;
		}
		d->values[{ f[0], f[1], f[4], long(*size) }].push_back(*v);
		d->runs[run][f[4]] = *v;
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

std::vector<double> cpu_per_gb(const Data &d, const std::string &drv, const std::string &test,
			       long size)
{
	std::vector<double> v;

	for (auto &[k, w] : d.work)
		if (k.driver == drv && k.test == test && k.size == size && w.bytes > 0 &&
		    w.cpu_s > 0)
			v.push_back(w.cpu_s / (w.bytes / 1e9));
	return v;
}

std::string json(const std::vector<Topology> &run, const std::string &kernel,
		 const std::string &date)
{
	nlohmann::ordered_json j, topos = nlohmann::ordered_json::array();

	for (auto &t : run)
		topos.push_back(Report(t.data).Json(t.name));
	j["date"] = date;
	j["kernel"] = kernel;
	j["topologies"] = std::move(topos);
	// Bytes that are not UTF-8 (a tool's raw output in a reason) become
	// U+FFFD instead of making dump() throw.
	return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string markdown(const std::vector<Topology> &run, const std::string &kernel,
		     const std::string &date, const std::string &proto)
{
	std::ostringstream o, body;
	std::vector<Tally> tally(run.size());

	for (size_t i = 0; i < run.size(); i++) {
		body << "\n## " << Describe(run[i].name) << "\n\n";
		Report(run[i].data).Section(body, run[i].name, &tally[i]);
	}
	o << "# xiw benchmark, " << date << ", kernel " << kernel << "\n\n"
	  << "qemu TCG guests with 2 vCPUs, xiw and siw devices on the same netdevs in turn\n"
	  << "and raw TCP after them, in one run per topology; medians of every repetition.\n"
	  << "Ratios are xiw over siw (and xiw over raw TCP) from the same run.  A missed\n"
	  << "target shows its ratio in red; below the floor means worse than siw.\n\n"
	  << "| topology | targets met | missed | below the floor |\n|---|---|---|---|\n";
	for (size_t i = 0; i < run.size(); i++)
		o << "| " << (run[i].name.empty() ? "-" : run[i].name) << " | " << tally[i].met << " | "
		  << tally[i].missed << " | " << tally[i].below_floor << " |\n";
	o << body.str();
	if (!proto.empty())
		o << "\n## Protocol core (userspace, this host's CPU)\n\n```\n" << proto << "```\n";
	return o.str();
}

std::string plots(const std::vector<Topology> &run, const std::string &prefix)
{
	std::ostringstream gp;

	gp << "set terminal pngcairo size 1000,600\nset datafile missing 'null'\n"
	   << "set logscale x 2\n";
	for (auto &t : run) {
		// The title: the description up to its first colon.
		std::string d = Describe(t.name);
		Report r(t.data);

		if (!r.IsNvme())
			r.Plots(prefix + Suffix(t.name), d.substr(0, d.find(':')), gp);
	}
	return gp.str();
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
