// SPDX-License-Identifier: GPL-2.0
// The tools' numeric options (userspace/tools/xiw_cli.h): a value is a
// number only if all of it is one and it lies in the option's range; a
// bad one is a usage error (exit 2, the reason and the synopsis on
// stderr), never an exception.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "xiw_cli.h"

namespace {

using xiw::cli::parse_double;
using xiw::cli::parse_uint;

TEST(Cli, UnsignedNumbers)
{
	EXPECT_EQ(0u, parse_uint("0", 0, 10));
	EXPECT_EQ(10u, parse_uint("10", 0, 10));
	EXPECT_EQ(10u, parse_uint("010", 0, 10)) << "decimal, not octal";
	EXPECT_EQ(255u, parse_uint("0xff", 0, 255));
	EXPECT_EQ(255u, parse_uint("0XFF", 0, 255));
	EXPECT_EQ(std::numeric_limits<uint64_t>::max(),
		  parse_uint("18446744073709551615", 0, std::numeric_limits<uint64_t>::max()));
}

TEST(Cli, NotUnsignedNumbers)
{
	for (const char *s : { "", " 1", "1 ", "+1", "-1", "1x", "0x", "0x-1", "x1", "1.0",
			       "1e3", "abc", "18446744073709551616", "0x10000000000000000" })
		EXPECT_FALSE(parse_uint(s, 0, std::numeric_limits<uint64_t>::max())) << "'" << s << "'";
	EXPECT_FALSE(parse_uint("0", 1, 65535));
	EXPECT_FALSE(parse_uint("65536", 1, 65535));
	EXPECT_FALSE(parse_uint("0x10000", 1, 65535));
}

TEST(Cli, Seconds)
{
	EXPECT_EQ(10.0, parse_double("10", 0, 86400));
	EXPECT_EQ(0.25, parse_double("0.25", 0, 86400));
	EXPECT_EQ(1000.0, parse_double("1e3", 0, 86400));
	EXPECT_EQ(1000.0, parse_double("1e+03", 0, 86400)) << "as %g writes it";
	EXPECT_EQ(0.0, parse_double("0", 0, 86400));
	for (const char *s : { "", " 1", "1 ", "+1", "-1", "1s", "abc", "inf", "nan", "0x10",
			       "86400.5", "1e9" })
		EXPECT_FALSE(parse_double(s, 0, 86400)) << "'" << s << "'";
}

const xiw::cli::Usage kTool = { "xiw-test", "usage: xiw-test -n N\n", "NAME\n    xiw-test\n" };

TEST(CliDeathTest, BadNumberIsAUsageError)
{
	EXPECT_EXIT(xiw::cli::uint_opt(kTool, "-n", "12abc", 1, 100),
		    ::testing::ExitedWithCode(2),
		    "xiw-test: -n: '12abc' is not a number in 1..100\n"
		    "usage: xiw-test -n N\n"
		    "Try 'xiw-test --help' for more information.");
	EXPECT_EXIT(xiw::cli::uint_opt(kTool, "-n", "101", 1, 100),
		    ::testing::ExitedWithCode(2), "'101' is not a number in 1..100");
	EXPECT_EXIT(xiw::cli::secs_opt(kTool, "-T", "soon", 0, 86400),
		    ::testing::ExitedWithCode(2), "-T: 'soon' is not a number of seconds in 0..86400");
	EXPECT_EXIT(xiw::cli::uint_opt(kTool, "-n", nullptr, 1, 100),
		    ::testing::ExitedWithCode(2), "-n: '' is not a number");
}

TEST(CliDeathTest, GoodNumbersPass)
{
	EXPECT_EQ(42u, xiw::cli::uint_opt(kTool, "-n", "42", 1, 100));
	EXPECT_EQ(1.5, xiw::cli::secs_opt(kTool, "-T", "1.5", 0, 10));
}

TEST(CliDeathTest, HelpGoesToStdoutAndExitsZero)
{
	EXPECT_EXIT(xiw::cli::help(kTool), ::testing::ExitedWithCode(0), "");
}

}  // namespace
