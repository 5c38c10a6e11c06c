// RunExperiment: `hvdrun-lab run` once the experiment is parsed and expanded — every run of every
// cell that this machine can make, through hvdrun, into RESULTS/<name>/ (lab/store/run_store.h).
//
// Resuming is the default: a run already complete and ok, made with the same hvdrun arguments,
// is kept; a failed run, or one made with other arguments (the experiment changed), is made
// again; `force` makes every run again. A failed run is recorded with its reason and the matrix
// goes on. A signal stops the matrix after the run in progress has been stopped and discarded.
#ifndef HVDRUN_LAB_RUN_EXPERIMENT_RUNNER_H_
#define HVDRUN_LAB_RUN_EXPERIMENT_RUNNER_H_

#include <functional>
#include <ostream>
#include <string>

#include "lab/experiment/experiment_config.h"
#include "lab/experiment/matrix.h"
#include "lab/host_facts.h"
#include "lab/run/interrupt_signals.h"
#include "lab/run/progress_display.h"

namespace hvdrun::lab {

// hvdrun-lab's exit codes (docs/lab.md); a signal N that stopped `run` gives 128 + N.
inline constexpr int kLabExitOk = 0;          // every run ok (or kept); skipped cells do not count
inline constexpr int kLabExitRunsFailed = 1;  // at least one run failed
inline constexpr int kLabExitUsage = 2;       // bad command line, or the experiment file is invalid
inline constexpr int kLabExitSetup = 3;  // the results could not be read or written, or hvdrun not started

struct ExperimentRunOptions {
  std::string results_root;     // --results: the experiment's directory is results_root/<name>
  bool force = false;           // --force
  std::string hvdrun;           // hvdrun's path
  std::string program;          // ResolveProgram's
  std::string experiment_text;  // kept as experiment.yaml
  HostFacts local_facts;        // kept as environment.json
  bool terminal = false;        // progress display on a terminal
  size_t terminal_width = 0;
  std::function<InterruptRequest()> interrupts = [] { return InterruptRequest{}; };
};

// Returns hvdrun-lab's exit code; `out` gets the progress and the closing summary, `err` errors.
int RunExperiment(const ExperimentConfig& config, const Matrix& matrix, const ExperimentRunOptions& options,
                  std::ostream& out, std::ostream& err);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_RUN_EXPERIMENT_RUNNER_H_
