#include "runtime/stream_points.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace hvdrun {
namespace {

// Stands for two caller streams: only their addresses are used.
int stream_a = 0;
int stream_b = 0;

// A point recorded by `points` on `stream`; the event is an int counting the records.
BackendMemory::ReadyMark Mark(StreamPoints& points, void* stream) {
  static int records = 0;
  StatusOr<BackendMemory::ReadyMark> mark =
      points.Record(stream, [] { return StatusOr<std::shared_ptr<void>>(std::make_shared<int>(++records)); });
  EXPECT_TRUE(mark.ok());
  return mark.ok() ? mark.value() : BackendMemory::ReadyMark();
}

TEST(StreamPoints, TheLatestPointOfEachStreamStandsForAllOfIt) {
  StreamPoints points;
  const BackendMemory::ReadyMark a1 = Mark(points, &stream_a);
  const BackendMemory::ReadyMark b1 = Mark(points, &stream_b);
  const BackendMemory::ReadyMark a2 = Mark(points, &stream_a);
  const BackendMemory::ReadyMark none;
  const BackendMemory::ReadyMark b2 = Mark(points, &stream_b);
  const BackendMemory::ReadyMark a3 = Mark(points, &stream_a);
  // Members come in the response's order, not the order they were recorded in.
  const std::vector<const StreamPoint*> latest = LatestPerStream({&a2, &b2, &none, &a3, &a1, &b1});
  ASSERT_EQ(latest.size(), 2U);
  EXPECT_EQ(latest[0], PointOf(a3));
  EXPECT_EQ(latest[1], PointOf(b2));
  EXPECT_EQ(latest[0]->stream, &stream_a);
  EXPECT_GT(PointOf(a3)->sequence, PointOf(a2)->sequence);
  EXPECT_GT(PointOf(a2)->sequence, PointOf(a1)->sequence);
}

TEST(StreamPoints, TheDefaultStreamIsAStreamOfItsOwn) {
  StreamPoints points;
  const BackendMemory::ReadyMark on_default = Mark(points, nullptr);
  const BackendMemory::ReadyMark on_a = Mark(points, &stream_a);
  const std::vector<const StreamPoint*> latest = LatestPerStream({&on_a, &on_default});
  ASSERT_EQ(latest.size(), 2U);
  EXPECT_EQ(latest[0], PointOf(on_a));
  EXPECT_EQ(latest[1], PointOf(on_default));
}

TEST(StreamPoints, NoMarksMeansNothingToWaitFor) {
  const BackendMemory::ReadyMark none;
  EXPECT_TRUE(LatestPerStream({}).empty());
  EXPECT_TRUE(LatestPerStream({&none, &none}).empty());
}

TEST(StreamPoints, AFailedRecordIsNoMark) {
  StreamPoints points;
  StatusOr<BackendMemory::ReadyMark> mark = points.Record(
      &stream_a, [] { return StatusOr<std::shared_ptr<void>>(Status::Error("no event left")); });
  ASSERT_FALSE(mark.ok());
  EXPECT_EQ(mark.status().message(), "no event left");
}

// Threads queueing on one stream: the numbers follow the order the records reached the stream (the
// stream here is a log appended to inside the record), so the latest number is the last record.
TEST(StreamPoints, NumbersFollowEachStreamsOrderAcrossThreads) {
  StreamPoints points;
  std::mutex mutex;
  std::map<void*, std::vector<int>> logs;  // each stream's records, in the order they were made
  int made = 0;
  auto record_on = [&](void* stream) {
    StatusOr<BackendMemory::ReadyMark> mark = points.Record(stream, [&] {
      const std::lock_guard<std::mutex> lock(mutex);
      logs[stream].push_back(made);
      return StatusOr<std::shared_ptr<void>>(std::make_shared<int>(made++));
    });
    EXPECT_TRUE(mark.ok());
    return mark.value();
  };
  constexpr int kThreads = 4;
  constexpr int kEach = 500;
  std::vector<std::vector<BackendMemory::ReadyMark>> marks(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) marks[t].push_back(record_on(t % 2 == 0 ? &stream_a : &stream_b));
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::map<int, uint64_t> sequence_of;  // record -> its number
  std::vector<const BackendMemory::ReadyMark*> all;
  for (const std::vector<BackendMemory::ReadyMark>& mine : marks) {
    for (const BackendMemory::ReadyMark& mark : mine) {
      sequence_of[*static_cast<const int*>(PointOf(mark)->event.get())] = PointOf(mark)->sequence;
      all.push_back(&mark);
    }
  }
  for (const auto& [stream, log] : logs) {
    for (size_t i = 1; i < log.size(); ++i) {
      ASSERT_GT(sequence_of[log[i]], sequence_of[log[i - 1]])
          << "a later record on a stream got a lower number";
    }
  }
  const std::vector<const StreamPoint*> latest = LatestPerStream(all);
  ASSERT_EQ(latest.size(), 2U);
  for (const StreamPoint* point : latest) {
    EXPECT_EQ(*static_cast<const int*>(point->event.get()), logs[point->stream].back());
  }
}

}  // namespace
}  // namespace hvdrun
