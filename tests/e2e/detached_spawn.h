// How the tests start programs: posix_spawn of an absolute path, with no signal blocked and every
// signal at its default disposition (whatever the test process blocks or ignores), detached from the
// test's process group. The tests start programs their own way, not through hvdrun's spawner
// (common/process/process_spawner.h), so that a fault there cannot hide itself: the programs under test
// (process_runner.h), and what the test cluster leaves running (each host's sshd, the run's reaper).
#ifndef HVDRUN_TESTS_E2E_DETACHED_SPAWN_H_
#define HVDRUN_TESTS_E2E_DETACHED_SPAWN_H_

#include <spawn.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun::e2e {

enum class Detach {
  // A process group of its own: a killpg reaches it and what it starts; a terminal's Ctrl-C does not.
  kProcessGroup,
  // A session of its own: nothing sent to the test's process group, session or terminal reaches it.
  kSession,
};

// Starts `argv` (argv[0] an absolute path; no PATH lookup) with `actions` applied to its
// descriptors, in `env` (NAME=VALUE entries; nullptr: the test's own environment). Returns its pid,
// or an error holding only the reason (strerror), for the caller to say what it was starting.
StatusOr<pid_t> SpawnDetached(const std::vector<std::string>& argv, const posix_spawn_file_actions_t& actions,
                              Detach detach, const std::vector<std::string>* env = nullptr);

}  // namespace hvdrun::e2e

#endif  // HVDRUN_TESTS_E2E_DETACHED_SPAWN_H_
