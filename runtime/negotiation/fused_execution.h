// FusedExecution: the last step of negotiated_stream.h's cycle: runs the requests the ranks agreed on
// over the data backend, through its memory (Backend::memory()), in the order every rank runs them.
// Broadcasts, allgathers and alltoalls run alone; allreduces and reducescatters are packed by PlanFusion
// into responses of at most the cycle's fusion threshold, each one backend call
// (runtime/negotiation/fusion_plan.h); a fused reducescatter's members are packed rank by rank, as
// Horovod's (runtime/request/reducescatter_parts.h).
// A fused response whose members already lie back to back in place is reduced where it is (as
// PyTorch DDP's gradient_as_bucket_view); otherwise its members are copied into the fusion buffer (in
// the data backend's memory, grown as needed and kept), reduced there and copied back. Every tensor is
// read once its ReadyMark has been reached (BackendMemory::WaitFor), and a handle learns that its
// device work is queued as soon as the response's last backend call is (BackendMemory::OnQueued).
//
// Each entry completes (PendingEntries::Complete) as soon as its response has run; a failure
// completes that response's entries with it and ends the execution, which the engine then breaks
// on. Every allreduce response is counted in the NegotiationReport, and each response that ran is
// recorded in the ResponseTimeline.
//
// Not thread-safe: the collective thread owns it.
#ifndef HVDRUN_RUNTIME_NEGOTIATION_FUSED_EXECUTION_H_
#define HVDRUN_RUNTIME_NEGOTIATION_FUSED_EXECUTION_H_

#include <chrono>
#include <cstddef>
#include <vector>

#include "hvdrun/status.h"
#include "runtime/backend.h"
#include "runtime/compression/compressed_allreduce.h"
#include "runtime/negotiation/fusion_plan.h"
#include "runtime/negotiation/negotiation_report.h"
#include "runtime/negotiation/pending_entries.h"
#include "runtime/negotiation/response_timeline.h"
#include "runtime/request/tensor_request.h"

namespace hvdrun {

class FusedExecution {
 public:
  using Clock = std::chrono::steady_clock;

  // For rank `rank`; `compressed` reduces every allreduce (compressing those the job's
  // CompressionOptions say). None is owned: each outlives this.
  FusedExecution(int rank, CompressedAllreduce* compressed, NegotiationReport* report,
                 ResponseTimeline* timeline);

  // Runs `ready`, which every rank has pending in `pending` (announced, cached, or a joined rank's
  // stand-ins), agreed on at `agreed`, fusing allreduces up to `fusion_threshold` bytes.
  Status Execute(Backend& data, const std::vector<TensorRequest>& ready, Clock::time_point agreed,
                 size_t fusion_threshold, PendingEntries& pending);

 private:
  using Times = ResponseTimeline::Times;

  Status RunAlone(Backend& data, PendingEntry& entry);
  // One response of several allreduces, `members` in packing order.
  Status RunFused(Backend& data, const TensorRequest& first, const std::vector<PendingEntry*>& members,
                  const FusedResponse& response, Times* times);
  // One response of several reducescatters: every member's parts packed rank by rank into the fusion
  // buffer (reducescatter_parts.h), one backend reducescatter, this rank's parts copied out.
  Status RunFusedReducescatter(Backend& data, const TensorRequest& first,
                               const std::vector<PendingEntry*>& members, Times* times);
  // The members copied into the fusion buffer, reduced there and copied back.
  Status ReduceThroughBuffer(Backend& data, const TensorRequest& first,
                             const std::vector<PendingEntry*>& members, const FusedResponse& response,
                             const std::vector<TensorSpan>& tensors,
                             std::vector<std::shared_ptr<CollectiveHandle::State>> states, Times* times);
  // Records `requests[members]` in the timeline, if there is one.
  void Record(const std::vector<TensorRequest>& requests, const std::vector<size_t>& members,
              Clock::time_point agreed, const Times& times, const PendingEntries& pending);

  const int rank_;
  CompressedAllreduce* const compressed_;
  NegotiationReport* const report_;
  ResponseTimeline* const timeline_;
  BackendMemory::Buffer fusion_buffer_;  // in the data backend's memory
  size_t fusion_buffer_bytes_ = 0;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_NEGOTIATION_FUSED_EXECUTION_H_
