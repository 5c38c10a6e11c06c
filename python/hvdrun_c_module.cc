// hvdrun._C: libhvdrun's collectives for Python (python/hvdrun/torch/ builds Horovod's API on it).
//
// Buffers cross as addresses (a tensor's data_ptr()), element counts and type names, so that this
// module depends on libhvdrun and Python only, not on libtorch's C++ ABI: the Python layer checks
// that a tensor is contiguous and where it lives, keeps it alive until its handle completes, and
// never writes it meanwhile (runtime.h's contract on buffers).
//
// Runtimes are created by init() and destroyed by shutdown() (or at exit), inside an hvdrun job from
// its environment, with CollectiveOrder::kNegotiated so that named collectives may be submitted in
// any order, as in Horovod. The host runtime takes host memory: the job's Gloo or MPI backend, and
// Gloo in a --nccl job. A --nccl job also has a device runtime, over NCCL, for device memory of the
// rank's device: a call given a `stream` (a cudaStream_t, 0 for the default stream) goes there, after
// Runtime::SetCallerStream(stream), so that it reads its buffers once that stream has written them.
// Both runtimes are created in the same order on every rank (the device one first), so that their
// scopes in the job's store match. Outside hvdrun the process is a job of one rank, with no runtime,
// in which every collective is the identity (a copy where the output is another buffer; the Python
// layer never gives device memory to a job without a device runtime).
//
// Every call that waits (Handle.wait, GatherHandle.wait, barrier, join, shutdown) releases the GIL, so
// that autograd's hooks and other Python threads run meanwhile. Failures raise RuntimeError with
// libhvdrun's one-line message; a collective that failed leaves the runtime broken (runtime.h).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hvdrun/error_kind.h"
#include "hvdrun/runtime.h"
#include "hvdrun/status.h"
#include "hvdrun/types.h"

namespace py = pybind11;

namespace hvdrun::python {
namespace {

// The process's host runtime; null before init(), after shutdown(), and in a job of one rank.
std::unique_ptr<Runtime> g_runtime;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
// The device runtime of a --nccl job (CUDA memory of the rank's device); null otherwise.
std::unique_ptr<Runtime> g_device_runtime;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
bool g_initialized = false;                 // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

void Check(const Status& status) {
  if (!status.ok()) throw std::runtime_error(status.message());
}

void RequireInit(const char* call) {
  if (!g_initialized) {
    throw std::runtime_error(std::string("hvdrun.torch.") + call + ": call hvdrun.torch.init() first");
  }
}

DataType TypeByName(const std::string& name) {
  std::optional<DataType> type = ParseDataType(name);
  if (!type) throw std::invalid_argument("hvdrun._C: unknown data type '" + name + "'");
  return *type;
}

ReduceOp OpByName(const std::string& name) {
  std::optional<ReduceOp> op = ParseReduceOp(name);
  if (!op) throw std::invalid_argument("hvdrun._C: unknown reduce op '" + name + "'");
  return *op;
}

// Python hands buffers over as the integers tensor.data_ptr() returns.
void* Address(uintptr_t address) {
  return reinterpret_cast<void*>(address);  // NOLINT(performance-no-int-to-ptr)
}

// An asynchronous collective; in a job of one rank it completed when it was made.
class Handle {
 public:
  Handle() = default;
  explicit Handle(CollectiveHandle handle) : handle_(std::move(handle)) {}
  void Wait() {
    if (!handle_) return;
    Status status;
    {
      py::gil_scoped_release release;
      status = handle_->Wait();
    }
    Check(status);
  }
  bool Ready() const { return !handle_ || handle_->Ready(); }

