// Horovod's runtime variables beyond its tuning (common/env_names.h, docs/horovodrun.md), read at
// init by Runtime::InitFromEnvironment: each checked (a bad value is an error naming the variable),
// applied where libhvdrun can do what Horovod does, and otherwise named in a note that says what
// libhvdrun does instead — never ignored without a word.
//
//   HOROVOD_GLOO_TIMEOUT_SECONDS    RuntimeOptions::timeout (default 30 s, Horovod's): the bootstrap's
//   HVDRUN_WATCHDOG_SECONDS         NegotiationOptions::watchdog (runtime/collective_watchdog.h)
//   HOROVOD_START_TIMEOUT           how long the rank tries to reach hvdrun's rendezvous service
//   HOROVOD_STALL_CHECK_DISABLE, HOROVOD_STALL_SHUTDOWN_TIME_SECONDS   NegotiationOptions
//   HOROVOD_LOG_LEVEL, HOROVOD_LOG_HIDE_TIME                         RuntimeMessages below
//   HOROVOD_CPU_OPERATIONS, HOROVOD_CONTROLLER   the backend for host memory: gloo in a job hvdrun
//                                   started with --mpi; mpi only in such a job
//   HOROVOD_GLOO_IFACE              RuntimeOptions::host_address: that interface's address
//   HOROVOD_THREAD_AFFINITY         RuntimeOptions::collective_thread_cpu
//   HOROVOD_HIERARCHICAL_ALLGATHER, HOROVOD_TORUS_ALLREDUCE, HOROVOD_MPI_THREADS_DISABLE,
//   HOROVOD_NUM_NCCL_STREAMS, HOROVOD_HIERARCHICAL_ALLREDUCE (where it cannot run)   notes
#ifndef HVDRUN_RUNTIME_HOROVOD_ENVIRONMENT_H_
#define HVDRUN_RUNTIME_HOROVOD_ENVIRONMENT_H_

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/environment_reader.h"
#include "common/horovod_variables.h"
#include "hvdrun/options.h"
#include "hvdrun/status.h"

namespace hvdrun {

// How libhvdrun's own messages are written (HOROVOD_LOG_LEVEL, HOROVOD_LOG_HIDE_TIME): on stderr,
// "libhvdrun: " first, from `level` up, stamped with the local time when asked (Horovod stamps by
// default; libhvdrun's lines are unstamped unless HOROVOD_LOG_HIDE_TIME=0 asks).
struct RuntimeMessages {
  LogLevel level = LogLevel::kWarning;
  bool time_stamps = false;

  bool Shows(LogLevel severity) const { return severity >= level; }
  void Print(LogLevel severity, const std::string& line) const;
};

struct HorovodSettings {
  RuntimeMessages messages;
  // One line each, to be shown once per job (by rank 0): a setting that cannot apply, and what
  // libhvdrun does instead.
  std::vector<std::string> notes;
  // HOROVOD_START_TIMEOUT; nullopt: RuntimeOptions::timeout.
  std::optional<std::chrono::seconds> start_timeout;
};

// Reads the variables into `options`, whose rank, sizes, backend (the job's: HVDRUN_BACKEND) and
// host address are read already; sets negotiation.warn to print through the messages.
StatusOr<HorovodSettings> ReadHorovodSettings(const EnvironmentReader& env, RuntimeOptions& options);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_HOROVOD_ENVIRONMENT_H_
