// SPDX-License-Identifier: GPL-2.0
//
// xiw-bench-report: turn the measurements of one `make bench` run into the
// report: <prefix>.json (every value and its median), <prefix>.md (the
// ratio tables xiw/siw and xiw/TCP with the targets of the performance
// issue marked met or missed), and <prefix>-bw.png / <prefix>-lat.png
// drawn by gnuplot when it is installed (xiw_bench_report.h).
//
// usage: xiw-bench-report --in FILE --out PREFIX [--kernel NAME]
//                         [--proto FILE] [--date DATE] [--compare A,B]
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
	"usage: xiw-bench-report --in FILE --out PREFIX [--kernel NAME] [--proto FILE]\n"
	"                        [--date DATE] [--compare A,B]\n",
	"NAME\n"
	"    xiw-bench-report - the report of one make bench run\n"
	"\n"
	"SYNOPSIS\n"
	"    xiw-bench-report --in FILE --out PREFIX [--kernel NAME] [--proto FILE]\n"
	"                     [--date DATE] [--compare A,B]\n"
	"\n"
	"DESCRIPTION\n"
	"    Reads the measurements of tests/vm/bench (tab-separated lines:\n"
	"    driver, test, size, repetition, metric, value; metric \"fail\" with\n"
	"    a reason as its value) and writes PREFIX.json (every value and its\n"
	"    median), PREFIX.md (the ratio tables xiw/siw and xiw/TCP, each\n"
	"    target marked met or missed, the failed runs) and, when gnuplot is\n"
	"    installed, PREFIX-bw.png and PREFIX-lat.png (from PREFIX.gp and its\n"
	"    .dat files).  The markdown goes to stdout as well.\n"
	"\n"
	"OPTIONS\n"
	"    --in FILE      the measurements\n"
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
	std::string in, out, kernel = "unknown", proto, date = "unknown", why, cmp;

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

		if (a == "--in")
			in = v;
		else if (a == "--out")
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
	if (in.empty() || out.empty())
		xiw::cli::usage_error(kUsage, "--in and --out are required");
	size_t comma = cmp.find(',');
	if (!cmp.empty() && (comma == 0 || comma == std::string::npos || comma + 1 == cmp.size()))
		xiw::cli::usage_error(kUsage, "--compare wants two driver names, A,B");

	Data d;
	if (!parse(in, &d, &why)) {
		std::cerr << "xiw-bench-report: " << why << "\n";
		return 1;
	}
	if (d.values.empty()) {
		std::cerr << "xiw-bench-report: no measurements in " << in << "\n";
		return 1;
	}

	std::ofstream(out + ".json") << json(d, kernel, date);
	std::ofstream(out + ".md") << markdown(d, kernel, date, proto);
	std::ofstream(out + ".gp") << plots(d, out);
	why.clear();
	if (run_gnuplot(out + ".gp", &why) < 0)
		std::cerr << "xiw-bench-report: " << why << ", no PNG plots\n";
	else if (!why.empty())
		std::cerr << "xiw-bench-report: " << why << " (" << out << ".gp)\n";
	std::cout << Slurp(out + ".md");
	if (!cmp.empty()) {
		std::ofstream(out + "-ab.md") << compare(d, cmp.substr(0, comma), cmp.substr(comma + 1));
		std::cout << "\n" << Slurp(out + "-ab.md");
	}
	return d.failures.empty() ? 0 : 3;
}
