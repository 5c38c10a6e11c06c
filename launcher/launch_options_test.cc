#include "launcher/launch_options.h"

#include <gtest/gtest.h>

#include <map>

namespace hvdrun {
namespace {

ParsedCommandLine Parse(std::vector<std::string> args) {
  static const std::map<std::string, std::string> kEnvironment = {{"HOME", "/home/student"}, {"OMP", "4"}};
  args.insert(args.begin(), "hvdrun");
  std::vector<const char*> argv;
  argv.reserve(args.size());
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return ParseCommandLine(static_cast<int>(argv.size()), argv.data(), [](const char* name) -> const char* {
    auto it = kEnvironment.find(name);
    return it == kEnvironment.end() ? nullptr : it->second.c_str();
  });
}

TEST(LaunchOptions, HorovodrunStyleCommandLine) {
  ParsedCommandLine parsed =
      Parse({"-np", "8", "-H", "server1:4,server2:4", "--output-filename", "logs", "--start-timeout", "10",
             "--verbose", "-x", "OMP", "-x", "NCCL_DEBUG=INFO", "./train", "--epochs", "3"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  const LaunchOptions& options = *parsed.options;
  EXPECT_EQ(options.num_proc, 8);
  EXPECT_EQ(options.hosts, (std::vector<HostSlots>{{"server1", 4}, {"server2", 4}}));
  EXPECT_EQ(options.output_dir, "logs");
  EXPECT_EQ(options.start_timeout_s, 10);
  EXPECT_TRUE(options.verbose);
  EXPECT_EQ(options.exports, (std::vector<std::string>{"OMP=4", "NCCL_DEBUG=INFO"}));
  EXPECT_EQ(options.command, (std::vector<std::string>{"./train", "--epochs", "3"}));
}

TEST(LaunchOptions, WithoutHostsRanksRunOnLocalhost) {
  ParsedCommandLine parsed = Parse({"-np", "2", "./my_program", "arg1", "arg with spaces"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->hosts, (std::vector<HostSlots>{{"localhost", 2}}));
  EXPECT_EQ(parsed.options->command, (std::vector<std::string>{"./my_program", "arg1", "arg with spaces"}));
}

TEST(LaunchOptions, WithoutNpEverySlotIsUsed) {
  ParsedCommandLine parsed = Parse({"-H", "a:2,b:3", "true"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->num_proc, 5);
}

TEST(LaunchOptions, TheCommandIsNeverParsed) {
  // Options after the command belong to the command, even ones hvdrun knows.
  ParsedCommandLine parsed = Parse({"-np", "1", "mpi_program", "-np", "3", "--verbose", "-H", "x"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_FALSE(parsed.options->verbose);
  EXPECT_EQ(parsed.options->command,
            (std::vector<std::string>{"mpi_program", "-np", "3", "--verbose", "-H", "x"}));
}

TEST(LaunchOptions, DoubleDashStartsTheCommand) {
  ParsedCommandLine parsed = Parse({"-np", "1", "--", "--weird-program", "x"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->command, (std::vector<std::string>{"--weird-program", "x"}));
}

TEST(LaunchOptions, AttachedValues) {
  ParsedCommandLine parsed = Parse({"--num-proc=3", "-Hlocalhost:3", "--hosts=localhost:4", "true"});
  ASSERT_FALSE(parsed.options.has_value());  // -H given twice
  parsed = Parse({"--num-proc=3", "-Hlocalhost:3", "true"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->num_proc, 3);
  EXPECT_EQ(parsed.options->hosts, (std::vector<HostSlots>{{"localhost", 3}}));
}

struct BadCase {
  std::vector<std::string> args;
  const char* error;
};

class LaunchOptionsInvalid : public testing::TestWithParam<BadCase> {};

TEST_P(LaunchOptionsInvalid, ExitTwoWithOneLine) {
  ParsedCommandLine parsed = Parse(GetParam().args);
  EXPECT_FALSE(parsed.options.has_value());
  EXPECT_EQ(parsed.exit_code, 2);
  EXPECT_EQ(parsed.error, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    CommandLines, LaunchOptionsInvalid,
    testing::Values(BadCase{{"-np", "0", "true"}, "-np: 0 is out of range (1 to 1048576)"},
                    BadCase{{"-np", "two", "true"}, "-np: 'two' is not a whole number"},
                    BadCase{{"-H", "a:2", "-np"}, "-np: needs a value"},
                    BadCase{{"-np", "2"}, "no command given (usage: hvdrun [options] command [args...])"},
                    BadCase{{"true"}, "-np: give the number of processes (or hosts with -H or --hostfile)"},
                    BadCase{{"-np", "2", "--bogus", "true"}, "unknown option '--bogus' (see hvdrun --help)"},
                    BadCase{{"-q", "true"}, "unknown option '-q' (see hvdrun --help)"},
                    BadCase{{"-H", "a:x", "true"},
                            "-H: host 1 'a:x': slots must be a whole number from 1 to 1048576"},
                    BadCase{{"-H", "a", "--hostfile", "f", "true"}, "give either -H or --hostfile, not both"},
                    BadCase{{"--hostfile", "/nonexistent", "true"},
                            "--hostfile: cannot read '/nonexistent': No such file or directory"},
                    BadCase{{"-np", "1", "-x", "1BAD", "true"},
                            "-x '1BAD': not a variable name (expected NAME or NAME=VALUE)"},
                    BadCase{{"-np", "1", "-x", "UNSET_VAR", "true"},
                            "-x UNSET_VAR: UNSET_VAR is not set in hvdrun's environment"},
                    BadCase{{"-np", "1", "--start-timeout", "0", "true"},
                            "--start-timeout: 0 is out of range (1 to 86400)"}));

TEST(LaunchOptions, VersionAndHelpExitZero) {
  testing::internal::CaptureStdout();
  ParsedCommandLine version = Parse({"--version"});
  std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_FALSE(version.options.has_value());
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(printed, "hvdrun 0.1.0\n");

  testing::internal::CaptureStdout();
  ParsedCommandLine help = Parse({"--help"});
  printed = testing::internal::GetCapturedStdout();
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(printed.find("--num-proc"), std::string::npos);
  EXPECT_NE(printed.find("-np"), std::string::npos);
  EXPECT_NE(printed.find("--hostfile"), std::string::npos);
}

}  // namespace
}  // namespace hvdrun
