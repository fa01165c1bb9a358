// SPDX-License-Identifier: GPL-2.0
// xiw-bench-report's JSON and gnuplot quoting: every string, control
// characters and non-UTF-8 bytes included, comes back from a JSON parser
// as written (or as U+FFFD for bytes that are not UTF-8), the numbers
// and medians are those of the input, and a prefix with quotes in it
// stays one gnuplot string.
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

struct TempFile {
	std::string path;

	TempFile(const std::string &name, const std::string &text)
		: path(::testing::TempDir() + "xiw_bench_report_" + name)
	{
		std::ofstream(path, std::ios::binary) << text;
	}
	~TempFile() { unlink(path.c_str()); }
};

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
	std::string text = xiw::bench::json(d, "6.12 \"x\"", "2026-12-04\n");

	for (char c : text)
		EXPECT_FALSE((unsigned char)c < 0x20 && c != '\n') << "raw control character in " << text;
	EXPECT_NE(std::string::npos, text.find("\\u0001")) << text;
	EXPECT_NE(std::string::npos, text.find("\\u001b[31m")) << text;

	auto j = nlohmann::json::parse(text);
	EXPECT_EQ("2026-12-04\n", j["date"]);
	EXPECT_EQ("6.12 \"x\"", j["kernel"]);
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
	auto j = nlohmann::json::parse(xiw::bench::json(d, "k", "d"));
	EXPECT_EQ("bad \xef\xbf\xbd\xef\xbf\xbd byte, good \xc3\xa9", j["failures"][0]["reason"]);
	EXPECT_EQ(0.0485, j["points"][0]["median"]);
}

TEST(BenchReport, EmptyListsAreArrays)
{
	Data d;
	auto j = nlohmann::json::parse(xiw::bench::json(d, "k", "d"));

	EXPECT_TRUE(j["points"].is_array());
	EXPECT_TRUE(j["failures"].is_array());
	EXPECT_TRUE(j["failures"].empty());
}

TEST(BenchReport, MalformedLinesAreRefused)
{
	TempFile fields("fields.tsv", "xiw\tib_write_bw\t64\n");
	TempFile number("number.tsv", "xiw\tib_write_bw\t64\t1\tbw_MBps\tfast\n");
	TempFile size("size.tsv", "xiw\tib_write_bw\t64k\t1\tbw_MBps\t1\n");
	Data d;
	std::string why;

	EXPECT_FALSE(xiw::bench::parse(fields.path, &d, &why));
	EXPECT_NE(std::string::npos, why.find(":1: want 6 fields, got 3")) << why;
	EXPECT_FALSE(xiw::bench::parse(number.path, &d, &why));
	EXPECT_NE(std::string::npos, why.find(":1: not a number: fast")) << why;
	EXPECT_FALSE(xiw::bench::parse(size.path, &d, &why));
	EXPECT_NE(std::string::npos, why.find(":1: size and repetition must be numbers")) << why;
	EXPECT_FALSE(xiw::bench::parse(fields.path + ".missing", &d, &why));
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
	std::string gp = xiw::bench::plots(d, prefix);

	EXPECT_NE(std::string::npos, gp.find("set output " +
					     xiw::bench::gnuplot_quote(prefix + "-bw.png")))
		<< gp;
	EXPECT_NE(std::string::npos, gp.find("plot " + xiw::bench::gnuplot_quote(prefix + "-lat.dat")))
		<< gp;
	unlink((prefix + "-bw.dat").c_str());
	unlink((prefix + "-lat.dat").c_str());
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