 private:
  std::optional<CollectiveHandle> handle_;
};

// The host runtime's options: the job's, except in a --nccl job, whose host memory goes over Gloo
// (which every libhvdrun with nccl also has, through the same rendezvous) and whose timeline is the
// device runtime's: one file per rank, written and sent to hvdrun by one runtime.
void HostRuntimeOptions(RuntimeOptions& options) {
  if (options.backend == BackendKind::kNccl) {
    options.backend = BackendKind::kGloo;
    options.timeline = TimelineSettings{};
  }
}

std::unique_ptr<Runtime> InitRuntime(const std::function<void(RuntimeOptions&)>& adjust) {
  std::optional<StatusOr<std::unique_ptr<Runtime>>> runtime;
  {
    py::gil_scoped_release release;
    runtime.emplace(Runtime::InitFromEnvironment(nullptr, CollectiveOrder::kNegotiated, adjust));
  }
  Check(runtime->status());
  return std::move(*runtime).value();
}

// The backend hvdrun gave this rank ("gloo", "mpi", "nccl"), before init(); "none" outside hvdrun.
std::string JobBackend() {
  if (!Runtime::LaunchedByHvdrun()) return "none";
  StatusOr<BackendKind> backend = Runtime::BackendFromEnvironment();
  Check(backend.status());
  return std::string(BackendName(backend.value()));
}

void Init() {
  if (g_initialized) return;
  if (Runtime::LaunchedByHvdrun()) {
    StatusOr<BackendKind> backend = Runtime::BackendFromEnvironment();
    Check(backend.status());
    std::unique_ptr<Runtime> device;
    if (backend.value() == BackendKind::kNccl) device = InitRuntime(nullptr);
    g_runtime = InitRuntime(HostRuntimeOptions);
    g_device_runtime = std::move(device);
  }
  g_initialized = true;
}

void Shutdown() {
  py::gil_scoped_release release;
  g_device_runtime.reset();  // waits for what is queued
  g_runtime.reset();
  g_initialized = false;
}

// The runtime a call goes to: with a `stream`, the device runtime where the job has one, told that
// the buffers are written on that stream; otherwise (and for host memory in jobs without a device
// runtime, which ignore streams) the host runtime. Null in a job of one rank.
Runtime* RuntimeFor(const std::optional<uintptr_t>& stream) {
  if (stream && g_device_runtime) {
    Runtime::SetCallerStream(Address(*stream));
    return g_device_runtime.get();
  }
  return g_runtime.get();
}

// The runtime, after checking that init() was called; null in a job of one rank.
const Runtime* Require(const char* call) {
  RequireInit(call);
  return g_runtime.get();
}

int Rank() {
  const Runtime* runtime = Require("rank");
  return runtime != nullptr ? runtime->rank() : 0;
}
int Size() {
  const Runtime* runtime = Require("size");
  return runtime != nullptr ? runtime->size() : 1;
}
int LocalRank() {
  const Runtime* runtime = Require("local_rank");
  return runtime != nullptr ? runtime->local_rank() : 0;
}
int LocalSize() {
  const Runtime* runtime = Require("local_size");
  return runtime != nullptr ? runtime->local_size() : 1;
}
int CrossRank() {
  const Runtime* runtime = Require("cross_rank");
  return runtime != nullptr ? runtime->cross_rank() : 0;
}
int CrossSize() {
  const Runtime* runtime = Require("cross_size");
  return runtime != nullptr ? runtime->cross_size() : 1;
}

// Elastic jobs (Runtime::round, Runtime::HostsUpdated): 0 and false in other jobs and in a job of one
// rank.
int Round() {
  const Runtime* runtime = Require("round");
  return runtime != nullptr ? runtime->round() : 0;
}
bool HostsUpdated() {
  const Runtime* runtime = Require("hosts_updated");
  if (runtime == nullptr) return false;
  StatusOr<bool> updated = runtime->HostsUpdated();
  Check(updated.status());
  return updated.value();
}

// The ErrorKind (hvdrun/error_kind.h) of an error's message, as this module raised it: "recoverable",
// "removed" or "other".
std::string ErrorKindOf(const std::string& message) {
  switch (KindOf(Status::Error(message))) {
    case ErrorKind::kRecoverable:
      return "recoverable";
    case ErrorKind::kRemoved:
      return "removed";
    case ErrorKind::kOther:
      break;
  }
  return "other";
}

// The job's backend ("nccl" in a --nccl job, whose host runtime is Gloo); "none" in a job of one rank.
std::string Backend() {
  RequireInit("backend");
  const Runtime* runtime = g_device_runtime ? g_device_runtime.get() : g_runtime.get();
  return runtime != nullptr ? std::string(BackendName(runtime->backend())) : std::string("none");
}

// The backend of the device runtime, which takes CUDA memory of the rank's device ("nccl"); "none"
// where there is none (CUDA tensors are then staged through host memory).
std::string DeviceBackend() {
  RequireInit("device_backend");
  return g_device_runtime ? std::string(BackendName(g_device_runtime->backend())) : std::string("none");
}

// Names the backends built into this libhvdrun (the same build as this module).
std::vector<std::string> BuiltBackends() {
  std::vector<std::string> built;
#ifdef HVDRUN_HAVE_GLOO
  built.emplace_back("gloo");
#endif
#ifdef HVDRUN_HAVE_MPI
  built.emplace_back("mpi");
#endif
#ifdef HVDRUN_HAVE_NCCL
  built.emplace_back("nccl");
#endif
  return built;
}

// NCCL_VERSION_CODE of the nccl.h libhvdrun's nccl backend was built against (as Horovod's
// nccl_built() returns it), 0 when libhvdrun has no nccl backend.
int NcclVersionCode() {
#ifdef HVDRUN_NCCL_VERSION_CODE
  return HVDRUN_NCCL_VERSION_CODE;
#else
  return 0;
#endif
}

void CopyIfApart(uintptr_t send, uintptr_t recv, size_t bytes) {
  if (send != recv && bytes > 0) std::memcpy(Address(recv), Address(send), bytes);
}

// `compression`: a CompressionFormat's name ("bf16", "fp8", ...) for this allreduce's wire format, or
// empty for the job's (hvdrun --compression). `stream`: see RuntimeFor(). `prescale`, `postscale`:
// Runtime::ScaleFactors, applied by the engine; a job of one rank has none, and its caller scales.
Handle AllreduceAsync(const std::string& name, uintptr_t send, uintptr_t recv, size_t count,
                      const std::string& type_name, const std::string& op_name,
                      const std::string& compression, const std::optional<uintptr_t>& stream, int process_set,
                      double prescale, double postscale) {
  RequireInit("allreduce");
  const DataType type = TypeByName(type_name);
  const ReduceOp op = OpByName(op_name);
  std::optional<CompressionFormat> format;
  if (!compression.empty()) {
    format = ParseCompressionFormat(compression);
    if (!format) throw std::invalid_argument("hvdrun._C: unknown compression format '" + compression + "'");
  }
  Runtime* runtime = RuntimeFor(stream);
  if (runtime == nullptr) {
    CopyIfApart(send, recv, count * DataTypeSize(type));
    return Handle();
  }
  return Handle(runtime->AllreduceAsync(name, Address(send), Address(recv), count, type, op,
                                        format.value_or(runtime->compression().format),
                                        Runtime::ScaleFactors{prescale, postscale}, process_set));
}

// `name` empty: named by the runtime, by its place in this rank's sequence of unnamed calls.
// `stream`: see RuntimeFor().
Handle BroadcastAsync(const std::string& name, uintptr_t buffer, size_t count, const std::string& type_name,
                      int root, const std::optional<uintptr_t>& stream, int process_set) {
  RequireInit("broadcast");
  const DataType type = TypeByName(type_name);
  if (root < 0 || root >= Size()) {
    throw std::invalid_argument("hvdrun.torch.broadcast: root_rank " + std::to_string(root) +
                                " is not a rank of this job of " + std::to_string(Size()));
  }
  Runtime* runtime = RuntimeFor(stream);
  if (runtime == nullptr) return Handle();
  if (name.empty()) return Handle(runtime->BroadcastAsync(Address(buffer), count, type, root, process_set));
  return Handle(runtime->BroadcastAsync(name, Address(buffer), count, type, root, process_set));
}

// An allgather whose ranks may give different numbers of rows (or an alltoall); the result stays here
// until copied out.
class GatherHandle {
 public:
  // `result` is the one the runtime fills (its address does not move); `handle` completes when it has.
  GatherHandle(std::unique_ptr<AllgatherResult> result, Handle handle)
      : result_(std::move(result)), handle_(std::move(handle)) {}
  void Wait() { handle_.Wait(); }
  bool Ready() const { return handle_.Ready(); }
  std::vector<uint64_t> Counts() const { return result_->counts; }
  // Copies the gathered bytes to `address`, which must hold them (the counts' sum times the type's size).
  void CopyTo(uintptr_t address) const {
    if (!result_->data.empty()) std::memcpy(Address(address), result_->data.data(), result_->data.size());
  }

