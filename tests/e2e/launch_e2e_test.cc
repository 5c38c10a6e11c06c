// Jobs that succeed: where ranks land, the environment each gets, argv, -x, --version and --help.
#include <gtest/gtest.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/console_output.h"
#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

using Environment = std::map<std::string, std::string>;

// Every variable hvdrun promises each rank.
const std::vector<std::string> kRankVariables = {
    "HVDRUN_RANK",        "HVDRUN_SIZE",        "HVDRUN_LOCAL_RANK",  "HVDRUN_LOCAL_SIZE",
    "HVDRUN_CROSS_RANK",  "HVDRUN_CROSS_SIZE",  "HVDRUN_HOSTNAME",    "HVDRUN_JOB_ID",
    "HOROVOD_RANK",       "HOROVOD_SIZE",       "HOROVOD_LOCAL_RANK", "HOROVOD_LOCAL_SIZE",
    "HOROVOD_CROSS_RANK", "HOROVOD_CROSS_SIZE", "HOROVOD_HOSTNAME",   "RANK",
    "WORLD_SIZE",         "LOCAL_RANK",         "LOCAL_WORLD_SIZE",   "GROUP_RANK",
    "GROUP_WORLD_SIZE",   "MASTER_ADDR",        "MASTER_PORT",
};

// Where one rank should land.
struct Placement {
  std::string host;
  int host_index;
  int local_rank;
  int local_size;
  int cross_rank;
  int cross_size;
};

struct Layout {
  std::string name;
  std::vector<std::string> hvdrun_options;
  // By rank.
  std::vector<Placement> ranks;
  std::string master_addr;
};

std::string ThisHostName() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  return name;
}

// Runs `hvdrun <options> hvdrun-test-rank env <every rank variable>` and returns what each rank
// printed, by rank, after checking that the job succeeded and that every rank printed each
// variable once, on lines tagged with its rank.
std::map<int, Environment> RunEnvironmentJob(const std::vector<std::string>& hvdrun_options, int num_ranks) {
  ProcessResult result = RunHvdrun(Concat({hvdrun_options, RankCommand(Concat({{"env"}, kRankVariables}))}));
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_TRUE(UntaggedLines(result.stdout_text).empty()) << result;

  std::map<int, std::vector<std::string>> stdout_lines = TaggedLines(result.stdout_text, "stdout");
  std::map<int, std::vector<std::string>> stderr_lines = TaggedLines(result.stderr_text, "stderr");
  std::map<int, Environment> by_rank;
  EXPECT_EQ(static_cast<int>(stdout_lines.size()), num_ranks) << result;
  for (int rank = 0; rank < num_ranks; ++rank) {
    EXPECT_EQ(stdout_lines[rank].size(), kRankVariables.size()) << "rank " << rank << result;
    EXPECT_EQ(stderr_lines[rank],
              std::vector<std::string>{"rank " + std::to_string(rank) + ": environment printed"})
        << result;
    by_rank[rank] = ParseAssignments(stdout_lines[rank]);
  }
  return by_rank;
}

