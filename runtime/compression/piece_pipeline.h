// PiecePipeline: runs a chain of stages over a buffer cut into pieces on two threads, so that one
// thread's stages of some pieces run while the other thread's stages of other pieces do. The fp8
// compressed allreduce uses it to convert pieces while others are on the wire: the stages that call
// the Backend (whose contract allows one thread, the caller's) run on the calling thread, the
// conversions on a worker thread.
//
// The stages alternate: stage 0 (no dependency), 2, 4, ... run on the worker, stages 1, 3, 5, ... on
// the calling thread. Stage s of piece p starts once stage s - 1 of piece p has finished, and stage
// 0 of piece p once stage 1 of piece p - 1 has (so that the calling thread's first stage of a piece
// can bring what the worker needs to start the next: the fp8 allreduce's next scales). Each thread
// runs its stages in a fixed order, the same on every rank (so that the collectives among the
// calling thread's stages match across ranks): in round t = 0, 1, ..., stage s runs for piece
// t - s / 2, by ascending s. A worker round depends only on the calling thread's previous round, so
// the order cannot deadlock, and while the calling thread runs one stage, the worker runs stages of
// other pieces. A stage's buffers may be reused two pieces later (p and p + 2 never run at once),
// which is what the fp8 allreduce's staging relies on.
//
// A stage returns a Status; the first that fails stops both threads (no later stage starts; the
// worker's current stage finishes) and Run returns it. With one piece, or `overlap` false, every
// stage runs in order on the calling thread and no thread is started. Stages must not throw.
#ifndef HVDRUN_RUNTIME_COMPRESSION_PIECE_PIPELINE_H_
#define HVDRUN_RUNTIME_COMPRESSION_PIECE_PIPELINE_H_

#include <cstddef>
#include <functional>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun {

class PiecePipeline {
 public:
  // stage(piece) for every piece in [0, pieces).
  using Stage = std::function<Status(size_t piece)>;

  // Runs stages[s](p) for every s and p, as above. `stages` must not be empty.
  static Status Run(const std::vector<Stage>& stages, size_t pieces, bool overlap);
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_COMPRESSION_PIECE_PIPELINE_H_
