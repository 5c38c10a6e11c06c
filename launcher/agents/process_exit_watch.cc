#include "launcher/agents/process_exit_watch.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace hvdrun {

ProcessExitWatch ProcessExitWatch::Of(pid_t pid) {
  ProcessExitWatch watch;
#ifdef SYS_pidfd_open
  // Through syscall(): glibc's own wrapper needs glibc 2.36, and the relocatable tarball runs on
  // older systems.
  if (pid > 0) {
    int64_t fd = ::syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0) watch.fd_.Reset(static_cast<int>(fd));  // close-on-exec, as every pidfd
  }
#else
  (void)pid;
#endif
  return watch;
}

bool ProcessExitWatch::WaitFor(std::chrono::milliseconds timeout) const {
  if (!valid()) return false;
  pollfd entry{fd_.get(), POLLIN, 0};
  int ready = 0;
  do {
    ready = ::poll(&entry, 1, static_cast<int>(timeout.count()));
  } while (ready < 0 && errno == EINTR);
  return ready > 0;
}

}  // namespace hvdrun