// Checks each rank's variables against `layout`, and that job-wide values agree between ranks.
void ExpectLayout(const std::map<int, Environment>& by_rank, const Layout& layout) {
  const int size = static_cast<int>(layout.ranks.size());
  std::set<int> host_indexes;
  for (const Placement& place : layout.ranks) host_indexes.insert(place.host_index);
  const std::string num_hosts = std::to_string(host_indexes.size());

  std::set<std::string> job_ids;
  std::set<std::string> master_ports;
  for (int rank = 0; rank < size; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    ASSERT_EQ(by_rank.count(rank), 1u);
    const Environment& env = by_rank.at(rank);
    const Placement& place = layout.ranks[rank];
    auto value = [&env](const std::string& name) {
      auto it = env.find(name);
      return it == env.end() ? "(unset)" : it->second;
    };
    for (const char* prefix : {"HVDRUN_", "HOROVOD_"}) {
      SCOPED_TRACE(prefix);
      const std::string p = prefix;
      EXPECT_EQ(value(p + "RANK"), std::to_string(rank));
      EXPECT_EQ(value(p + "SIZE"), std::to_string(size));
      EXPECT_EQ(value(p + "LOCAL_RANK"), std::to_string(place.local_rank));
      EXPECT_EQ(value(p + "LOCAL_SIZE"), std::to_string(place.local_size));
      EXPECT_EQ(value(p + "CROSS_RANK"), std::to_string(place.cross_rank));
      EXPECT_EQ(value(p + "CROSS_SIZE"), std::to_string(place.cross_size));
      EXPECT_EQ(value(p + "HOSTNAME"), place.host);
    }
    EXPECT_EQ(value("RANK"), std::to_string(rank));
    EXPECT_EQ(value("WORLD_SIZE"), std::to_string(size));
    EXPECT_EQ(value("LOCAL_RANK"), std::to_string(place.local_rank));
    EXPECT_EQ(value("LOCAL_WORLD_SIZE"), std::to_string(place.local_size));
    EXPECT_EQ(value("GROUP_RANK"), std::to_string(place.host_index));
    EXPECT_EQ(value("GROUP_WORLD_SIZE"), num_hosts);
    EXPECT_EQ(value("MASTER_ADDR"), layout.master_addr);
    EXPECT_GT(std::atoi(value("MASTER_PORT").c_str()), 0) << value("MASTER_PORT");
    EXPECT_LT(std::atoi(value("MASTER_PORT").c_str()), 65536) << value("MASTER_PORT");
    EXPECT_FALSE(value("HVDRUN_JOB_ID").empty());
    job_ids.insert(value("HVDRUN_JOB_ID"));
    master_ports.insert(value("MASTER_PORT"));
  }
  EXPECT_EQ(job_ids.size(), 1u) << "every rank of a job has the same job id";
  EXPECT_EQ(master_ports.size(), 1u) << "every rank of a job has the same MASTER_PORT";
}

// Names the case in gtest's messages instead of dumping its bytes.
void PrintTo(const Layout& test_case, std::ostream* out) { *out << test_case.name; }

class LayoutTest : public testing::TestWithParam<Layout> {};

TEST_P(LayoutTest, EveryRankGetsItsPlacementInTheEnvironment) {
  const Layout& layout = GetParam();
  std::map<int, Environment> by_rank =
      RunEnvironmentJob(layout.hvdrun_options, static_cast<int>(layout.ranks.size()));
  ExpectLayout(by_rank, layout);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, LayoutTest,
    testing::Values(
        Layout{"FourRanksOnLocalhost",
               {"-np", "4"},
               {{"localhost", 0, 0, 4, 0, 1},
                {"localhost", 0, 1, 4, 0, 1},
                {"localhost", 0, 2, 4, 0, 1},
                {"localhost", 0, 3, 4, 0, 1}},
               "127.0.0.1"},
        Layout{"TwoLocalHosts",
               {"-np", "4", "-H", "localhost:2,127.0.0.1:2"},
               {{"localhost", 0, 0, 2, 0, 2},
                {"localhost", 0, 1, 2, 0, 2},
                {"127.0.0.1", 1, 0, 2, 1, 2},
                {"127.0.0.1", 1, 1, 2, 1, 2}},
               "127.0.0.1"},
        // Horovod's cross rank: a host's index among the hosts that have the same local rank.
        Layout{"UnevenHostsWithoutNp",
               {"-H", "127.0.0.1:3,localhost:1"},
               {{"127.0.0.1", 0, 0, 3, 0, 2},
                {"127.0.0.1", 0, 1, 3, 0, 1},
                {"127.0.0.1", 0, 2, 3, 0, 1},
                {"localhost", 1, 0, 1, 1, 2}},
               "127.0.0.1"},
        // Local ranks 1 and 2 exist on the second host only, so their cross rank is 0, not 1.
        Layout{"SmallerHostFirst",
               {"-H", "localhost:1,127.0.0.1:3"},
               {{"localhost", 0, 0, 1, 0, 2},
                {"127.0.0.1", 1, 0, 3, 1, 2},
                {"127.0.0.1", 1, 1, 3, 0, 1},
                {"127.0.0.1", 1, 2, 3, 0, 1}},
               "127.0.0.1"},
        Layout{"NpBelowTheSlots",
               {"-np", "3", "-H", "localhost:2,127.0.0.2:2"},
               {{"localhost", 0, 0, 2, 0, 2}, {"localhost", 0, 1, 2, 0, 1}, {"127.0.0.2", 1, 0, 1, 1, 2}},
               "127.0.0.1"},
        Layout{"Ipv6Loopback", {"-H", "[::1]:2"}, {{"::1", 0, 0, 2, 0, 1}, {"::1", 0, 1, 2, 0, 1}}, "::1"}),
    [](const testing::TestParamInfo<Layout>& test_info) { return test_info.param.name; });

