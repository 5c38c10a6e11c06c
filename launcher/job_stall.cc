#include <cstdio>
#include <set>

#include "common/error_text.h"
#include "launcher/job_run.h"
#include "launcher/stall/flight_recorders.h"

// JobRun's part that watches a running job's progress: the stall check, SIGUSR1's answer, and the
// ranks' flight recorders (gathered on a stall warning, the first failure and SIGUSR1).
namespace hvdrun {
namespace {

// How long hvdrun waits for the ranks' recorders before it reports those that came.
constexpr std::chrono::seconds kRecorderWait{2};
// The last collectives SIGUSR1 prints of each rank.
constexpr size_t kLastCollectivesShown = 5;

}  // namespace

void JobRun::CheckStall() {
  StallInspector::Action action = stall_->Check(clock_());
  if (action.warn) {
    output_.Flush();
    std::fputs(FormatStallWarning(*stall_->finding(), stall_->settings()).c_str(), stderr);
    AskRecorders(/*print_last=*/false);
  }
  if (action.shut_down) {
    stall_shutdown_ = StallShutdownProblem(*stall_->finding());
    std::fprintf(stderr,
                 "hvdrun: stall: no collective completed for %s: stopping every rank "
                 "(--stall-check-shutdown-time-seconds)\n",
                 DurationText(stall_->settings().shutdown_time).c_str());
    BeginStop();
  }
}

void JobRun::PrintRankStates() {
  output_.Flush();
  if (stall_ == nullptr) {
    std::fprintf(stderr, "hvdrun: SIGUSR1: no rank has been launched yet\n");
    return;
  }
  std::string text = "hvdrun: SIGUSR1: the ranks' states";
  const bool asked = launcher_->RequestProgress(/*with_recorder=*/false);
  AskRecorders(/*print_last=*/true);
  text += asked ? ", as of their last report (at most a second old):\n"
                : " (this launcher reports no progress: their ends only):\n";
  const std::vector<int> processes = RoundProcesses();
  for (const RankState& state : stall_->StatesAt(clock_())) {
    const RankOutcome& outcome = outcomes_[processes.at(state.rank)];
    std::string line = RankLabel(state) + ": ";
    if (outcome.exited || !outcome.lost_reason.empty()) {
      line += "ended (" + EndText(outcome) + ")";
    } else if (outcome.pid == 0) {
      line += "not started yet";
    } else {
      line += DescribeRankState(state, "");
    }
    text += "  " + line + "\n";
  }
  std::fputs(text.c_str(), stderr);
}

void JobRun::NoteFailure() {
  if (failure_noted_ || stopping_) return;
  failure_noted_ = true;
  if (stall_ != nullptr) failure_waits_ = stall_->Explain(clock_());
  AskRecorders(/*print_last=*/false);
}

void JobRun::RankProgressed(const RankState& state) {
  // The launcher's state names a process; the stall check knows the current round's ranks.
  if (stall_ == nullptr || state.rank < 0 || state.rank >= static_cast<int>(outcomes_.size())) return;
  const int rank = RoundRankOf(state.rank);
  if (rank < 0) return;
  RankState known = state;
  known.rank = rank;
  known.host = outcomes_[state.rank].host;
  if (known.pid == 0) known.pid = outcomes_[state.rank].pid;
  stall_->Update(known, clock_());
  if (!state.recorder.empty()) {
    records_[rank] = state.recorder;
    if (gathering_) gathering_->waiting.erase(rank);
  }
}

void JobRun::CheckRecorders() {
  if (gathering_ && (gathering_->waiting.empty() || clock_() >= gathering_->deadline)) FinishRecorders();
}

void JobRun::AskRecorders(bool print_last) {
  std::set<int> ranks;
  const std::vector<int> processes = RoundProcesses();
  for (size_t rank = 0; rank < processes.size(); ++rank) {
    const RankOutcome& outcome = outcomes_[processes[rank]];
    if (outcome.pid > 0 && !outcome.exited && outcome.lost_reason.empty()) {
      ranks.insert(static_cast<int>(rank));
    }
  }
  if (ranks.empty() || !launcher_->RequestProgress(/*with_recorder=*/true)) return;
  if (gathering_) {
    gathering_->print_last = gathering_->print_last || print_last;
    return;
  }
  gathering_ = RecorderGathering{
      .waiting = std::move(ranks), .deadline = clock_() + kRecorderWait, .print_last = print_last};
}

void JobRun::FinishRecorders() {
  const bool print_last = gathering_->print_last;
  gathering_.reset();
  output_.Flush();
  std::string text;
  if (print_last) {
    for (const auto& [rank, records] : records_) {
      text += "  rank " + std::to_string(rank) + "'s last collectives:\n" +
              FormatLastCollectives(records, kLastCollectivesShown);
    }
  }
  if (std::string divergence = DescribeDivergence(records_); !divergence.empty()) {
    text += "hvdrun: " + divergence + "\n";
  }
  if (!options_.results_dir.empty() && !records_.empty()) {
    if (Status status = WriteRecorderFiles(options_.results_dir, records_); status.ok()) {
      text += "hvdrun: flight recorders written to " + options_.results_dir + "/ranks/rank-N.recorder.json\n";
    } else {
      text += "hvdrun: " + status.message() + "\n";
    }
  }
  std::fputs(text.c_str(), stderr);
}

}  // namespace hvdrun
