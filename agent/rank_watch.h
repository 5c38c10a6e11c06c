// RankWatch: what an agent sees of one of its ranks for RankProgress: the process's state (from
// /proc/<pid>/stat, and from waitpid for the signal that stopped it) with the time it entered that
// state, and the rank's progress board (common/progress/progress_board.h).
#ifndef HVDRUN_AGENT_RANK_WATCH_H_
#define HVDRUN_AGENT_RANK_WATCH_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/protocol/agent_protocol.h"

namespace hvdrun {

class RankWatch {
 public:
  // `board_path` is where the rank publishes its board; empty when it has none.
  RankWatch(int32_t rank, pid_t pid, std::string board_path);

  // waitpid (WUNTRACED) reported the rank stopped by `signal`, or (WCONTINUED) continued.
  void Stopped(int signal);
  void Continued();
  // The rank's progress now: its process's state (kExited once `exited`), its board, and the board's
  // flight recorder when `with_records`.
  protocol::RankProgress Progress(bool with_records, bool exited);

 private:
  void Enter(protocol::ProcessState state);

  int32_t rank_;
  pid_t pid_;
  std::string board_path_;
  protocol::ProcessState state_ = protocol::ProcessState::kUnknown;
  int64_t state_since_unix_ms_ = 0;
  int stop_signal_ = 0;  // from waitpid; 0 when the stop was not seen there
};

}  // namespace hvdrun

#endif  // HVDRUN_AGENT_RANK_WATCH_H_