TEST(LaunchTest, ThisMachinesHostNameIsALocalHost) {
  const std::string host = ThisHostName();
  ASSERT_FALSE(host.empty());
  std::map<int, Environment> by_rank = RunEnvironmentJob({"-H", host + ":2"}, 2);
  ExpectLayout(by_rank, Layout{"", {}, {{host, 0, 0, 2, 0, 1}, {host, 0, 1, 2, 0, 1}}, host});
}

TEST(LaunchTest, HostfileGivesHostsAndSlots) {
  ScratchDir dir;
  std::string hostfile = dir.WriteFile("hosts",
                                       "# lab hosts\n"
                                       "localhost slots=2\n"
                                       "\n"
                                       "127.0.0.1 slots=1 max_slots=4   # trailing comment\n");
  std::map<int, Environment> by_rank = RunEnvironmentJob({"--hostfile", hostfile}, 3);
  ExpectLayout(
      by_rank,
      Layout{"",
             {},
             {{"localhost", 0, 0, 2, 0, 2}, {"localhost", 0, 1, 2, 0, 1}, {"127.0.0.1", 1, 0, 1, 1, 2}},
             "127.0.0.1"});
}

TEST(LaunchTest, ArgvReachesTheRankVerbatim) {
  const std::vector<std::string> args = {
      "two words", "it's \"quoted\"", "a;b",         "$(echo injected)", "",   "*",        "--",
      "-np",       "$HOME",           "back\\slash", "tab\there",        "-x", "--version"};
  ProcessResult result = RunHvdrun(Concat({{"-np", "2"}, RankCommand(Concat({{"argv"}, args}))}));
  ASSERT_EQ(result.exit_code, 0) << result;

  std::vector<std::string> expected = {"argc=" + std::to_string(args.size())};
  for (size_t i = 0; i < args.size(); ++i) {
    expected.push_back("argv[" + std::to_string(i) + "]=<" + args[i] + ">");
  }
  std::map<int, std::vector<std::string>> lines = TaggedLines(result.stdout_text, "stdout");
  ASSERT_EQ(lines.size(), 2u) << result;
  EXPECT_EQ(lines[0], expected);
  EXPECT_EQ(lines[1], expected);
}

TEST(LaunchTest, DoubleDashSeparatesTheCommand) {
  ProcessResult result = RunHvdrun(Concat({{"-np", "1", "--"}, RankCommand({"argv", "-np", "3"})}));
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_EQ(result.stdout_text, "[0]<stdout>:argc=2\n[0]<stdout>:argv[0]=<-np>\n[0]<stdout>:argv[1]=<3>\n");
}

