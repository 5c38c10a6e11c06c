// Exit codes of hvdrun and hvdrun-agent that are hvdrun's own. docs/errors.md is the reference.
// Any other code hvdrun exits with is either the first failing rank's (its exit code, or 128+N
// when signal N ended it, a shell's convention), 1 when the first failure is a rank whose agent
// vanished, or 128+N when signal N stopped hvdrun itself.
#ifndef HVDRUN_COMMON_EXIT_CODES_H_
#define HVDRUN_COMMON_EXIT_CODES_H_

namespace hvdrun {

// Bad command line, host list or hostfile; nothing was started.
inline constexpr int kExitUsage = 2;
// The job could not start: an agent did not start, did not answer in time, spoke another protocol
// version, or broke the protocol. Also hvdrun-agent's code for a protocol error.
inline constexpr int kExitLaunchFailure = 3;
// Every rank succeeded, but the results directory (--results) could not be written.
inline constexpr int kExitResults = 4;
// hvdrun --check: every host answered, but their hvdrun-agent, MPI, Gloo, NCCL or CUDA versions
// differ.
inline constexpr int kExitHostMismatch = 5;
// The stall check ended the job: no rank completed a collective for the stall shutdown time
// (--stall-check-shutdown-time-seconds, HOROVOD_STALL_SHUTDOWN_TIME_SECONDS) while some rank waited.
inline constexpr int kExitStall = 6;
// An elastic job failed as a whole: fewer than --min-np slots for --elastic-timeout, or a
// re-formation past --reset-limit (its report names the hosts lost and why).
inline constexpr int kExitElasticFailed = 7;
// A rank's program exists but cannot be executed (as in a shell).
inline constexpr int kExitNotExecutable = 126;
// A rank's program (or its working directory) was not found on its host (as in a shell).
inline constexpr int kExitNotFound = 127;

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_EXIT_CODES_H_
