// hvdrun --gloo end to end: the rendezvous service, libhvdrun's collectives checked by every rank
// against a float64 reference, the ranks' reports, the results directory, and the job secret.
#include <gtest/gtest.h>

#include <cstring>
#include <regex>
#include <string>

#include "tests/e2e/console_output.h"
#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/process_runner.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

// True when `text` holds 64 hex digits in a row other than `allowed`: what a leaked secret is.
bool HoldsASecret(const std::string& text, const std::string& allowed = "") {
  static const std::regex kSecret("[0-9a-f]{64}");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kSecret); it != std::sregex_iterator();
       ++it) {
    if (it->str() != allowed) return true;
  }
  return false;
}

class CollectivesTest : public testing::TestWithParam<int> {};

TEST_P(CollectivesTest, EveryDtypeOpAndSizeMatchesTheReference) {
  const int ranks = GetParam();
  ScratchDir dir;
  std::string results = dir.path() + "/results";
  ProcessResult result = RunHvdrun({"-np", std::to_string(ranks), "--gloo", "--verbose", "--results", results,
                                    HVDRUN_TEST_COLLECTIVES_PATH});
  ASSERT_EQ(result.exit_code, 0) << result;
  for (int rank = 0; rank < ranks; ++rank) {
    std::string line = "[" + std::to_string(rank) + "]<stdout>:rank " + std::to_string(rank) + " of " +
                       std::to_string(ranks) + ": checked ";
    EXPECT_NE(result.stdout_text.find(line), std::string::npos) << line << result;
  }
  EXPECT_NE(result.stdout_text.find("results, 0 failed"), std::string::npos) << result;
  EXPECT_NE(result.stdout_text.find("hvdrun: " + std::to_string(ranks) + " ranks reported"),
            std::string::npos)
      << result;
  EXPECT_FALSE(HoldsASecret(result.stdout_text + result.stderr_text)) << result;

  std::string plan = ReadFileBytes(results + "/plan.json");
  EXPECT_NE(plan.find("\"backend\": \"gloo\""), std::string::npos) << plan;
  for (int rank = 0; rank < ranks; ++rank) {
    std::string report = ReadFileBytes(results + "/ranks/rank-" + std::to_string(rank) + ".json");
    EXPECT_NE(report.find("\"failures\": 0"), std::string::npos) << rank << ": " << report;
  }
  std::string summary = ReadFileBytes(results + "/summary.json");
  EXPECT_NE(summary.find("\"ranks_reporting\": " + std::to_string(ranks)), std::string::npos) << summary;
  EXPECT_FALSE(HoldsASecret(plan + summary));
  // The host's facts, gathered by its agent, in the form hvdrun-lab reads.
  std::string facts = ReadFileBytes(results + "/hosts/localhost.json");
  EXPECT_NE(facts.find("\"host\": \"localhost\""), std::string::npos) << facts;
  EXPECT_NE(facts.find("\"kernel\": {"), std::string::npos) << facts;
}

INSTANTIATE_TEST_SUITE_P(WorldSizes, CollectivesTest, testing::Values(1, 2, 3, 4),
                         [](const testing::TestParamInfo<int>& param) {
                           return std::to_string(param.param) + "Ranks";
                         });

TEST(NetworkInterfaceTest, LoopbackCarriesTheJobWhenNamed) {
  ProcessResult result = RunHvdrun(
      {"-np", "2", "--gloo", "--network-interface", "lo", "--verbose", HVDRUN_TEST_COLLECTIVES_PATH});
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_NE(result.stdout_text.find("results, 0 failed"), std::string::npos) << result;
  EXPECT_NE(result.stderr_text.find("rendezvous service on 127.0.0.1:"), std::string::npos) << result;
  EXPECT_NE(result.stderr_text.find("host localhost: job traffic on 127.0.0.1 (--network-interface)"),
            std::string::npos)
      << result;
}

TEST(BenchTest, SweepsSizesAndWritesTheJsonTheIssueAsksFor) {
  ScratchDir dir;
  std::string json_path = dir.path() + "/bench.json";
  std::string bench = std::string(HVDRUN_TEST_BIN_DIR) + "/hvdrun-bench";
  ProcessResult result = RunHvdrun({"-np", "2", "--gloo", bench, "-b", "1K", "-e", "4K", "-f", "2", "--iters",
                                    "3", "--warmup", "1", "--baseline", "--json", json_path});
  ASSERT_EQ(result.exit_code, 0) << result;
  // Rank 0 prints the table; the sizes are 1, 2 and 4 KiB.
  for (const char* size : {"1024", "2048", "4096"}) {
    EXPECT_NE(result.stdout_text.find(std::string("[0]<stdout>:") + std::string(12 - std::strlen(size), ' ') +
                                      size),
              std::string::npos)
        << size << result;
  }
  EXPECT_EQ(result.stdout_text.find("[1]<stdout>:        1024"), std::string::npos) << result;
  std::string json = ReadFileBytes(json_path);
  for (const char* field :
       {"\"backend\": \"gloo\"", "\"ranks\": 2", "\"bytes\": 4096", "\"time_us\"", "\"algbw_gbps\"",
        "\"busbw_gbps\"", "\"max_error\": 0.0", "\"baseline_time_us\"", "\"baseline_busbw_gbps\""}) {
    EXPECT_NE(json.find(field), std::string::npos) << field << "\n" << json;
  }
  EXPECT_NE(result.stdout_text.find("busbw_gbps"), std::string::npos)
      << "hvdrun's summary of the reports" << result;
}

TEST(RendezvousTest, AWrongSecretIsRefusedAndLoggedByPeerAddress) {
  const std::string wrong(64, '0');
  ProcessResult result =
      RunHvdrun({"-np", "2", "--gloo", "-x", "HVDRUN_SECRET=" + wrong, HVDRUN_TEST_COLLECTIVES_PATH});
  ASSERT_NE(result.exit_code, 0) << result;
  EXPECT_NE(result.stderr_text.find("hvdrun: rendezvous: refused 127.0.0.1:"), std::string::npos) << result;
  EXPECT_NE(result.stderr_text.find("wrong secret"), std::string::npos) << result;
  EXPECT_NE(result.stderr_text.find("failed first"), std::string::npos) << result;
  EXPECT_FALSE(HoldsASecret(result.stdout_text + result.stderr_text, wrong)) << result;
}

TEST(RendezvousTest, ARankOutsideHvdrunIsToldWhatIsMissing) {
  ProcessOptions options;
  options.unset_env = {"HVDRUN_BACKEND", "HVDRUN_RANK", "HVDRUN_SIZE", "HVDRUN_SECRET"};
  ProcessResult result = RunProcess({HVDRUN_TEST_COLLECTIVES_PATH}, kRunTimeout, options);
  EXPECT_EQ(result.exit_code, 1) << result;
  EXPECT_NE(result.stderr_text.find("is not set"), std::string::npos) << result;
}

}  // namespace
}  // namespace hvdrun::e2e
