// Stopping hvdrun-lab in the middle of a matrix — killed outright, or interrupted with Ctrl-C —
// loses no finished run, counts no half-made one, leaves nothing running, and a rerun goes on.
#include <signal.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <thread>

#include "tests/e2e/scratch_dir.h"
#include "tests/lab/installed_lab.h"

namespace hvdrun::lab_test {
namespace {

namespace fs = std::filesystem;
using e2e::ProcessResult;
using e2e::ScratchDir;

// Runs long enough (a sweep of sizes up to 4 MiB) that hvdrun-lab can be stopped in the middle of one.
constexpr const char* kSlowExperiment = R"(name: slow
program: hvdrun-bench
args: [-b, 64K, -e, 4M, -f, 2, --iters, 20, --warmup, 2]
figures: {step_time: time_us, step_time_scale: 1.0e-6, throughput: busbw_gbps}
matrix:
  np: [2]
repeats: 4
timeout: 120
)";

struct RunDirs {
  std::vector<std::string> complete;  // repeat-K with a run.json
  std::vector<std::string> partial;   // repeat-K.partial
};

RunDirs ListRuns(const std::string& cell_dir) {
  RunDirs dirs;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(cell_dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 8 && name.substr(name.size() - 8) == ".partial") {
      dirs.partial.push_back(name);
    } else if (fs::exists(entry.path() / "run.json")) {
      dirs.complete.push_back(name);
    }
  }
  std::sort(dirs.complete.begin(), dirs.complete.end());
  return dirs;
}

