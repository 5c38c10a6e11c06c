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
//
// Elastic jobs (RuntimeOptions::elastic; hvdrun --min-np, docs/elastic.md): a collective that fails
// because the job's ranks changed fails with ErrorKind::kRecoverable (hvdrun/error_kind.h: KindOf);
// the program then destroys its Runtime and creates one again (InitFromEnvironment or Init with
// the same ElasticOptions), which waits for its place in the job's next round. Init fails with
// ErrorKind::kRemoved when this worker has none; the program then exits 0.
//
// The types a Runtime's calls take and give have headers of their own, which this one includes:
// hvdrun/options.h (RuntimeOptions), hvdrun/collective_handle.h (CollectiveHandle, AllgatherResult),
// hvdrun/counters.h (NegotiationCounters, CompressionCounters); with the vocabulary's hvdrun/status.h,
// hvdrun/types.h and hvdrun/key_value_store.h.
#ifndef HVDRUN_RUNTIME_H_
#define HVDRUN_RUNTIME_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hvdrun/collective_handle.h"
#include "hvdrun/counters.h"
#include "hvdrun/error_kind.h"
#include "hvdrun/export.h"
#include "hvdrun/options.h"
#include "hvdrun/status.h"
#include "hvdrun/types.h"

namespace hvdrun {

class RuntimeImpl;        // libhvdrun's own
class ElasticMembership;  // likewise
class ProcessSetTable;    // likewise

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
  // Horovod's mpi_threads_supported(): whether the MPI library of an --mpi job gives this process
  // MPI_THREAD_MULTIPLE (libhvdrun asks for it when it initializes MPI; a program that initialized MPI
  // itself chose the level). An error in a job whose backend is not MPI.
  StatusOr<bool> MpiThreadsSupported() const;
  // Elastic jobs: the round this Runtime is in (0 in a job that is not elastic).
  int round() const;
  // Elastic jobs: whether hvdrun has found new hosts, whose ranks wait to join, since this Runtime
  // was initialized (the job's "elastic/hosts_updated" counter changed); the program then re-forms
  // the job by re-initializing at a point every rank agrees on (hvdrun.torch: rank 0 asks and
  // broadcasts the answer at state.commit()). False outside elastic jobs. Does not wait.
  StatusOr<bool> HostsUpdated() const;

