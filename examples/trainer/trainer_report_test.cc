#include "examples/trainer/trainer_report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/e2e/scratch_dir.h"

namespace hvdrun::trainer {
namespace {

RunSettings Settings(bool synthetic) {
  RunSettings s;
  s.model = synthetic ? "resnet50" : "fmnist-cnn";
  s.synthetic = synthetic;
  s.backend = "gloo";
  s.ranks = 2;
  s.rank = 1;
  s.device = "cpu";
  s.threads = 1;
  s.batch_size = 32;
  s.image_size = synthetic ? 224 : 28;
  s.lr = 0.02;
  s.steps = 2;
  s.epochs = 1;
  return s;
}

TrainingResult Result(bool with_accuracy) {
  TrainingResult r;
  StepRecord step;
  step.step_s = 2;
  step.comm_wait_s = 0.5;
  step.compute_s = 1.5;
  step.comm_overlapped_s = 0.25;
  step.images = 32;
  step.loss = 2.5;
  r.steps = {step, step};
  r.bytes_reduced_per_step = 100;
  r.bytes_reduced = 300;
  r.steps_run = 3;
  r.parameter_checksum = "0123456789abcdef";
  r.group.step_time_s = 2.5;
  r.group.img_per_sec_per_rank = 14;
  r.group.img_per_sec_total = 28;
  if (with_accuracy) {
    r.test_accuracy = 0.75;
    r.epochs.push_back({1, 0.5, 0.75, 1000, 10});
  }
  return r;
}

TEST(TrainerReportTest, RankReportCarriesStepsAndASummaryOfNumbers) {
  nlohmann::json report = RankReport(Settings(false), Result(true));
  EXPECT_EQ(report["rank"], 1);
  EXPECT_EQ(report["model"], "fmnist-cnn");
  EXPECT_EQ(report["mode"], "dataset");
  ASSERT_EQ(report["timed_steps"].size(), 2U);
  EXPECT_EQ(report["timed_steps"][0]["compute_s"], 1.5);
  EXPECT_EQ(report["timed_steps"][0]["comm_wait_s"], 0.5);
  EXPECT_EQ(report["timed_steps"][0]["img_per_sec"], 16);
  EXPECT_EQ(report["bytes_reduced"], 300);
  EXPECT_EQ(report["parameter_checksum"], "0123456789abcdef");
  const nlohmann::json& summary = report["summary"];
  for (const auto& item : summary.items()) EXPECT_TRUE(item.value().is_number()) << item.key();
  EXPECT_EQ(summary["step_time_s"], 2);
  EXPECT_EQ(summary["img_per_sec"], 16);
  EXPECT_EQ(summary["img_per_sec_total"], 28);
  EXPECT_EQ(summary["test_accuracy"], 0.75);
  EXPECT_EQ(summary["train_loss"], 0.5);
  // What hvdrun-lab's step breakdown reads (lab/report/step_breakdown.h).
  EXPECT_EQ(summary["compute_time_s"], 1.5);
  EXPECT_EQ(summary["comm_wait_s"], 0.5);
  EXPECT_EQ(summary["comm_overlapped_s"], 0.25);
  EXPECT_EQ(summary["bytes_reduced_per_step"], 100);
  EXPECT_EQ(report["timed_steps"][0]["comm_overlapped_s"], 0.25);
}

TEST(TrainerReportTest, RunDocumentHasTheFieldsTheIssueNames) {
  nlohmann::json synthetic = RunDocument(Settings(true), Result(false));
  for (const char* field : {"model", "backend", "ranks", "batch_size", "image_size", "step_time_s",
                            "img_per_sec_per_rank", "img_per_sec_total", "test_accuracy"}) {
    EXPECT_TRUE(synthetic.contains(field)) << field;
  }
  EXPECT_TRUE(synthetic["test_accuracy"].is_null());
  EXPECT_EQ(synthetic["img_per_sec_total"], 28);
  EXPECT_EQ(synthetic["ranks"], 2);
  EXPECT_FALSE(synthetic.contains("rank"));
  EXPECT_EQ(RunDocument(Settings(false), Result(true))["test_accuracy"], 0.75);
}

TEST(TrainerReportTest, AnElasticRunRecordsEveryRoundAndTheSamplesTrained) {
  EXPECT_FALSE(RankReport(Settings(false), Result(true)).contains("elastic")) << "only with --elastic";
  EXPECT_FALSE(RunDocument(Settings(false), Result(true)).contains("elastic")) << "only with --elastic";
  RunSettings settings = Settings(false);
  settings.elastic = true;
  settings.commit_every = 5;
  TrainingResult result = Result(true);
  result.samples_trained = 1000;
  result.rounds = {{0, 3, 7, 640, 0}, {1, 2, 9, 360, 1.25}};
  for (const nlohmann::json& document : {RankReport(settings, result), RunDocument(settings, result)}) {
    const nlohmann::json& elastic = document["elastic"];
    EXPECT_EQ(elastic["commit_every"], 5) << elastic.dump();
    EXPECT_EQ(elastic["samples_trained"], 1000);
    ASSERT_EQ(elastic["rounds"].size(), 2U);
    EXPECT_EQ(
        elastic["rounds"][1],
        (nlohmann::json{{"round", 1}, {"ranks", 2}, {"steps", 9}, {"samples", 360}, {"reform_s", 1.25}}));
    EXPECT_EQ(document["parameter_checksum"], "0123456789abcdef") << "the other fields stay";
  }
}

TEST(TrainerReportTest, WritesTheFileWholeAndLeavesNoTemporary) {
  e2e::ScratchDir dir;
  std::string path = dir.path() + "/run.json";
  Status status = WriteJsonFile(path, {{"a", 1}});
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(nlohmann::json::parse(e2e::ReadFileBytes(path)), nlohmann::json({{"a", 1}}));
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1U);

  std::string bad = dir.path() + "/no/such/dir/run.json";
  status = WriteJsonFile(bad, {{"a", 1}});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "--json: cannot write '" + bad + "': No such file or directory");
}

}  // namespace
}  // namespace hvdrun::trainer
