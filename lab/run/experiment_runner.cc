#include "lab/run/experiment_runner.h"

#include <signal.h>

#include <cstdint>
#include <vector>

#include "common/atomic_file.h"
#include "common/process/wait_status.h"
#include "lab/json_file.h"
#include "lab/run/cell_runner.h"
#include "lab/store/experiment_results.h"
#include "lab/store/run_store.h"
#include "lab/utc_time.h"

namespace hvdrun::lab {
namespace {

struct PlannedRun {
  const Cell* cell = nullptr;
  int repeat = 0;
  std::string note;  // why a run that exists is made again
};

Status WriteExperimentFiles(const RunStore& store, const ExperimentConfig& config, const Matrix& matrix,
                            const ExperimentRunOptions& options) {
  nlohmann::json environment = ToJson(options.local_facts);
  environment["probed_at"] = UtcNow(UtcFormat::kIso8601);
  if (matrix.slurm) {
    std::vector<std::string> nodes;
    for (const HostSlots& node : matrix.slurm->nodes) nodes.push_back(node.host);
    environment["slurm"] = {{"job_id", matrix.slurm->job_id},
                            {"node_list", matrix.slurm->node_list},
                            {"tasks_per_node", matrix.slurm->tasks_per_node},
                            {"nodes", nodes}};
  }
  std::vector<std::pair<std::string, std::string>> files = {
      {"experiment.json", JsonFileText(ExperimentToJson(config, matrix))},
      {"experiment.yaml", options.experiment_text},
      {"environment.json", JsonFileText(environment)}};
  for (const auto& [name, contents] : files) {
    if (Status status = WriteFileAtomically(store.dir() + "/" + name, contents); !status.ok()) return status;
  }
  return Status::Ok();
}

// The runs to make, and those complete from before that are kept.
struct RunPlan {
  std::vector<const Cell*> cells;  // the cells this machine runs (not skipped)
  int skipped = 0;
  std::vector<PlannedRun> runs;
  int kept = 0;
  double kept_seconds = 0;
  int total() const { return kept + static_cast<int>(runs.size()); }
};

RunPlan PlanRuns(const ExperimentConfig& config, const Matrix& matrix, const RunStore& store,
                 const ExperimentRunOptions& options, std::ostream& out) {
  RunPlan plan;
  for (const Cell& cell : matrix.cells) {
    if (!cell.skip_reason.empty()) {
      ++plan.skipped;
      out << "hvdrun-lab: skipped " << DescribeCell(cell) << ": " << cell.skip_reason << "\n";
      continue;
    }
    plan.cells.push_back(&cell);
  }
  // Round by round: every cell's first run, then every cell's second, and so on, so that a machine
  // that slows down or speeds up during the experiment moves every cell's mean alike, and ratios
  // between cells (speedups) keep to what the cells themselves do.
  for (int repeat = 1; repeat <= config.repeats; ++repeat) {
    for (const Cell* cell : plan.cells) {
      std::optional<RunRecord> record = store.FindRun(cell->id, repeat);
      PlannedRun run{cell, repeat, ""};
      if (record && !options.force) {
        if (record->ok && record->command == RunArguments(*cell, options.program)) {
          ++plan.kept;
          plan.kept_seconds += record->duration_s;
          continue;
        }
        run.note = record->ok ? "the experiment changed since it ran" : "it failed before";
      }
      plan.runs.push_back(run);
    }
  }
  return plan;
}

// How the planned runs went.
struct RunTally {
  int ok = 0;
  int failed = 0;
  int interrupted_by = 0;      // the signal that stopped the matrix; 0: none
  bool run_discarded = false;  // the signal stopped a run, which was thrown away
  bool setup_failed = false;
};

RunTally MakeRuns(const ExperimentConfig& config, const RunPlan& plan, const RunStore& store,
                  const ExperimentRunOptions& options, ProgressDisplay& display, std::ostream& err) {
  CellRunnerOptions runner_options;
  runner_options.hvdrun = options.hvdrun;
  runner_options.program = options.program;
  runner_options.figures = config.figures;
  runner_options.timeout = std::chrono::milliseconds(static_cast<int64_t>(config.timeout_s * 1000));
  runner_options.interrupts = options.interrupts;
  runner_options.on_tick = [&] { display.Tick(ProgressDisplay::Clock::now()); };
  CellRunner runner(store, runner_options);
  RunTally tally;
  for (const PlannedRun& run : plan.runs) {
    if (InterruptRequest interrupt = options.interrupts(); interrupt.count > 0) {
      tally.interrupted_by = interrupt.signal;
      break;
    }
    std::string label = DescribeCell(*run.cell);
    if (config.repeats > 1) {
      label += " repeat " + std::to_string(run.repeat) + "/" + std::to_string(config.repeats);
    }
    if (!run.note.empty()) display.Message("hvdrun-lab: making " + label + " again: " + run.note);
    display.RunStarted(label, ProgressDisplay::Clock::now());
    StatusOr<RunOutcome> outcome = runner.Run(*run.cell, run.repeat);
    if (!outcome.ok()) {
      display.Finish();
      err << "hvdrun-lab: cells/" << run.cell->id << "/repeat-" << run.repeat << ": "
          << outcome.status().message() << "\n";
      tally.setup_failed = true;
      return tally;
    }
    if (outcome->interrupted) {
      tally.interrupted_by = outcome->signal;
      tally.run_discarded = true;
      break;
    }
    const RunRecord& record = outcome->record;
    ++(record.ok ? tally.ok : tally.failed);
    display.RunFinished(record.ok, record.error, record.duration_s, ProgressDisplay::Clock::now());
  }
  display.Finish();
  return tally;
}

}  // namespace

int RunExperiment(const ExperimentConfig& config, const Matrix& matrix, const ExperimentRunOptions& options,
                  std::ostream& out, std::ostream& err) {
  RunStore store(options.results_root + "/" + config.name);
  StatusOr<UniqueFd> lock = store.Lock();
  if (!lock.ok()) {
    err << "hvdrun-lab: " << lock.status().message() << "\n";
    return kLabExitSetup;
  }
  if (Status status = WriteExperimentFiles(store, config, matrix, options); !status.ok()) {
    err << "hvdrun-lab: " << status.message() << "\n";
    return kLabExitSetup;
  }
  const RunPlan plan = PlanRuns(config, matrix, store, options, out);
  const int total = plan.total();
  out << "hvdrun-lab: " << config.name << ": " << matrix.cells.size() << " cells";
  if (plan.skipped > 0) out << " (" << plan.skipped << " skipped)";
  out << ", " << total << " runs; " << plan.kept << " complete from before, " << plan.runs.size()
      << " to make; results in " << store.dir() << "\n"
      << std::flush;

  ProgressDisplay::Options display_options;
  display_options.terminal = options.terminal;
  display_options.width = options.terminal_width;
  display_options.total_runs = total;
  ProgressDisplay display(out, display_options, ProgressDisplay::Clock::now());
  if (plan.kept > 0) display.AddKeptRuns(plan.kept, plan.kept_seconds / plan.kept);
  const RunTally tally = MakeRuns(config, plan, store, options, display, err);
  if (tally.setup_failed) return kLabExitSetup;
  const int complete = plan.kept + tally.ok + tally.failed;
  if (tally.interrupted_by != 0) {
    // A run whose hvdrun ended before the signal came is kept: only one that was stopped is discarded.
    out << "hvdrun-lab: stopped by " << SignalName(tally.interrupted_by) << ": " << complete << " of "
        << total << " runs complete" << (tally.run_discarded ? ", the run in progress discarded" : "")
        << "; run the same command again to go on\n";
    return 128 + tally.interrupted_by;
  }
  out << "hvdrun-lab: " << total << " runs: " << (plan.kept + tally.ok) << " ok (" << plan.kept
      << " kept from before), " << tally.failed << " failed";
  if (plan.skipped > 0) out << "; " << plan.skipped << " cells skipped";
  out << "\nhvdrun-lab: report with: hvdrun-lab report " << store.dir() << "\n";
  return tally.failed > 0 ? kLabExitRunsFailed : kLabExitOk;
}

}  // namespace hvdrun::lab
