// SPDX-License-Identifier: GPL-2.0
// xiw-bench-report's JSON, markdown and gnuplot quoting: every string,
// control characters and non-UTF-8 bytes included, comes back from a JSON
// parser as written (or as U+FFFD for bytes that are not UTF-8), the
// numbers and medians are those of the input, every topology gets its
// section with its targets tallied, CPU time per GB and TCP's losses add
// up both guests' counts repetition by repetition, and a prefix with
// quotes in it stays one gnuplot string.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "xiw_bench_report.h"

namespace {

using xiw::bench::Data;
using xiw::bench::Topology;

struct TempFile {
	std::string path;

	TempFile(const std::string &name, const std::string &text)
		: path(::testing::TempDir() + "xiw_bench_report_" + name)
	{
		std::ofstream(path, std::ios::binary) << text;
	}
	~TempFile() { unlink(path.c_str()); }
};

// The markdown report of one topology @name, measured as @tsv holds.
std::string OneTopology(const std::string &name, const TempFile &tsv)
{
	std::vector<Topology> run(1);
	std::string why;

	run[0].name = name;
	if (!xiw::bench::parse(tsv.path, &run[0].data, &why)) {
		ADD_FAILURE() << why;
		return "";
	}
	return xiw::bench::markdown(run, "6.12", "today", "");
}

TEST(BenchReport, JsonKeepsEveryValueAndEscapesControlCharacters)
{
	const std::string reason = "rc 1: \x01\x1b[31mred\x1b[0m \"quoted\" back\\slash\x7f";
	TempFile in("ctl.tsv", "xiw\tib_write_bw\t65536\t1\tbw_MBps\t61.6\n"
			       "xiw\tib_write_bw\t65536\t2\tbw_MBps\t51.25\n"
			       "xiw\tib_write_bw\t65536\t3\tbw_MBps\t70\n"
			       "siw\tib_write_bw\t65536\t1\tfail\t" + reason + "\n");
	Data d;
	std::string why;

	ASSERT_TRUE(xiw::bench::parse(in.path, &d, &why)) << why;
	std::string text = xiw::bench::json({ { "veth", d } }, "6.12 \"x\"", "2026-12-04\n");

	for (char c : text)
		EXPECT_FALSE((unsigned char)c < 0x20 && c != '\n') << "raw control character in " << text;
	EXPECT_NE(std::string::npos, text.find("\\u0001")) << text;
	EXPECT_NE(std::string::npos, text.find("\\u001b[31m")) << text;

	auto top = nlohmann::json::parse(text);
	EXPECT_EQ("2026-12-04\n", top["date"]);
	EXPECT_EQ("6.12 \"x\"", top["kernel"]);
	ASSERT_EQ(1u, top["topologies"].size());
	const auto &j = top["topologies"][0];
	EXPECT_EQ("veth", j["name"]);
	ASSERT_EQ(1u, j["points"].size());
	const auto &p = j["points"][0];
	EXPECT_EQ("xiw", p["driver"]);
	EXPECT_EQ("ib_write_bw", p["test"]);
	EXPECT_EQ(65536, p["size"]);
	EXPECT_EQ("bw_MBps", p["metric"]);
	EXPECT_EQ(61.6, p["median"]);
	EXPECT_EQ((std::vector<double>{ 61.6, 51.25, 70 }), p["values"].get<std::vector<double>>());
	ASSERT_EQ(1u, j["failures"].size());
	EXPECT_EQ(reason, j["failures"][0]["reason"]);
	EXPECT_EQ(1, j["failures"][0]["rep"]);
}

TEST(BenchReport, JsonReplacesBytesThatAreNotUtf8)
{
	TempFile in("utf8.tsv", "xiw\tib_send_bw\t64\t1\tmpps\t0.0485\n"
				"xiw\tib_send_bw\t64\t2\tfail\tbad \xff\xfe byte, good \xc3\xa9\n");
	Data d;
	std::string why;

	ASSERT_TRUE(xiw::bench::parse(in.path, &d, &why)) << why;
	auto j = nlohmann::json::parse(xiw::bench::json({ { "", d } }, "k", "d"))["topologies"][0];
	EXPECT_EQ("bad \xef\xbf\xbd\xef\xbf\xbd byte, good \xc3\xa9", j["failures"][0]["reason"]);
	EXPECT_EQ(0.0485, j["points"][0]["median"]);
}

TEST(BenchReport, EmptyListsAreArrays)
{
	Data d;
	auto top = nlohmann::json::parse(xiw::bench::json({}, "k", "d"));
	auto j = nlohmann::json::parse(xiw::bench::json({ { "dummy", d } }, "k", "d"))["topologies"][0];

	EXPECT_TRUE(top["topologies"].is_array());
	EXPECT_TRUE(j["points"].is_array());
	EXPECT_TRUE(j["failures"].is_array());
	EXPECT_TRUE(j["failures"].empty());
}

TEST(BenchReport, MalformedLinesAreRefused)
{
	TempFile fields("fields.tsv", "xiw\tib_write_bw\t64\n");
	TempFile size("size.tsv", "xiw\tib_write_bw\t64k\t1\tbw_MBps\t1\n");
	Data d;
	std::string why;

	EXPECT_FALSE(xiw::bench::parse(fields.path, &d, &why));
	EXPECT_NE(std::string::npos, why.find(":1: want 6 fields, got 3")) << why;
	EXPECT_FALSE(xiw::bench::parse(size.path, &d, &why));
	EXPECT_NE(std::string::npos, why.find(":1: size and repetition must be numbers")) << why;
	EXPECT_FALSE(xiw::bench::parse(fields.path + ".missing", &d, &why));
}

// perftest prints "inf" when its cycle count under TCG goes wrong: that
// run failed, the others of the file still count.
TEST(BenchReport, AValueThatIsNotANumberIsAFailedRun)
{
	TempFile in("inf.tsv", "siw\tib_read_lat\t64\t4\tlat_typ_us\tinf\n"
			       "siw\tib_read_lat\t64\t5\tlat_typ_us\t40.5\n");
	Data d;
	std::string why;

	ASSERT_TRUE(xiw::bench::parse(in.path, &d, &why)) << why;
	ASSERT_EQ(1u, d.failures.size());
	EXPECT_EQ("siw", d.failures[0].driver);
	EXPECT_EQ("ib_read_lat", d.failures[0].test);
	EXPECT_EQ("lat_typ_us was 'inf', not a number", d.failures[0].reason);
	EXPECT_EQ(4, d.failures[0].rep);
	EXPECT_EQ(1u, d.values.size());
}

TEST(BenchReport, CompareGivesMediansOfBothBuildsAndTheirRatio)
{
	TempFile in("cmp.tsv", "xiw\tib_send_bw\t65536\t1\tbw_MBps\t100\n"
			       "xiwb\tib_send_bw\t65536\t1\tbw_MBps\t45\n"
			       "siw\tib_send_bw\t65536\t1\tbw_MBps\t30\n"
			       "xiw\tib_send_bw\t65536\t2\tbw_MBps\t300\n"
			       "xiwb\tib_send_bw\t65536\t2\tbw_MBps\t215\n"
			       "xiw\tib_send_bw\t65536\t3\tbw_MBps\t200\n"
			       "xiwb\tib_send_bw\t65536\t3\tbw_MBps\t50\n"
			       "xiw\tib_write_lat\t64\t1\tlat_typ_us\t30\n");
	Data d;
	std::string why;

	ASSERT_TRUE(xiw::bench::parse(in.path, &d, &why)) << why;
	std::string t = xiw::bench::compare(d, "xiw", "xiwb");

	EXPECT_EQ("| point, metric | xiw (A) | xiwb (B) | B/A | repetitions |\n"
		  "|---|---|---|---|---|\n"
		  "| ib_send_bw 64 KiB, bw_MBps | 200 | 50 | 0.25x | 3, 3 |\n",
		  t);
	// A point of one build only, or of siw, has no row.
	EXPECT_EQ(std::string::npos, t.find("ib_write_lat")) << t;
	EXPECT_EQ(std::string::npos, t.find("| 30 |")) << t;
}

// Every topology has its section, and the summary counts its targets: met,
// missed, and missed below the floor (worse than siw), each missed ratio
// in red.
TEST(BenchReport, MarkdownHasASectionPerTopologyAndTalliesTargets)
{
	TempFile veth("sec-veth.tsv", "xiw\tib_write_bw\t65536\t1\tbw_MBps\t150\n"
				      "siw\tib_write_bw\t65536\t1\tbw_MBps\t100\n"
				      "xiw\tib_write_lat\t64\t1\tlat_typ_us\t50\n"
				      "siw\tib_write_lat\t64\t1\tlat_typ_us\t40\n"
				      "xiw\tib_write_bw\t8388608\t1\tbw_MBps\t10\n"
				      "siw\tib_write_bw\t8388608\t1\tbw_MBps\t100\n"
				      "siw\tcmtime\t100\t2\tfail\t29 of 100 not set up\n");
	TempFile wire("sec-wire.tsv", "xiw\tib_send_lat\t64\t1\tlat_typ_us\t36\n"
				      "siw\tib_send_lat\t64\t1\tlat_typ_us\t40\n"
				      "xiw\tib_send_bw\t65536\t1\tbw_MBps\t90\n"
				      "siw\tib_send_bw\t65536\t1\tbw_MBps\t30\n"
				      "tcp\tiperf3-Z\t0\t1\ttcp_MBps\t100\n"
				      "tcp\tiperf3\t0\t1\ttcp_MBps\t50\n");
	std::vector<Topology> run(2);
	std::string why;

	run[0].name = "veth";
	run[1].name = "wire";
	ASSERT_TRUE(xiw::bench::parse(veth.path, &run[0].data, &why)) << why;
	ASSERT_TRUE(xiw::bench::parse(wire.path, &run[1].data, &why)) << why;
	std::string md = xiw::bench::markdown(run, "6.12", "today", "");

	// veth: 64 KiB Write 1.5x met; 64 B write latency 1.25x is worse
	// than siw; 8 MiB has no target.  wire: send latency 0.9x misses
	// 0.8x but beats siw; 64 KiB Send 3x met, and 0.9x of iperf3 -Z met.
	EXPECT_NE(std::string::npos, md.find("| veth | 1 | 1 | 1 |\n")) << md;
	EXPECT_NE(std::string::npos, md.find("| wire | 2 | 1 | 0 |\n")) << md;
	EXPECT_NE(std::string::npos, md.find("## veth pair, MTU 1500")) << md;
	EXPECT_NE(std::string::npos, md.find("## two VMs on a wire")) << md;
	EXPECT_NE(std::string::npos,
		  md.find("| ib_write_lat, 64 B | 50.00 | 40.00 | <span style=\"color:red\">**1.25x**"
			  "</span> | <= 0.80x | **missed, below the floor** |"))
		<< md;
	EXPECT_NE(std::string::npos,
		  md.find("| ib_send_lat, 64 B | 36.00 | 40.00 | <span style=\"color:red\">**0.90x**"
			  "</span> | <= 0.80x | missed |"))
		<< md;
	EXPECT_NE(std::string::npos, md.find("| ib_write_bw, 8 MiB | 10.0 | 100.0 | 0.10x |  |  |"))
		<< md;
	EXPECT_NE(std::string::npos,
		  md.find("| ib_send_bw, 64 KiB | 90.0 | 100.0 | 0.90x | >= 0.90x | met | 1.80x | 0.60x |"))
		<< md;
	// A failed cmtime run names its connection count, not a size.
	EXPECT_NE(std::string::npos, md.find("- siw cmtime 100 connections rep 2: 29 of 100")) << md;
	// The veth section comes first, and has no scale table without data.
	EXPECT_LT(md.find("## veth pair"), md.find("## two VMs"));
	EXPECT_EQ(std::string::npos, md.find("### Scale")) << md;
}

// Where a 64 B latency point ran more than once, every repetition is
// listed, fastest first, beside the median the ratio is taken of.
TEST(BenchReport, LatencyRepetitionsAreListedFastestFirst)
{
	TempFile t("spread.tsv", "xiw\tib_write_lat\t64\t1\tlat_typ_us\t41.04\n"
				 "siw\tib_write_lat\t64\t1\tlat_typ_us\t22.5\n"
				 "xiw\tib_write_lat\t64\t2\tlat_typ_us\t24.96\n"
				 "siw\tib_write_lat\t64\t2\tlat_typ_us\t40\n"
				 "xiw\tib_write_lat\t64\t3\tlat_typ_us\t25\n"
				 "siw\tib_write_lat\t64\t3\tlat_typ_us\t39\n"
				 "xiw\tib_send_lat\t64\t1\tlat_typ_us\t30\n"
				 "xiw\tib_write_lat\t4096\t1\tlat_typ_us\t90\n"
				 "xiw\tib_write_lat\t4096\t2\tlat_typ_us\t91\n");
	std::string md = OneTopology("veth", t);

	EXPECT_NE(std::string::npos, md.find("| ib_write_lat, 64 B | 25.00 | 39.00 | 0.64x |")) << md;
	EXPECT_NE(std::string::npos, md.find("| ib_write_lat | 25.0 25.0 41.0 | 22.5 39.0 40.0 |\n"))
		<< md;
	// A point of one driver only, and no row for a point nobody ran.
	EXPECT_NE(std::string::npos, md.find("| ib_send_lat | 30.0 | - |\n")) << md;
	EXPECT_EQ(std::string::npos, md.find("| ib_read_lat |")) << md;
	// Sizes other than 64 B are not listed.
	EXPECT_EQ(std::string::npos, md.find("90.0 91.0")) << md;
	EXPECT_LT(md.find("### Latency"), md.find("Every repetition at 64 B"));
	EXPECT_LT(md.find("Every repetition at 64 B"), md.find("### Connection setup"));
}

// With one repetition each there is nothing to list.
TEST(BenchReport, OneRepetitionListsNoSpread)
{
	TempFile t("spread1.tsv", "xiw\tib_write_lat\t64\t1\tlat_typ_us\t30\n"
				  "siw\tib_write_lat\t64\t1\tlat_typ_us\t40\n");
	std::string md = OneTopology("veth", t);

	EXPECT_EQ(std::string::npos, md.find("Every repetition")) << md;
}

// The NVMe section: xiw against siw (the floor, every row) and against
// NVMe/TCP (IOPS and throughput only).
TEST(BenchReport, NvmeSectionHoldsXiwToSiwAndToNvmeTcp)
{
	TempFile in("nvme.tsv", "xiw\tnvme-randread-qd1\t4096\t1\tlat_p50_us\t80\n"
				"siw\tnvme-randread-qd1\t4096\t1\tlat_p50_us\t100\n"
				"tcp\tnvme-randread-qd1\t4096\t1\tlat_p50_us\t50\n"
				"xiw\tnvme-randread-qd32\t4096\t1\tiops\t9000\n"
				"siw\tnvme-randread-qd32\t4096\t1\tiops\t6000\n"
				"tcp\tnvme-randread-qd32\t4096\t1\tiops\t10000\n"
				"xiw\tnvme-seqwrite\t131072\t1\tMBps\t150\n"
				"siw\tnvme-seqwrite\t131072\t1\tMBps\t200\n"
				"tcp\tnvme-seqwrite\t131072\t1\tMBps\t100\n");
	std::string md = OneTopology("nvme9000", in);

	EXPECT_NE(std::string::npos, md.find("## NVMe over Fabrics against NVMe/TCP across the two-VM "
					     "wire, MTU 9000"))
		<< md;
	// Latency is held to siw only: 0.80x met though TCP is faster.
	EXPECT_NE(std::string::npos,
		  md.find("| 4 KiB random read, QD 1, p50 latency (us) | 80.0 | 100.0 | 50.0 | 0.80x | "
			  "1.60x | <= siw | met |"))
		<< md;
	EXPECT_NE(std::string::npos,
		  md.find("| 4 KiB random read, QD 32, IOPS | 9000 | 6000 | 10000 | 1.50x | "
			  "<span style=\"color:red\">**0.90x**</span> | >= siw, >= TCP | missed |"))
		<< md;
	EXPECT_NE(std::string::npos,
		  md.find("| 128 KiB sequential write, MB/s | 150.0 | 200.0 | 100.0 | <span "
			  "style=\"color:red\">**0.75x**</span> | 1.50x | >= siw, >= TCP | **missed, "
			  "below the floor** |"))
		<< md;
	// Rows without data have no verdict; the tally counts the three above.
	EXPECT_NE(std::string::npos, md.find("| nvme9000 | 1 | 2 | 1 |")) << md;
	EXPECT_EQ(std::string::npos, md.find("### Bandwidth")) << md;

	// In one guest the same rows, under their own heading.
	md = OneTopology("nvmedummy", in);
	EXPECT_NE(std::string::npos, md.find("## NVMe over Fabrics against NVMe/TCP in one guest: "
					     "target and host on a dummy netdev, the TCP over lo"))
		<< md;
	EXPECT_NE(std::string::npos, md.find("null_blk exported by nvmet and fio in the same guest"))
		<< md;
	EXPECT_NE(std::string::npos, md.find("| nvmedummy | 1 | 2 | 1 |")) << md;
}

// CPU time per GB: each guest's cpu_s of one repetition adds up, over
// that repetition's bytes; a repetition without bytes does not count.
TEST(BenchReport, CpuPerGbAddsBothGuestsRepetitionByRepetition)
{
	TempFile a("cpu-a.tsv", "xiw\txiw-perf-send\t65536\t1\tcpu_s\t2.0\n"
				"xiw\txiw-perf-send\t65536\t2\tcpu_s\t1.0\n"
				"xiw\txiw-perf-send\t65536\t3\tcpu_s\t5.0\n");
	TempFile b("cpu-b.tsv", "xiw\txiw-perf-send\t65536\t1\tcpu_s\t1.0\n"
				"xiw\txiw-perf-send\t65536\t1\tbytes\t1000000000\n"
				"xiw\txiw-perf-send\t65536\t2\tcpu_s\t1.0\n"
				"xiw\txiw-perf-send\t65536\t2\tbytes\t500000000\n"
				"siw\txiw-perf-send\t65536\t1\tcpu_s\t8.0\n"
				"siw\txiw-perf-send\t65536\t1\tbytes\t1000000000\n");
	Data d;
	std::string why;

	ASSERT_TRUE(xiw::bench::parse(a.path, &d, &why)) << why;
	ASSERT_TRUE(xiw::bench::parse(b.path, &d, &why)) << why;
	EXPECT_EQ((std::vector<double>{ 3.0, 4.0 }),
		  xiw::bench::cpu_per_gb(d, "xiw", "xiw-perf-send", 65536));
	EXPECT_TRUE(d.values.empty());

	auto j = nlohmann::json::parse(xiw::bench::json({ { "wire", d } }, "k", "d"));
	bool seen = false;
	for (auto &p : j["topologies"][0]["points"])
		if (p["driver"] == "xiw" && p["metric"] == "cpu_s_per_GB") {
			EXPECT_EQ(3.5, p["median"]);
			seen = true;
		}
	EXPECT_TRUE(seen) << j.dump();

	std::string md = xiw::bench::markdown({ { "wire", d } }, "k", "d", "");
	EXPECT_NE(std::string::npos,
		  md.find("| xiw-perf-send | 3.50 | 8.00 | 0.44x | <= 1.00x | met |"))
		<< md;
}

// TCP's losses: both guests' counts of one run add up; only the runs
// that lost something are listed, each with its own result; a run
// without counters (an older file) gives no such section.
TEST(BenchReport, TcpLossesAddBothGuestsAndListTheirRuns)
{
	TempFile a("tcp-a.tsv", "xiw\tib_read_bw\t65536\t2\ttcp_retrans_segs\t3\n"
				"xiw\tib_read_bw\t65536\t2\ttcp_rtos\t1\n"
				"xiw\tib_read_bw\t65536\t2\ttcp_win_probes\t0\n");
	TempFile b("tcp-b.tsv", "xiw\tib_read_bw\t65536\t1\tbw_MBps\t400\n"
				"xiw\tib_read_bw\t65536\t1\ttcp_retrans_segs\t0\n"
				"xiw\tib_read_bw\t65536\t1\ttcp_rtos\t0\n"
				"xiw\tib_read_bw\t65536\t1\ttcp_win_probes\t0\n"
				"xiw\tib_read_bw\t65536\t2\tbw_MBps\t61.5\n"
				"xiw\tib_read_bw\t65536\t2\ttcp_retrans_segs\t2\n"
				"xiw\tib_read_bw\t65536\t2\ttcp_rtos\t0\n"
				"xiw\tib_read_bw\t65536\t2\ttcp_win_probes\t0\n"
				"siw\tib_send_lat\t64\t1\tlat_typ_us\t30.25\n"
				"siw\tib_send_lat\t64\t1\ttcp_retrans_segs\t0\n"
				"siw\tib_send_lat\t64\t1\ttcp_rtos\t0\n"
				"siw\tib_send_lat\t64\t1\ttcp_win_probes\t4\n");
	Data d;
	std::string why;

	ASSERT_TRUE(xiw::bench::parse(a.path, &d, &why)) << why;
	ASSERT_TRUE(xiw::bench::parse(b.path, &d, &why)) << why;
	ASSERT_EQ(3u, d.tcp.size());
	// The counters are not measurements of their own.
	EXPECT_EQ(2u, d.values.size());

	std::string md = xiw::bench::markdown({ { "wire", d } }, "k", "d", "");
	EXPECT_NE(std::string::npos, md.find("probed a closed window in 2 of 3 runs")) << md;
	EXPECT_NE(std::string::npos, md.find("| ib_read_bw, 64 KiB | xiw | 2 | 61.5 MB/s | 5 | 1 | 0 |"))
		<< md;
	EXPECT_NE(std::string::npos, md.find("| ib_send_lat, 64 B | siw | 1 | 30.25 us | 0 | 0 | 4 |"))
		<< md;
	EXPECT_EQ(std::string::npos, md.find("| ib_read_bw, 64 KiB | xiw | 1 |")) << md;

	auto j = nlohmann::json::parse(xiw::bench::json({ { "wire", d } }, "k", "d"));
	auto &l = j["topologies"][0]["tcp_losses"];
	ASSERT_EQ(3u, l.size()) << j.dump();
	bool seen = false;
	for (auto &e : l)
		if (e["driver"] == "xiw" && e["rep"] == 2) {
			EXPECT_EQ(5, e["retrans_segs"]);
			EXPECT_EQ(1, e["rtos"]);
			seen = true;
		}
	EXPECT_TRUE(seen) << j.dump();

	TempFile clean("tcp-clean.tsv", "xiw\tib_write_bw\t65536\t1\tbw_MBps\t400\n"
					"xiw\tib_write_bw\t65536\t1\ttcp_retrans_segs\t0\n"
					"xiw\tib_write_bw\t65536\t1\ttcp_rtos\t0\n"
					"xiw\tib_write_bw\t65536\t1\ttcp_win_probes\t0\n");
	md = OneTopology("veth", clean);
	EXPECT_NE(std::string::npos, md.find("No segment retransmitted and no window probed in any "
					     "of the 1 runs"))
		<< md;

	TempFile old("tcp-old.tsv", "xiw\tib_write_bw\t65536\t1\tbw_MBps\t400\n");
	md = OneTopology("veth", old);
	EXPECT_EQ(std::string::npos, md.find("### TCP under")) << md;

	TempFile bad("tcp-bad.tsv", "xiw\tib_write_bw\t65536\t1\ttcp_lost\t1\n");
	Data e;
	EXPECT_FALSE(xiw::bench::parse(bad.path, &e, &why));
	EXPECT_NE(std::string::npos, why.find("unknown metric tcp_lost")) << why;
}

TEST(BenchReport, GnuplotQuoteDoublesSingleQuotes)
{
	EXPECT_EQ("'plain'", xiw::bench::gnuplot_quote("plain"));
	EXPECT_EQ("'it''s \"x\" $(y) \\n'", xiw::bench::gnuplot_quote("it's \"x\" $(y) \\n"));
	EXPECT_EQ("''''''", xiw::bench::gnuplot_quote("''"));
}

// The script names every file through gnuplot_quote(), so a prefix with a
// quote in it is still one string per file.
TEST(BenchReport, PlotScriptQuotesThePrefix)
{
	Data d;
	std::string prefix = ::testing::TempDir() + "xiw_bench_report_it's";

	d.values[{ "xiw", "ib_write_bw", "bw_MBps", 65536 }] = { 1 };
	Data bw_only = d;
	d.values[{ "siw", "ib_write_lat", "lat_typ_us", 64 }] = { 30 };
	std::string gp = xiw::bench::plots({ { "", d }, { "wire", d }, { "veth", bw_only } }, prefix);

	// A topology without latency points gets no latency plot: gnuplot
	// fails one without a point.
	EXPECT_NE(std::string::npos, gp.find(xiw::bench::gnuplot_quote(prefix + "-veth-bw.png"))) << gp;
	EXPECT_EQ(std::string::npos, gp.find(prefix + "-veth-lat.png")) << gp;
	unlink((prefix + "-veth-bw.dat").c_str());
	unlink((prefix + "-veth-lat.dat").c_str());

	for (std::string base : { prefix, prefix + "-wire" }) {
		EXPECT_NE(std::string::npos,
			  gp.find("set output " + xiw::bench::gnuplot_quote(base + "-bw.png")))
			<< gp;
		EXPECT_NE(std::string::npos,
			  gp.find("plot " + xiw::bench::gnuplot_quote(base + "-lat.dat")))
			<< gp;
		EXPECT_EQ(0, access((base + "-bw.dat").c_str(), F_OK)) << base;
		unlink((base + "-bw.dat").c_str());
		unlink((base + "-lat.dat").c_str());
	}
}

// gnuplot gets the script's name as its one argument, untouched by any
// shell: a stand-in gnuplot on PATH records what it was given, and fails
// for an empty name.
TEST(BenchReport, GnuplotRunsWithoutAShell)
{
	std::string dir = ::testing::TempDir() + "xiw_bench_report_bin";
	std::string fake = dir + "/gnuplot", seen = dir + "/seen";
	std::string script = dir + "/it's $(touch pwned) `x`;.gp";
	std::string why, path = getenv("PATH") ? getenv("PATH") : "";

	mkdir(dir.c_str(), 0700);
	std::ofstream(fake) << "#!/bin/sh\n"
			       "printf '%s|%s' \"$#\" \"$1\" > \"$(dirname \"$0\")/seen\"\n"
			       "[ -n \"$1\" ] || exit 7\n";
	chmod(fake.c_str(), 0700);
	setenv("PATH", (dir + ":" + path).c_str(), 1);
	int ok = xiw::bench::run_gnuplot(script, &why);
	std::ifstream in(seen);
	std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	std::string why2;
	int fails = xiw::bench::run_gnuplot("", &why2);
	setenv("PATH", path.c_str(), 1);

	EXPECT_EQ(0, ok) << why;
	EXPECT_EQ("1|" + script, got);
	EXPECT_NE(0, access((dir + "/pwned").c_str(), F_OK));
	EXPECT_NE(0, access("pwned", F_OK));
	EXPECT_EQ(1, fails);
	EXPECT_EQ("gnuplot exited with 7", why2);
	unlink(fake.c_str());
	unlink(seen.c_str());
	rmdir(dir.c_str());
}

TEST(BenchReport, MissingGnuplotIsSaidSo)
{
	std::string why, path = getenv("PATH") ? getenv("PATH") : "";

	setenv("PATH", "/nonexistent", 1);
	int rc = xiw::bench::run_gnuplot("/dev/null", &why);
	setenv("PATH", path.c_str(), 1);
	EXPECT_EQ(-1, rc);
	EXPECT_EQ("gnuplot not installed", why);
}

}  // namespace
