#include "launcher/command_line/elastic_flags.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "launcher/command_line/command_line.h"

namespace hvdrun {
namespace {

ParsedCommandLine Parse(std::vector<std::string> args,
                        const std::map<std::string, std::string>& environment = {}) {
  args.insert(args.begin(), "hvdrun");
  std::vector<const char*> argv;
  argv.reserve(args.size());
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return ParseCommandLine(static_cast<int>(argv.size()), argv.data(), LookupIn(environment));
}

TEST(ElasticFlags, NoElasticFlagIsNoElasticJob) {
  ParsedCommandLine parsed = Parse({"-np", "2", "./train"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_FALSE(parsed.options->elastic.has_value());
}

TEST(ElasticFlags, HorovodrunsElasticCommandLine) {
  ParsedCommandLine parsed =
      Parse({"-np", "4", "--min-np", "2", "--max-np", "8", "--host-discovery-script", "./hosts.sh",
             "--slots-per-host", "2", "--elastic-timeout", "60", "--reset-limit", "3",
             "--blacklist-cooldown-range", "10", "100", "python3", "train.py"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  const ElasticOptions& elastic = *parsed.options->elastic;
  EXPECT_EQ(elastic.min_np, 2);
  EXPECT_EQ(elastic.max_np, 8);
  EXPECT_EQ(elastic.discovery_script, "./hosts.sh");
  EXPECT_EQ(elastic.slots_per_host, 2);
  EXPECT_EQ(elastic.timeout_s, 60);
  EXPECT_EQ(elastic.reset_limit, 3);
  ASSERT_TRUE(elastic.cooldown.has_value());
  EXPECT_EQ(elastic.cooldown->min_s, 10);
  EXPECT_EQ(elastic.cooldown->max_s, 100);
  EXPECT_EQ(parsed.options->command, (std::vector<std::string>{"python3", "train.py"}));
}

TEST(ElasticFlags, DefaultsAreHorovodrunsAndTheTimeoutComesFromItsVariable) {
  ParsedCommandLine parsed = Parse({"-np", "3", "-H", "localhost:3", "--min-num-proc", "2", "./train"},
                                   {{"HOROVOD_ELASTIC_TIMEOUT", "45"}});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  const ElasticOptions& elastic = *parsed.options->elastic;
  EXPECT_EQ(elastic.min_np, 2);
  EXPECT_EQ(elastic.max_np, 0);
  EXPECT_TRUE(elastic.discovery_script.empty());
  EXPECT_EQ(elastic.slots_per_host, 1);
  EXPECT_EQ(elastic.timeout_s, 45);
  EXPECT_FALSE(elastic.reset_limit.has_value());
  EXPECT_FALSE(elastic.cooldown.has_value());
  parsed = Parse({"-np", "3", "--host-discovery-script", "./h", "./train"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_EQ(parsed.options->elastic->min_np, 3);
  EXPECT_EQ(parsed.options->elastic->timeout_s, 600);
}

// Inside an allocation whose agents start through srun, discovery may give its nodes only.
TEST(ElasticFlags, InsideASlurmAllocationDiscoveryIsHeldToItsNodes) {
  const std::map<std::string, std::string> allocation = {
      {"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NODELIST", "n[1-3]"}, {"SLURM_TASKS_PER_NODE", "1(x3)"}};
  ParsedCommandLine parsed =
      Parse({"-np", "2", "--min-np", "2", "--host-discovery-script", "./h", "./train"}, allocation);
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  const AllowedHosts& allowed = parsed.options->elastic->allowed;
  EXPECT_EQ(allowed.hosts, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(allowed.where, "Slurm job 42 (SLURM_JOB_NODELIST='n[1-3]')");
  // Over SSH, any host the script names can be reached.
  parsed = Parse({"-np", "2", "--launcher", "ssh", "--host-discovery-script", "./h", "./train"}, allocation);
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_TRUE(parsed.options->elastic->allowed.hosts.empty());
  parsed = Parse({"-np", "2", "--host-discovery-script", "./h", "./train"});
  ASSERT_TRUE(parsed.options.has_value()) << parsed.error;
  EXPECT_TRUE(parsed.options->elastic->allowed.hosts.empty());
}

TEST(ElasticFlags, EachMistakeIsOneLineNamingTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"-np", "2", "--max-np", "4", "./t"},
       "--max-np: only for an elastic job; give --min-np or --host-discovery-script too"},
      {{"-np", "2", "--min-np", "3", "./t"},
       "--min-np 3: more than -np 2 (the ranks an elastic job starts with)"},
      {{"-np", "4", "--min-np", "2", "--max-np", "3", "./t"},
       "--max-np 3: fewer than -np 4 (the ranks an elastic job starts with)"},
      {{"-np", "2", "--min-np", "0", "./t"}, "--min-np: 0 is out of range (1 to 1048576)"},
      {{"-np", "2", "--min-np", "1", "--elastic-timeout", "x", "./t"},
       "--elastic-timeout: 'x' is not a whole number"},
      {{"-np", "2", "--min-np", "1", "--blacklist-cooldown-range", "0", "10", "./t"},
       "--blacklist-cooldown-range MIN: 0 is out of range (1 to 3600)"},
      {{"-np", "2", "--min-np", "1", "--blacklist-cooldown-range", "20", "10", "./t"},
       "--blacklist-cooldown-range 20 10: MIN is above MAX"},
      {{"-np", "2", "--min-np", "1", "--blacklist-cooldown-range", "20"},
       "--blacklist-cooldown-range: expects a value (MIN MAX) after it; none was given"},
      {{"-np", "2", "-H", "a:2", "--host-discovery-script", "./h", "./t"},
       "--host-discovery-script: the hosts come from the script; leave out -H and --hostfile"},
  };
  for (const auto& [args, error] : cases) {
    ParsedCommandLine parsed = Parse(args);
    EXPECT_FALSE(parsed.options.has_value());
    EXPECT_EQ(parsed.exit_code, 2);
    EXPECT_EQ(parsed.error, error);
  }
}

TEST(ElasticFlags, MpiJobsAreNotElastic) {
  ParsedCommandLine parsed = Parse({"-np", "2", "--mpi", "--min-np", "1", "./t"});
  EXPECT_FALSE(parsed.options.has_value());
  EXPECT_EQ(parsed.exit_code, 2);
  EXPECT_EQ(parsed.error.rfind("--min-np: an elastic job needs the Gloo controller", 0), 0u) << parsed.error;
  EXPECT_NE(parsed.error.find("the controller is mpi"), std::string::npos) << parsed.error;
}

}  // namespace
}  // namespace hvdrun
