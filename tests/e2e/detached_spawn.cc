#include "tests/e2e/detached_spawn.h"

#include <signal.h>

#include <cstdint>
#include <cstring>

extern char** environ;

namespace hvdrun::e2e {

namespace {

std::vector<char*> PointersTo(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

StatusOr<pid_t> SpawnDetached(const std::vector<std::string>& argv, const posix_spawn_file_actions_t& actions,
                              Detach detach, const std::vector<std::string>* env) {
  if (argv.empty()) return Status::Error("empty command");
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t no_signals;
  sigemptyset(&no_signals);
  sigset_t all_signals;
  sigfillset(&all_signals);
  posix_spawnattr_setsigmask(&attributes, &no_signals);
  posix_spawnattr_setsigdefault(&attributes, &all_signals);
  int flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (detach == Detach::kProcessGroup) {
    posix_spawnattr_setpgroup(&attributes, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  } else {
    flags |= POSIX_SPAWN_SETSID;
  }
  posix_spawnattr_setflags(&attributes, static_cast<int16_t>(flags));
  std::vector<std::string> args = argv;
  std::vector<char*> arg_pointers = PointersTo(args);
  std::vector<std::string> env_copy = env != nullptr ? *env : std::vector<std::string>{};
  std::vector<char*> env_pointers = PointersTo(env_copy);
  pid_t pid = -1;
  int error = ::posix_spawn(&pid, arg_pointers[0], &actions, &attributes, arg_pointers.data(),
                            env != nullptr ? env_pointers.data() : environ);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) return Status::Error(std::strerror(error));
  return pid;
}

}  // namespace hvdrun::e2e