TEST(LaunchTest, ExportedVariablesReachEveryRank) {
  ProcessOptions options;
  options.extra_env = {"HVDRUN_E2E_INHERITED=from hvdrun's environment", "HVDRUN_E2E_OVERRIDDEN=old value"};
  ProcessResult result =
      RunHvdrun(Concat({{"-np", "2", "-x", "HVDRUN_E2E_GIVEN=a b=c", "-x", "HVDRUN_E2E_INHERITED", "-x",
                         "HVDRUN_E2E_OVERRIDDEN=new value", "-x", "HVDRUN_E2E_EMPTY="},
                        RankCommand({"env", "HVDRUN_E2E_GIVEN", "HVDRUN_E2E_INHERITED",
                                     "HVDRUN_E2E_OVERRIDDEN", "HVDRUN_E2E_EMPTY"})}),
                options);
  ASSERT_EQ(result.exit_code, 0) << result;
  const std::vector<std::string> expected = {
      "HVDRUN_E2E_GIVEN=a b=c",
      "HVDRUN_E2E_INHERITED=from hvdrun's environment",
      "HVDRUN_E2E_OVERRIDDEN=new value",
      "HVDRUN_E2E_EMPTY=",
  };
  std::map<int, std::vector<std::string>> lines = TaggedLines(result.stdout_text, "stdout");
  ASSERT_EQ(lines.size(), 2u) << result;
  EXPECT_EQ(lines[0], expected);
  EXPECT_EQ(lines[1], expected);
}

TEST(LaunchTest, VerboseMessagesGoToStderrOnly) {
  ProcessResult result = RunHvdrun(Concat({{"--verbose", "-np", "2"}, RankCommand({"env", "HVDRUN_RANK"})}));
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_EQ(TaggedLines(result.stdout_text, "stdout").size(), 2u) << result;
  EXPECT_TRUE(UntaggedLines(result.stdout_text).empty()) << result;
  std::vector<std::string> messages = UntaggedLines(result.stderr_text);
  ASSERT_FALSE(messages.empty()) << result;
  for (const std::string& line : messages) EXPECT_EQ(line.rfind("hvdrun: ", 0), 0u) << line;
}

TEST(LaunchTest, CheckOfLocalhostPrintsThisMachinesRealFacts) {
  ScratchDir dir;
  ProcessResult result = RunHvdrun({"--check", "-H", "localhost", "--results", dir.path()});
  ASSERT_EQ(result.exit_code, 0) << result;
  utsname name{};
  ASSERT_EQ(::uname(&name), 0);
  EXPECT_NE(result.stdout_text.find("localhost: ok\n  ssh          local (no SSH)\n"), std::string::npos)
      << result;
  EXPECT_NE(result.stdout_text.find(std::string("\n  kernel       Linux ") + name.release + " " +
                                    name.machine + "\n"),
            std::string::npos)
      << result;
  EXPECT_NE(result.stdout_text.find("\n  hostname     " + ThisHostName() + "\n"), std::string::npos)
      << result;
  EXPECT_NE(result.stdout_text.find(std::string("\n  agent        hvdrun-agent ") + HVDRUN_TEST_VERSION),
            std::string::npos)
      << result;
  EXPECT_NE(result.stderr_text.find("hvdrun: --check: 1 host answered with the same versions"),
            std::string::npos)
      << result;
  // The facts, in the form hvdrun-lab reads.
  std::string facts = ReadFileBytes(dir.path() + "/hosts/localhost.json");
  EXPECT_NE(facts.find(std::string("\"value\": \"Linux ") + name.release), std::string::npos) << facts;
  EXPECT_NE(facts.find("\"gpu_count\": "), std::string::npos) << facts;
}

TEST(LaunchTest, VersionPrintsTheVersion) {
  ProcessResult result = RunHvdrun({"--version"});
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_EQ(result.stdout_text, std::string("hvdrun ") + HVDRUN_TEST_VERSION + "\n");
  EXPECT_EQ(result.stderr_text, "");
}

TEST(LaunchTest, HelpPrintsUsage) {
  ProcessResult result = RunHvdrun({"--help"});
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_EQ(result.stderr_text, "");
  for (const char* expected : {"usage: hvdrun", "-np", "-H", "--hostfile", "--output-filename",
                               "--start-timeout", "--verbose", "-x", "HVDRUN_RANK"}) {
    EXPECT_NE(result.stdout_text.find(expected), std::string::npos) << "missing " << expected << result;
  }
}

}  // namespace
}  // namespace hvdrun::e2e
