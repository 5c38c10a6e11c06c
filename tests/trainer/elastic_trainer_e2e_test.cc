// hvdrun-trainer --elastic end to end: three one-slot hosts (all this machine), hvdrun --min-np 2;
// rank 1 is SIGKILLed in the middle of training. The two others go back to their last commit,
// re-form, and finish the run: exit 0, two rounds in the report, and every training example of
// every epoch counted exactly once.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/job_marker.h"
#include "tests/e2e/process_runner.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

constexpr const char* kFashionMnist = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";
constexpr int64_t kTrainExamples = 3000;
constexpr int kEpochs = 4;

TEST(ElasticTrainerTest, ALostRankLeavesTheRunToTheOthersAndEachExampleIsCountedOnce) {
  struct stat info {};
  if (::stat(kFashionMnist, &info) != 0) {
    GTEST_SKIP() << kFashionMnist << " is missing: install dataset-fashion-mnist";
  }
  ScratchDir dir;
  const std::string out = dir.path() + "/out";
  const std::string json_path = dir.path() + "/run.json";
  const std::string results = dir.path() + "/results";
  // Rank 1 kills itself (its shell's pid is the trainer's, after exec) 0.2 s after rank 0 has
  // printed the first epoch's line: in the second epoch, most likely between two commits. The watch
  // gives up after 60 s.
  const std::string rank_script =
      "if [ \"$HVDRUN_RANK\" = 1 ]; then ( i=0; while [ $i -lt 1200 ] && ! grep -q '^epoch 1/' '" + out +
      "/rank.0/stdout' 2>/dev/null; do sleep 0.05; i=$((i+1)); done; sleep 0.2; kill -9 $$ ) >/dev/null 2>&1 "
      "& fi; "
      "exec \"$0\" \"$@\"";
  const std::vector<std::string> trainer =
      RankCommand({"--model", "fmnist-cnn", "--elastic", "--commit-every", "4", "--epochs",
                   std::to_string(kEpochs), "--train-limit", std::to_string(kTrainExamples), "--test-limit",
                   "500", "--batch-size", "32", "--threads", "1", "--json", json_path});
  JobMarker marker;
  ProcessResult result =
      RunHvdrun(Concat({{"-np", "3", "-H", "127.0.0.1:1,127.0.0.2:1,127.0.0.3:1", "--min-np", "2", "--gloo",
                         "--results", results, "--output-filename", out, "sh", "-c", rank_script},
                        trainer}),
                marker.Options());
  marker.ExpectNoneRunsWithin(std::chrono::milliseconds(2'000));
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_NE(result.stderr_text.find("hvdrun: elastic: round 1: 2 ranks on 2 hosts; hosts lost: 127.0.0.2;"),
            std::string::npos)
      << result;

  nlohmann::json run = nlohmann::json::parse(ReadFileBytes(json_path), nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(run.is_object()) << result;
  EXPECT_EQ(run["ranks"], 2) << "the last round's";
  const nlohmann::json& elastic = run["elastic"];
  ASSERT_EQ(elastic["rounds"].size(), 2U) << run.dump();
  const nlohmann::json& first = elastic["rounds"][0];
  const nlohmann::json& second = elastic["rounds"][1];
  EXPECT_EQ(first["round"], 0);
  EXPECT_EQ(first["ranks"], 3);
  EXPECT_EQ(second["round"], 1);
  EXPECT_EQ(second["ranks"], 2);
  EXPECT_GE(first["samples"].get<int64_t>(), kTrainExamples)
      << "the first epoch was committed before the kill";
  EXPECT_GT(second["samples"].get<int64_t>(), 0);
  EXPECT_GT(second["reform_s"].get<double>(), 0);
  // Each example of each epoch once: what the lost rank trained after the last commit was trained
  // again by the survivors and counted once.
  EXPECT_EQ(elastic["samples_trained"], kEpochs * kTrainExamples);
  EXPECT_EQ(first["samples"].get<int64_t>() + second["samples"].get<int64_t>(), kEpochs * kTrainExamples);
  EXPECT_EQ(run["epochs_run"].size(), static_cast<size_t>(kEpochs));
  EXPECT_GT(run["test_accuracy"].get<double>(), 0.3) << "chance is 0.1";

  // The survivors end with the same parameters, and count the same committed steps.
  nlohmann::json reports[2];
  for (int rank = 0; rank < 2; ++rank) {
    const std::string path = results + "/ranks/rank-" + std::to_string(rank) + ".json";
    reports[rank] = nlohmann::json::parse(ReadFileBytes(path), nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(reports[rank].is_object()) << path << result;
    EXPECT_EQ(reports[rank]["steps_run"], first["steps"].get<int64_t>() + second["steps"].get<int64_t>());
    EXPECT_EQ(reports[rank]["elastic"], elastic);
  }
  EXPECT_EQ(reports[0]["parameter_checksum"], reports[1]["parameter_checksum"]);
  EXPECT_EQ(reports[0]["parameter_checksum"], run["parameter_checksum"]);

  const std::string rank0 = ReadFileBytes(out + "/rank.0/stdout");
  EXPECT_NE(rank0.find("round 1: 2 ranks, from epoch "), std::string::npos) << rank0;
  EXPECT_NE(rank0.find(std::to_string(kEpochs * kTrainExamples) + " training examples in 2 rounds"),
            std::string::npos)
      << rank0;
}

}  // namespace
}  // namespace hvdrun::e2e
