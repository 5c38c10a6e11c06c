// Timeline: one rank's trace of what its runtime did, written as a Chrome-trace JSON array file
// (the format chrome://tracing and Perfetto open), which the launcher merges with every other
// rank's (common/timeline/timeline_merge.h). Names shared with the merger: common/timeline/timeline_format.h.
//
// Layout. One process per rank: pid = rank, named "rank R" or "rank R (HOST)", sorted by rank.
// tid 0 ("cycle") holds the CYCLE_START instants. Each response (one fused collective) is one
// complete event ("X", ts + dur) named after its operation (ALLREDUCE) whose args carry its bytes,
// tensor count and first tensor names, with its activities (NEGOTIATE_ALLREDUCE, QUEUE,
// MEMCPY_IN_FUSION_BUFFER, GLOO_ALLREDUCE, MEMCPY_OUT_FUSION_BUFFER) as X events inside it. Responses
// go on lanes, tid 1, 2, ... ("responses N"): a response takes the lowest lane whose last response
// ended by the time it started, so the slices of one tid never overlap and nest as the viewers
// require however the negotiation of different tensors interleaves. Events are written when a
// response has finished, as X events rather than B/E pairs, so a killed rank leaves no unmatched
// B. At most kMaxLanes lanes: past that a response shares the lane that frees first.
//
// Clock. ts is in microseconds (three decimals) since `zero`, a steady-clock instant the caller
// chooses: the runtime sets it right after its bootstrap barrier, so ranks' ts values compare to
// within the barrier's skew. The file's first events say where zero lies on the host's wall clock.
//
// Durability. The file is a valid JSON array from Open on: Open writes the header and "]"; each
// flush writes the new events over the closing "\n]\n" and a new closing after them, in one pwrite.
// A rank killed between flushes leaves a valid file holding every event up to the last flush; one
// killed inside that pwrite (or stopped by a full disk) may leave a tail without the bracket, which
// the merger reads up to the last whole event. (Writing a temporary file and renaming it on every
// flush was rejected: each flush would cost the file's whole size.)
//
// Marks. Mark writes an instant event of the caller's name with numeric args on tid 0 (the cycle
// lane), process-wide ("s":"p") so that the viewers draw it across the rank: what changed in the
// runtime at that moment (the autotuner's settings: kTimelineAutotune, kTimelineAutotuneKept).
//
// Cost. Record, MarkCycle and Mark format into an in-memory buffer under a mutex: no system call. A
// writer thread owned by the Timeline writes the buffer every flush_interval and as soon as it
// holds flush_bytes; Flush writes it at once, Close writes it and closes the file. A runtime
// without a timeline holds no Timeline (a null pointer) and pays nothing.
//
// Size. The file never grows past byte_limit. The first event that would take it there is dropped,
// and so is every later one; the file then ends with one TIMELINE_EVENTS_DROPPED instant event
// counting them (rewritten at each flush, so it is there also when the rank is killed).
//
// Threads. Record, MarkCycle, Flush and dropped_events may be called from any threads at once;
// Close and the destructor from one thread, after the others have returned. Record and MarkCycle
// after Close do nothing.
#ifndef HVDRUN_RUNTIME_TIMELINE_TIMELINE_H_
#define HVDRUN_RUNTIME_TIMELINE_TIMELINE_H_

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/process/file_descriptor.h"
#include "hvdrun/status.h"

namespace hvdrun {

// Activity and operation names, as Horovod's timeline spells them.
inline constexpr std::string_view kTimelineAllreduce = "ALLREDUCE";
inline constexpr std::string_view kTimelineNegotiateAllreduce = "NEGOTIATE_ALLREDUCE";
inline constexpr std::string_view kTimelineQueue = "QUEUE";
inline constexpr std::string_view kTimelineMemcpyIn = "MEMCPY_IN_FUSION_BUFFER";
inline constexpr std::string_view kTimelineMemcpyOut = "MEMCPY_OUT_FUSION_BUFFER";
inline constexpr std::string_view kTimelineCycleStart = "CYCLE_START";
// The autotuner switched every rank to a setting to measure (args: the setting, the sample number),
// and to the setting it kept at the end, or back to the starting setting when it starts again
// (runtime/autotune/cycle_tuner.h).
inline constexpr std::string_view kTimelineAutotune = "AUTOTUNE";
inline constexpr std::string_view kTimelineAutotuneKept = "AUTOTUNE_KEPT";
inline constexpr std::string_view kTimelineAutotuneRestart = "AUTOTUNE_RESTART";

// The backend's activity for an operation: ("gloo", "ALLREDUCE") -> "GLOO_ALLREDUCE" (also MPI_,
// NCCL_); the backend's name is upper-cased.
std::string TimelineBackendActivity(std::string_view backend, std::string_view operation);

struct TimelineOptions {
  std::string path;
  int rank = 0;
  // Shown in the process's name when not empty.
  std::string host;
  // The instant that ts = 0 stands for; the default (the steady clock's epoch) means "when Open runs".
  std::chrono::steady_clock::time_point zero{};
  // 256 MiB: Chrome's trace viewer fails on files of a few hundred MB (horovod#1022: 400 MB), and
  // the merged file holds every rank's. At least kMinByteLimit.
  uint64_t byte_limit = uint64_t{256} << 20;
  // Write a CYCLE_START instant at every MarkCycle (Horovod's --timeline-mark-cycles; off because
  // a cycle per millisecond crowds the view).
  bool mark_cycles = false;
  // A killed rank loses at most this much of its trace (plus what flush_bytes allows).
  std::chrono::milliseconds flush_interval{100};
  // The buffer is written as soon as it holds this much, so that memory stays bounded.
  size_t flush_bytes = size_t{1} << 20;
};

// One activity of a response, [start, end] on the steady clock.
struct TimelineActivity {
  std::string_view name;
  std::chrono::steady_clock::time_point start;
  std::chrono::steady_clock::time_point end;
};

// One response: what Record writes as one event with its activities inside. The views need to
// live only during Record.
struct TimelineResponse {
  std::string_view operation = kTimelineAllreduce;
  uint64_t bytes = 0;
  uint64_t tensor_count = 0;
  // The first kMaxTensorNames are written (each cut at kMaxTensorNameBytes); tensor_count says
  // how many there were.
  std::vector<std::string_view> tensor_names;
  // In order and not overlapping; the response spans from the first start to the last end.
  std::vector<TimelineActivity> activities;
};

// One numeric arg of a mark: "key": value, written in the shortest form that reads back as the
// same double (common/shortest_number.h); a value that is not finite is written as null.
struct TimelineArg {
  std::string key;
  double value = 0;
};

// A mark: an instant event named `name` whose args are `args`, in their order.
struct TimelineMark {
  std::string name;
  std::vector<TimelineArg> args;
};

class Timeline {
 public:
  static constexpr size_t kMaxTensorNames = 16;
  static constexpr size_t kMaxTensorNameBytes = 128;
  static constexpr size_t kMaxLanes = 64;
  static constexpr uint64_t kMinByteLimit = uint64_t{64} << 10;

