// SPDX-License-Identifier: GPL-2.0
//
// xiw-peer: an iWARP peer in userspace, over an ordinary TCP socket, that
// does what no well-behaved peer does.
//
//   xiw-peer run --target PATH --addr ADDR [--port P] [--filter STR,...]
//                [--skip NAME,...] [--markers] [--soft-rnr MS] [--timeout S]
//                [--quiet]
//   xiw-peer list
//   xiw-peer decode [--crc|--no-crc] [--markers|--no-markers] [--hex] FILE
//   xiw-peer fuzz --target PATH --addr ADDR... [--seed N] [--frames N] ...
//   xiw-peer replay --target PATH --addr ADDR... FILE...
//
// run: starts PATH (xiw-target) listening on ADDR (an address of the RDMA
// device under test: xiw or siw), then plays every scenario (or those
// whose name contains STR) against it.  Each scenario opens its own
// connection: the peer is the MPA initiator, xiw-target accepts through
// librdmacm and libsiw, registers its memory regions and reports their
// STags, so the peer can aim Writes, Reads and Atomics at kernel-managed
// memory.  The peer then sends scripted RDMAP traffic, some of it broken
// on purpose, checks every octet and every TERMINATE that comes back, and
// asks xiw-target what the device did: completions, QP state, placed data.
//
// A scenario that breaks a receiver rule of RFC 5040, 5041, 5044, 6581 or
// 7306 passes only when the device answers with the TERMINATE triplet the
// RFC names (layer/type/code, the echoed DDP and RDMAP headers where
// present), its QP is in the error state, its posted receives are flushed
// and the TCP connection ends.  --markers adds the scenarios that need a
// device created with MPA markers allowed (xiw's mpa_markers=prefer);
// --soft-rnr MS the rnr.* scenarios, for an xiw device whose soft_rnr_ms
// is MS (at least 1000).
//
// Output is KTAP: one "ok"/"not ok" line per scenario, with the reason of
// a failure; exit 0 when all passed, 1 otherwise, 2 on usage errors.
//
// The scenarios and what they share are in xiw_peer_scenario.h, their
// table in xiw_peer_scenarios.cc, the scenarios themselves in
// xiw_peer_sc_*.cc, one file per layer; this file holds the command line
// and runs them.  decode: see xiw_peer_decode.h.  fuzz and replay: see
// xiw_peer_fuzz.h and xiw_peer_fuzz.cc.

