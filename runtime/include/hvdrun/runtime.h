// libhvdrun: collectives for the ranks of an hvdrun job.
//
//   auto runtime = hvdrun::Runtime::InitFromEnvironment();   // inside `hvdrun --gloo ...`
//   if (!runtime.ok()) { fprintf(stderr, "%s\n", runtime.status().message().c_str()); return 1; }
//   hvdrun::Status done = (*runtime)->Allreduce(grads, grads, n, hvdrun::DataType::kFloat32,
//                                               hvdrun::ReduceOp::kAverage);
//   if (!done.ok()) { fprintf(stderr, "%s\n", done.message().c_str()); return 1; }
//
// Collectives run in the order the calls were made; every rank must make the same collective calls
// in the same order (as with MPI). With CollectiveOrder::kNegotiated (RuntimeOptions::order),
// collectives are named instead: ranks may submit names in any order and at any time, a background cycle
// agrees which names every rank has submitted and runs those, small allreduces fused into one backend call
// (as Horovod does); unnamed calls are then named by their place in this rank's sequence of unnamed
// calls. Both orders run every call the same way (as a request, named or numbered, alone or fused);
// they differ only in how the ranks agree on what runs next. Every backend takes both, NCCL
// included: its negotiation travels over a Gloo context beside the communicator, its tensors and
// fusion buffer stay in device memory, and each tensor is read once the caller's CUDA stream has
// reached the point where it was submitted (SetCallerStream), with no device-wide synchronize.
// Asynchronous calls are queued for one background thread per
// Runtime; a blocking call behaves as the asynchronous one followed by Wait(), and runs on the
// caller's thread when nothing is queued or running. A Runtime may be used from several
// threads, but the order of calls made concurrently from different threads is not defined, so a
// program that does so must order them itself. Buffers passed to a call must stay valid, and must
// not be written, until the call (or its handle's Wait) returns.
//
// Errors: Init fails with a one-line Status naming the cause (a backend not built into this
// library or whose module, hvdrun/backends/libhvdrun-<name>.so beside the library, cannot be
// loaded; a missing environment variable; a rank that never arrived). A collective that fails
// leaves the Runtime broken: every later call returns the same error.
#ifndef HVDRUN_RUNTIME_H_
#define HVDRUN_RUNTIME_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hvdrun/export.h"
#include "hvdrun/key_value_store.h"
#include "hvdrun/status.h"
#include "hvdrun/types.h"