  // recv[i] = op over ranks of send[i], for `count` elements. send == recv is in place.
  Status Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                   int process_set = 0);
  CollectiveHandle AllreduceAsync(const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                                  int process_set = 0);
  // The named forms (CollectiveOrder::kNegotiated): `name` identifies the collective across ranks; a name may
  // be reused once its previous collective has completed on this rank. A name submitted with other parameters
  // on another rank fails with both descriptions.
  Status Allreduce(const std::string& name, const void* send, void* recv, size_t count, DataType type,
                   ReduceOp op, int process_set = 0);
  CollectiveHandle AllreduceAsync(const std::string& name, const void* send, void* recv, size_t count,
                                  DataType type, ReduceOp op, int process_set = 0);
  // Per-call compression: this allreduce travels in `compression` instead of the job's
  // CompressionOptions::format (kNone: uncompressed); the job's fp8 safeguards apply. Every rank
  // must give the same format for a name; fusion packs only allreduces of one format together.
  Status Allreduce(const std::string& name, const void* send, void* recv, size_t count, DataType type,
                   ReduceOp op, CompressionFormat compression, int process_set = 0);
  CollectiveHandle AllreduceAsync(const std::string& name, const void* send, void* recv, size_t count,
                                  DataType type, ReduceOp op, CompressionFormat compression,
                                  int process_set = 0);
  // Horovod's prescale_factor and postscale_factor, for the named allreduces and reducescatters: each
  // rank's values are multiplied by `prescale` before the reduction and the result by `postscale` after
  // it, by the engine on its fused buffer (over NCCL by a kernel on its stream, in device memory), in
  // Horovod's arithmetic (float32, float16 and bfloat16 times the factor rounded to float; float64 in
  // double; integers in double, truncated toward zero). With kAverage, the average of the prescaled
  // values is multiplied by `postscale`. Every rank gives the same factors for a name; only collectives
  // with the same factors are fused together. Each factor must be finite.
  struct ScaleFactors {
    double prescale = 1.0;
    double postscale = 1.0;
  };
  CollectiveHandle AllreduceAsync(const std::string& name, const void* send, void* recv, size_t count,
                                  DataType type, ReduceOp op, CompressionFormat compression,
                                  ScaleFactors factors, int process_set = 0);
  NegotiationCounters negotiation_counters() const;
  CompressionCounters compression_counters() const;
  const CompressionOptions& compression() const;
  // `buffer` on every rank gets root's `count` elements.
  Status Broadcast(void* buffer, size_t count, DataType type, int root, int process_set = 0);
  CollectiveHandle BroadcastAsync(void* buffer, size_t count, DataType type, int root, int process_set = 0);
  // The named forms (CollectiveOrder::kNegotiated), as the named allreduces: ranks may submit names
  // in any order; every rank must give the same count, type and root for a name. Broadcasts are
  // never fused.
  Status Broadcast(const std::string& name, void* buffer, size_t count, DataType type, int root,
                   int process_set = 0);
  CollectiveHandle BroadcastAsync(const std::string& name, void* buffer, size_t count, DataType type,
                                  int root, int process_set = 0);
  // recv (size * count elements) gets every rank's `count` elements of send, in rank order.
  Status Allgather(const void* send, void* recv, size_t count, DataType type, int process_set = 0);
  // The named form (CollectiveOrder::kNegotiated): every rank gives the same count and type for a
  // name; `recv` is the caller's (device memory over NCCL, as `send`).
  CollectiveHandle AllgatherAsync(const std::string& name, const void* send, void* recv, size_t count,
                                  DataType type, int process_set = 0);
  // Counts that may differ between ranks (Horovod's allgather of first dimensions that differ): each
  // rank gives `count` elements, whole rows of `row` elements (row >= 1; every rank must give the same
  // row). `result` is filled when the handle completes; it must stay valid until then. In call order
  // it runs two backend allgathers (the counts, then the rows); with negotiation the counts travel in
  // the negotiation, and the named form may be submitted in any order.
  CollectiveHandle AllgatherAsync(const void* send, size_t count, DataType type, size_t row,
                                  AllgatherResult* result, int process_set = 0);
  CollectiveHandle AllgatherAsync(const std::string& name, const void* send, size_t count, DataType type,
                                  size_t row, AllgatherResult* result, int process_set = 0);
  // Horovod's alltoall: `send` holds, back to back in rank order, splits[j] elements for rank j (splits
  // has size() entries, each whole rows of `row` elements; row >= 1, the same on every rank), and
  // `result` gets, when the handle completes, what every rank sent this one. `send` and `result` must
  // stay valid until then. It runs an allgather of every rank's splits, then the backend's alltoall of
  // uneven blocks (Gloo's alltoallv, MPI_Alltoallv). The named form (CollectiveOrder::kNegotiated) may
  // be submitted in any order; every rank must give the same type and row for a name, while splits
  // differ.
  CollectiveHandle AlltoallAsync(const void* send, const std::vector<uint64_t>& splits, DataType type,
                                 size_t row, AlltoallResult* result, int process_set = 0);
  CollectiveHandle AlltoallAsync(const std::string& name, const void* send,
                                 const std::vector<uint64_t>& splits, DataType type, size_t row,
                                 AlltoallResult* result, int process_set = 0);
  // An alltoall of equal blocks into the caller's buffer (CollectiveOrder::kNegotiated): block j
  // (`count` elements at j * count) of `send` goes to rank j, which receives it as its block rank()
  // of `recv`; both hold size() * count elements and must not overlap. Every rank gives the same
  // count and type for a name. Over NCCL both are device memory; uneven splits padded to the largest
  // block travel this way (what AlltoallResult's form cannot: its result is host memory).
  CollectiveHandle AlltoallAsync(const std::string& name, const void* send, void* recv, size_t count,
                                 DataType type, int process_set = 0);
  // Horovod's reducescatter (CollectiveOrder::kNegotiated): `op` (kSum, kAverage, kMin, kMax, kProduct) over
  // the ranks of `process_set` (0: the whole job) of `send`'s `count` elements, whole rows of `row` elements
  // (row >= 1), of which `recv` gets this rank's part: ReducescatterCount(count, row, r, process_set)
  // elements, r this rank's place in the set, the rows of Horovod's split of the first dimension (rows / n
  // to every one of the set's n ranks, one more to each of the first rows % n). Every rank gives the same
  // count, row, type and op for a name; send and recv must not overlap (over NCCL both are device memory).
  // Negotiated reducescatters of one type and op ready in the same cycle are fused into one backend call,
  // as allreduces are.
  CollectiveHandle ReducescatterAsync(const std::string& name, const void* send, void* recv, size_t count,
                                      DataType type, ReduceOp op, size_t row, int process_set = 0);
  Status Reducescatter(const std::string& name, const void* send, void* recv, size_t count, DataType type,
                       ReduceOp op, size_t row, int process_set = 0);
  // With scale factors (ScaleFactors above).
  CollectiveHandle ReducescatterAsync(const std::string& name, const void* send, void* recv, size_t count,
                                      DataType type, ReduceOp op, size_t row, ScaleFactors factors,
                                      int process_set = 0);
  // The elements the rank in place `rank` of `process_set` receives of a reducescatter of `count` elements
  // in rows of `row` (0 for a place or set that does not exist).
  size_t ReducescatterCount(size_t count, size_t row, int rank, int process_set = 0) const;
  // One tensor of a grouped reducescatter: ReducescatterAsync's send, recv, count and row.
  struct ReducescatterTensor {
    const void* send = nullptr;
    void* recv = nullptr;
    size_t count = 0;
    size_t row = 1;
  };
  // Horovod's grouped reducescatter: every tensor's reducescatter, named `<name>.<index>`, submitted
  // one after the other; those a negotiation cycle finds ready together are fused (within the fusion
  // threshold). One handle per tensor, in order; a tensor refused by its checks refuses the whole group
  // (every handle completes with that error) before any is submitted.
  std::vector<CollectiveHandle> GroupedReducescatterAsync(const std::string& name,
                                                          const std::vector<ReducescatterTensor>& tensors,
                                                          DataType type, ReduceOp op, int process_set = 0);
  Status Barrier(int process_set = 0);
  // Process sets (Horovod's): subsets of the job's ranks with their own engine each (negotiation or
  // call order as the Runtime's, response cache, fusion, backend group: a Gloo context, an MPI
  // communicator, an NCCL communicator, the shared-memory segment of the members on each host; the
  // contract: runtime/process_set_table.h). Every collective above takes a `process_set` id (0, the
  // default: the whole job); in a set, ranks, sizes, splits and results are the set's, in the order of
  // its members' job ranks, while a broadcast's root is a job rank that must be a member. A call on a
  // set this rank is not in, or one not registered, fails at once with a one-line error naming the
  // set and this rank, without breaking anything. Collectives of different sets run concurrently.
  // AddProcessSet and RemoveProcessSet must be called by every rank of the job, in the same order,
  // before the first collective (static) or at any time after (dynamic, Horovod's
  // HOROVOD_DYNAMIC_PROCESS_SETS); AddProcessSet returns the new set's id (1, 2, ... in the order
  // added, never reused) and blocks on its members until all have arrived. RemoveProcessSet refuses a
  // set with collectives still pending on this rank, and the global set.
  StatusOr<int> AddProcessSet(const std::vector<int>& ranks);
  Status RemoveProcessSet(int process_set);
  // This rank's place in the set and the set's size; an error for an id not registered (rank: also
  // for a set this rank is not in). ProcessSetIncluded: whether this rank is a member.
  StatusOr<int> ProcessSetRank(int process_set) const;
  StatusOr<int> ProcessSetSize(int process_set) const;
  StatusOr<bool> ProcessSetIncluded(int process_set) const;
  // The sets registered now, their ids ascending, the global set's 0 first; and one's job ranks.
  std::vector<int> ProcessSetIds() const;
  StatusOr<std::vector<int>> ProcessSetRanks(int process_set) const;

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

  // Horovod's start_timeline and stop_timeline, for this rank: from StartTimeline on, the negotiated
  // engine (CollectiveOrder::kNegotiated) writes what it does to `path`, the Chrome-trace file
  // hvdrun's --timeline-filename writes for each rank (docs/timeline.md; `mark_cycles`: its
  // --timeline-mark-cycles), together with the engines of the process sets this rank is in when it
  // starts; StopTimeline closes the file, complete, before it returns. Runtimes of one process that
  // start a timeline at the same path write one file. Thread-safe with the collectives. Errors: a
  // timeline already written (hvdrun --timeline-filename, or a StartTimeline not yet stopped), a
  // call-order Runtime, a file that cannot be created. StopTimeline without a start does nothing.
  Status StartTimeline(const std::string& path, bool mark_cycles = false);
  Status StopTimeline();

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
  // The shape of the tensor behind the negotiated collectives this thread submits from now on (empty,
  // the default: none). The ranks then compare shapes as Horovod's coordinator does: every dimension
  // of an allreduce, broadcast or reducescatter, and the number of dimensions and those after the
  // first of an allgather or alltoall. A name submitted with another shape on another rank fails on
  // every rank with a one-line error naming both ranks and shapes, like any other mismatch, and the
  // runtime goes on. A shape whose elements are not an allreduce's, broadcast's or reducescatter's
  // count refuses that call. Per thread, for every Runtime; hvdrun.torch gives each tensor's own.
  static void SetCallerShape(std::vector<int64_t> shape);

 private:
  Runtime(std::unique_ptr<RuntimeImpl> impl, std::unique_ptr<ElasticMembership> elastic);
  std::unique_ptr<RuntimeImpl> impl_;
  std::unique_ptr<ElasticMembership> elastic_;  // null outside elastic jobs; ends after impl_
  std::unique_ptr<ProcessSetTable> sets_;       // ends first: sets drain before the job's engine
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_H_