#include "xiw_cli.h"
#include "xiw_peer_decode.h"
#include "xiw_peer_fuzz.h"
#include "xiw_peer_scenario.h"
#include "xiw_peer_target.h"
#include "xiw_peer_wire.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace xiw::peer {
namespace {

const xiw::cli::Usage kUsage = {
	"xiw-peer",
	"usage: xiw-peer run --target PATH --addr ADDR [--port P] [--filter STR,...]\n"
	"                    [--skip NAME,...] [--markers] [--p2p-read-rtr] [--soft-rnr MS]\n"
	"                    [--timeout S] [--quiet]\n"
	"       xiw-peer list\n"
	"       xiw-peer table SIW_KTAP XIW_KTAP KERNEL\n"
	"       xiw-peer decode [--crc|--no-crc] [--markers|--no-markers] [--hex] FILE\n"
	"       xiw-peer fuzz --target PATH --addr ADDR... [OPTION...]\n"
	"       xiw-peer replay --target PATH --addr ADDR... [OPTION...] FILE...\n",
	"NAME\n"
	"    xiw-peer - an iWARP peer over a plain TCP socket that does what no\n"
	"    well-behaved peer does, and a capture decoder\n"
	"\n"
	"SYNOPSIS\n"
	"    xiw-peer run --target PATH --addr ADDR [--port P] [--filter STR,...]\n"
	"                 [--skip NAME,...] [--markers] [--p2p-read-rtr]\n"
	"                 [--soft-rnr MS] [--timeout S] [--quiet]\n"
	"    xiw-peer list\n"
	"    xiw-peer table SIW_KTAP XIW_KTAP KERNEL\n"
	"    xiw-peer decode [--crc|--no-crc] [--markers|--no-markers] [--hex] FILE\n"
	"    xiw-peer fuzz --target PATH --addr ADDR... [OPTION...]\n"
	"    xiw-peer replay --target PATH --addr ADDR... [OPTION...] FILE...\n"
	"\n"
	"DESCRIPTION\n"
	"    run starts PATH (xiw-target) listening on ADDR, an address of the\n"
	"    RDMA device under test (xiw or siw), and plays every conformance\n"
	"    scenario against it, each on its own connection: MPA as the\n"
	"    initiator, then scripted RDMAP traffic, some of it broken on\n"
	"    purpose.  It checks every octet and every TERMINATE that comes\n"
	"    back and asks xiw-target what the device did.  A scenario that\n"
	"    breaks a receiver rule of RFC 5040, 5041, 5044, 6581 or 7306\n"
	"    passes only when the device answers with the TERMINATE the RFC\n"
	"    names, its QP is in the error state, its receives are flushed and\n"
	"    the TCP connection ends.  Output is KTAP.\n"
	"    list prints every scenario with the rule it checks.\n"
	"    table writes the RST table of the scenarios siw did not pass, from\n"
	"    the KTAP logs of a run against siw and one against xiw.\n"
	"    decode lists the MPA frames and DDP segments of a capture (pcap or\n"
	"    pcapng) or of one raw stream direction; xiw-peer decode --help.\n"
	"    fuzz sends seeded random FPDU streams to xiw-target's live QPs and\n"
	"    saves the connections that show a bug; replay runs them again;\n"
	"    xiw-peer fuzz --help.\n"
	"\n"
	"OPTIONS (run)\n"
	"    --target PATH      the xiw-target binary to start\n"
	"    --addr ADDR        the device's address (IPv4 or IPv6 literal)\n"
	"    --port P           xiw-target's port, 1..65535 (default 18700)\n"
	"    --filter STR,...   only scenarios whose name contains one of STR\n"
	"    --skip NAME,...    not these scenarios\n"
	"    --markers          add the scenarios that need a device created\n"
	"                       with MPA markers allowed (mpa_markers=prefer)\n"
	"    --p2p-read-rtr     add the scenarios of a device that initiates\n"
	"                       with P2P and a Read RTR\n"
	"    --soft-rnr MS      add the rnr.* scenarios, for a device whose\n"
	"                       soft_rnr_ms is MS, 1..10000 (they need 1000 or more)\n"
	"    --timeout S        seconds to wait for the device, here and in\n"
	"                       xiw-target (its -T), 0..3600, fractions allowed\n"
	"                       (default 10)\n"
	"    --quiet            no rule line under each result\n"
	"    -h, --help         this text\n"
	"\n"
	"EXIT STATUS\n"
	"    0 every scenario passed, 1 otherwise, 2 bad usage, 4 (skip)\n"
	"    xiw-target could not start\n",
};

// What a KTAP log of `run` says of each scenario: "" passed, the reason of
// a "not ok", or "not run: " and the reason of a SKIP.
std::map<std::string, std::string> ktap_results(const char *path)
{
	std::map<std::string, std::string> r;
	FILE *f = fopen(path, "r");
	if (!f)
		throw Failure(std::string(path) + ": " + strerror(errno));
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		std::string l(line);
		while (!l.empty() && (l.back() == '\n' || l.back() == '\r'))
			l.pop_back();
		bool bad = !l.rfind("not ok ", 0);
		if (!bad && l.rfind("ok ", 0))
			continue;
		std::istringstream is(l.substr(bad ? 7 : 3));
		std::string num, name;
		is >> num >> name;
		size_t hash = l.find(" # ");
		std::string why = hash == std::string::npos ? "" : l.substr(hash + 3);
		if (!bad && !why.rfind("SKIP ", 0))
			why = "not run: " + why.substr(5);
		else if (!bad)
			why.clear();
		r[name] = why;
	}
	fclose(f);
	return r;
}

// Text for a cell of an RST table, markup characters escaped.
std::string rst_text(const std::string &t)
{
	std::string r;
	for (char c : t) {
		if (c == '*' || c == '`' || c == '|' || c == '\\')
			r += '\\';
		r += c;
	}
	return r;
}

