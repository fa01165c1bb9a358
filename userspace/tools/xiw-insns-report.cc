// SPDX-License-Identifier: GPL-2.0
//
// xiw-insns-report: kernel instructions per round trip from the counts
// xiw-insns-plugin wrote around two runs of one point, a short and a long
// one, each resolved against the kallsyms of the boot it ran in.
//
// usage: xiw-insns-report --rounds N [--top N] LABEL=KSYMS:DUMP:KSYMS:DUMP...
//        xiw-insns-report --path [--top N] LABEL=KSYMS:START:GATE:END:TRACE,...
//
// With --path, the traces of xiw-insns-plugin's trace mode: the kernel
// instructions a vCPU runs from one symbol (the driver's post_send) to
// another (its first copy into the peer's memory), the critical path of
// a ping-pong.
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
	"usage: xiw-insns-report --rounds N [--top N] [--blocks SYM] LABEL=KSYMS:DUMP:KSYMS:DUMP...\n"
	"       xiw-insns-report --path [--top N] [--blocks SYM] LABEL=KSYMS:START:GATE:END:TRACE,...\n",
	"NAME\n"
	"    xiw-insns-report - kernel instructions per round trip, per symbol\n"
	"\n"
	"SYNOPSIS\n"
	"    xiw-insns-report --rounds N [--top N] [--blocks SYM] LABEL=KSYMS:DUMP:KSYMS:DUMP...\n"
	"    xiw-insns-report --path [--top N] [--blocks SYM] LABEL=KSYMS:START:GATE:END:TRACE,...\n"
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
	"    With --path, each LABEL's files are the per-vCPU traces of one\n"
	"    run (xiw-insns-plugin trace=1) and the symbols of its boot.  In\n"
	"    each trace a window opens where the vCPU enters START and closes\n"
	"    at its next entry of END, after one of GATE if GATE is not empty;\n"
	"    a return to user space first discards it.  Prints per LABEL the\n"
	"    windows, the median and mean of their instructions and blocks\n"
	"    and each module's share, then the table of symbols as above, in\n"
	"    instructions per window.\n"
	"\n"
	"    --blocks SYM (repeatable) adds a table per SYM (a symbol's name,\n"
	"    without its [module]) of its translation blocks by their offset\n"
	"    in it: the block's instructions, then per LABEL its executions\n"
	"    and instructions per round trip (or window).  The offsets are\n"
	"    the same in every boot, where the symbol's address is not; with\n"
	"    the module's objdump or addr2line they name the code.\n"
	"\n"
	"OPTIONS\n"
	"    --rounds N   round trips the long runs have more (1..10^9)\n"
	"    --path       the files are traces (above)\n"
	"    --top N      symbols in the table (0..100000)\n"
	"    --blocks SYM the blocks of symbol SYM (above)\n"
	"\n"
	"EXIT STATUS\n"
	"    0 printed; 1 a file could not be read; 2 usage error.\n",
};

struct Symbols {
	std::vector<std::pair<unsigned long long, std::string>> by_addr;

	// The symbol @va is in: the last one at or below it; NULL if none.
	const std::pair<unsigned long long, std::string> *entry(unsigned long long va) const
	{
		auto it = std::upper_bound(by_addr.begin(), by_addr.end(), va,
					   [](unsigned long long v, const auto &e) { return v < e.first; });

		return it == by_addr.begin() ? nullptr : &*std::prev(it);
	}

	const std::string &at(unsigned long long va) const
	{
		static const std::string none = "?";
		const auto *e = entry(va);

		return e ? e->second : none;
	}
};

// Is @sym ("name" or "name [module]") the symbol named @name?
bool NameIs(const std::string &sym, const std::string &name)
{
	return sym == name || (sym.starts_with(name) && sym[name.size()] == ' ');
}

// --blocks: the symbols asked for, and per symbol and block offset the
// block's instructions and its executions (summed, signed as the counts).
struct Blocks {
	std::vector<std::string> names;
	struct Block {
		unsigned long long size = 0;
		double execs = 0;
	};
	std::map<std::string, std::map<unsigned long long, Block>> by_sym;

	// The name without [module] of a symbol entry, if it is asked for.
	const std::string *wanted(const std::string &sym) const
	{
		for (const auto &n : names)
			if (NameIs(sym, n))
				return &n;
		return nullptr;
	}

	void add(const Symbols &syms, unsigned long long va, unsigned long long n, double execs)
	{
		const auto *e = names.empty() ? nullptr : syms.entry(va);
		const std::string *nm = e ? wanted(e->second) : nullptr;

		if (!nm)
			return;

		auto &b = by_sym[*nm][va - e->first];

		b.size = n;
		b.execs += execs;
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
		std::map<std::string, double> *out, double sign, Blocks *blocks)
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
		blocks->add(syms, *a, *ni, sign * double(*ei));
	}
	return in.eof();
}

