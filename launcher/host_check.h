// HostCheck: `hvdrun --check`. Starts every host's agent (locally or over SSH, as a job would),
// asks it for its host's facts (common/host/host_facts.h), prints a table per host and the
// controller a job with the same options would use (and why), and starts no rank.
//
// Exit code: 0 when every host answered with the same versions (hvdrun-agent, MPI, Gloo, NCCL,
// CUDA); kExitLaunchFailure when a host could not be reached or its agent did not answer within
// --start-timeout (each such host gets its one-line reason, as a job's start would print it);
// kExitHostMismatch when all answered but a version differs (a line per differing fact names
// each value and its hosts). With --results DIR, the facts are also written to DIR/hosts/<host>.json.
// Not thread-safe; runs on hvdrun's main thread.
#ifndef HVDRUN_LAUNCHER_HOST_CHECK_H_
#define HVDRUN_LAUNCHER_HOST_CHECK_H_

#include <string>
#include <vector>

#include "common/protocol/agent_protocol.h"
#include "launcher/launch_options.h"

namespace hvdrun {

// One host's outcome, as the table shows it.
struct HostCheckResult {
  std::string host;
  // "local (no SSH)", "ok (10.0.0.2)", "none: through srun (10.0.0.2)"; empty when the host failed
  std::string ssh;
  std::string error;  // "<stage>: <reason>" when the host failed; empty when it answered
  protocol::AgentHello hello;
};

// The facts whose values must agree across hosts.
inline constexpr const char* kCheckedVersionKeys[] = {"hvdrun_agent", "mpi", "gloo", "nccl", "cuda"};

// The table of one host: a header line, then a `  key  value` row per fact.
std::string FormatHostCheck(const HostCheckResult& result);

// One line per fact of kCheckedVersionKeys whose value differs among the answered hosts
// ("mpi differs: 'A' on server1, server2; 'B' on server3"); empty when all agree.
std::vector<std::string> VersionMismatches(const std::vector<HostCheckResult>& results);

// Runs the check; returns hvdrun's exit code.
int RunHostCheck(const LaunchOptions& options, const std::string& local_agent_path);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_HOST_CHECK_H_