namespace hvdrun {

// How the ranks agree on which collective runs next. Every rank must choose the same.
enum class CollectiveOrder : uint8_t {
  kCallOrder = 0,   // in the order of the calls, the same on every rank; named calls are refused
  kNegotiated = 1,  // named collectives, negotiated and fused (NegotiationOptions)
};

// Named negotiation, the response cache and tensor fusion (CollectiveOrder::kNegotiated). Every rank
// must use the same settings. InitFromEnvironment reads them from Horovod's variables.
struct NegotiationOptions {
  // Ready allreduces of one element type and operation are packed into one buffer of at most this
  // many bytes (rounded up to a multiple of local_size * 512 B) and reduced by one call; 0 turns
  // fusion off. Horovod's HOROVOD_FUSION_THRESHOLD, with its current default.
  size_t fusion_threshold_bytes = size_t{128} << 20;
  // How often ranks agree on what is ready (HOROVOD_CYCLE_TIME).
  std::chrono::microseconds cycle_time{1000};
  // Negotiated requests remembered, so that later cycles agree on them with one small allreduce
  // and no gather (HOROVOD_CACHE_CAPACITY); 0 turns the cache off.
  size_t cache_capacity = 1024;
  // A name some ranks submitted and others not for this long gets a warning naming it and the
  // missing ranks, repeated each time it waits that much longer (Horovod: 60 s).
  std::chrono::milliseconds stall_warning{60000};
  // Horovod's stall check on (HOROVOD_STALL_CHECK_DISABLE=1: off, with neither warning nor shutdown).
  bool stall_check = true;
  // A name still waiting this long fails, and breaks the runtime (Horovod's
  // HOROVOD_STALL_SHUTDOWN_TIME_SECONDS); 0, Horovod's default: it waits on.
  std::chrono::milliseconds stall_shutdown{0};
  // Where warnings go, one line each; by default standard error (rank 0 warns for the job).
  std::function<void(const std::string&)> warn;
};

// A Chrome-trace timeline of what this rank's runtime does, for chrome://tracing and Perfetto
// (docs/timeline.md). hvdrun --timeline-filename gives every rank one and merges them into one file;
// InitFromEnvironment reads these settings from the variables hvdrun sets (HVDRUN_TIMELINE: a
// directory, for DIR/rank-R.json sent to hvdrun at the end; HOROVOD_TIMELINE_MARK_CYCLES), or from
// HOROVOD_TIMELINE on rank 0 outside hvdrun, as Horovod.
struct TimelineSettings {
  // This rank's file, created (or truncated) when the runtime starts; empty: no timeline. Its
  // directory is created if missing.
  std::string path;
  // Shown in the rank's name in the trace ("rank 1 (server2)"); may be empty.
  std::string host;
  // A CYCLE_START mark at each negotiation cycle that has work (Horovod's --timeline-mark-cycles).
  bool mark_cycles = false;
  // When the runtime ends, send the file to hvdrun (KeyValueStore::SendTimelinePiece) and delete it,
  // and its directory once that is empty: hvdrun asks this of every rank it starts.
  bool send_to_launcher = false;
};

// Gradient compression (docs/compression.md): every float32 sum and average this runtime reduces
// travels in `format` (other types and operations travel as they are). fp16 and bf16 reduce as
// Horovod's Compression.fp16 (an average divided before the sum); fp8 keeps accuracy with four
// safeguards, each of which can be switched off to show what it guards against. Every rank must use
// the same settings. InitFromEnvironment reads them from HVDRUN_COMPRESSION, HVDRUN_FP8_SCALING,
// HVDRUN_FP8_SAFE_CAST, HVDRUN_FP8_FLOAT32_SUMS and HVDRUN_ERROR_FEEDBACK (hvdrun --compression and its
// flags).
struct CompressionOptions {
  CompressionFormat format = CompressionFormat::kNone;
  // fp8: blocks of values scaled by a power of two every rank agrees on, so that small gradients
  // do not fall below fp8's smallest value.
  bool scaling = true;
  // fp8: values beyond the format's largest become its largest (never NaN or infinity), and values
  // below its smallest normal keep their subnormal precision. Off: a naive cast, which makes them
  // NaN (E4M3) or infinity (E5M2), and zero.
  bool safe_cast = true;
  // fp8: each rank sums its share of every rank's values in float32 (an alltoall, then an
  // allgather of the encoded sums); off, the values are summed in fp8, rounded after each addition.
  bool float32_sums = true;
  // fp8: what encoding lost is added to the same tensor's values the next time they are reduced.
  bool error_feedback = true;
};

// What compression did on this rank, for its report.
struct CompressionCounters {
  uint64_t compressed_bytes = 0;    // float32 bytes reduced through compression
  uint64_t wire_bytes = 0;          // bytes this rank sent for them (as the collectives' algorithms send)
  uint64_t float32_wire_bytes = 0;  // what a float32 ring allreduce of the same values would have sent
};

struct RuntimeOptions {
  BackendKind backend = BackendKind::kGloo;
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  int cross_rank = 0;
  int cross_size = 1;
  // The job's key-value store, which the backend bootstraps through. InitFromEnvironment connects to hvdrun's
  // rendezvous service; tests may pass any store shared by their ranks.
  std::shared_ptr<KeyValueStore> store;
  // Address this rank's backend listens on and advertises to the others (Gloo's TCP device).
  std::string host_address = "127.0.0.1";
  // Limit for bootstrapping (every rank must arrive within it) and for each backend operation's
  // wait for the other ranks. InitFromEnvironment reads HOROVOD_GLOO_TIMEOUT_SECONDS (default 30 s).
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  // The CPU the runtime's collective thread is pinned to (Horovod's HOROVOD_THREAD_AFFINITY); -1: none.
  int collective_thread_cpu = -1;
  CollectiveOrder order = CollectiveOrder::kCallOrder;
  NegotiationOptions negotiation;
  // The timeline records the negotiated path's responses, each with its negotiation, queue, copies
  // and backend call (CollectiveOrder::kNegotiated); in call-order mode the file holds no response.
  TimelineSettings timeline;
  // Both collective orders; with negotiation, fused buffers are compressed whole.
  CompressionOptions compression;
  // Allreduces of a job whose ranks are all on one host go through a shared-memory segment of that
  // host (each rank reduces its slice of every rank's values, synchronized by futexes), not through
  // the backend, when the backend reduces host memory (Gloo, MPI). Every rank must choose the same.
  // InitFromEnvironment reads it from HVDRUN_SHM (hvdrun --shared-memory on|off); on by default.
  bool shared_memory = true;
  // Jobs on several hosts with the same number of ranks each, over Gloo: each allreduce is reduced
  // inside every host through its shared memory, each local rank's slice of the host's sum is
  // allreduced over Gloo with the same local rank of the other hosts, and the hosts' ranks gather the
  // slices through shared memory again, so that one copy of the buffer per host crosses the network
  // (Horovod's HOROVOD_HIERARCHICAL_ALLREDUCE, which InitFromEnvironment reads; hvdrun
  // --hierarchical-allreduce and --no-hierarchical-allreduce). On by default: it runs only where it
  // applies (Gloo, shared_memory, several hosts of the same number of ranks, at least 2), and there it
  // is faster than the flat ring (docs/benchmarks.md). Every rank must choose the same.
  bool hierarchical_allreduce = true;
};

// What negotiation did on this rank, for its report.
struct NegotiationCounters {
  uint64_t cycles = 0;             // cycles that had something to run or agree on
  uint64_t cache_only_cycles = 0;  // of those, agreed by the cache's allreduce alone, with no gather
  uint64_t responses = 0;          // backend calls made for named collectives (one per fused buffer)
  uint64_t tensors = 0;            // collectives they carried
  uint64_t copied_bytes = 0;       // bytes of fused responses copied through the fusion buffer
  uint64_t in_place_bytes = 0;     // bytes of fused responses whose tensors lay back to back in memory,
                                   // reduced where they were (no copy)
  uint64_t cache_evictions = 0;
};

class CollectiveHandle;

// What an allgather whose ranks give different counts leaves on each rank: every rank's elements,
// back to back in rank order, and how many came from each rank.
struct AllgatherResult {
  std::vector<std::byte> data;
  std::vector<uint64_t> counts;
};

// What an alltoall leaves on each rank: the elements every rank sent this one, back to back in rank
// order, and how many came from each rank.
using AlltoallResult = AllgatherResult;

class HVDRUN_EXPORT Runtime {
 public:
  // Looks an environment variable up: its value, or nullptr when unset (std::getenv's contract).
  using EnvironmentLookup = std::function<const char*(const char*)>;

