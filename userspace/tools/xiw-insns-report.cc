// SPDX-License-Identifier: GPL-2.0
//
// xiw-insns-report: kernel instructions per round trip from the counts
// xiw-insns-plugin wrote around two runs of one point, a short and a long
// one, each resolved against the kallsyms of the boot it ran in.
//
// usage: xiw-insns-report --rounds N [--top N] LABEL=KSYMS:DUMP:KSYMS:DUMP...
#include "xiw_cli.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

const xiw::cli::Usage kUsage = {
	"xiw-insns-report",
	"usage: xiw-insns-report --rounds N [--top N] LABEL=KSYMS:DUMP:KSYMS:DUMP...\n",
	"NAME\n"
	"    xiw-insns-report - kernel instructions per round trip, per symbol\n"
	"\n"
	"SYNOPSIS\n"
	"    xiw-insns-report --rounds N [--top N] LABEL=KSYMS:DUMP:KSYMS:DUMP...\n"
	"\n"
	"DESCRIPTION\n"
	"    Each LABEL names one point of one driver (\"xiw ib_send_lat\"): the\n"
	"    kallsyms of the boot of its short run and that run's counts, then\n"
	"    the same for its long run, N round trips longer.  The counts are\n"
	"    the files xiw-insns-plugin writes (\"vaddr instructions\n"
	"    executions\" per translation block); each block goes to the\n"
	"    symbol it starts in, module symbols with their [module].  The\n"
	"    long run's counts less the short one's, divided by N, are the\n"
	"    instructions of one round trip without setup and teardown.\n"
	"    Prints per LABEL the total and each module's share, then the\n"
	"    --top (default 40) symbols with the largest count in any LABEL,\n"
	"    one column per LABEL.\n"
	"\n"
	"OPTIONS\n"
	"    --rounds N   round trips the long runs have more (1..10^9)\n"
	"    --top N      symbols in the table (0..100000)\n"
	"\n"
	"EXIT STATUS\n"
	"    0 printed; 1 a file could not be read; 2 usage error.\n",
};

struct Symbols {
	std::vector<std::pair<unsigned long long, std::string>> by_addr;

	// The symbol @va is in: the last one at or below it.
	const std::string &at(unsigned long long va) const
	{
		static const std::string none = "?";
		auto it = std::upper_bound(by_addr.begin(), by_addr.end(), va,
					   [](unsigned long long v, const auto &e) { return v < e.first; });

		return it == by_addr.begin() ? none : std::prev(it)->second;
	}
};

bool ReadSymbols(const std::string &path, Symbols *s)
{
	std::ifstream in(path);
	std::string line;

	if (!in)
		return false;
	while (std::getline(in, line)) {
		std::istringstream ls(line);
		std::string addr, type, name, mod;

		if (!(ls >> addr >> type >> name) || type.size() != 1 ||
		    std::string("tTwW").find(type[0]) == std::string::npos)
			continue;
		ls >> mod;

		auto v = xiw::cli::parse_uint("0x" + addr, 1, UINT64_MAX);

		if (v)
			s->by_addr.emplace_back(*v, mod.empty() ? name : name + " " + mod);
	}
	std::sort(s->by_addr.begin(), s->by_addr.end());
	return true;
}

// Instructions per symbol of one dump.
bool ReadCounts(const std::string &path, const Symbols &syms,
		std::map<std::string, double> *out, double sign)
{
	std::ifstream in(path);
	std::string va, n, e;

	if (!in)
		return false;
	while (in >> va >> n >> e) {
		auto a = xiw::cli::parse_uint("0x" + va, 0, UINT64_MAX);
		auto ni = xiw::cli::parse_uint(n, 0, UINT64_MAX);
		auto ei = xiw::cli::parse_uint(e, 0, UINT64_MAX);

		if (!a || !ni || !ei)
			return false;
		(*out)[syms.at(*a)] += sign * double(*ni) * double(*ei);
	}
	return in.eof();
}

std::string Module(const std::string &sym)
{
	auto sp = sym.find(' ');

	return sp == std::string::npos ? "kernel" : sym.substr(sp + 1);
}

