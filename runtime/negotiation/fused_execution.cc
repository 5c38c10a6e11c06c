#include "runtime/negotiation/fused_execution.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "common/progress/rank_board.h"
#include "runtime/request/reducescatter_parts.h"
#include "runtime/request/run_request.h"
#include "runtime/request/scale_factors.h"
#include "runtime/watched_backend.h"

namespace hvdrun {
namespace {

using States = std::vector<std::shared_ptr<CollectiveHandle::State>>;

// While it lives, the data backend's next wait for queued work tells `states` that their work is
// queued and where it ends (BackendMemory::OnQueued, CollectiveHandle::WaitOnStream). Armed around
// a response's last backend call only: an earlier one's end is not the response's.
class QueuedNotice {
 public:
  QueuedNotice(BackendMemory& memory, States states) : memory_(memory) {
    if (states.empty()) return;
    memory_.OnQueued([states = std::move(states)](const BackendMemory::StreamWaiter& waiter) {
      for (const std::shared_ptr<CollectiveHandle::State>& state : states) {
        if (state != nullptr) state->SetQueued(waiter);
      }
    });
  }
  ~QueuedNotice() { memory_.OnQueued(nullptr); }
  QueuedNotice(const QueuedNotice&) = delete;
  QueuedNotice& operator=(const QueuedNotice&) = delete;

 private:
  BackendMemory& memory_;
};

// The members' ready marks, for one BackendMemory::WaitForAll.
std::vector<const BackendMemory::ReadyMark*> ReadyMarks(const std::vector<PendingEntry*>& members) {
  std::vector<const BackendMemory::ReadyMark*> marks;
  marks.reserve(members.size());
  for (const PendingEntry* entry : members) marks.push_back(&entry->ready);
  return marks;
}

// Whether the members already lie back to back in memory, in packing order, with no gap between them
// (a gap may be someone else's memory) and in place, so that they are reduced where they are: no
// copy in or out, and the fusion buffer's alignment does not apply. Each must also fill its place in
// the plan exactly (a multiple of the alignment), so that every rank reduces the same layout whether
// its tensors are in place or copied (a joined rank's zeros are always copied). `end` gets the bytes
// they span.
bool LieInPlace(const std::vector<PendingEntry*>& members, const FusedResponse& response, size_t* end) {
  const auto* base = static_cast<const std::byte*>(members.front()->recv);
  *end = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    const PendingEntry& entry = *members[i];
    const size_t place =
        (i + 1 < members.size() ? response.offsets[i + 1] : response.bytes) - response.offsets[i];
    if (entry.send != entry.recv || entry.recv != base + *end || response.offsets[i] != *end ||
        entry.request.bytes() != place) {
      return false;
    }
    *end += entry.request.bytes();
  }
  return true;
}

// Each member's place in the buffer compression reduces, for its error feedback, which keys on
// callers' names; none when the response is not compressed.
std::vector<TensorSpan> FeedbackSpans(const TensorRequest& first, const std::vector<PendingEntry*>& members,
                                      const FusedResponse& response, bool in_place) {
  std::vector<TensorSpan> tensors;
  if (!CompressedAllreduce::Compresses(first.type, first.op, first.compression)) return tensors;
  const size_t element = DataTypeSize(first.type);
  size_t next = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    const PendingEntry& entry = *members[i];
    tensors.push_back({FeedbackName(entry), in_place ? next / element : response.offsets[i] / element,
                       entry.request.count});
    next += entry.request.bytes();
  }
  return tensors;
}

}  // namespace

FusedExecution::FusedExecution(int rank, CompressedAllreduce* compressed, NegotiationReport* report,
                               ResponseTimeline* timeline)
    : rank_(rank), compressed_(compressed), report_(report), timeline_(timeline) {}