// Waits until at least one run is complete and hvdrun has been started for the next one, then a
// little longer, so that its ranks run.
bool WaitForRunInProgress(const std::string& cell_dir, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    RunDirs dirs = ListRuns(cell_dir);
    if (!dirs.complete.empty() && !dirs.partial.empty() &&
        fs::exists(cell_dir + "/" + dirs.partial[0] + "/stdout.log")) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

class LabResumeTest : public testing::Test {
 protected:
  void SetUp() override {
    experiment_ = scratch_.WriteFile("slow.yaml", kSlowExperiment);
    results_ = scratch_.path() + "/results";
    cell_dir_ = results_ + "/slow/cells/backend-gloo_np-2_servers-1";
  }

  // The job ids of the complete runs, by directory.
  std::map<std::string, std::string> CompleteJobIds() {
    std::map<std::string, std::string> ids;
    for (const std::string& name : ListRuns(cell_dir_).complete) {
      ids[name] = ReadJson(cell_dir_ + "/" + name + "/hvdrun/plan.json")["job_id"].get<std::string>();
    }
    return ids;
  }

  void ExpectNothingLeftRunning() {
    std::vector<pid_t> left =
        e2e::WaitUntilEnded(ProcessesWorkingUnder(scratch_.path()), std::chrono::seconds(15));
    e2e::KillOnScopeExit guard;
    for (pid_t pid : left) guard.Add(pid);
    EXPECT_TRUE(left.empty()) << "still running: " << e2e::DescribeProcesses(left);
  }

  void ResumeAndExpectEveryRun(const std::map<std::string, std::string>& kept) {
    ProcessResult again = RunLab({"run", experiment_, "--results", results_});
    ASSERT_EQ(again.exit_code, 0) << again;
    EXPECT_NE(again.stdout_text.find("4 runs; " + std::to_string(kept.size()) + " complete from before, " +
                                     std::to_string(4 - kept.size()) + " to make"),
              std::string::npos)
        << again;
    RunDirs dirs = ListRuns(cell_dir_);
    EXPECT_EQ(dirs.complete, (std::vector<std::string>{"repeat-1", "repeat-2", "repeat-3", "repeat-4"}));
    EXPECT_TRUE(dirs.partial.empty());
    std::map<std::string, std::string> now = CompleteJobIds();
    for (const auto& [name, job_id] : kept) EXPECT_EQ(now[name], job_id) << name << " was made again";
  }

  ScratchDir scratch_;
  std::string experiment_;
  std::string results_;
  std::string cell_dir_;
};

TEST_F(LabResumeTest, KilledMidMatrixLosesNoFinishedRunAndCountsNoHalfRun) {
  e2e::RunningProcess lab = StartLab({"run", experiment_, "--results", results_});
  ASSERT_TRUE(WaitForRunInProgress(cell_dir_, std::chrono::seconds(90))) << "no run got under way";
  std::map<std::string, std::string> before = CompleteJobIds();
  lab.Signal(SIGKILL);
  ProcessResult killed = lab.Wait(std::chrono::seconds(10));
  EXPECT_EQ(killed.term_signal, SIGKILL) << killed;
  // hvdrun gets SIGTERM when hvdrun-lab dies, and stops its ranks.
  ExpectNothingLeftRunning();

  // The run in progress is left half-made, under its .partial name. The kill may land just after
  // a run was finished and before the next began: then nothing is half-made.
  RunDirs dirs = ListRuns(cell_dir_);
  EXPECT_GE(dirs.complete.size(), 1u);
  EXPECT_LE(dirs.partial.size(), 1u);
  for (const std::string& name : dirs.complete) {
    EXPECT_EQ(ReadJson(cell_dir_ + "/" + name + "/run.json")["status"], "ok") << name;
  }
  for (const std::string& partial : dirs.partial) {
    const std::string half = partial.substr(0, partial.size() - 8);
    EXPECT_FALSE(fs::exists(cell_dir_ + "/" + half)) << "a half-made run counted";
  }
  std::map<std::string, std::string> after = CompleteJobIds();
  for (const auto& [name, job_id] : before) EXPECT_EQ(after[name], job_id) << name << " changed";

  // The report counts only the complete runs.
  ProcessResult report = RunLab({"report", results_ + "/slow"});
  ASSERT_EQ(report.exit_code, 0) << report;
  nlohmann::json json = ReadJson(results_ + "/slow/report.json");
  EXPECT_EQ(json["speedup"][0]["runs_ok"], static_cast<int>(dirs.complete.size())) << json.dump(2);

  ResumeAndExpectEveryRun(after);
}

TEST_F(LabResumeTest, InterruptStopsCleanlyAndARerunGoesOn) {
  e2e::RunningProcess lab = StartLab({"run", experiment_, "--results", results_});
  ASSERT_TRUE(WaitForRunInProgress(cell_dir_, std::chrono::seconds(90))) << "no run got under way";
  std::map<std::string, std::string> before = CompleteJobIds();
  lab.Signal(SIGINT);
  ProcessResult stopped = lab.Wait(std::chrono::seconds(30));
  EXPECT_EQ(stopped.exit_code, 130) << stopped;
  ExpectNothingLeftRunning();
  RunDirs dirs = ListRuns(cell_dir_);
  EXPECT_TRUE(dirs.partial.empty()) << "the half-made run is removed";

  // A run whose hvdrun ended just before the signal was seen is kept, and said to be; every run
  // complete before the signal is kept as it was.
  std::map<std::string, std::string> after = CompleteJobIds();
  for (const auto& [name, job_id] : before) EXPECT_EQ(after[name], job_id) << name << " changed";
  EXPECT_LE(after.size(), before.size() + 1) << "more than the run in progress was finished";
  EXPECT_NE(stopped.stdout_text.find("hvdrun-lab: stopped by SIGINT: " + std::to_string(after.size()) +
                                     " of 4 runs complete"),
            std::string::npos)
      << stopped;
  EXPECT_NE(stopped.stdout_text.find("run the same command again to go on"), std::string::npos) << stopped;
  if (after.size() == before.size()) {
    EXPECT_NE(stopped.stdout_text.find("the run in progress discarded"), std::string::npos) << stopped;
  }

  ResumeAndExpectEveryRun(after);
}

}  // namespace
}  // namespace hvdrun::lab_test
