// hvdrun._C's runtimes (python/module_runtimes.h).
#include "python/module_runtimes.h"

#include <pybind11/pybind11.h>

#include <cstdint>
#include <functional>
#include <memory>
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

// The runtime, after checking that init() was called; null in a job of one rank.
const Runtime* Require(const char* call) {
  RequireInit(call);
  return g_runtime.get();
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
}  // namespace

void Check(const Status& status) {
  if (!status.ok()) throw std::runtime_error(status.message());
}

void RequireInit(const char* call) {
  if (!g_initialized) {
    throw std::runtime_error(std::string("hvdrun.torch.") + call + ": call hvdrun.torch.init() first");
  }
}

void* Address(uintptr_t address) {
  return reinterpret_cast<void*>(address);  // NOLINT(performance-no-int-to-ptr)
}

Runtime* HostRuntime() { return g_runtime.get(); }

bool Initialized() { return g_initialized; }

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

Runtime* RuntimeFor(const std::optional<uintptr_t>& stream) {
  if (stream && g_device_runtime) {
    Runtime::SetCallerStream(Address(*stream));
    return g_device_runtime.get();
  }
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

std::string Backend() {
  RequireInit("backend");
  const Runtime* runtime = g_device_runtime ? g_device_runtime.get() : g_runtime.get();
  return runtime != nullptr ? std::string(BackendName(runtime->backend())) : std::string("none");
}

std::string DeviceBackend() {
  RequireInit("device_backend");
  return g_device_runtime ? std::string(BackendName(g_device_runtime->backend())) : std::string("none");
}

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

int NcclVersionCode() {
#ifdef HVDRUN_NCCL_VERSION_CODE
  return HVDRUN_NCCL_VERSION_CODE;
#else
  return 0;
#endif
}

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

bool MpiThreadsSupported() {
  RequireInit("mpi_threads_supported");
  if (!g_runtime) {
    throw std::invalid_argument("hvdrun.torch.mpi_threads_supported: a job of one rank has no MPI");
  }
  StatusOr<bool> supported = g_runtime->MpiThreadsSupported();
  Check(supported.status());
  return supported.value();
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

int ProcessSetRank(int set) { return ProcessSetValue("process_set_rank", &Runtime::ProcessSetRank, set, 0); }
int ProcessSetSize(int set) { return ProcessSetValue("process_set_size", &Runtime::ProcessSetSize, set, 1); }

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

}  // namespace hvdrun::python
