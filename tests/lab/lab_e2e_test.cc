// hvdrun-lab end to end: experiment files checked by the installed program, and small real
// matrices run through the installed hvdrun with hvdrun-bench (and hvdrun-trainer when built).
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/e2e/console_output.h"
#include "tests/e2e/installed_program.h"
#include "tests/e2e/scratch_dir.h"
#include "tests/lab/installed_lab.h"

namespace hvdrun::lab_test {
namespace {

namespace fs = std::filesystem;
using e2e::Contains;
using e2e::ProcessResult;
using e2e::ReadFileBytes;
using e2e::ScratchDir;

// hvdrun-bench as the cells' program: its reports carry time_us and busbw_gbps per rank.
constexpr const char* kBenchExperiment = R"(name: bench-matrix
program: hvdrun-bench
args: [-b, 4K, -e, 16K, -f, 4, --iters, 5, --warmup, 1]
figures: {step_time: time_us, step_time_scale: 1.0e-6, throughput: busbw_gbps, throughput_unit: GB/s}
matrix:
  np: [1, 2]
repeats: 2
timeout: 60
)";

TEST(LabValidate, ErrorsNameFileLineAndColumn) {
  ScratchDir dir;
  std::string path = dir.WriteFile("bad.yaml", "program: hvdrun-bench\nmatrix:\n  np: [1, two]\n");
  ProcessResult result = RunLab({"validate", path});
  EXPECT_EQ(result.exit_code, 2) << result;
  EXPECT_EQ(result.stderr_text,
            "hvdrun-lab: " + path + ":3:11: np: 'two' is not a whole number from 1 to 1048576\n");

  path = dir.WriteFile("slots.yaml", "program: hvdrun-bench\nhosts: localhost:2\nmatrix:\n  np: [1, 4]\n");
  result = RunLab({"run", path, "--results", dir.path() + "/results"});
  EXPECT_EQ(result.exit_code, 2) << result;
  EXPECT_EQ(result.stderr_text,
            "hvdrun-lab: " + path +
                ":4:11: 4 processes per server need as many slots on host 'localhost', which has "
                "2; lower the count, add slots, or exclude the cell (cell backend=gloo np=4 "
                "servers=1)\n");
  EXPECT_FALSE(fs::exists(dir.path() + "/results")) << "nothing may run before the experiment is valid";

  result = RunLab({"run"});
  EXPECT_EQ(result.exit_code, 2) << result;
  EXPECT_EQ(result.stderr_text.rfind("hvdrun-lab: ", 0), 0u) << result;
}

TEST(LabValidate, ShippedConfigsAreValid) {
  std::vector<fs::path> configs;
  for (const fs::directory_entry& entry : fs::directory_iterator(HVDRUN_LAB_CONFIGS_DIR)) {
    if (entry.path().extension() == ".yaml") configs.push_back(entry.path());
  }
  EXPECT_GE(configs.size(), 5u);
  for (const fs::path& config : configs) {
    ProcessResult result = RunLab({"validate", config.string()});
    EXPECT_EQ(result.exit_code, 0) << config << ": " << result;
    EXPECT_TRUE(Contains(result.stdout_text, "is valid")) << result;
  }
}

// The figures of a run computed here from its ranks' files, to check the report against.
struct RunFigures {
  double step_time_s = 0;  // mean over ranks
  double total_busbw = 0;  // sum over ranks
};

RunFigures FiguresOf(const std::string& run_dir, int ranks) {
  RunFigures figures;
  for (int rank = 0; rank < ranks; ++rank) {
    nlohmann::json report = ReadJson(run_dir + "/hvdrun/ranks/rank-" + std::to_string(rank) + ".json");
    figures.step_time_s += report["summary"]["time_us"].get<double>() * 1e-6 / ranks;
    figures.total_busbw += report["summary"]["busbw_gbps"].get<double>();
  }
  return figures;
}

TEST(LabRun, RealMatrixThroughHvdrunThenReportThenResume) {
  ScratchDir dir;
  const std::string experiment = dir.WriteFile("bench.yaml", kBenchExperiment);
  const std::string results = dir.path() + "/results";
  const std::string exp_dir = results + "/bench-matrix";
  ProcessResult run = RunLab({"run", experiment, "--results", results});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_TRUE(Contains(run.stdout_text, "bench-matrix: 2 cells, 4 runs; 0 complete from before, 4 to make"))
      << run;
  // Not a terminal: plain lines, one as each run starts and ends.
  EXPECT_TRUE(Contains(run.stdout_text, "[0/4] running backend=gloo np=1 servers=1 repeat 1/2 (")) << run;
  EXPECT_TRUE(Contains(run.stdout_text, "[4/4] ok     backend=gloo np=2 servers=1 repeat 2/2 in ")) << run;
  // Round by round: both cells' first runs before either's second.
  EXPECT_TRUE(Contains(run.stdout_text, "[1/4] running backend=gloo np=2 servers=1 repeat 1/2 (")) << run;
  EXPECT_TRUE(Contains(run.stdout_text, "[2/4] running backend=gloo np=1 servers=1 repeat 2/2 (")) << run;
  EXPECT_FALSE(Contains(run.stdout_text, "\033[K")) << run;
  EXPECT_TRUE(Contains(run.stdout_text, "hvdrun-lab: 4 runs: 4 ok (0 kept from before), 0 failed\n")) << run;

  const std::vector<std::pair<std::string, int>> cells = {{"backend-gloo_np-1_servers-1", 1},
                                                          {"backend-gloo_np-2_servers-1", 2}};
  std::map<std::string, std::string> job_ids;
  for (const auto& [cell, np] : cells) {
    for (int repeat = 1; repeat <= 2; ++repeat) {
      const std::string run_dir = exp_dir + "/cells/" + cell + "/repeat-" + std::to_string(repeat);
      nlohmann::json record = ReadJson(run_dir + "/run.json");
      EXPECT_EQ(record["status"], "ok") << run_dir << ": " << record.dump();
      for (const char* file : {"command.json", "stdout.log", "stderr.log", "hvdrun/plan.json",
                               "hvdrun/summary.json", "logs/rank.0/stdout"}) {
        EXPECT_TRUE(fs::exists(run_dir + "/" + file)) << run_dir << "/" << file;
      }
      EXPECT_TRUE(fs::exists(run_dir + "/hvdrun/ranks/rank-" + std::to_string(np - 1) + ".json"));
      EXPECT_EQ(ReadJson(run_dir + "/command.json")["argv"][0], e2e::InstalledProgram("hvdrun"));
      job_ids[run_dir] = ReadJson(run_dir + "/hvdrun/plan.json")["job_id"].get<std::string>();
    }
  }
  EXPECT_TRUE(fs::exists(exp_dir + "/experiment.yaml"));
  EXPECT_EQ(ReadJson(exp_dir + "/environment.json")["facts"]["os"]["source"], "/etc/os-release");

  ProcessResult report = RunLab({"report", exp_dir});
  ASSERT_EQ(report.exit_code, 0) << report;
  for (const char* file :
       {"report.md", "report.html", "report.json", "speedup.csv", "environment.csv", "runs.csv", "sizes.csv",
        "throughput_per_worker.svg", "total_throughput.svg", "speedup.svg"}) {
    EXPECT_TRUE(fs::exists(exp_dir + "/" + file)) << file;
  }
  // The report's figures against those computed here from every rank's file.
  nlohmann::json json = ReadJson(exp_dir + "/report.json");
  ASSERT_EQ(json["speedup"].size(), 2u) << json.dump(2);
  double baseline_total = 0;
  double baseline_step = 0;
  for (size_t i = 0; i < cells.size(); ++i) {
    const auto& [cell, np] = cells[i];
    RunFigures one = FiguresOf(exp_dir + "/cells/" + cell + "/repeat-1", np);
    RunFigures two = FiguresOf(exp_dir + "/cells/" + cell + "/repeat-2", np);
    const nlohmann::json& row = json["speedup"][i];
    EXPECT_EQ(row["cell"], cell);
    EXPECT_NEAR(row["step_time_s"]["mean"].get<double>(), (one.step_time_s + two.step_time_s) / 2, 1e-12);
    const double total = (one.total_busbw + two.total_busbw) / 2;
    EXPECT_NEAR(row["total_throughput"]["mean"].get<double>(), total, 1e-9 * total);
    if (np == 1) {
      baseline_total = total;
      baseline_step = (one.step_time_s + two.step_time_s) / 2;
    }
    // Bus bandwidth is 0 on one rank (nothing crosses a link), so the speedup falls back to step time.
    const double speedup = baseline_total > 0
                               ? total / baseline_total
                               : np * baseline_step / ((one.step_time_s + two.step_time_s) / 2);
    EXPECT_NEAR(row["speedup"].get<double>(), speedup, 1e-9 * speedup);
    // What carried the allreduces, as hvdrun-bench's reports name it: one rank has nothing to share;
    // two on one host reduce through its shared memory (on by default).
    EXPECT_EQ(row["allreduce_path"], np == 1 ? "gloo" : "shm") << row.dump();
  }
  const std::string markdown = ReadFileBytes(exp_dir + "/report.md");
  EXPECT_TRUE(Contains(markdown, "## Allreduce by message size"));
  EXPECT_TRUE(Contains(markdown, "| backend | allreduce path | servers |")) << markdown;
  EXPECT_TRUE(Contains(markdown, "| gloo | shm | 1 | 2 |")) << markdown;
  EXPECT_TRUE(Contains(ReadFileBytes(exp_dir + "/report.html"), "<td class=\"text\">shm</td>"));
  EXPECT_TRUE(Contains(ReadFileBytes(exp_dir + "/speedup.csv"), ",shm,0\n"));
  // hvdrun's summary.json records the one round of each job (none is elastic): no re-formation.
  ASSERT_EQ(json["runs"].size(), 4u) << json.dump(2);
  for (const nlohmann::json& line : json["runs"]) EXPECT_EQ(line["reformations"], 0) << line.dump();

  // Again: every run is kept.
  run = RunLab({"run", experiment, "--results", results});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_TRUE(Contains(run.stdout_text, "4 runs; 4 complete from before, 0 to make")) << run;
  for (const auto& [run_dir, job_id] : job_ids) {
    EXPECT_EQ(ReadJson(run_dir + "/hvdrun/plan.json")["job_id"], job_id) << run_dir;
  }
  // --force makes every run again.
  run = RunLab({"run", experiment, "--results", results, "--force"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_TRUE(Contains(run.stdout_text, "4 runs; 0 complete from before, 4 to make")) << run;
  for (const auto& [run_dir, job_id] : job_ids) {
    EXPECT_NE(ReadJson(run_dir + "/hvdrun/plan.json")["job_id"], job_id) << run_dir;
  }
}

TEST(LabRun, AFailedCellIsRecordedAndTheMatrixGoesOn) {
  ScratchDir dir;
  const std::string experiment = dir.WriteFile("fail.yaml", R"(name: with-failure
program: hvdrun-bench
args: [-b, 4K, -e, 4K, --warmup, 1]
figures: {step_time: time_us, step_time_scale: 1.0e-6, throughput: busbw_gbps}
matrix:
  --iters: [0, 3]
  np: [2]
)");
  const std::string results = dir.path() + "/results";
  ProcessResult run = RunLab({"run", experiment, "--results", results});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_TRUE(Contains(run.stdout_text, "[1/2, 1 failed] FAILED backend=gloo np=2 servers=1 --iters=0 in "))
      << run;
  EXPECT_TRUE(Contains(run.stdout_text, "[2/2, 1 failed] ok     backend=gloo np=2 servers=1 --iters=3 in "))
      << run;
  EXPECT_TRUE(Contains(run.stdout_text, "hvdrun-lab: 2 runs: 1 ok (0 kept from before), 1 failed\n")) << run;
  nlohmann::json record =
      ReadJson(results + "/with-failure/cells/backend-gloo_np-2_servers-1_iters-0/repeat-1/run.json");
  EXPECT_EQ(record["status"], "failed");
  EXPECT_EQ(record["error"].get<std::string>().rfind("hvdrun ended with exit code 2: hvdrun: rank ", 0), 0u)
      << record.dump();

  ProcessResult report = RunLab({"report", results + "/with-failure"});
  ASSERT_EQ(report.exit_code, 0) << report;
  std::string runs = ReadFileBytes(results + "/with-failure/runs.csv");
  EXPECT_TRUE(Contains(runs, "backend-gloo_np-2_servers-1_iters-0,1,failed,")) << runs;
  EXPECT_TRUE(Contains(runs, "backend-gloo_np-2_servers-1_iters-3,1,ok,")) << runs;

  // A rerun makes the failed run again and keeps the other.
  run = RunLab({"run", experiment, "--results", results});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_TRUE(Contains(run.stdout_text, "1 complete from before, 1 to make")) << run;
  EXPECT_TRUE(
      Contains(run.stdout_text, "making backend=gloo np=2 servers=1 --iters=0 again: it failed before"))
      << run;
}

TEST(LabRun, GpuCellsAreListedAsSkippedOnAMachineWithoutGpus) {
  if (fs::exists("/dev/nvidia0")) GTEST_SKIP() << "this machine has a GPU: its NCCL cells run";
  ScratchDir dir;
  const std::string experiment = dir.WriteFile("gpu.yaml", R"(name: gpu
program: hvdrun-bench
args: [-b, 4K, -e, 4K, --iters, 3, --warmup, 1]
figures: {step_time: time_us, step_time_scale: 1.0e-6, throughput: busbw_gbps}
matrix:
  backend: [gloo, nccl]
)");
  ProcessResult run = RunLab({"run", experiment, "--results", dir.path()});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_TRUE(Contains(run.stdout_text,
                       "hvdrun-lab: skipped backend=nccl np=1 servers=1: 'nccl' needs one GPU per "
                       "process: 1 per server; this machine has 0 ("))
      << run;
  EXPECT_TRUE(Contains(run.stdout_text, "gpu: 2 cells (1 skipped), 1 runs;")) << run;
  ProcessResult report = RunLab({"report", dir.path() + "/gpu"});
  ASSERT_EQ(report.exit_code, 0) << report;
  EXPECT_TRUE(Contains(ReadFileBytes(dir.path() + "/gpu/report.md"), "## Skipped cells")) << report;
  EXPECT_TRUE(
      Contains(ReadFileBytes(dir.path() + "/gpu/runs.csv"), "backend-nccl_np-1_servers-1,0,skipped,"));
}

TEST(LabRun, TrainerMatrix) {
  if (::access(e2e::InstalledProgram("hvdrun-trainer").c_str(), X_OK) != 0) {
    GTEST_SKIP() << "hvdrun-trainer is not installed (built only with libtorch)";
  }
  ScratchDir dir;
  const std::string experiment = dir.WriteFile("trainer.yaml", R"(name: trainer
program: hvdrun-trainer
args: [--image-size, 32, --steps, 3, --warmup-steps, 1]
defaults: {model: resnet18, batch_size: 4}
matrix:
  np: [1, 2]
timeout: 240
)");
  ProcessResult run = RunLab({"run", experiment, "--results", dir.path()});
  ASSERT_EQ(run.exit_code, 0) << run;
  ProcessResult report = RunLab({"report", dir.path() + "/trainer"});
  ASSERT_EQ(report.exit_code, 0) << report;
  nlohmann::json json = ReadJson(dir.path() + "/trainer/report.json");
  ASSERT_EQ(json["speedup"].size(), 2u) << json.dump(2);
  for (const nlohmann::json& row : json["speedup"]) {
    EXPECT_GT(row["step_time_s"]["mean"].get<double>(), 0) << row.dump();
    EXPECT_GT(row["throughput_per_worker"]["mean"].get<double>(), 0)
        << row.dump();  // the default figure names
  }
  EXPECT_EQ(json["speedup"][1]["speedup_basis"], "throughput");
  // The trainer's Runtime negotiates: libhvdrun's part of its reports names the path.
  EXPECT_EQ(json["speedup"][0]["allreduce_path"], "gloo");
  EXPECT_EQ(json["speedup"][1]["allreduce_path"], "shm");
}

// Replaces the one occurrence of `from` in `text` by `to`; fails the test when there is none.
std::string ReplaceOnce(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' is not in the experiment";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The shipped fusion lab (configs/lab7-fusion.yaml) run whole at a small size: both models, both
// backends, every fusion setting, with tiny images and four steps (the first a round the tuner does
// not time, the last one it cannot see end: two steps, two samples of one step); then its report's
// two fusion sections, the autotune rows with the setting each run kept.
TEST(LabRun, FusionLabAtASmallSize) {
  if (::access(e2e::InstalledProgram("hvdrun-trainer").c_str(), X_OK) != 0) {
    GTEST_SKIP() << "hvdrun-trainer is not installed (built only with libtorch)";
  }
  ScratchDir dir;
  std::string experiment = ReadFileBytes(std::string(HVDRUN_LAB_CONFIGS_DIR) + "/lab7-fusion.yaml");
  experiment = ReplaceOnce(experiment, "args: [--image-size, 224, --steps, 20, --warmup-steps, 5]",
                           "args: [--image-size, 32, --steps, 3, --warmup-steps, 1]");
  experiment =
      ReplaceOnce(experiment, "HOROVOD_AUTOTUNE_WARMUP_SAMPLES: 1", "HOROVOD_AUTOTUNE_WARMUP_SAMPLES: 0");
  experiment =
      ReplaceOnce(experiment, "HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE: 2", "HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE: 1");
  experiment = ReplaceOnce(experiment, "HOROVOD_AUTOTUNE_BAYES_OPT_MAX_SAMPLES: 8",
                           "HOROVOD_AUTOTUNE_BAYES_OPT_MAX_SAMPLES: 2");
  experiment = ReplaceOnce(experiment, "batch_size: 32", "batch_size: 2");
  experiment += "exclude:\n  - {model: vgg16, fusion: autotune}\n";  // ResNet-50's search is enough here
  experiment = ReplaceOnce(experiment, "repeats: 3", "repeats: 1");
  const std::string path = dir.WriteFile("lab7-fusion.yaml", experiment);
  // 14 cells, VGG-16's among them: about 90 s alone, twice that beside other tests.
  ProcessResult run =
      StartLab({"run", path, "--results", dir.path()}).Wait(std::chrono::milliseconds(270'000));
  ASSERT_EQ(run.exit_code, 0) << run;
  ProcessResult report = RunLab({"report", dir.path() + "/lab7-fusion"});
  ASSERT_EQ(report.exit_code, 0) << report;
  const nlohmann::json json = ReadJson(dir.path() + "/lab7-fusion/report.json");

  // Fusion on and off: 2 models x 2 backends, each with off, on and horovod-0.20 (and ResNet-50 with
  // autotune), off first; the autotune rows name what the tuner kept, which its log in the run's
  // directory says.
  const nlohmann::json& fusion = json["fusion"];
  ASSERT_EQ(fusion.size(), 14U) << fusion.dump(2);
  const std::map<std::string, std::string> fixed = {
      {"off", "0 MiB, 1 ms"}, {"on", "128 MiB, 1 ms"}, {"horovod-0.20", "64 MiB, 5 ms"}};
  int tuned = 0;
  for (size_t i = 0; i < fusion.size(); ++i) {
    const std::string value = fusion[i]["fusion"].get<std::string>();
    EXPECT_EQ(value == "off", fusion[i]["training_ratio"] == 1.0) << fusion[i].dump();
    EXPECT_GT(fusion[i]["training_time_s"]["mean"].get<double>(), 0) << fusion[i].dump();
    EXPECT_GT(fusion[i]["training_ratio"].get<double>(), 0) << fusion[i].dump();
    const std::string setting = fusion[i]["setting"].get<std::string>();
    if (value == "autotune") {
      ++tuned;
      EXPECT_TRUE(Contains(setting, " ms (kept after 2 samples)")) << fusion[i].dump();
      const std::string log = dir.path() + "/lab7-fusion/cells/" +
                              fusion[i]["row"]["cell"].get<std::string>() + "/repeat-1/autotune.csv";
      EXPECT_TRUE(Contains(ReadFileBytes(log), "chosen")) << log;
    } else {
      ASSERT_EQ(fixed.count(value), 1U) << fusion[i].dump();
      EXPECT_EQ(setting, fixed.at(value)) << i;
    }
  }
  EXPECT_EQ(tuned, 2);

  // Responses by size: each cell's, adding up to what it reduced. With fusion off, every gradient
  // tensor is a response of its own (ResNet-50: 161 a step, 4 steps with the warm-up); fused, fewer.
  const nlohmann::json& sizes = json["response_sizes"];
  ASSERT_EQ(sizes.size(), 14U) << sizes.dump(2);
  std::map<std::string, double> responses_by_cell;
  for (const nlohmann::json& cell : sizes) {
    double count = 0;
    double share = 0;
    for (const nlohmann::json& bin : cell["bins"]) {
      count += bin["count"].get<double>();
      share += bin["share_of_time"].get<double>();
      EXPECT_GT(bin["rate_mbps"].get<double>(), 0) << bin.dump();
    }
    EXPECT_NEAR(share, 1.0, 1e-9) << cell.dump();
    responses_by_cell[cell["values"].get<std::string>()] = count;
  }
  for (const char* backend : {"gloo", "mpi"}) {
    const std::string cell =
        std::string("backend=") + backend + " np=2 servers=1 batch_size=2 device=cpu model=resnet50";
    EXPECT_GE(responses_by_cell[cell + " fusion=off"], 161 * 4) << backend;
    EXPECT_LT(responses_by_cell[cell + " fusion=on"], responses_by_cell[cell + " fusion=off"]) << backend;
  }
  const std::string markdown = ReadFileBytes(dir.path() + "/lab7-fusion/report.md");
  EXPECT_TRUE(Contains(markdown, "## Tensor fusion on and off")) << markdown;
  EXPECT_TRUE(Contains(markdown, "## Responses by size")) << markdown;
  EXPECT_TRUE(fs::exists(dir.path() + "/lab7-fusion/responses.csv"));
  EXPECT_TRUE(fs::exists(dir.path() + "/lab7-fusion/fusion.csv"));
}

}  // namespace
}  // namespace hvdrun::lab_test
