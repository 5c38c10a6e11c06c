// NegotiatedStream: the collective thread's loop when negotiation is on (NegotiationOptions), made of
// the parts beside it, each with its own file:
//   RequestQueue      what callers submit (requests, a Join, a stop) and the engine's first failure
//   PendingEntries    the requests taken in and not yet complete, in submission order
//   CycleAgreement    how the ranks agree on what is ready: the ballot, the response cache, the
//                     announcements' gather and the readiness table
//   StallTracker      the stall shutdown time, stall censuses, and rank 0's stall warnings
//   RankJoin          this rank's join: its announcement and its stand-ins
//   FusedExecution    running what is ready: alone, or fused in place or through the fusion buffer
//   NegotiationReport the counters and response statistics for the rank's report
//   ResponseTimeline  each response in the rank's timeline
//   CycleSettings     the cycle time and fusion threshold, read at the start of each cycle
//   CycleTuner        autotuning, when on: changes CycleSettings between cycles, the same on every
//                     rank (runtime/autotune/cycle_tuner.h)
//
// Callers Submit named requests from any thread. Every cycle_time, every rank's collective thread
// runs one cycle, itself a collective on the backend:
//   1. a SUM allreduce of CountedFields: status flags, and one field per response-cache slot whose
//      request this rank has pending (runtime/negotiation/negotiation_message.h);
//   2. only when some rank has a request the cache cannot vouch for: an allgather of every rank's
//      Announcements, which each rank's ReadinessTable turns into the same conclusions;
//   3. the requests ready on every rank (cached ones in slot order, then the newly agreed ones in
//      announcement order) are packed by PlanFusion and run, and the cache learns them in that order,
//      so that every rank's cache stays identical.
// Steps 1 and 2 go over the control backend, in host memory; step 3 over the data backend, through
// its memory (Backend::memory): the same backend for Gloo and MPI; for NCCL, a Gloo context beside
// it carries the negotiation while the tensors, the fusion buffer and the copies stay on the device,
// each tensor read once the caller's stream has reached the point where it was submitted (its
// ReadyMark).
// Broadcasts and allgathers are agreed as allreduces are and run alone; an allgather whose ranks give
// different counts (kAllgatherv) is never cached, since its counts travel in its announcements.
// A name waiting past the stall limit is reported by rank 0 with the ranks that have not submitted
// it (unless the stall check is off); past the stall shutdown time, when one is set, it fails and the
// runtime breaks, and so it does on every rank (a stopping rank tells the others through the status
// flags). A rank with nothing pending cycles every
// kIdleCycleTime instead of every cycle time (a submission wakes it at once), so an idle runtime costs
// next to nothing, and the others wait for it only while it has nothing they could agree on.
//
// Join (Horovod's hvd.join, for ranks with uneven amounts of data; runtime/negotiation/rank_join.h):
// A broadcast, allgather or barrier submitted while a rank has joined fails on the ranks that
// submitted it, without breaking the runtime (Horovod's "not supported with Join"). A joined rank
// keeps the busy cycle time, since the others' collectives now wait on its cycles.
//
// Thread-safe: Submit, Join, RequestStop, broken, counters, ReportJson and set_timeline from any
// thread; Run, set_allreduce_path and AllowHierarchicalSwitch on the collective thread.
#ifndef HVDRUN_RUNTIME_NEGOTIATION_NEGOTIATED_STREAM_H_
#define HVDRUN_RUNTIME_NEGOTIATION_NEGOTIATED_STREAM_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "hvdrun/collective_handle.h"
#include "hvdrun/counters.h"
#include "hvdrun/options.h"
#include "hvdrun/status.h"
#include "runtime/autotune/cycle_tuner.h"
#include "runtime/backend.h"
#include "runtime/compression/compressed_allreduce.h"
#include "runtime/negotiation/cycle_agreement.h"
#include "runtime/negotiation/cycle_settings.h"
#include "runtime/negotiation/fused_execution.h"
#include "runtime/negotiation/negotiation_report.h"
#include "runtime/negotiation/pending_entries.h"
#include "runtime/negotiation/rank_join.h"
#include "runtime/negotiation/readiness_table.h"
#include "runtime/negotiation/request_queue.h"
#include "runtime/negotiation/response_timeline.h"
#include "runtime/negotiation/stall_tracker.h"
#include "runtime/request/tensor_request.h"
#include "runtime/timeline/timeline.h"

