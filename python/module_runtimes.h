// hvdrun._C's runtimes: the process's host runtime and, in a --nccl job, its device runtime; init()
// and shutdown(); what the job is (rank, size, backends); barrier, join and process sets, which
// concern every runtime of the rank.
//
// Runtimes are created by Init and destroyed by Shutdown (or at exit), inside an hvdrun job from
// its environment, with CollectiveOrder::kNegotiated so that named collectives may be submitted in
// any order, as in Horovod. The host runtime takes host memory: the job's Gloo or MPI backend, and
// Gloo in a --nccl job. A --nccl job also has a device runtime, over NCCL, for device memory of the
// rank's device (RuntimeFor). Both runtimes are created in the same order on every rank (the device
// one first), so that their scopes in the job's store match. Outside hvdrun the process is a job of
// one rank, with no runtime (HostRuntime and RuntimeFor return null).
//
// Every call that waits (Barrier, Join, Shutdown, the process sets' calls) releases the GIL. Failures
// raise RuntimeError with libhvdrun's one-line message (Check); a call made before Init raises
// RuntimeError naming it (RequireInit). Called with the GIL held, as pybind11 calls them.
#ifndef HVDRUN_PYTHON_MODULE_RUNTIMES_H_
#define HVDRUN_PYTHON_MODULE_RUNTIMES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hvdrun/runtime.h"
#include "hvdrun/status.h"

namespace hvdrun::python {

// Raises RuntimeError with `status`'s message unless it is OK.
void Check(const Status& status);
// Raises RuntimeError unless Init was called: "hvdrun.torch.CALL: call hvdrun.torch.init() first".
void RequireInit(const char* call);
// Python hands buffers over as the integers tensor.data_ptr() returns.
void* Address(uintptr_t address);
// The host runtime; null before Init, after Shutdown, and in a job of one rank.
Runtime* HostRuntime();
// Whether Init was called (and Shutdown not since).
bool Initialized();
// The backend hvdrun gave this rank ("gloo", "mpi", "nccl"), before init(); "none" outside hvdrun.
std::string JobBackend();
void Init();
// Waits for what is queued, then destroys the runtimes.
void Shutdown();
// The runtime a call goes to: with a `stream`, the device runtime where the job has one, told that
// the buffers are written on that stream (Runtime::SetCallerStream); otherwise (and for host memory in
// jobs without a device runtime, which ignore streams) the host runtime. Null in a job of one rank.
Runtime* RuntimeFor(const std::optional<uintptr_t>& stream);
int Rank();
int Size();
int LocalRank();
int LocalSize();
int CrossRank();
int CrossSize();
// Elastic jobs (Runtime::round, Runtime::HostsUpdated): 0 and false in other jobs and in a job of one
// rank.
int Round();
bool HostsUpdated();
// The ErrorKind (hvdrun/error_kind.h) of an error's message, as this module raised it: "recoverable",
// "removed" or "other".
std::string ErrorKindOf(const std::string& message);
// The job's backend ("nccl" in a --nccl job, whose host runtime is Gloo); "none" in a job of one rank.
std::string Backend();
// The backend of the device runtime, which takes CUDA memory of the rank's device ("nccl"); "none"
// where there is none (CUDA tensors are then staged through host memory).
std::string DeviceBackend();
// Names the backends built into this libhvdrun (the same build as this module).
std::vector<std::string> BuiltBackends();
// NCCL_VERSION_CODE of the nccl.h libhvdrun's nccl backend was built against (as Horovod's
// nccl_built() returns it), 0 when libhvdrun has no nccl backend.
int NcclVersionCode();
// On the host runtime; nothing in a job of one rank.
void Barrier(int process_set);
// Runtime::StartTimeline and StopTimeline on every runtime of this rank (a --nccl job's two share the
// file); nothing in a job of one rank, which has no engine.
void StartTimeline(const std::string& path, bool mark_cycles);
void StopTimeline();
// Runtime::MpiThreadsSupported of the host runtime (the one an --mpi job runs over); a job of one
// rank raises ValueError.
bool MpiThreadsSupported();
// Process sets (Runtime::AddProcessSet): registered on every runtime of this rank, the device one
// first as they were created, so that a set's id is the same on both. In a job of one rank there is
// no runtime and no set but the global one. Adding waits for the set's members (GIL released).
int AddProcessSet(const std::vector<int>& ranks);
void RemoveProcessSet(int process_set);
// Runtime::ProcessSetRank or ProcessSetSize of the host runtime; 0 and 1 in a job of one rank.
int ProcessSetRank(int set);
int ProcessSetSize(int set);
// Runtime::Join on every runtime of this rank: the rank that joined the host runtime last; 0 in a job
// of one rank. A --nccl job joins its two runtimes at the same time (the device one on a thread of its
// own), so that this rank stands in for the others' collectives on both while they go on submitting
// to either.
int Join();

}  // namespace hvdrun::python

#endif  // HVDRUN_PYTHON_MODULE_RUNTIMES_H_
