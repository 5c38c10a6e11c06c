#include "lab/run/cell_runner.h"

#include <signal.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/e2e/scratch_dir.h"

namespace hvdrun::lab {
namespace {

namespace fs = std::filesystem;

// Stands in for hvdrun: reads -np and --results like hvdrun, and behaves as the program's first
// argument asks — the CellRunner's contract with hvdrun is its command line, exit code, stderr
// and results directory. (The real hvdrun drives tests/lab's end-to-end tests.)
constexpr const char* kFakeHvdrun = R"(#!/bin/sh
np=0; results=
while [ $# -gt 0 ]; do
  case "$1" in
    -np) np=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --) shift; break ;;
    *) shift ;;
  esac
done
mode=$2
mkdir -p "$results/ranks"
report() {
  i=0
  while [ $i -lt "$np" ]; do
    echo "{\"summary\": {\"$1\": 0.5}}" > "$results/ranks/rank-$i.json"
    i=$((i + 1))
  done
}
case "$mode" in
  ok) echo "hvdrun: 2 ranks reported"; report step_time_s; exit 0 ;;
  wrong-figure) report time_us; exit 0 ;;
  no-report) exit 0 ;;
  fail) echo "[1]<stderr>:out of memory" >&2
        echo "hvdrun: rank 1 on host localhost failed first (exit code 3); hvdrun stopped the other ranks." >&2
        echo "  RANK  HOST" >&2; exit 3 ;;
  wait) sleep 30 & child=$!
        trap 'kill $child; echo "hvdrun: stopped by SIGINT" >&2; exit 130' INT
        trap 'kill $child; echo "hvdrun: stopped by SIGTERM" >&2; exit 143' TERM
        wait $child; exit 0 ;;
  deaf) trap '' INT TERM; sleep 30; exit 0 ;;
  ask) sleep 30 & child=$!
       trap 'kill $child; echo "hvdrun: SIGUSR1: the ranks states" >&2; report step_time_s; exit 0' USR1
       wait $child; exit 0 ;;
esac
exit 99
)";

class CellRunnerTest : public testing::Test {
 protected:
  void SetUp() override {
    hvdrun_ = scratch_.WriteFile("fake-hvdrun", kFakeHvdrun);
    ASSERT_EQ(::chmod(hvdrun_.c_str(), 0755), 0);
    options_.hvdrun = hvdrun_;
    options_.program = "program";
    options_.timeout = std::chrono::seconds(20);
    cell_.id = "cell";
    cell_.num_proc = 2;
    cell_.backend = "gloo";
    cell_.hosts = {HostSlots{"localhost", 2}};
  }

  StatusOr<RunOutcome> RunWithMode(const std::string& mode, int repeat = 1) {
    cell_.program_args = {mode};
    CellRunner runner(store_, options_);
    return runner.Run(cell_, repeat);
  }

  e2e::ScratchDir scratch_;
  RunStore store_{scratch_.path() + "/exp"};
  std::string hvdrun_;
  CellRunnerOptions options_;
  Cell cell_;
};

TEST_F(CellRunnerTest, OkRunIsCommittedWithItsFiles) {
  StatusOr<RunOutcome> outcome = RunWithMode("ok");
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_FALSE(outcome->interrupted);
  EXPECT_TRUE(outcome->record.ok) << outcome->record.error;
  EXPECT_EQ(outcome->record.exit_code, 0);
  EXPECT_EQ(outcome->record.command,
            (std::vector<std::string>{"-np", "2", "-H", "localhost:2", "--gloo", "--results", "hvdrun",
                                      "--output-filename", "logs", "--", "program", "ok"}));
  const std::string dir = store_.RunDir("cell", 1);
  EXPECT_TRUE(store_.FindRun("cell", 1));
  EXPECT_TRUE(fs::exists(dir + "/hvdrun/ranks/rank-1.json"));
  EXPECT_EQ(e2e::ReadFileBytes(dir + "/stdout.log"), "hvdrun: 2 ranks reported\n");
  nlohmann::json command = nlohmann::json::parse(e2e::ReadFileBytes(dir + "/command.json"));
  EXPECT_EQ(command["argv"][0], hvdrun_);
  EXPECT_EQ(command["shell"], hvdrun_ +
                                  " -np 2 -H localhost:2 --gloo --results hvdrun --output-filename logs -- "
                                  "program ok");
  EXPECT_FALSE(fs::exists(dir + ".partial"));
}