namespace hvdrun {

class NegotiatedStream {
 public:
  // How often a rank with nothing pending cycles (see above). Its cycles delay nothing: a rank that
  // has a name to agree on wakes when it submits it, and no name is ready before every rank has. So
  // the interval is long: with process sets, an idle engine's cycle (an allreduce whose MPI or
  // shared-memory wait spins) took CPU from the busy engine's collective on a loaded host, every
  // 10 ms when this was 10 ms (docs/benchmarks.md, the process set's allreduce).
  static constexpr std::chrono::milliseconds kIdleCycleTime{100};

  // `compressed` reduces every allreduce (compressing those the job's CompressionOptions say); not
  // owned, it outlives the stream.
  NegotiatedStream(const RuntimeOptions& options, CompressedAllreduce* compressed);

  // Queues `request` on this rank; `ready` is where the caller's work stood when it submitted
  // (BackendMemory::MarkReady), what the backend waits for before it reads `send`. Fails at once
  // (the returned handle is complete) when the runtime is broken or stopping, or when
  // `request.name` is still pending here: submitted and not yet complete, unless its device work is
  // queued (CollectiveHandle::WaitOnStream may have returned), when only the host's wait is left.
  CollectiveHandle Submit(TensorRequest request, const void* send, void* recv,
                          BackendMemory::ReadyMark ready = nullptr);
  // Runs cycles until this rank or another stops, or the runtime breaks. Returns the first failure.
  // The ranks agree over `control`, whose buffers are host memory; the collectives run on `data`,
  // whose buffers are in data.memory() (the same backend, but for NCCL: its negotiation travels over
  // a Gloo context beside the communicator).
  Status Run(Backend& control, Backend& data);
  // Blocks until every rank has joined (see above); `unnamed_calls` is this rank's count of unnamed
  // calls. Returns the rank that joined last and the most unnamed calls any rank made. Submit fails
  // meanwhile. Fails when the runtime breaks or stops, or when this rank is already joining.
  StatusOr<ReadinessTable::JoinDone> Join(uint64_t unnamed_calls) { return queue_.Join(unnamed_calls); }
  // Asks Run to return once everything this rank submitted has completed.
  void RequestStop() { queue_.RequestStop(); }
  // The first failure (the runtime is broken), or OK.
  Status broken() const { return queue_.broken(); }
  NegotiationCounters counters() const { return report_.counters(); }
  // What the rank's report carries (docs/results.md): NegotiationReport::ToJson.
  nlohmann::json ReportJson() const { return report_.ToJson(); }
  // Records every response in `timeline` from now on; null records nothing. From any thread; returns
  // once no response is being recorded in the previous one.
  void set_timeline(std::shared_ptr<Timeline> timeline) { timeline_.set_timeline(std::move(timeline)); }
  // What carries allreduces ("shm", or the backend's name), for the timeline's <PATH>_ALLREDUCE
  // activity; the backend's name until set. Before Run.
  void set_allreduce_path(const std::string& path) { timeline_.set_allreduce_path(path); }
  // The job reduces hierarchically (AgreeOnHierarchical, on every rank): `set` switches the data
  // backend's allreduces between that (true, the start) and the flat ring, at the start of a cycle,
  // as CycleSettings::hierarchical_allreduce says; the autotuner may try both. Before Run.
  void AllowHierarchicalSwitch(std::function<void(bool)> set);

 private:
  // One cycle with `settings`; false when the loop must end.
  bool Cycle(Backend& control, Backend& data, const CycleSettings& settings);
  // Breaks the runtime with `status` (unless it is already broken) and completes everything pending
  // and queued with the first failure.
  void FailEverything(const Status& status);
  // Autotuning after a cycle that ran `ready`: the next cycles' settings when the ranks switch now.
  Status Tune(Backend& control, const std::vector<TensorRequest>& ready);

  const int rank_;
  const BackendKind backend_;
  const bool elastic_;  // RuntimeOptions::elastic: every failure is ErrorKind::kRecoverable
  RequestQueue queue_;
  NegotiationReport report_;

  // Owned by the collective thread.
  CycleSettings settings_;  // the next cycle's
  PendingEntries pending_;
  CycleAgreement agreement_;
  StallTracker stalls_;
  RankJoin join_;
  ResponseTimeline timeline_;
  FusedExecution execution_;
  std::unique_ptr<CycleTuner> tuner_;              // null when autotuning is off or done
  std::function<void(bool)> hierarchical_switch_;  // AllowHierarchicalSwitch's, or empty
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_NEGOTIATION_NEGOTIATED_STREAM_H_
