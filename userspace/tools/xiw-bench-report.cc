// SPDX-License-Identifier: GPL-2.0
//
// xiw-bench-report: turn the measurements of one `make bench` run into the
// report: <prefix>.json (every value and its median), <prefix>.md (the
// ratio tables xiw/siw and xiw/TCP with the targets of the performance
// issue marked met or missed, a section per topology), and
// <prefix>-<topology>-bw.png / -lat.png drawn by gnuplot when it is
// installed (xiw_bench_report.h).
//
// usage: xiw-bench-report --in [TOPOLOGY=]FILE... --out PREFIX
//                         [--kernel NAME] [--proto FILE] [--date DATE]
//                         [--compare A,B]
#include "xiw_bench_report.h"
#include "xiw_cli.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace {

std::string Slurp(const std::string &path)
{
	std::ifstream in(path);
	std::stringstream ss;

	ss << in.rdbuf();
	return ss.str();
}

const xiw::cli::Usage kUsage = {
	"xiw-bench-report",
	"usage: xiw-bench-report --in [TOPOLOGY=]FILE... --out PREFIX [--kernel NAME]\n"
	"                        [--proto FILE] [--date DATE] [--compare A,B]\n",
	"NAME\n"
	"    xiw-bench-report - the report of one make bench run\n"
	"\n"
	"SYNOPSIS\n"
	"    xiw-bench-report --in [TOPOLOGY=]FILE... --out PREFIX [--kernel NAME]\n"
	"                     [--proto FILE] [--date DATE] [--compare A,B]\n"
	"\n"
	"DESCRIPTION\n"
	"    Reads the measurements of tests/vm/bench (tab-separated lines:\n"
	"    driver, test, size, repetition, metric, value; metric \"fail\" with\n"
	"    a reason as its value), one file per topology, and writes\n"
	"    PREFIX.json (every value and its median), PREFIX.md (a summary of\n"
	"    the targets, then per topology the ratio tables xiw/siw and\n"
	"    xiw/TCP, each target marked met or missed, CPU time per GB, the\n"
	"    failed runs) and, when gnuplot is installed, PREFIX-TOPOLOGY-bw.png\n"
	"    and PREFIX-TOPOLOGY-lat.png (from PREFIX.gp and its .dat files).\n"
	"    The markdown goes to stdout as well.\n"
	"\n"
	"OPTIONS\n"
	"    --in [TOPOLOGY=]FILE\n"
	"                   the measurements of one topology (veth, veth9000,\n"
	"                   dummy, wire; without a name, one unnamed section and\n"
	"                   PREFIX-bw.png); once per topology, in report order\n"
	"    --out PREFIX   where the report goes\n"
	"    --kernel NAME  the guest's kernel, for the title (default unknown)\n"
	"    --proto FILE   xiw-proto-bench's output, appended verbatim\n"
	"    --date DATE    for the title (default unknown)\n"
	"    --compare A,B  also PREFIX-ab.md: the medians of drivers A and B\n"
	"                   (two builds of xiw) for every point both measured,\n"
	"                   and B over A; printed after the report\n"
	"    -h, --help     this text\n"
	"\n"
	"EXIT STATUS\n"
	"    0 a report without failed runs, 3 a report with some, 1 unreadable\n"
	"    or malformed input, 2 bad usage\n",
};

} // namespace

int main(int argc, char **argv)
{
	using namespace xiw::bench;
	std::vector<Topology> run;
	std::string out, kernel = "unknown", proto, date = "unknown", why, cmp;

	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];

		if (a == "-h" || a == "--help")
			xiw::cli::help(kUsage);
		if (a != "--in" && a != "--out" && a != "--kernel" && a != "--proto" &&
		    a != "--date" && a != "--compare")
			xiw::cli::usage_error(kUsage, "unknown option '" + a + "'");
		if (i + 1 >= argc)
			xiw::cli::usage_error(kUsage, a + " needs a value");

		std::string v = argv[++i];

		if (a == "--in") {
			size_t eq = v.find('=');
			std::string name = eq == std::string::npos ? "" : v.substr(0, eq);

			for (auto &t : run)
				if (t.name == name)
					xiw::cli::usage_error(kUsage, "topology '" + name + "' given twice");
			run.push_back({ name, {} });
			if (!parse(eq == std::string::npos ? v : v.substr(eq + 1), &run.back().data, &why)) {
				std::cerr << "xiw-bench-report: " << why << "\n";
				return 1;
			}
		} else if (a == "--out")
			out = v;
		else if (a == "--kernel")
			kernel = v;
		else if (a == "--proto")
			proto = Slurp(v);
		else if (a == "--compare")
			cmp = v;
		else
			date = v;
	}
	if (run.empty() || out.empty())
		xiw::cli::usage_error(kUsage, "--in and --out are required");
	size_t comma = cmp.find(',');
	if (!cmp.empty() && (comma == 0 || comma == std::string::npos || comma + 1 == cmp.size()))
		xiw::cli::usage_error(kUsage, "--compare wants two driver names, A,B");

	bool failures = false;
	for (auto &t : run) {
		// Only failed runs still make a section that lists them.
		if (t.data.values.empty() && t.data.work.empty() && t.data.failures.empty()) {
			std::cerr << "xiw-bench-report: no measurements for topology '" << t.name << "'\n";
			return 1;
		}
		failures |= !t.data.failures.empty();
	}

	std::ofstream(out + ".json") << json(run, kernel, date);
	std::ofstream(out + ".md") << markdown(run, kernel, date, proto);
	std::ofstream(out + ".gp") << plots(run, out);
	why.clear();
	if (run_gnuplot(out + ".gp", &why) < 0)
		std::cerr << "xiw-bench-report: " << why << ", no PNG plots\n";
	else if (!why.empty())
		std::cerr << "xiw-bench-report: " << why << " (" << out << ".gp)\n";
	std::cout << Slurp(out + ".md");
	if (!cmp.empty()) {
		std::ofstream ab(out + "-ab.md");

		for (auto &t : run) {
			if (run.size() > 1)
				ab << "\n## " << t.name << "\n\n";
			ab << compare(t.data, cmp.substr(0, comma), cmp.substr(comma + 1));
		}
		ab.close();
		std::cout << "\n" << Slurp(out + "-ab.md");
	}
	return failures ? 3 : 0;
}