TEST_F(CellRunnerTest, FailedHvdrunIsRecordedWithItsLine) {
  StatusOr<RunOutcome> outcome = RunWithMode("fail");
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_FALSE(outcome->record.ok);
  EXPECT_EQ(outcome->record.exit_code, 3);
  EXPECT_EQ(
      outcome->record.error,
      "hvdrun ended with exit code 3: hvdrun: rank 1 on host localhost failed first (exit code 3); hvdrun "
      "stopped the other ranks.");
  std::optional<RunRecord> stored = store_.FindRun("cell", 1);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->error, outcome->record.error);
}

TEST_F(CellRunnerTest, MissingReportsOrFiguresFailTheRun) {
  StatusOr<RunOutcome> outcome = RunWithMode("no-report");
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->record.error,
            "ranks 0, 1 of 2 sent no report (does the program report through libhvdrun?)");
  outcome = RunWithMode("wrong-figure");
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->record.error,
            "rank 0's report has no figure 'step_time_s' (it has: time_us); set figures.step_time in the "
            "experiment");
  // The later run replaced the earlier one.
  EXPECT_EQ(store_.FindRun("cell", 1)->error, outcome->record.error);
}

TEST_F(CellRunnerTest, TimeoutStopsHvdrunAndFailsTheRun) {
  options_.timeout = std::chrono::milliseconds(500);
  StatusOr<RunOutcome> outcome = RunWithMode("wait");
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_TRUE(outcome->record.timed_out);
  EXPECT_EQ(outcome->record.exit_code, 143);
  EXPECT_EQ(outcome->record.error, "timed out after 0.5 s (the experiment's timeout); hvdrun was stopped");
  EXPECT_LT(outcome->record.duration_s, 5);
}

TEST_F(CellRunnerTest, HvdrunThatIgnoresTheSignalIsKilled) {
  options_.timeout = std::chrono::milliseconds(300);
  options_.stop_grace = std::chrono::milliseconds(300);
  StatusOr<RunOutcome> outcome = RunWithMode("deaf");
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_TRUE(outcome->record.timed_out);
  EXPECT_EQ(outcome->record.exit_code, -1);  // SIGKILL
  EXPECT_LT(outcome->record.duration_s, 5);
}

TEST_F(CellRunnerTest, InterruptIsPassedOnAndTheHalfRunDiscarded) {
  const auto start = std::chrono::steady_clock::now();
  options_.interrupts = [&] {
    InterruptRequest request;
    if (std::chrono::steady_clock::now() - start > std::chrono::milliseconds(300)) {
      request.signal = SIGINT;
      request.count = 1;
    }
    return request;
  };
  StatusOr<RunOutcome> outcome = RunWithMode("wait", 2);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_TRUE(outcome->interrupted);
  EXPECT_EQ(outcome->signal, SIGINT);
  EXPECT_FALSE(store_.FindRun("cell", 2));
  EXPECT_FALSE(fs::exists(store_.RunDir("cell", 2)));
  EXPECT_FALSE(fs::exists(store_.RunDir("cell", 2) + ".partial"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(CellRunnerTest, AStatusRequestIsPassedOnAndTheRunGoesOn) {
  const auto start = std::chrono::steady_clock::now();
  options_.interrupts = [&] {
    InterruptRequest request;
    if (std::chrono::steady_clock::now() - start > std::chrono::milliseconds(300)) {
      request.status_requests = 1;
    }
    return request;
  };
  StatusOr<RunOutcome> outcome = RunWithMode("ask");
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_FALSE(outcome->interrupted);
  EXPECT_EQ(outcome->record.exit_code, 0);
  std::ifstream log(store_.RunDir("cell", 1) + "/stderr.log");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("hvdrun: SIGUSR1: the ranks states"), std::string::npos) << text;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(CellRunnerTest, HvdrunThatCannotStartIsAnError) {
  options_.hvdrun = scratch_.path() + "/no-such-hvdrun";
  StatusOr<RunOutcome> outcome = RunWithMode("ok");
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().message(), "cannot run '" + options_.hvdrun + "': No such file or directory");
  EXPECT_FALSE(fs::exists(store_.RunDir("cell", 1) + ".partial"));
}

}  // namespace
}  // namespace hvdrun::lab
