// The system programs the test cluster is built with (ip, ssh-keygen, sshd, ...): finding them, and
// running one so that a failure becomes one Status line naming the command and what it printed.
// Thread-compatible: no shared state.
#ifndef HVDRUN_TESTS_CLUSTER_CHECKED_COMMAND_H_
#define HVDRUN_TESTS_CLUSTER_CHECKED_COMMAND_H_

#include <chrono>
#include <string>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun::cluster {

// The limit of one setup command (ip, ssh-keygen): far above what any needs, so that a hung one
// fails the cluster's creation instead of the test's timeout.
inline constexpr std::chrono::milliseconds kCommandTimeout{10'000};

// The absolute path of the program `name`: searched in PATH, then in /usr/sbin, /sbin, /usr/bin and
// /bin (root's programs, which the PATH of a test may lack). Empty when there is none.
std::string FindProgram(const std::string& name);

// Runs `argv` (argv[0] an absolute path; no shell) with stdin from /dev/null, and returns what it
// wrote to stdout when it exits 0 within `timeout`. Otherwise an error such as
//   'ip -n hvdt12-1-switch link add br0 type bridge' failed (exit 2): RTNETLINK answers: File exists
// quoting the program by its base name and the last line it wrote to stderr.
StatusOr<std::string> RunChecked(const std::vector<std::string>& argv,
                                 std::chrono::milliseconds timeout = kCommandTimeout);

// `argv` as one line for messages: the program by its base name, arguments separated by spaces.
std::string CommandLine(const std::vector<std::string>& argv);

}  // namespace hvdrun::cluster

#endif  // HVDRUN_TESTS_CLUSTER_CHECKED_COMMAND_H_
