// Autotuning under hvdrun (docs/autotune.md) with real processes: two local Gloo ranks of
// hvdrun-test-horovod-rank's `steps` mode, whose step times differ (rank 1 computes 2 ms longer per
// step), tuned with a short warm-up and short samples so that the search ends within a few seconds.
// Every rank must end with the setting rank 0 chose (their reports in --results say what their last
// cycle ran with), the log file must hold Horovod's columns, one line per sample and the choice, and
// rank 0's closing line must say what was kept. Nothing may outlive hvdrun.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/job_marker.h"
#include "tests/e2e/process_runner.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

using std::chrono::milliseconds;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(Autotune, EveryRankEndsWithTheSettingRankZeroChoseAndLogged) {
  ScratchDir dir;
  const std::string results = dir.path() + "/results";
  const std::string log = dir.path() + "/tune.csv";
  JobMarker marker;
  ProcessResult result =
      RunHvdrun({"-np", "2", "--gloo", "--results", results, "--autotune", "--autotune-log-file", log,
                 "--autotune-warmup-samples", "1", "--autotune-steps-per-sample", "2",
                 "--autotune-bayes-opt-max-samples", "6", HVDRUN_TEST_HOROVOD_RANK_PATH, "steps", "40"},
                marker.Options());
  EXPECT_TRUE(marker.WaitUntilNoneRuns(milliseconds(3'000)).empty()) << "processes outlived hvdrun";
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_NE(result.stderr_text.find("autotune: kept fusion threshold "), std::string::npos) << result;
  EXPECT_NE(result.stderr_text.find("the starting setting's (128 MiB, 1 ms: "), std::string::npos) << result;
  EXPECT_NE(result.stderr_text.find("; 6 samples, 12 steps scored"), std::string::npos) << result;

  std::vector<nlohmann::json> negotiation;
  for (int rank = 0; rank < 2; ++rank) {
    const std::string report = ReadAll(results + "/ranks/rank-" + std::to_string(rank) + ".json");
    ASSERT_FALSE(report.empty()) << "no report of rank " << rank;
    negotiation.push_back(nlohmann::json::parse(report)["libhvdrun"]["negotiation"]);
  }
  EXPECT_EQ(negotiation[0]["fusion_threshold_bytes"], negotiation[1]["fusion_threshold_bytes"]);
  EXPECT_EQ(negotiation[0]["cycle_time_ms"], negotiation[1]["cycle_time_ms"]);

  const std::vector<std::string> lines = Lines(ReadAll(log));
  ASSERT_EQ(lines.size(), 1u + 6 + 1) << ReadAll(log);
  EXPECT_EQ(lines[0],
            "hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,cycle_time_ms,"
            "tensor_fusion_threshold,score,score_spread,chosen");
  // The first sample is the starting setting: 1 ms, 128 MiB.
  EXPECT_EQ(lines[1].rfind("0,0,0,1,1,128,", 0), 0u) << lines[1];
  std::vector<std::string> chosen;
  std::istringstream last(lines.back());
  for (std::string field; std::getline(last, field, ',');) chosen.push_back(field);
  ASSERT_EQ(chosen.size(), 9u) << lines.back();
  EXPECT_EQ(chosen[8], "1");
  EXPECT_NEAR(std::stod(chosen[4]), negotiation[0]["cycle_time_ms"].get<double>(), 0.01) << lines.back();
  EXPECT_NEAR(std::stod(chosen[5]) * 1024 * 1024, negotiation[0]["fusion_threshold_bytes"].get<double>(),
              2048.0)
      << lines.back();
}

}  // namespace
}  // namespace hvdrun::e2e
