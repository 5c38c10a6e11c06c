#include "runtime/negotiation/response_timeline.h"

#include <algorithm>
#include <utility>

#include "runtime/compression/compressed_allreduce.h"

namespace hvdrun {

void ResponseTimeline::set_timeline(std::shared_ptr<Timeline> timeline) {
  std::lock_guard<std::mutex> lock(mutex_);
  timeline_ = std::move(timeline);
}

bool ResponseTimeline::recording() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return timeline_ != nullptr;
}

void ResponseTimeline::MarkCycle(Clock::time_point start) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (timeline_ != nullptr) timeline_->MarkCycle(start);
}

void ResponseTimeline::Mark(const TimelineMark& mark, Clock::time_point at) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (timeline_ != nullptr) timeline_->Mark(mark, at);
}

void ResponseTimeline::Record(const std::vector<TensorRequest>& requests, const std::vector<size_t>& members,
                              Clock::time_point submitted, Clock::time_point agreed, const Times& times) {
  if (!recording()) return;
  // By CollectiveKind's value.
  static constexpr const char* kOperations[] = {"ALLREDUCE", "BROADCAST",          "ALLGATHER",
                                                "BARRIER",   "BASELINE_ALLREDUCE", "ALLGATHER",
                                                "ALLTOALL",  "ALLTOALL",           "REDUCESCATTER"};
  static_assert(
      sizeof(kOperations) / sizeof(kOperations[0]) == static_cast<size_t>(CollectiveKind::kReducescatter) + 1,
      "an operation for every CollectiveKind");
  const TensorRequest& first = requests[members.front()];
  const std::string operation = kOperations[static_cast<size_t>(first.kind)];
  const std::string negotiate = "NEGOTIATE_" + operation;  // the activities hold views of these names
  // fp8's values travel by the backend's alltoall and allgather, not by what carries allreduces.
  const bool fp8 = CompressedAllreduce::Compresses(first.type, first.op, first.compression) &&
                   (first.compression == CompressionFormat::kFloat8E4M3 ||
                    first.compression == CompressionFormat::kFloat8E5M2);
  // A reducescatter goes where allreduces do: the shared memory reduces it (Backend::Reducescatter).
  const bool through_path =
      (first.kind == CollectiveKind::kAllreduce || first.kind == CollectiveKind::kReducescatter) && !fp8 &&
      !allreduce_path_.empty();
  const std::string backend_call =
      TimelineBackendActivity(through_path ? allreduce_path_ : std::string(BackendName(backend_)), operation);

  TimelineResponse response;
  response.operation = operation;
  response.tensor_count = members.size();
  for (size_t member : members) {
    const TensorRequest& request = requests[member];
    response.bytes += request.bytes();
    if (response.tensor_names.size() < Timeline::kMaxTensorNames) {
      response.tensor_names.push_back(request.name);
    }
  }
  response.activities.push_back({negotiate, submitted, agreed});
  response.activities.push_back({kTimelineQueue, agreed, times.start});
  if (times.copied) response.activities.push_back({kTimelineMemcpyIn, times.start, times.copied_in});
  const Clock::time_point call_start =
      times.device ? std::max(times.copied_in,
                              times.reduced - std::chrono::duration_cast<Clock::duration>(*times.device))
                   : times.copied_in;
  response.activities.push_back({backend_call, call_start, times.reduced});
  if (times.copied) response.activities.push_back({kTimelineMemcpyOut, times.reduced, times.end});
  std::lock_guard<std::mutex> lock(mutex_);
  if (timeline_ != nullptr) timeline_->Record(response);
}

}  // namespace hvdrun