  // Whether this process is a rank that hvdrun started (its environment has HVDRUN_RANK): a
  // program that also runs on its own checks it before InitFromEnvironment. `lookup` defaults to
  // std::getenv.
  static bool LaunchedByHvdrun(const EnvironmentLookup& lookup = nullptr);
  // The backend hvdrun chose for this rank (HVDRUN_BACKEND), for a program that picks its
  // CollectiveOrder by backend; an error as InitFromEnvironment's. `lookup` defaults to std::getenv.
  static StatusOr<BackendKind> BackendFromEnvironment(const EnvironmentLookup& lookup = nullptr);
  // Initializes from an hvdrun rank's environment (HVDRUN_BACKEND, HVDRUN_RANK, ...,
  // HVDRUN_RENDEZVOUS_ADDR/PORT, HVDRUN_SECRET: what hvdrun gives every rank). An error names the
  // variable; a rank that hvdrun started without --gloo, --mpi or --nccl is told to add one.
  // `lookup` defaults to std::getenv.
  // With CollectiveOrder::kNegotiated, the tuning comes from Horovod's variables where they are set
  // (HOROVOD_FUSION_THRESHOLD in bytes, HOROVOD_CYCLE_TIME in ms, HOROVOD_CACHE_CAPACITY,
  // HOROVOD_STALL_CHECK_TIME_SECONDS), else NegotiationOptions' defaults.
  // `adjust`, when given, changes the options read from the environment before Init: a program's
  // own flags over hvdrun's variables (hvdrun-trainer --compression).
  static StatusOr<std::unique_ptr<Runtime>> InitFromEnvironment(
      const EnvironmentLookup& lookup = nullptr, CollectiveOrder order = CollectiveOrder::kCallOrder,
      const std::function<void(RuntimeOptions&)>& adjust = nullptr);
  // Initializes from explicit options; every rank of the job must call it.
  static StatusOr<std::unique_ptr<Runtime>> Init(RuntimeOptions options);

