#include "runtime/negotiation/negotiated_stream.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hvdrun/error_kind.h"

namespace hvdrun {

NegotiatedStream::NegotiatedStream(const RuntimeOptions& options, CompressedAllreduce* compressed)
    : rank_(options.rank),
      backend_(options.backend),
      elastic_(options.elastic.enabled),
      report_(CycleSettings::From(options), options.negotiation.cache_capacity),
      settings_(CycleSettings::From(options)),
      pending_([this](const std::string& name, const std::shared_ptr<CollectiveHandle::State>& state) {
        queue_.Release(name, state);
      }),
      agreement_(options.rank, options.size, options.negotiation.cache_capacity),
      stalls_(options.negotiation),
      timeline_(options.backend),
      execution_(options.rank, compressed, &report_, &timeline_),
      tuner_(CycleTuner::Create(options)) {}

void NegotiatedStream::AllowHierarchicalSwitch(std::function<void(bool)> set) {
  hierarchical_switch_ = std::move(set);
  settings_.hierarchical_allreduce = true;
  if (tuner_ != nullptr) tuner_->AllowHierarchicalSwitch();
}

CollectiveHandle NegotiatedStream::Submit(TensorRequest request, const void* send, void* recv,
                                          BackendMemory::ReadyMark ready) {
  return queue_.Submit(std::move(request), send, recv, std::move(ready), stalls_.stall_warning());
}

Status NegotiatedStream::Run(Backend& control, Backend& data) {
  // The next cycle is timed from the agreement's anchor (CycleAgreement::anchor), the same on every
  // rank: timed from each rank's own start, ranks drift out of phase, and a rank that starts its
  // cycle before its caller resubmits wastes the others' cycle; timed from the agreement alone, every
  // cycle is longer by one allreduce.
  using Clock = std::chrono::steady_clock;
  Clock::time_point anchor = Clock::now() - settings_.cycle_time;
  while (true) {
    const CycleSettings settings = settings_;  // this cycle's, whatever changes them meanwhile
    // A rank with nothing pending cycles at the idle interval, so waiting costs next to nothing
    // (each cycle is an allreduce, which over TCP wakes several threads); a submission or a stop
    // request brings its next cycle forward to the busy one.
    const Clock::duration busy_interval = settings.cycle_time;
    const Clock::duration idle_interval = std::max<Clock::duration>(busy_interval, kIdleCycleTime);
    queue_.WaitForCycle(anchor + busy_interval, anchor + idle_interval, !pending_.empty());
    bool go_on = false;
    try {
      go_on = Cycle(control, data, settings);
    } catch (const std::exception& e) {
      FailEverything(Status::Error(std::string(BackendName(backend_)) + ": negotiation failed: " + e.what()));
    }
    if (!go_on) break;
    anchor = agreement_.anchor();
  }
  return broken();
}

bool NegotiatedStream::Cycle(Backend& control, Backend& data, const CycleSettings& settings) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point now = Clock::now();
  RequestQueue::Intake intake = queue_.Take();
  for (PendingEntry& entry : intake.submitted) pending_.Add(std::move(entry));
  if (!pending_.empty()) timeline_.MarkCycle(now);

  // A rank joins once what it submitted before has completed.
  const std::optional<Announcement> join = join_.Announce(intake.joining, pending_.empty());
  const bool stopping = intake.stop_requested && pending_.empty();
  agreement_.SetCacheEnabled(settings.response_cache);
  if (hierarchical_switch_) hierarchical_switch_(settings.hierarchical_allreduce);
  StatusOr<CycleAgreement::Result> agreed = agreement_.Agree(control, now, stopping, join, pending_, stalls_);
  if (!agreed.ok()) {
    FailEverything(agreed.status());
    return false;
  }
  if (agreed->stop) return false;
  const std::vector<TensorRequest>& ready = agreed->ready;

  ReadinessTable& table = agreement_.table();
  if (rank_ == 0) {
    stalls_.Warn(table.Stalled(now, stalls_.stall_warning()), ready, now);
    table.ForgetProbes();
  }
  Status status = table.joined(rank_) ? RankJoin::AddStandIns(data.memory(), ready, pending_) : Status::Ok();
  if (status.ok()) {
    status = execution_.Execute(data, ready, Clock::now(), settings.fusion_threshold_bytes, pending_);
  }
  if (status.ok()) agreement_.Learn(ready);
  if (status.ok() && tuner_ != nullptr) status = Tune(control, ready);
  report_.RecordCycle(settings, agreed->gathered, ready.size(), agreement_.cache_evictions());
  if (!status.ok()) {
    FailEverything(status);
    return false;
  }
  if (agreed->join_done) {
    join_.Done();
    queue_.CompleteJoin(*agreed->join_done);
  }
  return true;
}

Status NegotiatedStream::Tune(Backend& control, const std::vector<TensorRequest>& ready) {
  const std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now();
  StatusOr<std::optional<CycleTuner::Change>> next = tuner_->AfterCycle(control, ready, now);
  if (!next.ok()) return next.status();
  if (next.value().has_value()) {
    settings_ = next.value()->settings;
    timeline_.Mark(next.value()->mark, now);
  }
  if (tuner_->done()) tuner_.reset();
  return Status::Ok();
}

void NegotiatedStream::FailEverything(const Status& status) {
  // In an elastic job a peer that stopped, failed or timed out is one the job re-forms without.
  queue_.Break(elastic_ ? AsRecoverable(status) : status);
  pending_.FailAll(queue_.broken());
}

}  // namespace hvdrun
