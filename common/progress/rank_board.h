// The progress board of this process when it is a rank (HVDRUN_PROGRESS_FILE), and the calls with
// which its runtime publishes there: each costs a check of a pointer when there is no board, and a
// few atomic stores when there is one (common/progress/progress_board.h).
#ifndef HVDRUN_COMMON_PROGRESS_RANK_BOARD_H_
#define HVDRUN_COMMON_PROGRESS_RANK_BOARD_H_

#include <cstdint>
#include <string_view>

#include "common/progress/progress_board.h"

namespace hvdrun::progress {

// Created at the first call from HVDRUN_PROGRESS_FILE, with HVDRUN_PROGRESS_RECORDS records; null
// without that variable, with HVDRUN_PROGRESS=0, or when the file cannot be made (said once on
// stderr). Lives until the process ends.
ProgressBoard* RankBoard();

// The collective's sequence on the board, which PublishPhase takes; 0 without a board.
inline uint64_t PublishSubmitted(std::string_view name, std::string_view op, uint64_t bytes) {
  ProgressBoard* board = RankBoard();
  return board != nullptr ? board->Submitted(name, op, bytes, /*process_set=*/0) : 0;
}

// Nothing for sequence 0 (a collective submitted without a board, or not by this rank's code).
inline void PublishPhase(uint64_t sequence, protocol::CollectivePhase phase) {
  if (sequence == 0) return;
  if (ProgressBoard* board = RankBoard()) board->Advance(sequence, phase);
}

}  // namespace hvdrun::progress

#endif  // HVDRUN_COMMON_PROGRESS_RANK_BOARD_H_