  // Waits for queued collectives, then shuts the backend down.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int rank() const;
  int size() const;
  int local_rank() const;
  int local_size() const;
  int cross_rank() const;
  int cross_size() const;
  BackendKind backend() const;
  CollectiveOrder order() const;
  // What carries this runtime's allreduces: "shm" (the host's shared memory: RuntimeOptions::
  // shared_memory), "shm+gloo" (hierarchical_allreduce) or the backend's name ("gloo", "mpi",
  // "nccl"). Benchmarks and timelines name it.
  std::string allreduce_path() const;

  // recv[i] = op over ranks of send[i], for `count` elements. send == recv is in place.
  Status Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op);
  CollectiveHandle AllreduceAsync(const void* send, void* recv, size_t count, DataType type, ReduceOp op);
  // The named forms (CollectiveOrder::kNegotiated): `name` identifies the collective across ranks; a name may
  // be reused once its previous collective has completed on this rank. A name submitted with other parameters
  // on another rank fails with both descriptions.
  Status Allreduce(const std::string& name, const void* send, void* recv, size_t count, DataType type,
                   ReduceOp op);
  CollectiveHandle AllreduceAsync(const std::string& name, const void* send, void* recv, size_t count,
                                  DataType type, ReduceOp op);
  // Per-call compression: this allreduce travels in `compression` instead of the job's
  // CompressionOptions::format (kNone: uncompressed); the job's fp8 safeguards apply. Every rank
  // must give the same format for a name; fusion packs only allreduces of one format together.
  Status Allreduce(const std::string& name, const void* send, void* recv, size_t count, DataType type,
                   ReduceOp op, CompressionFormat compression);
  CollectiveHandle AllreduceAsync(const std::string& name, const void* send, void* recv, size_t count,
                                  DataType type, ReduceOp op, CompressionFormat compression);
  NegotiationCounters negotiation_counters() const;
  CompressionCounters compression_counters() const;
  const CompressionOptions& compression() const;
  // `buffer` on every rank gets root's `count` elements.
  Status Broadcast(void* buffer, size_t count, DataType type, int root);
  CollectiveHandle BroadcastAsync(void* buffer, size_t count, DataType type, int root);
  // The named forms (CollectiveOrder::kNegotiated), as the named allreduces: ranks may submit names
  // in any order; every rank must give the same count, type and root for a name. Broadcasts are
  // never fused.
  Status Broadcast(const std::string& name, void* buffer, size_t count, DataType type, int root);
  CollectiveHandle BroadcastAsync(const std::string& name, void* buffer, size_t count, DataType type,
                                  int root);
  // recv (size * count elements) gets every rank's `count` elements of send, in rank order.
  Status Allgather(const void* send, void* recv, size_t count, DataType type);
  // The named form (CollectiveOrder::kNegotiated): every rank gives the same count and type for a
  // name; `recv` is the caller's (device memory over NCCL, as `send`).
  CollectiveHandle AllgatherAsync(const std::string& name, const void* send, void* recv, size_t count,
                                  DataType type);
  // Counts that may differ between ranks (Horovod's allgather of first dimensions that differ): each
  // rank gives `count` elements, whole rows of `row` elements (row >= 1; every rank must give the same
  // row). `result` is filled when the handle completes; it must stay valid until then. In call order
  // it runs two backend allgathers (the counts, then the rows); with negotiation the counts travel in
  // the negotiation, and the named form may be submitted in any order.
  CollectiveHandle AllgatherAsync(const void* send, size_t count, DataType type, size_t row,
                                  AllgatherResult* result);
  CollectiveHandle AllgatherAsync(const std::string& name, const void* send, size_t count, DataType type,
                                  size_t row, AllgatherResult* result);
  // Horovod's alltoall: `send` holds, back to back in rank order, splits[j] elements for rank j (splits
  // has size() entries, each whole rows of `row` elements; row >= 1, the same on every rank), and
  // `result` gets, when the handle completes, what every rank sent this one. `send` and `result` must
  // stay valid until then. It runs an allgather of every rank's splits, then the backend's alltoall of
  // uneven blocks (Gloo's alltoallv, MPI_Alltoallv). The named form (CollectiveOrder::kNegotiated) may
  // be submitted in any order; every rank must give the same type and row for a name, while splits
  // differ.
  CollectiveHandle AlltoallAsync(const void* send, const std::vector<uint64_t>& splits, DataType type,
                                 size_t row, AlltoallResult* result);
  CollectiveHandle AlltoallAsync(const std::string& name, const void* send,
                                 const std::vector<uint64_t>& splits, DataType type, size_t row,
                                 AlltoallResult* result);
  // An alltoall of equal blocks into the caller's buffer (CollectiveOrder::kNegotiated): block j
  // (`count` elements at j * count) of `send` goes to rank j, which receives it as its block rank()
  // of `recv`; both hold size() * count elements and must not overlap. Every rank gives the same
  // count and type for a name. Over NCCL both are device memory; uneven splits padded to the largest
  // block travel this way (what AlltoallResult's form cannot: its result is host memory).
  CollectiveHandle AlltoallAsync(const std::string& name, const void* send, void* recv, size_t count,
                                 DataType type);
  Status Barrier();
  // Horovod's join, for ranks that run out of data at different times (CollectiveOrder::kNegotiated
  // only). Waits until everything this rank submitted has completed, then until every rank has
  // called Join, and returns the rank that joined last (the same on every rank). Meanwhile this rank
  // stands in for the others' allreduces with zeros of the type and count they submitted: a kAverage
  // is still divided by size() (as Horovod), kMin and kMax see the zeros. A broadcast, allgather or
  // barrier submitted while some rank has joined fails on the ranks that submitted it, naming the
  // joined ranks, without breaking the runtime (Horovod refuses them too). This rank's own calls
  // are refused until Join returns. Afterwards every rank's count of unnamed calls is the largest
  // any rank had, so that unnamed calls match again.
  StatusOr<int> Join();