// The address of the symbol named @name (without its [module]), 0 if none.
unsigned long long AddressOf(const Symbols &syms, const std::string &name)
{
	for (const auto &[va, sym] : syms.by_addr)
		if (NameIs(sym, name))
			return va;
	return 0;
}

struct PathStats {
	std::vector<double> insns, blocks;	// per window
	std::map<std::string, double> per_sym;	// summed over the windows
};

// The windows of one trace (see the usage), added to @st.
bool ReadPath(const std::string &path, const Symbols &syms, unsigned long long start,
	      unsigned long long gate, unsigned long long end, PathStats *st, Blocks *bl)
{
	constexpr unsigned long long kMask = (1ULL << 48) - 1, kHigh = ~kMask;
	std::ifstream in(path, std::ios::binary);
	std::map<unsigned long long, const std::string *> names;
	std::map<std::string, double> win;
	std::vector<std::pair<unsigned long long, unsigned long long>> win_blocks;
	bool open = false, gated = false;
	double insns = 0, blocks = 0;
	unsigned long long w;

	if (!in)
		return false;
	while (in.read(reinterpret_cast<char *>(&w), sizeof(w))) {
		unsigned long long va = w & kMask, n = w >> 48;

		if (!va) {
			open = false;	// back in user space
			continue;
		}
		va |= kHigh;
		if (va == start) {
			open = true;
			gated = !gate;
			insns = blocks = 0;
			win.clear();
			win_blocks.clear();
		}
		if (!open)
			continue;
		if (va == gate)
			gated = true;
		if (gated && va == end) {
			st->insns.push_back(insns);
			st->blocks.push_back(blocks);
			for (const auto &[sym, v] : win)
				st->per_sym[sym] += v;
			for (const auto &[bva, bn] : win_blocks)
				bl->add(syms, bva, bn, 1);
			open = false;
			continue;
		}

		auto &nm = names[va];

		if (!nm)
			nm = &syms.at(va);
		win[*nm] += double(n);
		if (!bl->names.empty())
			win_blocks.emplace_back(va, n);
		insns += double(n);
		blocks++;
	}
	return in.eof();
}

double Median(std::vector<double> v)
{
	if (v.empty())
		return 0;
	std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
	return v[v.size() / 2];
}

std::string Module(const std::string &sym)
{
	auto sp = sym.find(' ');

	return sp == std::string::npos ? "kernel" : sym.substr(sp + 1);
}

struct Point {
	std::string label;
	std::map<std::string, double> per_rt;	// symbol -> instructions per round trip
	double per = 1;				// what --blocks' sums are divided by
	Blocks blocks;
};

// --blocks' tables: per symbol asked for, its blocks in address order.
void PrintBlocks(const std::vector<Point> &points, const std::vector<std::string> &names)
{
	for (const auto &name : names) {
		std::map<unsigned long long, unsigned long long> offs;

		for (const auto &p : points) {
			auto it = p.blocks.by_sym.find(name);

			if (it != p.blocks.by_sym.end())
				for (const auto &[off, b] : it->second)
					offs[off] = b.size;
		}
		std::printf("\n%s by block: offset, instructions, then executions and instructions per LABEL\n",
			    name.c_str());
		if (offs.empty()) {
			std::printf("  (not run)\n");
			continue;
		}
		std::printf("%8s %6s", "offset", "insns");
		for (const auto &p : points)
			std::printf("  %*s", int(std::max<size_t>(p.label.size(), 15)), p.label.c_str());
		std::printf("\n");
		for (const auto &[off, size] : offs) {
			std::printf("  0x%04llx %6llu", off, size);
			for (const auto &p : points) {
				const auto sit = p.blocks.by_sym.find(name);
				double ex = 0;

				if (sit != p.blocks.by_sym.end()) {
					auto bit = sit->second.find(off);

					if (bit != sit->second.end())
						ex = bit->second.execs / p.per;
				}
				std::printf("  %*.2f %6.0f", int(std::max<size_t>(p.label.size(), 15)) - 7,
					    ex, ex * double(size));
			}
			std::printf("\n");
		}
	}
}

