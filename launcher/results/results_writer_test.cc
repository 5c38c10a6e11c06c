#include "launcher/results/results_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "tests/e2e/scratch_dir.h"

namespace hvdrun {
namespace {

std::string ReadFile(const std::filesystem::path& path) { return e2e::ReadFileBytes(path.string()); }

class ResultsWriterTest : public testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_ =
      std::filesystem::temp_directory_path() / ("hvdrun_results_" + std::to_string(::getpid()));
};

TEST_F(ResultsWriterTest, WritesPlanReportsAndSummary) {
  StatusOr<RankAssignment> assignment = RankAssignment::Assign({{"localhost", 2}, {"127.0.0.1", 1}}, 3);
  ASSERT_TRUE(assignment.ok());
  LaunchOptions options;
  options.command = {"hvdrun-bench", "-e", "1M"};
  options.exports = {"OMP_NUM_THREADS=2", "API_TOKEN=do-not-store"};
  options.backend = BackendKind::kGloo;
  nlohmann::json plan = PlanToJson(assignment.value(), options, "job42");
  ASSERT_TRUE(
      WriteResults(dir_.string(), plan, {{0, R"({"a":1})"}, {2, R"({"b":2})"}}, {{"ranks_reporting", 2}})
          .ok());

  nlohmann::json written = nlohmann::json::parse(ReadFile(dir_ / "plan.json"));
  EXPECT_EQ(written["job_id"], "job42");
  EXPECT_EQ(written["backend"], "gloo");
  EXPECT_EQ(written["num_proc"], 3);
  EXPECT_EQ(written["hosts"][1]["host"], "127.0.0.1");
  EXPECT_EQ(written["ranks"][2]["cross_rank"], 1);
  EXPECT_EQ(written["exported_variables"], nlohmann::json({"OMP_NUM_THREADS", "API_TOKEN"}));
  EXPECT_EQ(ReadFile(dir_ / "plan.json").find("do-not-store"), std::string::npos);
  EXPECT_EQ(ReadFile(dir_ / "ranks" / "rank-2.json"), "{\"b\":2}\n");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "ranks" / "rank-1.json"));
  EXPECT_EQ(nlohmann::json::parse(ReadFile(dir_ / "summary.json"))["ranks_reporting"], 2);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

// A directory reused by a smaller job keeps none of the larger job's reports, so that no report is
// counted as this job's; the stall check's recorder files beside them stay.
TEST_F(ResultsWriterTest, AnEarlierJobsReportsOfOtherRanksAreRemoved) {
  std::filesystem::create_directories(dir_ / "ranks");
  for (const char* name :
       {"rank-0.json", "rank-3.json", "rank-12.json", "rank-3.recorder.json", "rank-x.json"}) {
    std::FILE* file = std::fopen((dir_ / "ranks" / name).c_str(), "w");
    ASSERT_NE(file, nullptr) << name;
    std::fclose(file);
  }
  ASSERT_TRUE(WriteResults(dir_.string(), {{"num_proc", 2}}, {{0, "{}"}, {1, "{}"}}, {}).ok());
  EXPECT_EQ(ReadFile(dir_ / "ranks" / "rank-0.json"), "{}\n");
  EXPECT_TRUE(std::filesystem::exists(dir_ / "ranks" / "rank-1.json"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "ranks" / "rank-3.json"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "ranks" / "rank-12.json"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "ranks" / "rank-3.recorder.json"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "ranks" / "rank-x.json"));
}

