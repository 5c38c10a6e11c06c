#include "runtime/compression/piece_pipeline.h"

#include <condition_variable>
#include <mutex>
#include <thread>

namespace hvdrun {

Status PiecePipeline::Run(const std::vector<Stage>& stages, size_t pieces, bool overlap) {
  if (!overlap || pieces <= 1) {
    for (size_t piece = 0; piece < pieces; ++piece) {
      for (const Stage& stage : stages) {
        if (Status status = stage(piece); !status.ok()) return status;
      }
    }
    return Status::Ok();
  }

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<size_t> done(stages.size(), 0);  // pieces finished, by stage; guarded by mutex
  bool stopped = false;                        // guarded by mutex
  Status failure = Status::Ok();               // guarded by mutex
  const size_t rounds = pieces + (stages.size() - 1) / 2;
  const auto lane = [&](size_t first_stage) {
    for (size_t round = 0; round < rounds; ++round) {
      for (size_t stage = first_stage; stage < stages.size(); stage += 2) {
        if (round < stage / 2 || round - stage / 2 >= pieces) continue;
        const size_t piece = round - stage / 2;
        {
          std::unique_lock<std::mutex> lock(mutex);
          changed.wait(lock, [&] {
            if (stopped) return true;
            if (stage > 0) return done[stage - 1] > piece;
            return piece == 0 || stages.size() == 1 || done[1] >= piece;
          });
          if (stopped) return;
        }
        Status status = stages[stage](piece);
        const std::lock_guard<std::mutex> lock(mutex);
        if (!status.ok()) {
          if (!stopped) failure = std::move(status);
          stopped = true;
        } else {
          done[stage] = piece + 1;
        }
        changed.notify_all();
        if (stopped) return;
      }
    }
  };
  std::thread worker(lane, 0);
  lane(1);
  worker.join();
  return failure;
}

}  // namespace hvdrun
