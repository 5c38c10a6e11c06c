// ExperimentResults: an experiment's results directory (lab/store/run_store.h) read back for the report —
// the cells as `hvdrun-lab run` last expanded them (experiment.json), every complete run of each,
// with every rank's report and the host facts hvdrun wrote, and the facts of the machine the
// matrix ran on (environment.json).
//
// Runs that are not complete (no run.json) are not read. A file that cannot be read or parsed is
// named in `problems` and skipped, so that one damaged run does not hide the others.
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
#include "lab/store/run_store.h"

namespace hvdrun::lab {

// One size of hvdrun-bench's "results" list.
struct AllreduceSize {
  double bytes = 0;
  double time_us = 0;
  std::optional<double> busbw_gbps;
};

// One size bin of libhvdrun's response statistics (the report's libhvdrun.responses.bins,
// docs/results.md): the backend calls of the negotiated path whose bytes fall in (lower, upper].
struct ResponseBin {
  double lower_bytes = 0;
  double upper_bytes = 0;
  double responses = 0;
  double tensors = 0;
  double bytes = 0;
  double seconds = 0;
};

// What the report uses of a rank's report.
struct RankReport {
  int rank = 0;
  std::map<std::string, double> figures;  // the numbers of the report's "summary"
  // "threads" (hvdrun-trainer's): the threads the rank computed with; 0: not said.
  int threads = 0;
  std::string framework;               // "framework" and "framework_version", when the report names them
  std::vector<AllreduceSize> sizes;    // hvdrun-bench's "results": one entry per message size
  std::vector<ResponseBin> responses;  // libhvdrun's response statistics, bins in order; empty without
  // What carried the rank's allreduces ("shm", "shm+gloo", "gloo", "mpi", "nccl"): the report's own
  // "allreduce_path" (hvdrun-bench's, of the Runtime it measured), else libhvdrun's
  // ("libhvdrun.allreduce_path", docs/results.md); empty when the report says neither (results
  // written before libhvdrun named it, or a call-order Runtime that does not compress).
  std::string allreduce_path;
};

struct StoredRun {
  int repeat = 0;
  std::string dir;
  RunRecord record;
  std::vector<RankReport> ranks;        // in rank order; those that reported
  std::vector<std::string> plan_hosts;  // the hosts of hvdrun's plan.json, in order; empty without one
  std::vector<std::pair<std::string, HostFacts>> host_facts;  // hvdrun's hosts/*.json: (file, facts)
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

// Reads DIR (a results directory that `hvdrun-lab run` wrote). Errors: DIR has no readable
// experiment.json.
StatusOr<ExperimentResults> LoadExperimentResults(const std::string& dir);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_STORE_EXPERIMENT_RESULTS_H_