// Text for a cell of an RST table, shown literally.
std::string rst_literal(std::string t)
{
	std::replace(t.begin(), t.end(), '`', '\'');
	return t.empty() ? "" : "``" + t + "``";
}

// Documentation/siw-differences.rst from the KTAP logs of one
// conformance run against siw and one against xiw: every scenario siw
// did not pass, with the RFC rule it checks and what each device did.
int table_main(const char *siw_log, const char *xiw_log, const char *kernel)
{
	auto siw = ktap_results(siw_log);
	auto xiw = ktap_results(xiw_log);
	printf(".. SPDX-License-Identifier: GPL-2.0\n"
	       ".. Generated by `xiw-peer table` from a conformance run; do not edit.\n\n"
	       "==================================\n"
	       "Where siw answers differently\n"
	       "==================================\n\n"
	       "The scenarios of ``xiw-peer`` (``tests/selftests/xiw_conformance.sh``)\n"
	       "that siw does not pass, from one run of each against the same scenarios\n"
	       "on the same kernel (%s).  The siw case of ``xiw_conformance.sh``\n"
	       "(``make check-full``) writes this file as ``siw-differences.rst`` into\n"
	       "its VM log directory and says whether it still matches this copy.\n\n"
	       ".. list-table::\n"
	       "   :header-rows: 1\n"
	       "   :widths: 20 12 30 12 26\n\n"
	       "   * - Scenario\n"
	       "     - RFC\n"
	       "     - Rule\n"
	       "     - xiw\n"
	       "     - siw\n",
	       rst_text(kernel).c_str());
	int rows = 0;
	for (const Scenario &s : scenarios()) {
		auto it = siw.find(s.name);
		auto x = xiw.find(s.name);
		if (it == siw.end() || it->second.empty())
			continue;
		// Left out of both runs alike (a device setting neither had).
		if (x != xiw.end() && x->second == it->second)
			continue;
		std::string xr = x == xiw.end() ? "not run" : x->second.empty() ? "passes" : x->second;
		printf("   * - ``%s``\n     - %s\n     - %s\n     - %s\n     - %s\n", s.name,
		       rst_text(s.rfc).c_str(), rst_text(s.rule).c_str(),
		       xr == "passes" ? "passes" : rst_literal(xr).c_str(),
		       rst_literal(it->second).c_str());
		rows++;
	}
	printf("\n%d of %zu scenarios differ.\n", rows, scenarios().size());
	return 0;
}

// What the device under test lacks for a scenario that @needs it, as
// far as the options say: NULL when nothing.
const char *missing(const Options &o, Need needs)
{
	switch (needs) {
	case Need::Markers:
		return o.markers ? nullptr : "a device with MPA markers (--markers)";
	case Need::P2pReadRtr:
		return o.p2p_read_rtr ? nullptr :
			"a device that initiates with P2P and a Read RTR (--p2p-read-rtr)";
	case Need::SoftRnr:
		return o.soft_rnr_ms ? nullptr : "a device with soft_rnr_ms set (--soft-rnr MS)";
	case Need::None:
		break;
	}
	return nullptr;
}

