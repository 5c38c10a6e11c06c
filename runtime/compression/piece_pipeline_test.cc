#include "runtime/compression/piece_pipeline.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace hvdrun {
namespace {

// What ran: (stage, piece) in order of start, with whether it ran on the calling thread.
struct Event {
  size_t stage;
  size_t piece;
  bool on_caller;
};

class Recorder {
 public:
  explicit Recorder(size_t stages) : caller_(std::this_thread::get_id()), stages_(stages) {}

  std::vector<PiecePipeline::Stage> Stages(size_t failing_stage = SIZE_MAX, size_t failing_piece = SIZE_MAX) {
    std::vector<PiecePipeline::Stage> stages;
    for (size_t s = 0; s < stages_; ++s) {
      stages.emplace_back([this, s, failing_stage, failing_piece](size_t piece) {
        {
          const std::lock_guard<std::mutex> lock(mutex_);
          events_.push_back({s, piece, std::this_thread::get_id() == caller_});
        }
        if (s == failing_stage && piece == failing_piece) return Status::Error("stage failed");
        return Status::Ok();
      });
    }
    return stages;
  }
  std::vector<Event> events() const { return events_; }

 private:
  std::thread::id caller_;
  size_t stages_;
  std::mutex mutex_;
  std::vector<Event> events_;
};

size_t IndexOf(const std::vector<Event>& events, size_t stage, size_t piece) {
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].stage == stage && events[i].piece == piece) return i;
  }
  return SIZE_MAX;
}

TEST(PiecePipelineTest, EveryStageOfEveryPieceRunsOnceAfterThePreviousStageOnItsThread) {
  for (size_t stages : {size_t{1}, size_t{2}, size_t{7}}) {
    for (size_t pieces : {size_t{1}, size_t{2}, size_t{3}, size_t{50}}) {
      Recorder recorder(stages);
      ASSERT_TRUE(PiecePipeline::Run(recorder.Stages(), pieces, /*overlap=*/true).ok());
      const std::vector<Event> events = recorder.events();
      ASSERT_EQ(events.size(), stages * pieces);
      for (size_t s = 0; s < stages; ++s) {
        for (size_t p = 0; p < pieces; ++p) {
          const size_t at = IndexOf(events, s, p);
          ASSERT_NE(at, SIZE_MAX) << "stage " << s << " piece " << p;
          // Overlapped, odd stages run on the calling thread and even ones on the worker.
          const bool on_caller = pieces == 1 || s % 2 == 1;
          EXPECT_EQ(events[at].on_caller, on_caller) << "stage " << s << " piece " << p;
          EXPECT_TRUE(s == 0 || IndexOf(events, s - 1, p) < at) << "stage " << s << " piece " << p;
          EXPECT_TRUE(p == 0 || IndexOf(events, s, p - 1) < at) << "stage " << s << " piece " << p;
          EXPECT_TRUE(s != 0 || p == 0 || stages == 1 || IndexOf(events, 1, p - 1) < at) << "piece " << p;
        }
      }
    }
  }
}

// The calling thread's stages (the collectives) run in the same order on every rank: the rounds'.
TEST(PiecePipelineTest, TheCallingThreadsStagesRunInRoundOrder) {
  constexpr size_t kStages = 7;
  constexpr size_t kPieces = 5;
  Recorder recorder(kStages);
  ASSERT_TRUE(PiecePipeline::Run(recorder.Stages(), kPieces, /*overlap=*/true).ok());
  std::vector<std::pair<size_t, size_t>> caller;
  for (const Event& event : recorder.events()) {
    if (event.on_caller) caller.emplace_back(event.stage, event.piece);
  }
  std::vector<std::pair<size_t, size_t>> expected;
  for (size_t round = 0; round < kPieces + 3; ++round) {
    for (size_t stage = 1; stage < kStages; stage += 2) {
      if (round >= stage / 2 && round - stage / 2 < kPieces) expected.emplace_back(stage, round - stage / 2);
    }
  }
  EXPECT_EQ(caller, expected);
}

TEST(PiecePipelineTest, WithoutOverlapEveryStageRunsOnTheCallingThreadPieceByPiece) {
  Recorder recorder(3);
  ASSERT_TRUE(PiecePipeline::Run(recorder.Stages(), 4, /*overlap=*/false).ok());
  const std::vector<Event> events = recorder.events();
  ASSERT_EQ(events.size(), 12U);
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].piece, i / 3);
    EXPECT_EQ(events[i].stage, i % 3);
    EXPECT_TRUE(events[i].on_caller);
  }
}

// A failed stage is the answer, and no stage of that piece or a later piece starts after it on its
// own thread; the other thread stops too (Run returns, so it has).
TEST(PiecePipelineTest, AFailedStageStopsBothThreads) {
  for (size_t failing_stage : {size_t{0}, size_t{3}, size_t{6}}) {
    for (bool overlap : {true, false}) {
      Recorder recorder(7);
      const Status status = PiecePipeline::Run(recorder.Stages(failing_stage, 2), 20, overlap);
      ASSERT_FALSE(status.ok());
      EXPECT_EQ(status.message(), "stage failed");
      const std::vector<Event> events = recorder.events();
      EXPECT_LT(events.size(), 7U * 20U);
      for (const Event& event : events) {
        EXPECT_FALSE(event.stage > failing_stage && event.piece == 2)
            << "stage " << event.stage << " of the failed piece ran";
      }
      EXPECT_EQ(IndexOf(events, failing_stage, 3), SIZE_MAX);
    }
  }
}

}  // namespace
}  // namespace hvdrun
