// ExperimentResults: an experiment's results directory (lab/store/run_store.h) read back for the report —
// the cells as `hvdrun-lab run` last expanded them (experiment.json), every complete run of each,
// with every rank's report and the host facts hvdrun wrote, and the facts of the machine the
// matrix ran on (environment.json).
//
// Runs that are not complete (no run.json) are not read. A file of a run that cannot be read or
// parsed, or that holds a number out of range (lab/store/rank_report.h), is named in `problems` and
// skipped, so that one damaged run does not hide the others. experiment.json itself must be whole:
// its numbers within the bounds `run` keeps (lab/experiment/experiment_limits.h), or the results
// are not read at all.
#ifndef HVDRUN_LAB_STORE_EXPERIMENT_RESULTS_H_
#define HVDRUN_LAB_STORE_EXPERIMENT_RESULTS_H_

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/placement/slurm_allocation.h"
#include "hvdrun/status.h"
#include "lab/experiment/experiment_config.h"
#include "lab/experiment/matrix.h"
#include "lab/host_facts.h"
#include "lab/store/autotune_outcome.h"
#include "lab/store/rank_report.h"
#include "lab/store/run_store.h"

namespace hvdrun::lab {

struct StoredRun {
  int repeat = 0;
  std::string dir;
  RunRecord record;
  std::vector<RankReport> ranks;        // in rank order; those that reported
  std::vector<std::string> plan_hosts;  // the hosts of hvdrun's plan.json, in order; empty without one
  // The rounds hvdrun's summary.json records ("rounds"): 1 for a job that ran as launched, one more
  // for each time an elastic job re-formed; 0 when it records none (no summary.json, a summary of
  // an hvdrun before rounds, a job whose ranks never started).
  int rounds = 0;
  std::vector<std::pair<std::string, HostFacts>> host_facts;  // hvdrun's hosts/*.json: (file, facts)
  std::optional<AutotuneOutcome> autotune;                    // the run's autotune.csv, when it has one
};

struct StoredCell {
  Cell cell;
  std::vector<StoredRun> runs;  // complete runs, ok or failed, by repeat
};

struct StoredAxis {
  std::string name;
  std::vector<std::string> values;
};

struct ExperimentResults {
  std::string dir;
  std::string name;
  std::string description;
  std::string experiment_file;
  int repeats = 1;
  FigureNames figures;
  std::vector<StoredAxis> axes;  // backend, np, servers, then the rest, with their values in order
  // The experiment's `hvdrun` section (key, value; a list joined with ", "), in file order.
  std::vector<std::pair<std::string, std::string>> hvdrun_options;
  int excluded = 0;
  std::vector<StoredCell> cells;
  std::optional<HostFacts> environment;  // environment.json
  std::string environment_note;          // where environment.json came from, a sentence; empty without it
  // environment.json's "slurm": the Slurm job `run` ran in (hvdrun-lab run --slurm); empty job_id:
  // none. Only the job's id, node list and tasks per node are read back.
  SlurmAllocation slurm;
  std::vector<std::string> problems;
};

// experiment.json's contents: what the report needs to know of the experiment and its cells.
nlohmann::json ExperimentToJson(const ExperimentConfig& config, const Matrix& matrix);

// The experiments' directories directly under `dir` (`hvdrun-lab run --results DIR` makes one per
// experiment): those holding an experiment.json, sorted by name. Empty when there are none or `dir`
// cannot be read.
std::vector<std::string> FindExperimentDirs(const std::string& dir);

// The experiment and its cells, without their runs, from experiment.json's contents (`dir`: the
// results directory, whose experiment.json errors name). Errors: not an experiment that `run`
// writes, or a member of the wrong type or out of range, named.
StatusOr<ExperimentResults> ExperimentResultsFromJson(const nlohmann::json& json, const std::string& dir);

// Reads DIR (a results directory that `hvdrun-lab run` wrote). Errors: DIR has no readable
// experiment.json, or ExperimentResultsFromJson's.
StatusOr<ExperimentResults> LoadExperimentResults(const std::string& dir);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_STORE_EXPERIMENT_RESULTS_H_