int run(const Options &o)
{
	std::vector<const Scenario *> sel;
	// --filter: comma-separated substrings of scenario names, any may match.
	std::vector<std::string> filters;
	std::istringstream fs(o.filter);
	for (std::string f; std::getline(fs, f, ',');)
		if (!f.empty())
			filters.push_back(f);
	for (const Scenario &s : scenarios()) {
		std::string name = s.name;
		if (filters.empty() || std::any_of(filters.begin(), filters.end(), [&](const std::string &f) {
			    return name.find(f) != std::string::npos;
		    }))
			sel.push_back(&s);
	}

	Target t;
	try {
		t.start(o.target, o.addr, o.port, o.timeout);
	} catch (const Failure &f) {
		printf("KTAP version 1\n1..0 # SKIP %s\n", f.what());
		return 4;
	}
	printf("KTAP version 1\n1..%zu\n", sel.size());
	fflush(stdout);
	int pass = 0, fail = 0, skip = 0, n = 0;
	for (const Scenario *s : sel) {
		n++;
		if (std::find(o.skip.begin(), o.skip.end(), s->name) != o.skip.end()) {
			printf("ok %d %s # SKIP --skip\n", n, s->name);
			skip++;
			continue;
		}
		if (const char *why = missing(o, s->needs)) {
			printf("ok %d %s # SKIP needs %s\n", n, s->name, why);
			skip++;
			continue;
		}
		std::string how;
		if (t.dead(how)) {
			printf("# xiw-target died (%s) before %s: restarted\n", how.c_str(), s->name);
			try {
				t.start(o.target, o.addr, o.port, o.timeout);
			} catch (const Failure &f) {
				printf("not ok %d %s # xiw-target: %s\n", n, s->name, f.what());
				fail++;
				continue;
			}
		}
		Ctx x(o, t);
		std::string why;
		auto t0 = std::chrono::steady_clock::now();
		try {
			s->run(x);
		} catch (const Failure &f) {
			why = f.what();
		} catch (const std::exception &e) {
			why = std::string("exception: ") + e.what();
		}
		x.c.close();
		try {
			t.must("close");
		} catch (const Failure &f) {
			if (why.empty())
				why = f.what();
		}
		double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
		if (why.empty()) {
			printf("ok %d %s\n", n, s->name);
			pass++;
		} else {
			printf("not ok %d %s # %s\n", n, s->name, why.c_str());
			fail++;
		}
		if (!o.quiet)
			printf("#   %s: %s (%.1f s)\n", s->rfc, s->rule, secs);
		fflush(stdout);
	}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n", pass, fail, skip);
	return fail ? 1 : 0;
}

} // namespace
} // namespace xiw::peer

int main(int argc, char **argv)
{
	using namespace xiw::peer;

	using xiw::cli::usage_error;

	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		usage_error(kUsage, "");
	std::string cmd = argv[1];
	if (cmd == "-h" || cmd == "--help")
		xiw::cli::help(kUsage);
	if (cmd == "decode")
		return decode_main(argc - 1, argv + 1);
	if (cmd == "fuzz")
		return fuzz_main(argc - 1, argv + 1);
	if (cmd == "replay")
		return replay_main(argc - 1, argv + 1);
	if (cmd == "table") {
		if (argc != 5)
			usage_error(kUsage, "table takes SIW_KTAP XIW_KTAP KERNEL");
		try {
			return table_main(argv[2], argv[3], argv[4]);
		} catch (const Failure &f) {
			fprintf(stderr, "xiw-peer table: %s\n", f.what());
			return 1;
		}
	}
	if (cmd == "list") {
		for (auto &s : scenarios())
			printf("%-34s %s: %s\n", s.name, s.rfc, s.rule);
		return 0;
	}
	if (cmd != "run")
		usage_error(kUsage, "unknown command '" + cmd + "'");
	Options o;
	for (int i = 2; i < argc; i++) {
		std::string a = argv[i];
		auto val = [&]() -> const char * {
			if (i + 1 >= argc)
				usage_error(kUsage, a + " needs a value");
			return argv[++i];
		};
		if (a == "--target")
			o.target = val();
		else if (a == "--addr")
			o.addr = val();
		else if (a == "--port")
			o.port = uint16_t(xiw::cli::uint_opt(kUsage, "--port", val(), 1, 65535));
		else if (a == "--filter")
			o.filter = val();
		else if (a == "--skip") {
			std::istringstream is(val());
			std::string name;
			while (std::getline(is, name, ','))
				o.skip.push_back(name);
		} else if (a == "--timeout")
			o.timeout = xiw::cli::secs_opt(kUsage, "--timeout", val(), 0, 3600);
		else if (a == "--markers")
			o.markers = true;
		else if (a == "--p2p-read-rtr")
			o.p2p_read_rtr = true;
		else if (a == "--soft-rnr")
			o.soft_rnr_ms = unsigned(xiw::cli::uint_opt(kUsage, "--soft-rnr", val(), 1, 10000));
		else if (a == "--quiet")
			o.quiet = true;
		else if (a == "-h" || a == "--help")
			xiw::cli::help(kUsage);
		else
			usage_error(kUsage, "unknown option '" + a + "'");
	}
	if (o.target.empty() || o.addr.empty())
		usage_error(kUsage, "run needs --target and --addr");
	return run(o);
}