  // Sends this rank's end-of-run report (a JSON object; its "summary" member holds the figures
  // hvdrun aggregates over ranks: docs/results.md) to hvdrun's collector. With negotiation, the
  // runtime adds a "libhvdrun" member: its counters, every response's bytes and time per size bin,
  // and what carried its allreduces (allreduce_path()). Not a collective: each rank sends its own,
  // at most once per run, from any thread.
  Status SendReport(const std::string& json);

  // The backend library's own allreduce on `buffer`, in place, bypassing the runtime's queue and
  // conversions: the baseline that benchmarks compare the runtime with. Not thread-safe with the
  // other calls; only float32 and float64 with kSum are supported by every backend.
  Status BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op);

  // The CUDA stream (a cudaStream_t) whose work writes the device buffers that this thread submits
  // from now on; null (the default): the device's default stream. A backend whose buffers are device
  // memory (NCCL) records an event on it when a call is made and reads the buffer once the event has
  // happened, without waiting for the device as a whole: PyTorch's current stream is the one to give
  // (torch.cuda.current_stream().cuda_stream). Per thread, for every Runtime; host backends ignore it.
  // A handle that has completed means the result is in place for any stream.
  static void SetCallerStream(void* cuda_stream);

  class Impl;

 private:
  explicit Runtime(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The result of an asynchronous collective. Wait() blocks until it has run and returns its Status;
// it may be called more than once. A handle must not outlive its Runtime.
class HVDRUN_EXPORT CollectiveHandle {
 public:
  CollectiveHandle() = default;
  Status Wait();
  // For device memory (NCCL, negotiated): returns once the collective is queued on the device and
  // `cuda_stream` (a cudaStream_t; null: the default stream) has been made to wait for its end, so
  // that work queued on that stream afterwards sees the result, while the host goes on at once (as
  // Horovod's async completion). Other streams and the host see it after Wait(). A failure the device
  // meets later breaks the Runtime: a later call returns it. Otherwise (host backends, call order, a
  // collective that has already completed) the same as Wait().
  Status WaitOnStream(void* cuda_stream);
  bool Ready() const;

  struct State;
  explicit CollectiveHandle(std::shared_ptr<State> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<State> state_;
};

// Converts `count` values between double and `type`'s representation (float16 and bfloat16 round
// to nearest even; integers truncate toward zero), in the arithmetic of libhvdrun's reductions: for
// filling buffers and checking results.
HVDRUN_EXPORT void ConvertFromDouble(DataType type, const double* from, void* to, size_t count);
HVDRUN_EXPORT void ConvertToDouble(DataType type, const void* from, double* to, size_t count);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_H_
