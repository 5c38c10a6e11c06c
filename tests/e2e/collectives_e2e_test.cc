// hvdrun --gloo end to end: the rendezvous service, libhvdrun's collectives checked by every rank
// against a float64 reference, the ranks' reports, the results directory, and the job secret.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tests/e2e/collective_rank_output.h"
#include "tests/e2e/console_output.h"
#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/installed_program.h"
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
  EXPECT_TRUE(EveryRankCheckedItsResults(result.stdout_text, ranks)) << "\n" << result;
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
  std::string bench = InstalledProgram("hvdrun-bench");
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

// Hosts of 1 and 2 slots: the second host's local rank 1 has no peer of its local rank elsewhere
// (cross_size 1), yet it takes part in the ranks' agreement on the hierarchical allreduce, which the
// uneven hosts then do without (before, the other ranks waited for its answer until the timeout).
TEST(BenchTest, RunsOnHostsOfDifferentSlotCounts) {
  const std::string bench = InstalledProgram("hvdrun-bench");
  ProcessResult result = RunHvdrun(
      {"-np", "3", "-H", "127.0.0.1:1,127.0.0.2:2", "--gloo", bench, "-b", "1K", "-e", "1K", "--iters", "3"});
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_NE(result.stdout_text.find("[0]<stdout>:        1024"), std::string::npos) << result;
}

class BenchCompressionTest : public testing::TestWithParam<std::string> {};

// hvdrun-bench --replay --compression: every format in one run, with what it sends and what it costs
// in accuracy. Each format's error is below twice its unit roundoff (2^-(mantissa bits + 1): each
// value is rounded at most twice, once on its way in and once as a sum), and above zero (it did
// travel compressed); uncompressed, it is exact.
TEST_P(BenchCompressionTest, ReplayComparesTheFormatsInOneRunWithTheirBytesAndAccuracy) {
  ScratchDir dir;
  const std::string json_path = dir.path() + "/compression.json";
  const std::string bench = InstalledProgram("hvdrun-bench");
  ProcessResult result = RunHvdrun({"-np", "2", "--" + GetParam(), bench, "--replay", "resnet18", "--op",
                                    "average", "--compression", "none,fp16,bf16,fp8", "--iters", "2",
                                    "--warmup", "1", "--json", json_path});
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_NE(result.stdout_text.find("[0]<stdout>:     128.0      1.00 fp8-e4m3"), std::string::npos)
      << result;
  const nlohmann::json document = nlohmann::json::parse(ReadFileBytes(json_path));
  ASSERT_EQ(document["settings"].size(), 4U) << document.dump(2);
  struct Expected {
    const char* name;
    double wire_low, wire_high, unit_roundoff;
  };
  const Expected expected[] = {{"none", 1.0, 1.0, 0.0},
                               {"fp16", 0.49, 0.51, std::ldexp(1.0, -11)},
                               {"bf16", 0.49, 0.51, std::ldexp(1.0, -8)},
                               {"fp8-e4m3", 0.24, 0.26, std::ldexp(1.0, -4)}};
  for (size_t i = 0; i < 4; ++i) {
    const nlohmann::json& entry = document["settings"][i];
    SCOPED_TRACE(entry.dump());
    EXPECT_EQ(entry["compression"], expected[i].name);
    EXPECT_GT(entry["step_ms"].get<double>(), 0.0);
    EXPECT_GE(entry["wire_ratio"].get<double>(), expected[i].wire_low);
    EXPECT_LE(entry["wire_ratio"].get<double>(), expected[i].wire_high);
    EXPECT_EQ(entry["nonfinite"], 0);
    const double error = entry["rel_error"].get<double>();
    const double worst = entry["worst_tensor_rel_error"].get<double>();
    if (i == 0) {
      EXPECT_EQ(entry["vs_none"].get<double>(), 1.0);
      EXPECT_EQ(error, 0.0);
      EXPECT_EQ(worst, 0.0);
    } else {
      EXPECT_GT(entry["vs_none"].get<double>(), 0.0);
      EXPECT_GT(error, 0.0);
      EXPECT_LT(error, 2 * expected[i].unit_roundoff);
      EXPECT_GE(worst, error);
    }
  }
  EXPECT_EQ(document["fp8_safeguards"]["error_feedback"], true);
}

INSTANTIATE_TEST_SUITE_P(Backends, BenchCompressionTest, testing::Values("gloo", "mpi"),
                         [](const testing::TestParamInfo<std::string>& param_info) {
                           return param_info.param;
                         });

TEST(BenchCompressionTest, ABadFormatListIsRefusedNamingTheFlag) {
  const std::string bench = InstalledProgram("hvdrun-bench");
  ProcessResult result = RunProcess({bench, "--replay", "vgg16", "--compression", "none,fp9"}, kRunTimeout);
  EXPECT_EQ(result.exit_code, 2) << result;
  EXPECT_EQ(
      result.stderr_text,
      "hvdrun-bench: --compression: 'fp9' is not a compression format (none, fp16, bf16, fp8, fp8-e4m3, "
      "fp8-e5m2)\n")
      << result;
  result = RunProcess({bench, "--replay", "vgg16", "--compression", "fp8,fp8-e4m3"}, kRunTimeout);
  EXPECT_EQ(result.exit_code, 2) << result;
  EXPECT_EQ(result.stderr_text, "hvdrun-bench: --compression: 'fp8-e4m3' is fp8-e4m3, listed twice\n")
      << result;
  result = RunProcess({bench, "--compression", "fp16"}, kRunTimeout);
  EXPECT_EQ(result.exit_code, 2) << result;
  EXPECT_NE(result.stderr_text.find("--compression and --process-sets need --replay"), std::string::npos)
      << result;
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