Status FusedExecution::Execute(Backend& data, const std::vector<TensorRequest>& ready,
                               Clock::time_point agreed, size_t fusion_threshold, PendingEntries& pending) {
  for (const TensorRequest& request : ready) {
    progress::PublishPhase(pending.At(request.name).request.progress_sequence,
                           protocol::CollectivePhase::kNegotiated);
  }
  std::vector<TensorRequest> fusable;  // allreduces and reducescatters
  for (size_t i = 0; i < ready.size(); ++i) {
    const TensorRequest& request = ready[i];
    if (request.kind == CollectiveKind::kAllreduce || request.kind == CollectiveKind::kReducescatter) {
      fusable.push_back(request);
      continue;
    }
    Times times;
    times.start = times.copied_in = Clock::now();
    PendingEntry& entry = pending.At(request.name);
    entry.request.counts = request.counts;  // kAllgatherv: every rank's, as the ranks agreed
    Status status = RunAlone(data, entry);
    times.reduced = times.end = Clock::now();
    times.device = data.last_device_time();
    if (status.ok()) Record(ready, {i}, agreed, times, pending);
    pending.Complete(request.name, status);
    if (!status.ok()) return status;
  }
  for (const FusedResponse& response : PlanFusion(fusable, fusion_threshold)) {
    Times times;
    times.start = times.copied_in = Clock::now();
    std::vector<PendingEntry*> members;
    uint64_t bytes = 0;
    for (size_t member : response.members) {
      members.push_back(&pending.At(fusable[member].name));
      bytes += fusable[member].bytes();
    }
    const TensorRequest& first = fusable[response.members.front()];
    Status status;
    if (members.size() == 1) {
      status = RunAlone(data, *members.front());
      times.reduced = times.end = Clock::now();
      times.device = data.last_device_time();
    } else if (first.kind == CollectiveKind::kReducescatter) {
      status = RunFusedReducescatter(data, first, members, &times);
    } else {
      status = RunFused(data, first, members, response, &times);
    }
    if (first.kind == CollectiveKind::kAllreduce) {
      report_->RecordResponse(bytes, members.size(), response.bytes, times.copied, times.end - times.start);
    }
    if (status.ok()) Record(fusable, response.members, agreed, times, pending);
    for (size_t member : response.members) pending.Complete(fusable[member].name, status);
    if (!status.ok()) return status;
  }
  return Status::Ok();
}

Status FusedExecution::RunAlone(Backend& data, PendingEntry& entry) {
  LabelWatchedCalls(data, "'" + entry.request.name + "'");
  progress::PublishPhase(entry.request.progress_sequence, protocol::CollectivePhase::kInBackend);
  Status status = data.memory().WaitFor(entry.ready);
  if (!status.ok()) return status;
  const QueuedNotice notice(data.memory(), RunsAsOneCall(entry.request) ? States{entry.state} : States{});
  return RunRequest(data, *compressed_, entry.request, entry.send, entry.recv, rank_, FeedbackName(entry));
}

Status FusedExecution::RunFused(Backend& data, const TensorRequest& first,
                                const std::vector<PendingEntry*>& members, const FusedResponse& response,
                                Times* times) {
  size_t end = 0;
  const bool in_place = LieInPlace(members, response, &end);
  const std::vector<TensorSpan> tensors = FeedbackSpans(first, members, response, in_place);
  BackendMemory& memory = data.memory();
  LabelWatchedCalls(data,
                    "'" + first.name + "'" +
                        (members.size() > 1 ? " and " + std::to_string(members.size() - 1) + " more, fused"
                                            : std::string()));
  for (const PendingEntry* entry : members) {
    progress::PublishPhase(entry->request.progress_sequence, protocol::CollectivePhase::kInBackend);
  }
  if (Status ready = memory.WaitForAll(ReadyMarks(members)); !ready.ok()) return ready;
  States states;  // a compressed allreduce makes several backend calls: its handles learn at the end
  if (!CompressedAllreduce::Compresses(first.type, first.op, first.compression)) {
    for (const PendingEntry* entry : members) states.push_back(entry->state);
  }
  if (!in_place) {
    return ReduceThroughBuffer(data, first, members, response, tensors, std::move(states), times);
  }
  if (Scaled(first)) states.clear();  // the postscale follows the reduction: they learn at the end too
  auto* base = static_cast<std::byte*>(members.front()->recv);
  const size_t count = end / DataTypeSize(first.type);
  Status status = ScaleValues(memory, base, count, first.type, first.prescale);
  {
    const QueuedNotice notice(memory, std::move(states));
    if (status.ok()) {
      status =
          compressed_->Allreduce(data, base, base, count, first.type, first.op, first.compression, tensors);
    }
  }
  if (status.ok() && Scaled(first)) {
    status = ScaleValues(memory, base, count, first.type, first.postscale);
    if (status.ok()) status = memory.Flush();
  }
  times->reduced = times->end = Clock::now();
  times->device = data.last_device_time();
  return status;
}

