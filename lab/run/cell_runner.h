// CellRunner: makes one run of a cell — hvdrun with the cell's command line, in the run's own
// directory of the RunStore — and records how it ended.
//
// A run is recorded as ok when hvdrun exits with 0 and every rank's report is in hvdrun's results
// with the experiment's step-time figure; otherwise as failed, with one line saying why (hvdrun's
// own last `hvdrun:` line, the timeout, the rank whose report is missing). A run stopped by a
// signal to hvdrun-lab is not recorded: hvdrun gets the same signal (it stops its ranks), and once
// it has exited the half-made run is removed, so that a rerun makes it again. hvdrun is stopped the
// same way when the run outlives its timeout; if it has not exited `stop_grace` after the signal,
// its process group is killed.
#ifndef HVDRUN_LAB_RUN_CELL_RUNNER_H_
#define HVDRUN_LAB_RUN_CELL_RUNNER_H_

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "common/process/process_spawner.h"
#include "hvdrun/status.h"
#include "lab/experiment/experiment_config.h"
#include "lab/experiment/matrix.h"
#include "lab/run/interrupt_signals.h"
#include "lab/store/run_store.h"

namespace hvdrun::lab {

// How long hvdrun gets to stop its ranks after a signal before its process group is killed: it
// gives ranks 1 s after SIGTERM, and its agents 4 s to exit.
inline constexpr std::chrono::seconds kStopGrace{10};

struct CellRunnerOptions {
  std::string hvdrun;   // hvdrun's path
  std::string program;  // the program every rank runs (ResolveProgram)
  FigureNames figures;
  std::chrono::milliseconds timeout{1'800'000};
  std::chrono::milliseconds stop_grace = kStopGrace;
  // Polled while hvdrun runs.
  std::function<InterruptRequest()> interrupts = [] { return InterruptRequest{}; };
  // Called about every 100 ms while hvdrun runs (progress display).
  std::function<void()> on_tick = [] {};
};

struct RunOutcome {
  bool interrupted = false;  // true: nothing was recorded
  int signal = 0;            // the signal that interrupted it
  RunRecord record;          // when not interrupted: what run.json holds
};

class CellRunner {
 public:
  CellRunner(const RunStore& store, CellRunnerOptions options)
      : store_(store), options_(std::move(options)) {}

  // Errors: the run's directory could not be made or committed, or hvdrun could not be started.
  StatusOr<RunOutcome> Run(const Cell& cell, int repeat);

 private:
  // How hvdrun ended: its wait status, whether its timeout stopped it, and the signal (0: none)
  // that interrupted hvdrun-lab meanwhile.
  struct HvdrunEnding {
    int wait_status = 0;
    bool timed_out = false;
    int interrupted_by = 0;
  };

  // Writes the run's command.json and starts hvdrun with `args` in `run_dir`.
  StatusOr<ChildProcess> StartHvdrun(const Cell& cell, const std::string& run_dir,
                                     const std::vector<std::string>& args) const;
  // Waits for hvdrun, passing interrupts on and stopping it at the timeout.
  HvdrunEnding WaitForHvdrun(ChildProcess& hvdrun, std::chrono::steady_clock::time_point start) const;
  // Why the run does not count ("" when it does), as run.json says it.
  std::string RunError(const Cell& cell, const std::string& run_dir, const RunRecord& record,
                       int wait_status) const;

  const RunStore& store_;
  CellRunnerOptions options_;
};

// hvdrun's arguments for a run of `cell` as CellRunner starts it, in the run's directory: what
// run.json records, and what a later run compares to tell whether the experiment changed.
std::vector<std::string> RunArguments(const Cell& cell, const std::string& program);

// Why a run whose hvdrun exited 0 does not count, or "" when it does: checks that each of the
// `num_proc` ranks sent a report holding the `step_time` figure, in hvdrun's results directory.
std::string CheckReports(const std::string& hvdrun_results_dir, int num_proc, const std::string& step_time);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_RUN_CELL_RUNNER_H_
