// Stream points: where on a caller's stream a submitted tensor is complete (what device memory's
// BackendMemory::MarkReady records), numbered in the order they were recorded, so that a fused
// response of many tensors makes the backend's stream wait once per caller stream instead of once
// per tensor: a stream runs its work in the order it was queued, so the latest point of a stream
// comes after every earlier one.
//
//   StreamPoints points;
//   StatusOr<BackendMemory::ReadyMark> mark = points.Record(stream, [&] { return RecordEvent(stream); });
//   ...
//   for (const StreamPoint* point : LatestPerStream(marks)) WaitOnEvent(point->event);
//
// Inline, in a header: each backend module compiles a hidden copy of its own (one_line.h says why).
#ifndef HVDRUN_RUNTIME_STREAM_POINTS_H_
#define HVDRUN_RUNTIME_STREAM_POINTS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "hvdrun/status.h"
#include "runtime/backend.h"

namespace hvdrun {

// One recorded point of a caller's stream.
struct StreamPoint {
  void* stream = nullptr;       // the caller's stream (null: the device's default stream)
  uint64_t sequence = 0;        // its place among every point of the same StreamPoints
  std::shared_ptr<void> event;  // what the backend recorded there (a CUDA event)
};

// Numbers the points one memory records. Thread-safe.
class StreamPoints {
 public:
  using Recorder = std::function<StatusOr<std::shared_ptr<void>>()>;

  // A ReadyMark holding the StreamPoint that `record` makes on `stream`. Recording and numbering
  // happen under one lock, so that two threads queueing on one stream get numbers in the stream's
  // order (a record made later on a stream is numbered higher).
  StatusOr<BackendMemory::ReadyMark> Record(void* stream, const Recorder& record) {
    std::lock_guard<std::mutex> lock(mutex_);
    StatusOr<std::shared_ptr<void>> event = record();
    if (!event.ok()) return event.status();
    auto point = std::make_shared<StreamPoint>();
    point->stream = stream;
    point->sequence = next_++;
    point->event = std::move(event).value();
    return BackendMemory::ReadyMark(std::move(point));
  }

 private:
  std::mutex mutex_;
  uint64_t next_ = 0;  // GUARDED_BY(mutex_)
};

// The point of `mark`, a ReadyMark made by StreamPoints::Record (null: none).
inline const StreamPoint* PointOf(const BackendMemory::ReadyMark& mark) {
  return static_cast<const StreamPoint*>(mark.get());
}

// Of `marks` (ReadyMarks made by one StreamPoints; nulls are skipped), the latest point of each
// stream, streams in the order of their first mark: waiting for these waits for all of `marks`.
inline std::vector<const StreamPoint*> LatestPerStream(
    const std::vector<const BackendMemory::ReadyMark*>& marks) {
  std::vector<const StreamPoint*> latest;
  for (const BackendMemory::ReadyMark* mark : marks) {
    const StreamPoint* point = mark != nullptr ? PointOf(*mark) : nullptr;
    if (point == nullptr) continue;
    bool seen = false;
    for (const StreamPoint*& kept : latest) {
      if (kept->stream != point->stream) continue;
      if (point->sequence > kept->sequence) kept = point;
      seen = true;
      break;
    }
    if (!seen) latest.push_back(point);
  }
  return latest;
}

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_STREAM_POINTS_H_
