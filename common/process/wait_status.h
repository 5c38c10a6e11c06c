// A process's end in words, for every message hvdrun, hvdrun-agent and hvdrun-lab print about one:
// "exit code 3", "killed by SIGTERM", and the signal names of hvdrun's failure table ("SIGTERM").
// Pure functions; thread-safe.
#ifndef HVDRUN_COMMON_PROCESS_WAIT_STATUS_H_
#define HVDRUN_COMMON_PROCESS_WAIT_STATUS_H_

#include <string>

namespace hvdrun {

// "SIGSEGV" for 11; "signal 99" for a number without a name.
std::string SignalName(int signal);

// How a process ended, for ranks (the agent protocol's RankExited and the rank records under
// mpirun carry its two fields), mpirun and hvdrun-lab's runs alike.
struct ExitStatus {
  // The process's exit code, or, as a shell says it, 128+N when signal N ended it.
  int exit_code = 0;
  int signal = 0;  // the signal that ended it, or 0

  // From a wait status as waitpid gives it (one that is neither an exit nor a signal's end: 0).
  static ExitStatus FromWaitStatus(int wait_status);
  bool succeeded() const { return exit_code == 0 && signal == 0; }
  // "exit code 3", "killed by SIGTERM" ("killed by signal 99" for a signal without a name).
  std::string Describe() const;
};

// ExitStatus::FromWaitStatus(wait_status).Describe(); "ended" for a status that is neither an
// exit nor a signal's end.
std::string DescribeWaitStatus(int wait_status);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PROCESS_WAIT_STATUS_H_
