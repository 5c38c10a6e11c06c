// RuntimeImpl: the collective thread behind a Runtime, and the one way its calls run.
//
// Every call of the public API becomes a TensorRequest: named by the caller, or by its place in the
// sequence of this rank's unnamed calls (NextUnnamed), which every rank makes in the same order. A
// request runs by RunRequest (runtime/request/run_request.h) on its own, or fused with others;
// the two collective orders differ only in how the ranks agree on what runs next:
// - CollectiveOrder::kNegotiated: the thread runs a NegotiatedStream, which agrees on ready names
//   every cycle, caches, and fuses (runtime/negotiation/negotiated_stream.h);
// - CollectiveOrder::kCallOrder: the order of the calls is the agreement, so the thread runs the
//   requests of a CallOrderQueue in submission order, one at a time, without a cycle; a blocking call
//   that finds it idle runs on the caller's thread (runtime/call_order/call_order_queue.h).
//   backend_mutex_ is held while any collective runs, so the backend is never used by two threads at
//   once (backends must allow calls from different threads one at a time: MPI_THREAD_SERIALIZED).
// The first failure is kept (in broken_, or the queue's): queued and later collectives complete with
// it without running.
//
// The thread bootstraps the backend (arrival check, then CreateBackend) and destroys it. Unless the
// stall check is off, a WatchedBackend in front of it names a call that stays in the backend past the
// watchdog time (runtime/collective_watchdog.h). When every
// rank is on one host (SharedMemoryServes), Bootstrap puts the host's shared-memory segment in front
// of the backend (ShmBackend): allreduces go through it, in either order. A backend whose buffers are
// device memory (NCCL) negotiates over a Gloo backend created beside it (control_), host memory
// that the negotiation's counters and announcements need; the tensors go over NCCL. Each submitted
// tensor carries a ReadyMark of the caller's stream (BackendMemory::MarkReady), which the backend
// waits for before reading it.
//
// With a timeline (RuntimeOptions::timeline), the thread opens it right after the ranks' arrival
// check, so that every rank's zero is the same moment to within that barrier's skew. Runtimes of one
// process that name the same file share one Timeline (hvdrun-bench holds one Runtime for its
// report while others come and go); the last of them to end closes it, and sends it to hvdrun when
// asked (send_to_launcher). A Runtime created after all of those have ended starts the file afresh.
//
// A process set's engine (runtime/process_set_table.h) is a RuntimeImpl too, over the set's members:
// its options give its rank and size within the set and a store under the set's prefix, and its
// ProcessSetPlace the members' job ranks, which its backend group is made of (BackendContext::members),
// and the set's id, which the names of its collectives carry for timelines and errors (Named).
//
// Thread-safe: Submit, Run and RunBaseline may be called from any thread.
#ifndef HVDRUN_RUNTIME_RUNTIME_IMPL_H_
#define HVDRUN_RUNTIME_RUNTIME_IMPL_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hvdrun/collective_handle.h"
#include "hvdrun/counters.h"
#include "hvdrun/options.h"
#include "hvdrun/status.h"
#include "runtime/backend.h"
#include "runtime/call_order/call_order_queue.h"
#include "runtime/compression/compressed_allreduce.h"
#include "runtime/negotiation/negotiated_stream.h"
#include "runtime/request/tensor_request.h"
#include "runtime/timeline/timeline.h"
#include "runtime/watched_backend.h"

namespace hvdrun {

// Where an engine stands in the job: the whole job (id 0), or a process set.
struct ProcessSetPlace {
  int id = 0;
  std::vector<int> members;  // the set's job ranks, ascending; empty for the whole job
  int job_local_rank = -1;   // this rank's local rank in the job (which device it uses); -1: options'
};

class RuntimeImpl {
 public:
  explicit RuntimeImpl(RuntimeOptions options, ProcessSetPlace place = {});
  // Runs what is queued, then stops the thread and destroys the backend.
  ~RuntimeImpl();
  RuntimeImpl(const RuntimeImpl&) = delete;
  RuntimeImpl& operator=(const RuntimeImpl&) = delete;

  // Starts the collective thread and waits until the backend is ready or bootstrapping failed.
  Status Start();
  // Queues `request` with its buffers (for kAllgatherv and kAlltoallv, recv is the caller's
  // result); the handle completes when it has run (or at once if the runtime is broken).
  CollectiveHandle Submit(TensorRequest request, const void* send, void* recv);
  // Submit, and waits for it; in call order, on this thread when the runtime is idle.
  Status Run(TensorRequest request, const void* send, void* recv);
  // kBaselineAllreduce: in call order, waits for the queue to empty, then runs on this thread.
  Status RunBaseline(TensorRequest request, void* buffer);

