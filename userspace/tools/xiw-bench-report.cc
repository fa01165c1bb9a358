// SPDX-License-Identifier: GPL-2.0
//
// xiw-bench-report: turn the measurements of one `make bench` run into the
// report: <prefix>.json (every value and its median), <prefix>.md (the
// ratio tables xiw/siw and xiw/TCP with the targets of the performance
// issue marked met or missed), and <prefix>-bw.png / <prefix>-lat.png
// drawn by gnuplot when it is installed (xiw_bench_report.h).
//
// usage: xiw-bench-report --in FILE --out PREFIX --kernel NAME
//                         [--proto FILE] [--date DATE]
#include "xiw_bench_report.h"

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

} // namespace

int main(int argc, char **argv)
{
	using namespace xiw::bench;
	std::string in, out, kernel = "unknown", proto, date = "unknown", why;

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
	return d.failures.empty() ? 0 : 3;
}