 private:
  std::unique_ptr<AllgatherResult> result_;
  Handle handle_;
};

// `name` empty: named by the runtime, by its place in this rank's sequence of unnamed calls.
GatherHandle AllgatherAsync(const std::string& name, uintptr_t send, size_t count,
                            const std::string& type_name, size_t row, int process_set) {
  RequireInit("allgather");
  const DataType type = TypeByName(type_name);
  auto result = std::make_unique<AllgatherResult>();
  if (!g_runtime) {
    result->counts = {count};
    result->data.resize(count * DataTypeSize(type));
    if (!result->data.empty()) std::memcpy(result->data.data(), Address(send), result->data.size());
    return GatherHandle(std::move(result), Handle());
  }
  CollectiveHandle handle =
      name.empty()
          ? g_runtime->AllgatherAsync(Address(send), count, type, row, result.get(), process_set)
          : g_runtime->AllgatherAsync(name, Address(send), count, type, row, result.get(), process_set);
  return GatherHandle(std::move(result), Handle(std::move(handle)));
}

// Runtime::AlltoallAsync: `splits[j]` elements of `send` (back to back in rank order) go to rank j;
// the result holds what every rank sent this one. `name` empty: named by the runtime.
GatherHandle AlltoallAsync(const std::string& name, uintptr_t send, const std::vector<uint64_t>& splits,
                           const std::string& type_name, size_t row, int process_set) {
  RequireInit("alltoall");
  const DataType type = TypeByName(type_name);
  auto result = std::make_unique<AlltoallResult>();
  if (!g_runtime) {
    if (splits.size() != 1) {
      throw std::invalid_argument("hvdrun.torch.alltoall: " + std::to_string(splits.size()) +
                                  " splits for a job of 1 rank");
    }
    result->counts = splits;
    result->data.resize(splits[0] * DataTypeSize(type));
    if (!result->data.empty()) std::memcpy(result->data.data(), Address(send), result->data.size());
    return GatherHandle(std::move(result), Handle());
  }
  CollectiveHandle handle =
      name.empty()
          ? g_runtime->AlltoallAsync(Address(send), splits, type, row, result.get(), process_set)
          : g_runtime->AlltoallAsync(name, Address(send), splits, type, row, result.get(), process_set);
  return GatherHandle(std::move(result), Handle(std::move(handle)));
}

// A negotiated collective of equal blocks into the caller's buffer `recv` (size() * count elements),
// Runtime::AllgatherAsync or Runtime::AlltoallAsync of that form: every rank gives the same count, so
// a caller whose ranks' rows differ pads them to the largest first. `stream`: see RuntimeFor() (over
// NCCL both buffers are device memory written on that stream). In a job of one rank both forms copy.
using BlocksCollective = CollectiveHandle (Runtime::*)(const std::string&, const void*, void*, size_t,
                                                       DataType, int);

Handle BlocksAsync(const char* call, BlocksCollective collective, const std::string& name, uintptr_t send,
                   uintptr_t recv, size_t count, const std::string& type_name,
                   const std::optional<uintptr_t>& stream, int process_set) {
  RequireInit(call);
  const DataType type = TypeByName(type_name);
  Runtime* runtime = RuntimeFor(stream);
  if (runtime == nullptr) {
    CopyIfApart(send, recv, count * DataTypeSize(type));
    return Handle();
  }
  return Handle((runtime->*collective)(name, Address(send), Address(recv), count, type, process_set));
}

// Block j of `send` goes to rank j, which receives it as block rank() of `recv`.
Handle AlltoallIntoAsync(const std::string& name, uintptr_t send, uintptr_t recv, size_t count,
                         const std::string& type_name, const std::optional<uintptr_t>& stream,
                         int process_set) {
  return BlocksAsync("alltoall", &Runtime::AlltoallAsync, name, send, recv, count, type_name, stream,
                     process_set);
}

// Every rank's block, in rank order.
Handle AllgatherIntoAsync(const std::string& name, uintptr_t send, uintptr_t recv, size_t count,
                          const std::string& type_name, const std::optional<uintptr_t>& stream,
                          int process_set) {
  return BlocksAsync("allgather", &Runtime::AllgatherAsync, name, send, recv, count, type_name, stream,
                     process_set);
}

// Runtime::ReducescatterAsync: `recv` gets this rank's rows (Horovod's split of count / row rows) of `op`
// over the ranks of `process_set` of `send`, with scale factors as AllreduceAsync's. `stream`: see
// RuntimeFor(). In a job of one rank, a copy.
Handle ReducescatterAsync(const std::string& name, uintptr_t send, uintptr_t recv, size_t count,
                          const std::string& type_name, const std::string& op_name, size_t row,
                          const std::optional<uintptr_t>& stream, int process_set, double prescale,
                          double postscale) {
  RequireInit("reducescatter");
  const DataType type = TypeByName(type_name);
  const ReduceOp op = OpByName(op_name);
  Runtime* runtime = RuntimeFor(stream);
  if (runtime == nullptr) {
    CopyIfApart(send, recv, count * DataTypeSize(type));
    return Handle();
  }
  return Handle(runtime->ReducescatterAsync(name, Address(send), Address(recv), count, type, op, row,
                                            Runtime::ScaleFactors{prescale, postscale}, process_set));
}

// Runtime::StartTimeline and StopTimeline on every runtime of this rank (a --nccl job's two share the
// file); nothing in a job of one rank, which has no engine.
void StartTimeline(const std::string& path, bool mark_cycles) {
  RequireInit("start_timeline");
  if (!g_runtime) return;
  Status status;
  {
    py::gil_scoped_release release;
    status = g_runtime->StartTimeline(path, mark_cycles);
    if (status.ok() && g_device_runtime) {
      status = g_device_runtime->StartTimeline(path, mark_cycles);
      if (!status.ok()) (void)g_runtime->StopTimeline();
    }
  }
  Check(status);
}

// Runtime::MpiThreadsSupported of the host runtime (the one an --mpi job runs over).
bool MpiThreadsSupported() {
  RequireInit("mpi_threads_supported");
  if (!g_runtime) {
    throw std::invalid_argument("hvdrun.torch.mpi_threads_supported: a job of one rank has no MPI");
  }
  StatusOr<bool> supported = g_runtime->MpiThreadsSupported();
  Check(supported.status());
  return supported.value();
}

void StopTimeline() {
  RequireInit("stop_timeline");
  if (!g_runtime) return;
  Status status;
  {
    py::gil_scoped_release release;
    if (g_device_runtime) status = g_device_runtime->StopTimeline();
    if (Status stopped = g_runtime->StopTimeline(); status.ok()) status = stopped;
  }
  Check(status);
}

void Barrier(int process_set) {
  RequireInit("barrier");
  if (!g_runtime) return;
  Status status;
  {
    py::gil_scoped_release release;
    status = g_runtime->Barrier(process_set);
  }
  Check(status);
}

// Process sets (Runtime::AddProcessSet): registered on every runtime of this rank, the device one
// first as they were created, so that a set's id is the same on both. In a job of one rank there is
// no runtime and no set but the global one. Adding waits for the set's members (GIL released).
int AddProcessSet(const std::vector<int>& ranks) {
  RequireInit("add_process_set");
  StatusOr<int> id =
      Status::Error("hvdrun.torch.add_process_set: a job of one rank has no set but the global one");
  {
    py::gil_scoped_release release;
    if (g_device_runtime) id = g_device_runtime->AddProcessSet(ranks);
    if (g_runtime && (!g_device_runtime || id.ok())) id = g_runtime->AddProcessSet(ranks);
  }
  Check(id.status());
  return id.value();
}

void RemoveProcessSet(int process_set) {
  RequireInit("remove_process_set");
  if (!g_runtime) return;
  Status status;
  {
    py::gil_scoped_release release;
    if (g_device_runtime) status = g_device_runtime->RemoveProcessSet(process_set);
    if (status.ok()) status = g_runtime->RemoveProcessSet(process_set);
  }
  Check(status);
}

// Runtime::ProcessSetRank or ProcessSetSize of the host runtime; `alone` in a job of one rank.
int ProcessSetValue(const char* call, StatusOr<int> (Runtime::*value)(int) const, int process_set,
                    int alone) {
  RequireInit(call);
  if (!g_runtime) return alone;
  StatusOr<int> result = (g_runtime.get()->*value)(process_set);
  Check(result.status());
  return result.value();
}
int ProcessSetRank(int set) { return ProcessSetValue("process_set_rank", &Runtime::ProcessSetRank, set, 0); }
int ProcessSetSize(int set) { return ProcessSetValue("process_set_size", &Runtime::ProcessSetSize, set, 1); }

// Runtime::Join on every runtime of this rank: the rank that joined the host runtime last; 0 in a job
// of one rank. A --nccl job joins its two runtimes at the same time (the device one on a thread of its
// own), so that this rank stands in for the others' collectives on both while they go on submitting
// to either.
int Join() {
  RequireInit("join");
  if (!g_runtime) return 0;
  std::optional<StatusOr<int>> last;
  std::optional<StatusOr<int>> device_last;
  {
    py::gil_scoped_release release;
    std::thread device;
    if (g_device_runtime) {
      device = std::thread([&device_last] { device_last.emplace(g_device_runtime->Join()); });
    }
    last.emplace(g_runtime->Join());
    if (device.joinable()) device.join();
  }
  if (device_last) Check(device_last->status());
  Check(last->status());
  return last->value();
}

}  // namespace
}  // namespace hvdrun::python