Status FusedExecution::ReduceThroughBuffer(Backend& data, const TensorRequest& first,
                                           const std::vector<PendingEntry*>& members,
                                           const FusedResponse& response,
                                           const std::vector<TensorSpan>& tensors, States states,
                                           Times* times) {
  BackendMemory& memory = data.memory();
  if (fusion_buffer_bytes_ < response.bytes) {
    StatusOr<BackendMemory::Buffer> grown = memory.Allocate(response.bytes);
    if (!grown.ok()) return grown.status();
    fusion_buffer_ = std::move(grown).value();
    fusion_buffer_bytes_ = response.bytes;
  }
  std::byte* const fused = fusion_buffer_.get();
  // The gaps between members (aligned offsets) are reduced too: zeroed, so that what an earlier
  // response left there cannot set a compressed block's scale (fp8) or overflow a sum.
  std::vector<BackendMemory::Copy> copies;
  size_t filled = 0;
  Status status;
  for (size_t i = 0; i < members.size() && status.ok(); ++i) {
    const PendingEntry& entry = *members[i];
    const size_t offset = response.offsets[i];
    if (offset > filled) status = memory.Zero(fused + filled, offset - filled);
    if (entry.request.bytes() > 0) copies.push_back({fused + offset, entry.send, entry.request.bytes()});
    filled = offset + entry.request.bytes();
  }
  if (status.ok() && response.bytes > filled) status = memory.Zero(fused + filled, response.bytes - filled);
  if (status.ok()) status = memory.CopyAll(copies);
  const size_t count = response.bytes / DataTypeSize(first.type);
  if (status.ok()) status = ScaleValues(memory, fused, count, first.type, first.prescale);
  if (!status.ok()) return status;
  times->copied = true;
  times->copied_in = Clock::now();
  status =
      compressed_->Allreduce(data, fused, fused, count, first.type, first.op, first.compression, tensors);
  times->reduced = times->end = Clock::now();
  times->device = data.last_device_time();
  if (status.ok()) status = ScaleValues(memory, fused, count, first.type, first.postscale);
  if (!status.ok()) return status;
  copies.clear();
  for (size_t i = 0; i < members.size(); ++i) {
    const PendingEntry& entry = *members[i];
    if (entry.request.bytes() > 0) {
      copies.push_back({entry.recv, fused + response.offsets[i], entry.request.bytes()});
    }
  }
  status = memory.CopyAll(copies);
  if (status.ok()) {
    const QueuedNotice notice(memory, std::move(states));
    status = memory.Flush();
  }
  times->end = Clock::now();
  return status;
}

Status FusedExecution::RunFusedReducescatter(Backend& data, const TensorRequest& first,
                                             const std::vector<PendingEntry*>& members, Times* times) {
  BackendMemory& memory = data.memory();
  if (Status ready = memory.WaitForAll(ReadyMarks(members)); !ready.ok()) return ready;
  std::vector<std::vector<uint64_t>> counts;
  counts.reserve(members.size());
  for (const PendingEntry* entry : members) counts.push_back(entry->request.counts);
  const FusedReducescatterLayout layout = PlanFusedReducescatter(counts);
  const size_t element = DataTypeSize(first.type);
  const auto own = static_cast<size_t>(rank_);
  // The whole input, then this rank's block of the result.
  const size_t bytes = (layout.total + layout.block_counts[own]) * element;
  if (fusion_buffer_bytes_ < bytes) {
    StatusOr<BackendMemory::Buffer> grown = memory.Allocate(bytes);
    if (!grown.ok()) return grown.status();
    fusion_buffer_ = std::move(grown).value();
    fusion_buffer_bytes_ = bytes;
  }
  std::byte* const fused = fusion_buffer_.get();
  std::byte* const block = fused + layout.total * element;
  std::vector<BackendMemory::Copy> copies;
  for (const FusedReducescatterLayout::Piece& piece : layout.pieces) {
    if (piece.count == 0) continue;
    copies.push_back({fused + piece.at * element,
                      static_cast<const std::byte*>(members[piece.member]->send) + piece.from * element,
                      piece.count * element});
  }
  Status status = memory.CopyAll(copies);
  if (status.ok()) status = ScaleValues(memory, fused, layout.total, first.type, first.prescale);
  if (!status.ok()) return status;
  times->copied = true;
  times->copied_in = Clock::now();
  status = data.Reducescatter(fused, block, layout.block_counts, rank_, first.type, first.op);
  times->reduced = times->end = Clock::now();
  times->device = data.last_device_time();
  if (status.ok()) status = ScaleValues(memory, block, layout.block_counts[own], first.type, first.postscale);
  if (!status.ok()) return status;
  copies.clear();
  for (const FusedReducescatterLayout::Piece& piece : layout.pieces) {
    if (piece.rank != rank_ || piece.count == 0) continue;
    copies.push_back({members[piece.member]->recv, block + (piece.at - layout.block_starts[own]) * element,
                      piece.count * element});
  }
  status = memory.CopyAll(copies);
  if (status.ok()) {
    States states;
    for (const PendingEntry* entry : members) states.push_back(entry->state);
    const QueuedNotice notice(memory, std::move(states));
    status = memory.Flush();
  }
  times->end = Clock::now();
  return status;
}

void FusedExecution::Record(const std::vector<TensorRequest>& requests, const std::vector<size_t>& members,
                            Clock::time_point agreed, const Times& times, const PendingEntries& pending) {
  if (!timeline_->recording()) return;
  Clock::time_point submitted = agreed;
  for (size_t member : members) {
    const std::string& name = requests[member].name;
    if (pending.Contains(name)) submitted = std::min(submitted, pending.At(name).submitted);
  }
  timeline_->Record(requests, members, submitted, agreed, times);
}

}  // namespace hvdrun
