// A process's end in words, for every message hvdrun, hvdrun-agent and hvdrun-lab print about one:
// "exit code 3", "killed by SIGTERM", and the signal names of hvdrun's failure table ("SIGTERM").
// Pure functions; thread-safe.
#ifndef HVDRUN_COMMON_WAIT_STATUS_H_
#define HVDRUN_COMMON_WAIT_STATUS_H_

#include <string>

namespace hvdrun {

// "SIGSEGV" for 11; "signal 99" for a number without a name.
std::string SignalName(int signal);

// A wait status as waitpid gives it: "exit code 3", "killed by SIGTERM" ("killed by signal 99" for
// a signal without a name); "ended" for a status that is neither an exit nor a signal's end.
std::string DescribeWaitStatus(int wait_status);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_WAIT_STATUS_H_