// NOLINTNEXTLINE(readability-identifier-length,modernize-use-trailing-return-type)
PYBIND11_MODULE(_C, m) {
  namespace hp = hvdrun::python;
  m.doc() = "libhvdrun's collectives over buffer addresses; use hvdrun.torch";
  py::class_<hp::Handle>(m, "Handle")
      .def("wait", &hp::Handle::Wait, "Blocks until the collective has run; raises RuntimeError if it failed")
      .def("ready", &hp::Handle::Ready, "Whether the collective has run");
  m.def("init", &hp::Init);
  m.def("shutdown", &hp::Shutdown);
  m.def("is_initialized", [] { return hp::g_initialized; });
  m.def("rank", &hp::Rank);
  m.def("size", &hp::Size);
  m.def("local_rank", &hp::LocalRank);
  m.def("local_size", &hp::LocalSize);
  m.def("cross_rank", &hp::CrossRank);
  m.def("cross_size", &hp::CrossSize);
  m.def("round", &hp::Round);
  m.def("hosts_updated", &hp::HostsUpdated);
  m.def("error_kind", &hp::ErrorKindOf);
  m.def("backend", &hp::Backend);
  m.def("device_backend", &hp::DeviceBackend);
  m.def("job_backend", &hp::JobBackend);
  m.def("built_backends", &hp::BuiltBackends);
  m.def("nccl_version_code", &hp::NcclVersionCode);
  m.def("allreduce_async", &hp::AllreduceAsync, py::arg("name"), py::arg("send"), py::arg("recv"),
        py::arg("count"), py::arg("dtype"), py::arg("op"), py::arg("compression") = "",
        py::arg("stream") = py::none(), py::arg("process_set") = 0, py::arg("prescale") = 1.0,
        py::arg("postscale") = 1.0);
  m.def("broadcast_async", &hp::BroadcastAsync, py::arg("name"), py::arg("buffer"), py::arg("count"),
        py::arg("dtype"), py::arg("root"), py::arg("stream") = py::none(), py::arg("process_set") = 0);
  py::class_<hp::GatherHandle>(m, "GatherHandle")
      .def("wait", &hp::GatherHandle::Wait,
           "Blocks until the allgather has run; raises RuntimeError if it failed")
      .def("ready", &hp::GatherHandle::Ready, "Whether the allgather has run")
      .def("counts", &hp::GatherHandle::Counts, "Elements gathered from each rank, in rank order")
      .def("copy_to", &hp::GatherHandle::CopyTo, py::arg("address"),
           "Copies the gathered elements to `address`");
  m.def("allgather_async", &hp::AllgatherAsync, py::arg("name"), py::arg("send"), py::arg("count"),
        py::arg("dtype"), py::arg("row"), py::arg("process_set") = 0);
  m.def("alltoall_async", &hp::AlltoallAsync, py::arg("name"), py::arg("send"), py::arg("splits"),
        py::arg("dtype"), py::arg("row"), py::arg("process_set") = 0);
  m.def("allgather_into_async", &hp::AllgatherIntoAsync, py::arg("name"), py::arg("send"), py::arg("recv"),
        py::arg("count"), py::arg("dtype"), py::arg("stream") = py::none(), py::arg("process_set") = 0);
  m.def("alltoall_into_async", &hp::AlltoallIntoAsync, py::arg("name"), py::arg("send"), py::arg("recv"),
        py::arg("count"), py::arg("dtype"), py::arg("stream") = py::none(), py::arg("process_set") = 0);
  m.def("reducescatter_async", &hp::ReducescatterAsync, py::arg("name"), py::arg("send"), py::arg("recv"),
        py::arg("count"), py::arg("dtype"), py::arg("op"), py::arg("row"), py::arg("stream") = py::none(),
        py::arg("process_set") = 0, py::arg("prescale") = 1.0, py::arg("postscale") = 1.0);
  m.def("barrier", &hp::Barrier, py::arg("process_set") = 0);
  m.def("start_timeline", &hp::StartTimeline, py::arg("path"), py::arg("mark_cycles") = false);
  m.def("stop_timeline", &hp::StopTimeline);
  m.def("mpi_threads_supported", &hp::MpiThreadsSupported);
  m.def("add_process_set", &hp::AddProcessSet, py::arg("ranks"),
        "Registers a process set of these job ranks on every runtime; returns its id");
  m.def("remove_process_set", &hp::RemoveProcessSet, py::arg("process_set"));
  m.def("process_set_rank", &hp::ProcessSetRank, py::arg("process_set"));
  m.def("process_set_size", &hp::ProcessSetSize, py::arg("process_set"));
  m.def("join", &hp::Join, "Blocks until every rank has joined; returns the rank that joined last");
}