// summary.json says how the job ended, so that a failed job's (exit code 127: the program was not
// found) never reads as a good one, also where it replaces a good job's in the same directory.
TEST_F(ResultsWriterTest, TheSummarySaysHowTheJobEnded) {
  StatusOr<RankAssignment> assignment = RankAssignment::Assign({{"localhost", 1}}, 1);
  ASSERT_TRUE(assignment.ok());
  LaunchOptions options;
  options.results_dir = dir_.string();
  ASSERT_TRUE(PublishResults({{0, R"({"summary": {"step_time_s": 0.5}})"}}, assignment.value(), options,
                             "job1", 0, {LaunchRound(assignment.value())})
                  .ok());
  nlohmann::json summary = nlohmann::json::parse(ReadFile(dir_ / "summary.json"));
  EXPECT_EQ(summary["status"], "ok");
  EXPECT_EQ(summary["exit_code"], 0);
  EXPECT_EQ(summary["ranks_reporting"], 1);
  EXPECT_EQ(summary["rounds"].size(), 1u);

  ASSERT_TRUE(PublishResults({}, assignment.value(), options, "job2", 127, {}).ok());
  summary = nlohmann::json::parse(ReadFile(dir_ / "summary.json"));
  EXPECT_EQ(summary["status"], "failed");
  EXPECT_EQ(summary["exit_code"], 127);
  EXPECT_EQ(summary["ranks_reporting"], 0);
  EXPECT_EQ(summary["rounds"], nlohmann::json::array());  // its ranks were not started
}

// A job that is not elastic runs in one round, its launch; an elastic job's rounds follow it, each
// with what changed and when, and its settings stay in plan.json.
TEST_F(ResultsWriterTest, TheSummaryRecordsEveryRound) {
  StatusOr<RankAssignment> assignment = RankAssignment::Assign({{"a", 2}, {"b", 1}, {"c", 1}}, 4);
  ASSERT_TRUE(assignment.ok());
  const JobRound launch = LaunchRound(assignment.value());
  EXPECT_EQ(JobRoundsToJson({launch}), nlohmann::json::parse(R"([{"round": 0, "size": 4,
      "hosts": ["a", "b", "c"], "hosts_lost": [], "hosts_added": [], "why": "start",
      "formed_at_seconds": 0.0, "seconds": 0.0}])"));

  LaunchOptions options;
  options.results_dir = dir_.string();
  const JobRound lost{1, 3, {"a", "c"}, {"b"}, {}, "b/0/2 killed by SIGKILL", 12.5, 0.75};
  const JobRound grown{2, 4, {"a", "c", "d"}, {}, {"d"}, "new slots on d", 30.25, 2};
  ASSERT_TRUE(PublishResults({}, assignment.value(), options, "job3", 0, {launch, lost, grown}, nullptr,
                             {{"min_np", 2}}, {{"rounds", 3}})
                  .ok());
  const nlohmann::json summary = nlohmann::json::parse(ReadFile(dir_ / "summary.json"));
  ASSERT_EQ(summary["rounds"].size(), 3u);
  EXPECT_EQ(summary["rounds"][1], nlohmann::json::parse(R"({"round": 1, "size": 3, "hosts": ["a", "c"],
      "hosts_lost": ["b"], "hosts_added": [], "why": "b/0/2 killed by SIGKILL", "formed_at_seconds": 12.5,
      "seconds": 0.75})"));
  EXPECT_EQ(summary["rounds"][2]["hosts_added"], nlohmann::json::array({"d"}));
  EXPECT_EQ(summary["elastic"]["rounds"], 3);
  const nlohmann::json plan = nlohmann::json::parse(ReadFile(dir_ / "plan.json"));
  EXPECT_EQ(plan["elastic"], nlohmann::json({{"min_np", 2}}));
}

TEST_F(ResultsWriterTest, AFileThatCannotBeWrittenIsNamedAsAResultsFile) {
  std::filesystem::create_directories(dir_);
  std::string path = (dir_ / "f.json").string();
  ASSERT_TRUE(WriteResultsFile(path, "whole").ok());
  EXPECT_EQ(ReadFile(path), "whole");
  std::string missing = (dir_ / "no" / "f.json").string();
  EXPECT_EQ(WriteResultsFile(missing, "x").message(),
            "--results: cannot write '" + missing + "': No such file or directory");
}

TEST_F(ResultsWriterTest, UnwritableDirectoryIsNamed) {
  Status status = WriteResults("/proc/hvdrun-results", {}, {}, {});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("--results: cannot create '/proc/hvdrun-results/ranks'", 0), 0u)
      << status.message();
}

}  // namespace
}  // namespace hvdrun
