// JobProblem: the one problem that explains how a job went wrong, for the failure report's headline
// and notes and for summary.json's "problem": the rank to blame and the ranks that waited for it.
//
// The blame: a stall that hvdrun ended (the stall shutdown) blames the stall inspector's cause rank.
// A first failure that was waiting for another rank blames that rank instead, when that rank had
// stopped progressing: it is stopped, gone or silent, or the failing rank had waited for it for
// the stall check time (a peer timeout in a rank is the symptom, not the cause). Any other first
// failure is a rank that died, blamed itself. Pure.
#ifndef HVDRUN_LAUNCHER_RESULTS_JOB_PROBLEM_H_
#define HVDRUN_LAUNCHER_RESULTS_JOB_PROBLEM_H_

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "launcher/results/failure_report.h"
#include "launcher/stall/stall_inspector.h"

namespace hvdrun {

struct JobProblem {
  // "stall" (ranks waited for ranks that did not submit), "stuck in backend" (every rank submitted;
  // the collective did not finish) or "rank died" (a rank failed on its own).
  std::string kind;
  int rank = -1;                             // the rank to blame; -1 when no one rank stands out
  std::string state;                         // its state (or how it ended) in words
  std::vector<int> waiting;                  // the ranks that waited for it
  std::vector<std::string> tensors;          // what they waited for
  bool shut_down = false;                    // hvdrun ended the job on the stall (exit 6)
  std::chrono::milliseconds stalled_for{0};  // with a stall: how long no collective completed
};

// The problem of a job that hvdrun ended on the stall `stall` (the stall shutdown).
JobProblem StallShutdownProblem(const StallFinding& stall);

// The problem of a job whose first failure is `first_failure` (a rank; -1 for none: nullopt).
// `waits`: what the ranks waited for when it failed (StallInspector::Explain), if anything;
// `check_time`: the stall check time.
std::optional<JobProblem> FailureProblem(const std::vector<RankOutcome>& ranks, int first_failure,
                                         const std::optional<StallFinding>& waits,
                                         std::chrono::seconds check_time);

// summary.json's "problem".
nlohmann::json JobProblemToJson(const JobProblem& problem);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_RESULTS_JOB_PROBLEM_H_