// One --path LABEL: its windows' summary printed, its symbols in @point.
// Return: 0, or 1 if a file could not be read or has no window.
int PathPoint(const std::string &spec, Point *point, Blocks *bl)
{
	auto eq = spec.find('=');
	std::vector<std::string> f;
	std::string rest = eq == std::string::npos ? "" : spec.substr(eq + 1);

	for (size_t p = 0, c; p <= rest.size() && f.size() < 4; p = c + 1) {
		c = rest.find(':', p);
		if (c == std::string::npos || f.size() == 3)
			c = rest.size();
		f.push_back(rest.substr(p, c - p));
	}
	if (eq == std::string::npos || eq == 0 || f.size() != 4 || f[3].empty())
		xiw::cli::usage_error(kUsage, "'" + spec + "' is not LABEL=KSYMS:START:GATE:END:TRACE,...");

	// f[3] is END:TRACE,TRACE...
	auto c = f[3].find(':');
	std::string end_sym = f[3].substr(0, c);
	std::string traces = c == std::string::npos ? "" : f[3].substr(c + 1);
	Symbols syms;

	if (!ReadSymbols(f[0], &syms)) {
		std::cerr << "xiw-insns-report: cannot read " << f[0] << "\n";
		return 1;
	}

	unsigned long long start = AddressOf(syms, f[1]), end = AddressOf(syms, end_sym);
	unsigned long long gate = f[2].empty() ? 0 : AddressOf(syms, f[2]);

	if (!start || !end || (!f[2].empty() && !gate)) {
		std::cerr << "xiw-insns-report: " << f[0] << " has no";
		for (const auto &[va, nm] : { std::pair{ start, f[1] }, std::pair{ gate, f[2] },
					      std::pair{ end, end_sym } })
			if (!va && !nm.empty())
				std::cerr << " " << nm;
		std::cerr << "\n";
		return 1;
	}

	PathStats st;

	for (size_t p = 0, q; p < traces.size(); p = q + 1) {
		q = traces.find(',', p);
		if (q == std::string::npos)
			q = traces.size();

		std::string t = traces.substr(p, q - p);

		if (!ReadPath(t, syms, start, gate, end, &st, bl)) {
			std::cerr << "xiw-insns-report: cannot read " << t << "\n";
			return 1;
		}
	}
	if (st.insns.empty()) {
		std::cerr << "xiw-insns-report: " << spec.substr(0, eq) << ": no window from "
			  << f[1] << " to " << end_sym << "\n";
		return 1;
	}

	double nwin = double(st.insns.size()), mean = 0;
	std::map<std::string, double> mods;

	for (double v : st.insns)
		mean += v / nwin;
	for (auto &[sym, v] : st.per_sym) {
		v /= nwin;
		mods[Module(sym)] += v;
	}
	std::printf("%s: %zu windows, %.0f instructions (mean %.0f) in %.0f blocks from %s to %s",
		    spec.substr(0, eq).c_str(), st.insns.size(), Median(st.insns), mean,
		    Median(st.blocks), f[1].c_str(), end_sym.c_str());
	for (const auto &[m, v] : mods)
		if (std::fabs(v) >= mean / 100)
			std::printf(", %s %.0f", m.c_str(), v);
	std::printf("\n");
	point->label = spec.substr(0, eq);
	point->per_rt = std::move(st.per_sym);
	point->per = nwin;
	return 0;
}

}  // namespace

int main(int argc, char **argv)
{
	uint64_t rounds = 0, top = 40;
	std::vector<std::string> specs, block_syms;
	bool path = false;

	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];

		if (a == "-h" || a == "--help")
			xiw::cli::help(kUsage);
		if (a == "--path") {
			path = true;
			continue;
		}
		if (a == "--blocks") {
			if (i + 1 >= argc || !*argv[i + 1])
				xiw::cli::usage_error(kUsage, a + " needs a symbol");
			block_syms.push_back(argv[++i]);
			continue;
		}
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
	if (!rounds && !path)
		xiw::cli::usage_error(kUsage, "--rounds or --path is required");
	if (rounds && path)
		xiw::cli::usage_error(kUsage, "--rounds and --path exclude each other");
	if (specs.empty())
		xiw::cli::usage_error(kUsage, path ? "no LABEL=KSYMS:START:GATE:END:TRACE,..." :
						     "no LABEL=KSYMS:DUMP:KSYMS:DUMP");

	std::vector<Point> points;

	for (const auto &spec : specs) {
		if (!path)
			break;
		Point &pt = points.emplace_back();

		pt.blocks.names = block_syms;
		if (PathPoint(spec, &pt, &pt.blocks))
			return 1;
	}

	for (const auto &spec : specs) {
		if (path)
			break;
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
		Blocks bl;

		bl.names = block_syms;
		if (!ReadSymbols(f[0], &s_short) || !ReadSymbols(f[2], &s_long)) {
			std::cerr << "xiw-insns-report: cannot read " << f[0] << " or " << f[2] << "\n";
			return 1;
		}
		if (!ReadCounts(f[1], s_short, &d, -1.0, &bl) ||
		    !ReadCounts(f[3], s_long, &d, 1.0, &bl)) {
			std::cerr << "xiw-insns-report: cannot read " << f[1] << " or " << f[3] << "\n";
			return 1;
		}
		for (auto &[sym, v] : d)
			v /= double(rounds);
		points.push_back({ spec.substr(0, eq), std::move(d), double(rounds), std::move(bl) });
	}

	for (const auto &p : points) {
		std::map<std::string, double> mods;
		double total = 0;

		if (path)
			break;	// printed above

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
	if (order.empty()) {
		PrintBlocks(points, block_syms);
		return 0;
	}
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
	PrintBlocks(points, block_syms);
	return 0;
}
