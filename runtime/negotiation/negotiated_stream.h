// NegotiatedStream: the collective thread's loop when negotiation is on (NegotiationOptions).
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
// Join (Horovod's hvd.join, for ranks with uneven amounts of data): once everything a rank submitted
// has completed, Join announces it. From then until every rank has joined, the ReadinessTable counts
// it as having every allreduce the others submit (and the rank sets every cached allreduce's slot),
// and it runs each such allreduce, fused or not, compressed or not, with zeros of the announced type
// and count: an average is still divided by every rank (Horovod's rule), a minimum or maximum sees
// the zeros. A broadcast, allgather or barrier submitted while a rank has joined fails on the ranks
// that submitted it, without breaking the runtime (Horovod's "not supported with Join"). A joined
// rank keeps the busy cycle time, since the others' collectives now wait on its cycles.
//
// With a timeline (set_timeline), each response is recorded as Horovod names its activities: from
// this rank's submission of its first tensor to the cycle's agreement (NEGOTIATE_ALLREDUCE: how long
// this rank waited for the others), then QUEUE, MEMCPY_IN_FUSION_BUFFER, <BACKEND>_ALLREDUCE and
// MEMCPY_OUT_FUSION_BUFFER (the copies only when the tensors were copied through the fusion buffer).
//
// Thread-safe: Submit, RequestStop and counters from any thread; Run and set_timeline on the
// collective thread.
#ifndef HVDRUN_RUNTIME_NEGOTIATION_NEGOTIATED_STREAM_H_
#define HVDRUN_RUNTIME_NEGOTIATION_NEGOTIATED_STREAM_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hvdrun/runtime.h"
#include "hvdrun/status.h"
#include "runtime/backend.h"
#include "runtime/collective_state.h"
#include "runtime/compression/compressed_allreduce.h"
#include "runtime/negotiation/readiness_table.h"
#include "runtime/negotiation/response_cache.h"
#include "runtime/negotiation/response_statistics.h"
#include "runtime/negotiation/tensor_request.h"
#include "runtime/timeline/timeline.h"

namespace hvdrun {

class NegotiatedStream {
 public:
  static constexpr std::chrono::milliseconds kIdleCycleTime{
      10};  // `compressed` reduces every allreduce (compressing those the job's CompressionOptions say); not
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
  StatusOr<ReadinessTable::JoinDone> Join(uint64_t unnamed_calls);
  // Asks Run to return once everything this rank submitted has completed.
  void RequestStop();
  // The first failure (the runtime is broken), or OK.
  Status broken() const;
  NegotiationCounters counters() const;
  // What the rank's report carries (docs/results.md): the counters, and every response's bytes and
  // time summed per size bin (runtime/negotiation/response_statistics.h).
  nlohmann::json ReportJson() const;
  // Records every response in `timeline` from now on; null records nothing. Not owned: it must
  // outlive Run.
  void set_timeline(Timeline* timeline) { timeline_ = timeline; }
  // What carries allreduces ("shm", or the backend's name), for the timeline's <PATH>_ALLREDUCE
  // activity; the backend's name until set. Before Run.
  void set_allreduce_path(const std::string& path) { allreduce_path_ = path; }

 private:
  struct Entry {
    TensorRequest request;
    const void* send = nullptr;
    void* recv = nullptr;
    std::shared_ptr<CollectiveHandle::State> state;
    BackendMemory::ReadyMark ready;  // what the data backend waits for before it reads `send`
    std::chrono::steady_clock::time_point submitted;
    std::chrono::steady_clock::time_point next_stall_warning;
    bool announced = false;       // in the readiness tables: waits there, not in the cache
    bool stand_in = false;        // this rank has joined: zeros in its place (zeros holds them)
    BackendMemory::Buffer zeros;  // in the data backend's memory
  };
  struct JoinRequest {
    std::shared_ptr<CollectiveHandle::State> state;  // null when this rank is not joining
    uint64_t unnamed_calls = 0;
    ReadinessTable::JoinDone done;
  };

  // This rank's pending entries, by name, iterated in submission order (the order announcements
  // and cache slots follow, so tensors submitted in memory order are packed in memory order).
  class PendingEntries {
   public:
    void Add(Entry entry);
    Entry& At(const std::string& name) { return by_order_.at(order_of_.at(name)); }
    bool Contains(const std::string& name) const { return order_of_.count(name) > 0; }
    // Removes and returns the entry; std::nullopt when `name` is not pending.
    std::optional<Entry> Take(const std::string& name);
    std::map<uint64_t, Entry>& InOrder() { return by_order_; }
    bool empty() const { return by_order_.empty(); }
    void clear();

   private:
    uint64_t next_ = 0;
    std::map<uint64_t, Entry> by_order_;
    std::unordered_map<std::string, uint64_t> order_of_;
  };

  // When a response's steps ended, for the timeline; without copies, copied_in is start and end is
  // reduced.
  struct ResponseTimes {
    bool copied = false;  // through the fusion buffer
    std::chrono::steady_clock::time_point start;
    std::chrono::steady_clock::time_point copied_in;
    std::chrono::steady_clock::time_point reduced;
    std::chrono::steady_clock::time_point end;
    // The device's time for the backend call, where the backend times it (Backend::last_device_time):
    // the timeline's backend activity is then that long, ending when the host saw it done.
    std::optional<std::chrono::nanoseconds> device;
  };