  // Negotiation on: blocks until every rank has joined (NegotiatedStream::Join) and returns the rank
  // that joined last. Every rank's count of unnamed calls then becomes the largest, so that unnamed
  // calls match again after ranks made different numbers of them (failed broadcasts while joined).
  StatusOr<int> Join();
  // The name of this rank's next unnamed collective: its place in the sequence of unnamed calls,
  // which every rank makes in the same order.
  std::string NextUnnamed(CollectiveKind kind);
  // A caller's name as this engine's collectives carry it: unchanged for the whole job, with the
  // set's id for a process set ("grad [process set 2]").
  std::string Named(std::string name) const;
  // This engine's own place in the job's store (unique to it); set before Start returns.
  const std::string& scope() const { return scope_; }
  const ProcessSetPlace& place() const { return place_; }
  bool negotiated() const { return stream_ != nullptr; }
  NegotiationCounters negotiation_counters() const;
  CompressionCounters compression_counters() const { return compressed_.counters(); }
  // The runtime's part of the rank's report (its "libhvdrun" member): the negotiated path's
  // counters and responses, and what compression did, with what carried allreduces
  // (allreduce_path); null when there is neither.
  nlohmann::json LibraryReport() const;
  const RuntimeOptions& options() const { return options_; }
  // This thread's caller stream (Runtime::SetCallerStream): null until set.
  static void*& CallerStream();
  // This thread's caller shape (Runtime::SetCallerShape): empty until set.
  static std::vector<int64_t>& CallerShape();
  // "shm" when allreduces go through the host's shared memory (runtime/shm/shm_backend.h), else the
  // backend's name; set before Start returns.
  const std::string& allreduce_path() const { return allreduce_path_; }
  // The backend's Backend::mpi_threads_multiple; set before Start returns.
  std::optional<bool> mpi_threads_multiple() const { return mpi_threads_multiple_; }
  // Runtime::StartTimeline and StopTimeline for this engine (runtime_timeline.cc): records its responses
  // in a timeline at `path` (shared with this process's other engines that name it) until stopped.
  // Thread-safe. Start fails where a timeline is open already (RuntimeOptions::timeline included) and in
  // call order; Stop without a start does nothing.
  Status StartTimeline(const std::string& path, bool mark_cycles);
  Status StopTimeline();

 private:
  using Pending = CallOrderQueue::Pending;

  // Puts `request` on the rank's progress board (common/progress/rank_board.h), if it has one.
  static void Publish(TensorRequest& request);
  // Marks `request` failed on the progress board, without running it, and returns `status`.
  static Status Refused(const TensorRequest& request, Status status);
  // Pins the calling thread to RuntimeOptions::collective_thread_cpu, where one is given.
  Status PinThread() const;
  void ThreadMain();
  Status Bootstrap();
  // Puts the collective watchdog in front of the bootstrapped backends, unless the stall check is off.
  void Watch();
  // Where the caller's stream stands, for a request's buffers (BackendMemory::MarkReady).
  StatusOr<BackendMemory::ReadyMark> MarkReady();
  // Runs a call-order request under backend_mutex_ (the CallOrderQueue's Runner).
  Status RunGuarded(const Pending& pending);
  // The first failure: broken_, or in call order the queue's.
  Status Broken();
  Status OpenTimeline();
  // Closes the timeline, and sends it to hvdrun if asked; failures are warned of on stderr.
  void CloseTimeline();

  const RuntimeOptions options_;
  const ProcessSetPlace place_;
  std::string scope_;                         // written by the collective thread before started_ is set
  std::unique_ptr<Backend> backend_;          // likewise
  std::unique_ptr<Backend> control_;          // likewise: the negotiation's Gloo beside a device backend
  std::string allreduce_path_;                // likewise
  std::optional<bool> mpi_threads_multiple_;  // likewise
  WatchedBackend* watched_ = nullptr;         // likewise: backend_, when the collective watchdog is on
  // Likewise: the negotiation's backend (control_, or the one under backend_), watched on its own.
  std::unique_ptr<WatchedBackend> watched_control_;
  std::mutex backend_mutex_;  // held while a collective runs on backend_

  std::mutex mutex_;
  std::condition_variable changed_;  // started_ changed
  bool started_ = false;             // GUARDED_BY(mutex_): bootstrapping finished
  Status broken_;                    // GUARDED_BY(mutex_): bootstrapping's or the negotiation's failure
  uint64_t unnamed_calls_ = 0;       // GUARDED_BY(mutex_)
  CompressedAllreduce compressed_;
  const std::unique_ptr<NegotiatedStream> stream_;    // null in call-order mode
  const std::unique_ptr<CallOrderQueue> call_order_;  // null in negotiated mode
  std::shared_ptr<Timeline> timeline_;                // opened by the collective thread; null without one
  std::mutex started_mutex_;
  std::shared_ptr<Timeline> started_timeline_;  // GUARDED_BY(started_mutex_): StartTimeline's
  std::thread thread_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_RUNTIME_IMPL_H_
