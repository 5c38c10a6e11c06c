// hvdrun-trainer end to end, through the installed hvdrun: training on Fashion-MNIST with two
// ranks (loss falls, accuracy well above chance, both ranks end with the same parameters, the
// report reaches --results, --json has its fields), a synthetic ResNet-18 run, a run without
// hvdrun, and bad input.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e/console_output.h"
#include "tests/e2e/installed_hvdrun.h"
#include "tests/e2e/process_runner.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::e2e {
namespace {

// Training runs take seconds on an idle machine; the limit allows for a loaded one.
constexpr std::chrono::milliseconds kTrainingTimeout{150'000};
constexpr const char* kFashionMnist = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";

bool Exists(const char* path) {
  struct stat info {};
  return ::stat(path, &info) == 0;
}

nlohmann::json ReadJson(const std::string& path) {
  return nlohmann::json::parse(ReadFileBytes(path), nullptr, /*allow_exceptions=*/false);
}

// The trainer run directly, outside hvdrun, with no HVDRUN_* variable in its environment.
ProcessResult RunTrainerAlone(const std::vector<std::string>& args) {
  ProcessOptions options;
  options.unset_env = {"HVDRUN_RANK", "HVDRUN_SIZE", "HVDRUN_BACKEND", "HVDRUN_LOCAL_SIZE"};
  return RunProcess(RankCommand(args), kTrainingTimeout, options);
}

TEST(TrainerTest, FmnistCnnOnTwoRanksLearnsAndKeepsTheRanksInStep) {
  if (!Exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " is missing: install dataset-fashion-mnist";
  ScratchDir dir;
  const std::string results = dir.path() + "/results";
  const std::string json_path = dir.path() + "/run.json";
  ProcessResult result =
      StartHvdrun(Concat({{"-np", "2", "--gloo", "--results", results},
                          RankCommand({"--model", "fmnist-cnn", "--epochs", "3", "--train-limit", "6000",
                                       "--test-limit", "2000", "--threads", "1", "--lr", "0.03", "--json",
                                       json_path})}))
          .Wait(kTrainingTimeout);
  ASSERT_EQ(result.exit_code, 0) << result;
  // Rank 0 alone prints progress.
  EXPECT_NE(result.stdout_text.find("[0]<stdout>:epoch 3/3: train loss "), std::string::npos) << result;
  EXPECT_EQ(result.stdout_text.find("[1]<stdout>:epoch"), std::string::npos) << result;

  nlohmann::json rank0 = ReadJson(results + "/ranks/rank-0.json");
  nlohmann::json rank1 = ReadJson(results + "/ranks/rank-1.json");
  ASSERT_TRUE(rank0.is_object()) << ReadFileBytes(results + "/ranks/rank-0.json");
  ASSERT_TRUE(rank1.is_object()) << ReadFileBytes(results + "/ranks/rank-1.json");
  // Same initial parameters (rank 0's, broadcast), same averaged gradients: same bits at the end.
  EXPECT_EQ(rank0["parameter_checksum"], rank1["parameter_checksum"]);
  EXPECT_EQ(rank0["parameter_checksum"].get<std::string>().size(), 16U);

  const nlohmann::json& epochs = rank0["epochs_run"];
  ASSERT_EQ(epochs.size(), 3U) << rank0.dump();
  EXPECT_LT(epochs[2]["train_loss"].get<double>(), epochs[0]["train_loss"].get<double>()) << epochs.dump();
  EXPECT_LT(epochs[0]["train_loss"].get<double>(), 2.302) << "no better than chance (ln 10)";
  const double accuracy = rank0["test_accuracy"].get<double>();
  EXPECT_GT(accuracy, 0.5) << "chance is 0.1";
  EXPECT_EQ(epochs[2]["test_examples"], 2000);
  // 3000 examples per rank, batches of 64: 47 steps per epoch.
  EXPECT_EQ(rank0["steps_run"], 3 * 47);
  EXPECT_EQ(rank0["timed_steps"].size(), 3U * 47);
  EXPECT_EQ(rank0["bytes_reduced"], rank0["bytes_reduced_per_step"].get<int64_t>() * 3 * 47);
  EXPECT_EQ(rank0["parameter_tensors"], 8);
  for (const char* field : {"compute_s", "comm_wait_s", "step_s", "img_per_sec"}) {
    EXPECT_GT(rank1["timed_steps"][5][field].get<double>(), field == std::string("comm_wait_s") ? -1e-9 : 0)
        << field;
  }

  nlohmann::json run = ReadJson(json_path);
  ASSERT_TRUE(run.is_object()) << ReadFileBytes(json_path);
  EXPECT_EQ(run["model"], "fmnist-cnn");
  EXPECT_EQ(run["backend"], "gloo");
  EXPECT_EQ(run["ranks"], 2);
  EXPECT_EQ(run["batch_size"], 64);
  EXPECT_EQ(run["image_size"], 28);
  EXPECT_EQ(run["threads"], 1);
  EXPECT_GT(run["step_time_s"].get<double>(), 0);
  EXPECT_GT(run["img_per_sec_per_rank"].get<double>(), 0);
  EXPECT_NEAR(run["img_per_sec_total"].get<double>(), 2 * run["img_per_sec_per_rank"].get<double>(), 1e-6);
  EXPECT_EQ(run["test_accuracy"], rank0["test_accuracy"]);
  EXPECT_DOUBLE_EQ(run["lr"].get<double>(), 2 * 0.03) << "--lr for one rank, scaled by 2 ranks";

  nlohmann::json summary = ReadJson(results + "/summary.json");
  EXPECT_EQ(summary["ranks_reporting"], 2) << summary.dump();
  for (const char* figure :
       {"step_time_s", "compute_time_s", "comm_wait_s", "img_per_sec", "test_accuracy"}) {
    EXPECT_EQ(summary["figures"][figure]["ranks"], 2) << figure << summary.dump();
  }
  EXPECT_NE(result.stdout_text.find("hvdrun: 2 ranks reported"), std::string::npos) << result;
}

TEST(TrainerTest, FmnistCnnOverMpiKeepsTheRanksInStep) {
  if (!Exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " is missing: install dataset-fashion-mnist";
  if (!Exists("/usr/bin/mpirun")) GTEST_SKIP() << "no /usr/bin/mpirun: install openmpi-bin";
  ScratchDir dir;
  const std::string results = dir.path() + "/results";
  ProcessResult result =
      StartHvdrun(Concat({{"-np", "2", "--mpi", "--results", results},
                          RankCommand({"--model", "fmnist-cnn", "--epochs", "1", "--train-limit", "1000",
                                       "--test-limit", "500", "--threads", "1"})}))
          .Wait(kTrainingTimeout);
  ASSERT_EQ(result.exit_code, 0) << result;
  nlohmann::json rank0 = ReadJson(results + "/ranks/rank-0.json");
  nlohmann::json rank1 = ReadJson(results + "/ranks/rank-1.json");
  ASSERT_TRUE(rank0.is_object() && rank1.is_object()) << result;
  EXPECT_EQ(rank0["backend"], "mpi");
  EXPECT_EQ(rank0["parameter_checksum"], rank1["parameter_checksum"]);
  EXPECT_GT(rank0["test_accuracy"].get<double>(), 0.2) << "chance is 0.1";
}

// Gradient compression end to end: hvdrun --compression fp8 reaches the ranks' runtimes, which
// train as well as float32 does on the same data and seed, send a quarter of float32's bytes, and
// keep both ranks' parameters equal bit for bit; the trainer's own --compression fp16 over MPI
// (float16 sums through MPI's user-defined op) does too.
TEST(TrainerTest, CompressedGradientsTrainAsFloat32AndSendFewerBytes) {
  if (!Exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " is missing: install dataset-fashion-mnist";
  ScratchDir dir;
  const std::vector<std::string> training = {"--model",       "fmnist-cnn", "--epochs",     "1",
                                             "--train-limit", "6000",       "--test-limit", "2000",
                                             "--threads",     "1"};
  // fp8 with its safeguards (the default), and the naive fp8 allreduce: every safeguard off.
  const std::vector<std::string> naive = {"--compression",    "fp8", "--fp8-scaling",      "off",
                                          "--fp8-safe-cast",  "off", "--fp8-float32-sums", "off",
                                          "--error-feedback", "off"};
  std::map<std::string, double> accuracy;
  for (const std::string run_name : {"none", "fp8", "naive"}) {
    const std::string results = dir.path() + "/results-" + run_name;
    const std::string json_path = dir.path() + "/" + run_name + ".json";
    const std::vector<std::string> compression =
        run_name == "naive" ? naive : std::vector<std::string>{"--compression", run_name};
    ProcessResult result = StartHvdrun(Concat({{"-np", "2", "--gloo", "--results", results},
                                               compression,
                                               RankCommand(Concat({training, {"--json", json_path}}))}))
                               .Wait(kTrainingTimeout);
    ASSERT_EQ(result.exit_code, 0) << result;
    nlohmann::json rank0 = ReadJson(results + "/ranks/rank-0.json");
    nlohmann::json rank1 = ReadJson(results + "/ranks/rank-1.json");
    ASSERT_TRUE(rank0.is_object() && rank1.is_object()) << result;
    EXPECT_EQ(rank0["parameter_checksum"], rank1["parameter_checksum"]) << run_name;
    nlohmann::json run = ReadJson(json_path);
    EXPECT_EQ(run["compression"]["format"], run_name == "none" ? "none" : "fp8-e4m3");
    accuracy[run_name] = rank0["test_accuracy"].get<double>();
    if (run_name == "none") continue;
    const std::string switches = run_name == "fp8" ? "on" : "off";
    EXPECT_NE(result.stdout_text.find("[0]<stdout>:gradients travel as fp8-e4m3 (scaling " + switches +
                                      ", safe cast " + switches + ", float32 sums " + switches +
                                      ", error feedback " + switches + ")"),
              std::string::npos)
        << result;
    const nlohmann::json& sent = rank0["libhvdrun"]["compression"];
    // Every gradient byte went through fp8, with the padding that lets the trainer's gradients be
    // reduced where they lie: fmnist-cnn's one tensor whose size is not a multiple of 16 bytes
    // (kFusionAlignment), fc2.bias's 10 floats, is reduced with 8 bytes of zeros after it.
    const uint64_t steps =
        rank0["bytes_reduced"].get<uint64_t>() / rank0["bytes_reduced_per_step"].get<uint64_t>();
    EXPECT_EQ(sent["compressed_bytes"].get<uint64_t>(), rank0["bytes_reduced"].get<uint64_t>() + steps * 8)
        << "every gradient byte went through fp8, padding included";
    if (run_name == "fp8") {
      const double ratio = sent["wire_bytes"].get<double>() / sent["float32_wire_bytes"].get<double>();
      EXPECT_GT(ratio, 0.24) << sent.dump();
      EXPECT_LE(ratio, 0.26) << sent.dump();
      EXPECT_DOUBLE_EQ(run["compression"]["wire_ratio"].get<double>(), ratio);
    }
  }
  EXPECT_GT(accuracy["none"], 0.5) << "chance is 0.1";
  EXPECT_NEAR(accuracy["fp8"], accuracy["none"], 0.03) << "fp8 against float32, same data and seed";
  // Without scaling, the naive cast flushes the averaged gradients below fp8's smallest normal to
  // zero: the model stays near chance, as the lab's naive fp8 compressor left it.
  EXPECT_LT(accuracy["naive"], 0.25) << "naive fp8 learns nearly nothing; chance is 0.1";

  if (!Exists("/usr/bin/mpirun")) GTEST_SKIP() << "no /usr/bin/mpirun: install openmpi-bin";
  const std::string results = dir.path() + "/results-mpi-fp16";
  ProcessResult fp16 =
      StartHvdrun(Concat({{"-np", "2", "--mpi", "--results", results},
                          RankCommand({"--model", "fmnist-cnn", "--epochs", "1", "--train-limit", "1000",
                                       "--test-limit", "500", "--threads", "1", "--compression", "fp16"})}))
          .Wait(kTrainingTimeout);
  ASSERT_EQ(fp16.exit_code, 0) << fp16;
  nlohmann::json rank0 = ReadJson(results + "/ranks/rank-0.json");
  nlohmann::json rank1 = ReadJson(results + "/ranks/rank-1.json");
  ASSERT_TRUE(rank0.is_object() && rank1.is_object()) << fp16;
  EXPECT_EQ(rank0["compression"]["format"], "fp16");
  EXPECT_EQ(rank0["parameter_checksum"], rank1["parameter_checksum"]);
  EXPECT_GT(rank0["test_accuracy"].get<double>(), 0.2) << "chance is 0.1";
  const nlohmann::json& sent = rank0["libhvdrun"]["compression"];
  EXPECT_DOUBLE_EQ(sent["wire_bytes"].get<double>() / sent["float32_wire_bytes"].get<double>(), 0.5);
}

TEST(TrainerTest, SyntheticResNet18OnTwoRanks) {
  ScratchDir dir;
  const std::string json_path = dir.path() + "/run.json";
  ProcessResult result =
      StartHvdrun(Concat({{"-np", "2", "--gloo"},
                          RankCommand({"--model", "resnet18", "--batch-size", "2", "--image-size", "32",
                                       "--steps", "2", "--warmup-steps", "1", "--json", json_path})}))
          .Wait(kTrainingTimeout);
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_NE(result.stdout_text.find("[0]<stdout>:step 2/2: "), std::string::npos) << result;
  EXPECT_NE(result.stdout_text.find("[0]<stdout>:img/s per rank: "), std::string::npos) << result;
  EXPECT_NE(result.stdout_text.find("[0]<stdout>:img/s total on 2 ranks: "), std::string::npos) << result;
  nlohmann::json run = ReadJson(json_path);
  ASSERT_TRUE(run.is_object()) << ReadFileBytes(json_path);
  EXPECT_EQ(run["model"], "resnet18");
  EXPECT_EQ(run["mode"], "synthetic");
  EXPECT_EQ(run["image_size"], 32);
  EXPECT_EQ(run["batch_size"], 2);
  EXPECT_TRUE(run["test_accuracy"].is_null());
  EXPECT_GT(run["img_per_sec_total"].get<double>(), 0);
  // 11,689,512 float32 gradients averaged every step.
  EXPECT_EQ(run["bytes_reduced_per_step"], 11'689'512 * 4);
}

TEST(TrainerTest, WithoutHvdrunItRunsAsOneProcess) {
  ProcessResult describe = RunTrainerAlone({"--model", "resnet50", "--describe"});
  ASSERT_EQ(describe.exit_code, 0) << describe;
  EXPECT_NE(describe.stdout_text.find("resnet50: 161 parameter tensors, 25,557,032 parameters"),
            std::string::npos)
      << describe;
  EXPECT_NE(describe.stdout_text.find("conv1.weight"), std::string::npos) << describe;

  ScratchDir dir;
  const std::string json_path = dir.path() + "/run.json";
  ProcessResult run = RunTrainerAlone({"--model", "fmnist-cnn", "--synthetic", "--steps", "2",
                                       "--warmup-steps", "0", "--batch-size", "4", "--json", json_path});
  ASSERT_EQ(run.exit_code, 0) << run;
  nlohmann::json document = ReadJson(json_path);
  EXPECT_EQ(document["backend"], "none") << document.dump();
  EXPECT_EQ(document["ranks"], 1);
  EXPECT_EQ(document["bytes_reduced_per_step"], 0) << "one process reduces nothing";
}

TEST(TrainerTest, BadInputIsOneLineAndExitCodeTwo) {
  struct Case {
    std::vector<std::string> args;
    std::string expected;  // part of the error line
  };
  std::vector<Case> cases = {
      {{"--model", "resnet51"}, "--model: unknown model 'resnet51'"},
      {{"--model", "resnet50", "--batch-size", "0"}, "--batch-size: 0 is out of range"},
      {{"--model", "resnet50", "--image-size", "8"}, "--image-size: 8 is too small for resnet50"},
      {{"--model", "fmnist-cnn", "--data-dir", "/nonexistent"},
       "install the Debian package dataset-fashion-mnist"},
      {{"--model", "resnet18", "--image-size", "32", "--device", "cuda"}, "--device cuda: "},
  };
  for (const Case& c : cases) {
    ProcessResult result = RunTrainerAlone(c.args);
    EXPECT_EQ(result.exit_code, 2) << result;
    std::vector<std::string> lines = SplitLines(result.stderr_text);
    ASSERT_EQ(lines.size(), 1U) << result;
    EXPECT_EQ(lines[0].rfind("hvdrun-trainer: ", 0), 0U) << result;
    EXPECT_NE(lines[0].find(c.expected), std::string::npos) << c.expected << "\n" << result;
  }
  // Through hvdrun: the ranks' exit code, and hvdrun's failure report.
  ProcessResult result = RunHvdrun(Concat({{"-np", "2", "--gloo"}, RankCommand({"--model", "resnet51"})}));
  EXPECT_EQ(result.exit_code, 2) << result;
  EXPECT_NE(result.stderr_text.find("<stderr>:hvdrun-trainer: --model: unknown model 'resnet51'"),
            std::string::npos)
      << result;
}

// As horovodrun, hvdrun chooses a controller when the command line names none (docs/horovodrun.md):
// Gloo, which the trainer's ranks then train over.
TEST(TrainerTest, UnderHvdrunWithoutABackendFlagTheRanksTrainOverTheDefaultController) {
  ProcessResult result = RunHvdrun(
      Concat({{"-np", "2"},
              RankCommand({"--model", "resnet18", "--image-size", "32", "--steps", "1", "--synthetic"})}));
  EXPECT_EQ(result.exit_code, 0) << result;
  EXPECT_NE(result.stdout_text.find("2 ranks (gloo)"), std::string::npos) << result;
}

}  // namespace
}  // namespace hvdrun::e2e