struct Point {
	std::string label;
	std::map<std::string, double> per_rt;	// symbol -> instructions per round trip
};

}  // namespace

int main(int argc, char **argv)
{
	uint64_t rounds = 0, top = 40;
	std::vector<std::string> specs;

	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];

		if (a == "-h" || a == "--help")
			xiw::cli::help(kUsage);
		if (a == "--rounds" || a == "--top") {
			if (i + 1 >= argc)
				xiw::cli::usage_error(kUsage, a + " needs a value");
			if (a == "--rounds")
				rounds = xiw::cli::uint_opt(kUsage, "--rounds", argv[++i], 1, 1000000000);
			else
				top = xiw::cli::uint_opt(kUsage, "--top", argv[++i], 0, 100000);
			continue;
		}
		if (a.starts_with("-"))
			xiw::cli::usage_error(kUsage, "unknown option '" + a + "'");
		specs.push_back(a);
	}
	if (!rounds)
		xiw::cli::usage_error(kUsage, "--rounds is required");
	if (specs.empty())
		xiw::cli::usage_error(kUsage, "no LABEL=KSYMS:DUMP:KSYMS:DUMP");

	std::vector<Point> points;

	for (const auto &spec : specs) {
		auto eq = spec.find('=');
		std::vector<std::string> f;
		std::string rest = eq == std::string::npos ? "" : spec.substr(eq + 1);

		for (size_t p = 0, c; p <= rest.size(); p = c + 1) {
			c = rest.find(':', p);
			if (c == std::string::npos)
				c = rest.size();
			f.push_back(rest.substr(p, c - p));
		}
		if (eq == std::string::npos || eq == 0 || f.size() != 4)
			xiw::cli::usage_error(kUsage, "'" + spec + "' is not LABEL=KSYMS:DUMP:KSYMS:DUMP");

		Symbols s_short, s_long;
		std::map<std::string, double> d;

		if (!ReadSymbols(f[0], &s_short) || !ReadSymbols(f[2], &s_long)) {
			std::cerr << "xiw-insns-report: cannot read " << f[0] << " or " << f[2] << "\n";
			return 1;
		}
		if (!ReadCounts(f[1], s_short, &d, -1.0) || !ReadCounts(f[3], s_long, &d, 1.0)) {
			std::cerr << "xiw-insns-report: cannot read " << f[1] << " or " << f[3] << "\n";
			return 1;
		}
		for (auto &[sym, v] : d)
			v /= double(rounds);
		points.push_back({ spec.substr(0, eq), std::move(d) });
	}

	for (const auto &p : points) {
		std::map<std::string, double> mods;
		double total = 0;

		for (const auto &[sym, v] : p.per_rt) {
			mods[Module(sym)] += v;
			total += v;
		}
		std::printf("%s: %.0f instructions per round trip", p.label.c_str(), total);
		for (const auto &[m, v] : mods)
			if (std::fabs(v) >= total / 100)
				std::printf(", %s %.0f", m.c_str(), v);
		std::printf("\n");
	}

	std::map<std::string, double> peak;

	for (const auto &p : points)
		for (const auto &[sym, v] : p.per_rt)
			peak[sym] = std::max(peak[sym], std::fabs(v));

	std::vector<std::pair<double, std::string>> order;

	for (const auto &[sym, v] : peak)
		order.emplace_back(-v, sym);
	std::sort(order.begin(), order.end());
	if (order.size() > top)
		order.resize(top);
	if (order.empty())
		return 0;
	// One column per LABEL, as wide as its label; the symbol last.
	std::printf("\n");
	for (const auto &p : points)
		std::printf("%*s ", int(std::max<size_t>(p.label.size(), 8)), p.label.c_str());
	std::printf(" symbol\n");
	for (const auto &[neg, sym] : order) {
		for (const auto &p : points) {
			auto it = p.per_rt.find(sym);

			std::printf("%*.0f ", int(std::max<size_t>(p.label.size(), 8)),
				    it == p.per_rt.end() ? 0.0 : it->second);
		}
		std::printf(" %s\n", sym.c_str());
	}
	return 0;
}