  // Creates (or truncates) the file, writes its header and starts the writer thread. Errors:
  // "cannot open timeline 'PATH': REASON", "cannot write timeline 'PATH': REASON", or an option
  // out of range.
  static StatusOr<std::unique_ptr<Timeline>> Open(TimelineOptions options);

  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;
  // Closes, ignoring the result.
  ~Timeline();

  // Adds the response's events. A response without activities is ignored.
  void Record(const TimelineResponse& response);
  // Adds a CYCLE_START instant at `start` when mark_cycles is on.
  void MarkCycle(std::chrono::steady_clock::time_point start);
  // Adds `mark` as an instant at `at`, whatever mark_cycles says.
  void Mark(const TimelineMark& mark, std::chrono::steady_clock::time_point at);

  // Writes what is buffered now. Errors: "cannot write timeline 'PATH': REASON"; after the first
  // write error nothing more is written, and Flush and Close return that error.
  Status Flush();
  // Flushes, stops the writer thread and closes the file. Later calls return the same result.
  Status Close();

  // Events dropped because of byte_limit so far.
  uint64_t dropped_events() const;
  const TimelineOptions& options() const { return options_; }

 private:
  Timeline(TimelineOptions options, UniqueFd fd, std::chrono::steady_clock::time_point zero);

  int64_t SinceZeroNanos(std::chrono::steady_clock::time_point time) const;
  // Appends `,\n{"name":NAME,"ph":PH,"pid":R,"tid":TID,"ts":TS` to buffer_; the caller closes it.
  void AppendEventHeadLocked(std::string_view name, char phase, size_t tid, int64_t ts_nanos);
  // Lane (tid - 1) for a response over [start, end]; appends the lane's thread metadata when new.
  size_t TakeLaneLocked(std::chrono::steady_clock::time_point start,
                        std::chrono::steady_clock::time_point end);
  // Keeps what was appended to buffer_ past `mark` if it fits under byte_limit; else removes it
  // and counts `events` dropped.
  void AcceptLocked(size_t mark, uint64_t events, int64_t ts_nanos);
  Status WriteAt(off_t offset, std::string_view data);
  void RunWriter();

  const TimelineOptions options_;
  const std::chrono::steady_clock::time_point zero_;

  mutable std::mutex buffer_mutex_;
  std::condition_variable wake_writer_;  // with buffer_mutex_
  std::string buffer_;                   // GUARDED_BY(buffer_mutex_)
  uint64_t accepted_bytes_ = 0;          // GUARDED_BY(buffer_mutex_): header and events kept
  uint64_t dropped_events_ = 0;          // GUARDED_BY(buffer_mutex_)
  int64_t first_drop_nanos_ = 0;         // GUARDED_BY(buffer_mutex_)
  std::vector<std::chrono::steady_clock::time_point> lane_ends_;  // GUARDED_BY(buffer_mutex_)
  bool closing_ = false;                                          // GUARDED_BY(buffer_mutex_)

  std::mutex file_mutex_;         // taken before buffer_mutex_ when both are
  UniqueFd fd_;                   // GUARDED_BY(file_mutex_)
  off_t events_end_ = 0;          // GUARDED_BY(file_mutex_): where the closing tail starts
  std::string batch_;             // GUARDED_BY(file_mutex_): swapped with buffer_ at each flush
  uint64_t dropped_written_ = 0;  // GUARDED_BY(file_mutex_)
  Status write_error_;            // GUARDED_BY(file_mutex_)
  bool closed_ = false;           // GUARDED_BY(file_mutex_)
  Status close_status_;           // GUARDED_BY(file_mutex_)

  std::thread writer_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_TIMELINE_TIMELINE_H_
