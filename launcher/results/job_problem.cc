#include "launcher/results/job_problem.h"

#include <algorithm>

namespace hvdrun {
namespace {

bool Contains(const std::vector<int>& ranks, int rank) {
  return std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
}

}  // namespace

JobProblem StallShutdownProblem(const StallFinding& stall) {
  JobProblem problem;
  problem.kind = StallKindName(stall.kind);
  problem.rank = stall.cause_rank;
  problem.state = stall.cause_state;
  problem.waiting = stall.waiting_ranks;
  problem.tensors = stall.tensors;
  problem.shut_down = true;
  problem.stalled_for = stall.stalled_for;
  return problem;
}

std::optional<JobProblem> FailureProblem(const std::vector<RankOutcome>& ranks, int first_failure,
                                         const std::optional<StallFinding>& waits,
                                         std::chrono::seconds check_time) {
  if (first_failure < 0) return std::nullopt;
  if (waits && waits->cause_rank >= 0 && waits->cause_rank != first_failure &&
      Contains(waits->waiting_ranks, first_failure)) {
    // A working rank is blamed only once the failing rank had waited for it for the check time.
    if (!waits->cause_alive || waits->stalled_for >= check_time) {
      JobProblem problem;
      problem.kind = StallKindName(waits->kind);
      problem.rank = waits->cause_rank;
      problem.state = waits->cause_state;
      problem.waiting = waits->waiting_ranks;
      problem.tensors = waits->tensors;
      problem.stalled_for = waits->stalled_for;
      return problem;
    }
  }
  JobProblem problem;
  problem.kind = "rank died";
  problem.rank = first_failure;
  problem.state = EndText(ranks.at(first_failure));
  if (waits) {
    for (int rank : waits->waiting_ranks) {
      if (rank != first_failure) problem.waiting.push_back(rank);
    }
    problem.tensors = waits->tensors;
  }
  return problem;
}

nlohmann::json JobProblemToJson(const JobProblem& problem) {
  nlohmann::json json = {{"kind", problem.kind},       {"rank", problem.rank},
                         {"state", problem.state},     {"waiting_ranks", problem.waiting},
                         {"tensors", problem.tensors}, {"ended_by_stall_shutdown", problem.shut_down}};
  if (problem.kind != "rank died") {
    json["stalled_seconds"] = std::chrono::duration<double>(problem.stalled_for).count();
  }
  if (problem.rank < 0) json["rank"] = nullptr;
  return json;
}

}  // namespace hvdrun