  // What a cycle took from the submitters.
  struct Intake {
    bool stopping = false;            // Stop was called and nothing is pending
    std::optional<uint64_t> joining;  // this rank's unnamed calls, while it joins
  };
  // What this rank says in a cycle: its cached pending requests by slot in `fields`, the rest as
  // announcements in `mine`; `fields` holds every rank's sum once the ranks have agreed.
  struct Ballot {
    explicit Ballot(CountedFields empty) : fields(std::move(empty)) {}
    CountedFields fields;
    std::vector<Announcement> mine;
    std::vector<const Entry*> cached;  // pending entries found in the cache, for a census
    Status timed_out;                  // the first pending entry past the stall shutdown time
    bool census = false;               // an entry waited past the stall limit: every rank probes
  };

  // One cycle, in the steps below; false when the loop must end.
  bool Cycle(Backend& control, Backend& data);
  Intake TakeSubmissions();
  Ballot MakeBallot(std::chrono::steady_clock::time_point now, const Intake& intake);
  // The SUM allreduce of the ballots' fields; false (everything failed) when it fails.
  bool Agree(Backend& backend, std::chrono::steady_clock::time_point now, Ballot& ballot);
  // The cached requests that every rank has pending.
  std::vector<TensorRequest> ReadyInCache(const CountedFields& fields) const;
  // The announcements' allgather and what the readiness table concludes from it: what became ready
  // is added to `ready`; false (everything failed) when the allgather fails.
  bool GatherAnnouncements(Backend& backend, std::chrono::steady_clock::time_point now, Ballot& ballot,
                           std::vector<TensorRequest>* ready,
                           std::optional<ReadinessTable::JoinDone>* join_done);
  Status Gather(Backend& backend, const std::vector<Announcement>& mine,
                std::vector<std::vector<Announcement>>* by_rank);
  // Runs the ready requests; `agreed` is when the ranks agreed on them.
  Status Execute(Backend& data, const std::vector<TensorRequest>& ready,
                 std::chrono::steady_clock::time_point agreed);
  Status RunAlone(Backend& data, Entry& entry);
  // Makes the data backend wait until the entries' tensors are complete (their ReadyMarks).
  Status WaitForMembers(BackendMemory& memory, const std::vector<TensorRequest>& ready,
                        const std::vector<size_t>& members);
  Status RunFused(Backend& data, const std::vector<TensorRequest>& ready_requests,
                  const std::vector<size_t>& members, const std::vector<size_t>& offsets, size_t bytes,
                  ResponseTimes* times);
  // Records one response of `requests[members]` in the timeline, if there is one.
  void RecordResponse(const std::vector<TensorRequest>& requests, const std::vector<size_t>& members,
                      std::chrono::steady_clock::time_point agreed, const ResponseTimes& times);
  void Complete(const std::string& name, const Status& status);
  // This rank has joined: adds zeros for each ready allreduce it has not submitted.
  Status AddStandIns(BackendMemory& memory, const std::vector<TensorRequest>& ready);
  void CompleteJoin(const ReadinessTable::JoinDone& done);
  void Warn(const std::string& line) const;
  // Rank 0: warns of each name stalled past the limit, once per limit's length of waiting.
  void WarnOfStalls(std::chrono::steady_clock::time_point now, const std::vector<TensorRequest>& ready);
  void FailEverything(const Status& status);
  // Whether `request` may enter the cache: named by the caller, not by its place in the sequence.
  static bool Cacheable(const TensorRequest& request);
  // The name compression's error feedback keys on: none for unnamed calls and stand-ins.
  static std::string FeedbackName(const Entry& entry);
  const RuntimeOptions options_;
  CompressedAllreduce* const compressed_;
  const size_t fusion_threshold_;

  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<Entry> incoming_;  // GUARDED_BY(mutex_)
  // GUARDED_BY(mutex_): names pending on this rank, with the state of the handle that last took each.
  std::unordered_map<std::string, std::shared_ptr<CollectiveHandle::State>> names_;
  bool stop_requested_ = false;    // GUARDED_BY(mutex_)
  JoinRequest join_;               // GUARDED_BY(mutex_)
  Status broken_;                  // GUARDED_BY(mutex_)
  NegotiationCounters counters_;   // GUARDED_BY(mutex_)
  ResponseStatistics statistics_;  // GUARDED_BY(mutex_)

  // Owned by the collective thread.
  PendingEntries pending_;
  ResponseCache cache_;
  ReadinessTable table_;
  bool join_announced_ = false;
  BackendMemory::Buffer fusion_buffer_;  // in the data backend's memory
  size_t fusion_buffer_bytes_ = 0;
  Timeline* timeline_ = nullptr;
  std::string allreduce_path_;
  std::chrono::steady_clock::time_point agreed_at_;  // when the last cycle's allreduce returned
  std::chrono::steady_clock::duration quickest_agreement_ = std::chrono::milliseconds(1);
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> next_stall_warning_;  // rank 0
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_NEGOTIATION_NEGOTIATED_STREAM_H_
