#include "agent/rank_watch.h"

#include <utility>

#include "common/progress/process_state.h"
#include "common/progress/progress_board.h"

namespace hvdrun {

RankWatch::RankWatch(int32_t rank, pid_t pid, std::string board_path)
    : rank_(rank), pid_(pid), board_path_(std::move(board_path)) {}

void RankWatch::Enter(protocol::ProcessState state) {
  if (state == state_) return;
  state_ = state;
  state_since_unix_ms_ = progress::UnixMillisNow();
}

void RankWatch::Stopped(int signal) {
  Enter(protocol::ProcessState::kStopped);
  stop_signal_ = signal;
}

void RankWatch::Continued() {
  stop_signal_ = 0;
  Enter(progress::ReadProcessState(pid_));
}

protocol::RankProgress RankWatch::Progress(bool with_records, bool exited) {
  const protocol::ProcessState seen =
      exited ? protocol::ProcessState::kExited : progress::ReadProcessState(pid_);
  // A process stopped and continued between two reads looks as if it never stopped; waitpid
  // tells the agent of both, so only a stop it did not see clears the signal.
  if (seen != protocol::ProcessState::kStopped) stop_signal_ = 0;
  Enter(seen);
  protocol::RankProgress progress;
  progress.rank = rank_;
  progress.pid = static_cast<int32_t>(pid_);
  progress.state = state_;
  progress.stop_signal = state_ == protocol::ProcessState::kStopped ? stop_signal_ : 0;
  progress.state_since_unix_ms = state_since_unix_ms_;
  // A rank that publishes nothing, or has not mapped its board yet, leaves the board fields zero.
  if (!board_path_.empty()) (void)progress::ReadProgressBoard(board_path_, with_records, &progress);
  return progress;
}

}  // namespace hvdrun
