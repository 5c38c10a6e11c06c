// ResponseTimeline: the negotiated engine's responses in this rank's timeline (docs/timeline.md),
// each recorded as Horovod names its activities: from this rank's submission of its first tensor to
// the cycle's agreement (NEGOTIATE_<OPERATION>: how long this rank waited for the others), then
// QUEUE, MEMCPY_IN_FUSION_BUFFER, <BACKEND>_<OPERATION> and MEMCPY_OUT_FUSION_BUFFER (the copies only
// when the tensors were copied through the fusion buffer).
//
// The collective thread records; set_timeline and recording may be called from any thread (a timeline
// started or stopped while the job runs: Runtime::StartTimeline).
#ifndef HVDRUN_RUNTIME_NEGOTIATION_RESPONSE_TIMELINE_H_
#define HVDRUN_RUNTIME_NEGOTIATION_RESPONSE_TIMELINE_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hvdrun/types.h"
#include "runtime/request/tensor_request.h"
#include "runtime/timeline/timeline.h"

namespace hvdrun {

class ResponseTimeline {
 public:
  using Clock = std::chrono::steady_clock;

  // When a response's steps ended; without copies, copied_in is start and end is reduced.
  struct Times {
    bool copied = false;  // through the fusion buffer
    Clock::time_point start;
    Clock::time_point copied_in;
    Clock::time_point reduced;
    Clock::time_point end;
    // The device's time for the backend call, where the backend times it (Backend::last_device_time):
    // the timeline's backend activity is then that long, ending when the host saw it done.
    std::optional<std::chrono::nanoseconds> device;
  };

  explicit ResponseTimeline(BackendKind backend) : backend_(backend) {}

  // Records every response in `timeline` from now on; null records nothing. Returns once no response
  // is being recorded in the previous one, which no thread of the engine then uses any more.
  void set_timeline(std::shared_ptr<Timeline> timeline);
  // What carries allreduces ("shm", or the backend's name), for the <PATH>_ALLREDUCE activity; the
  // backend's name until set.
  void set_allreduce_path(const std::string& path) { allreduce_path_ = path; }
  // Whether responses are recorded (there is a timeline).
  bool recording() const;

  // A cycle that has work starts at `start` (Timeline::MarkCycle).
  void MarkCycle(Clock::time_point start);
  // Something the runtime changed at `at`, such as the autotuner's setting (Timeline::Mark).
  void Mark(const TimelineMark& mark, Clock::time_point at);
  // One response of `requests[members]`, which this rank submitted first at `submitted` and the
  // ranks agreed on at `agreed`.
  void Record(const std::vector<TensorRequest>& requests, const std::vector<size_t>& members,
              Clock::time_point submitted, Clock::time_point agreed, const Times& times);

 private:
  const BackendKind backend_;
  mutable std::mutex mutex_;            // held while a response or cycle is written to timeline_
  std::shared_ptr<Timeline> timeline_;  // GUARDED_BY(mutex_)
  std::string allreduce_path_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_NEGOTIATION_RESPONSE_TIMELINE_H_
