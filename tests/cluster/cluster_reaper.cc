#include "tests/cluster/cluster_reaper.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "tests/cluster/cluster_run.h"
#include "tests/e2e/detached_spawn.h"

namespace hvdrun::cluster {
namespace {

// The byte an owner sends when it has removed the run itself.
constexpr char kDisarmed = 'D';

}  // namespace

StatusOr<ClusterReaper> ClusterReaper::Start(const std::string& program, const std::string& run_id) {
  // A socket pair rather than a pipe: Disarm's write to a reaper that is gone must not raise SIGPIPE.
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
    return Status::Error("test cluster " + run_id + ": reaper: socketpair: " + std::strerror(errno));
  }
  UniqueFd reaper_end(ends[0]);
  UniqueFd owner_end(ends[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, reaper_end.get(), STDIN_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  StatusOr<pid_t> pid = e2e::SpawnDetached({program, "reap", run_id}, actions, e2e::Detach::kSession);
  posix_spawn_file_actions_destroy(&actions);
  if (!pid.ok()) {
    return Status::Error("test cluster " + run_id + ": cannot start the reaper '" + program +
                         "': " + pid.status().message() + " (build the hvdrun-test-cluster target)");
  }
  return ClusterReaper(pid.value(), std::move(owner_end));
}

ClusterReaper::ClusterReaper(ClusterReaper&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), owner_end_(std::move(other.owner_end_)) {}

ClusterReaper::~ClusterReaper() { Finish(0); }

void ClusterReaper::Disarm() { Finish(kDisarmed); }

void ClusterReaper::Finish(char byte) {
  if (owner_end_.valid()) {
    if (byte != 0) {
      while (::send(owner_end_.get(), &byte, 1, MSG_NOSIGNAL) < 0 && errno == EINTR) {
      }
    }
    owner_end_.Reset();
  }
  if (pid_ > 0) {
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
}

int RunReaper(const std::string& run_id) {
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGPIPE, SIG_IGN);
  // Keeps no pipe of the owner's open (a test runner waits for its test's output pipes to close).
  ::close_range(STDERR_FILENO + 1, ~0U, 0);
  // Holds no directory of the run (or any mount) busy while it waits.
  if (::chdir("/") != 0) std::perror("hvdrun-test-cluster: reap: chdir /");
  char byte = 0;
  ssize_t n = 0;
  do {
    n = ::read(STDIN_FILENO, &byte, 1);
  } while (n < 0 && errno == EINTR);
  if (n == 1 && byte == kDisarmed) return 0;
  Status status = TeardownRun(run_id);
  if (status.ok()) return 0;
  std::fprintf(stderr, "hvdrun-test-cluster: reap: %s\n", status.message().c_str());
  return 1;
}

}  // namespace hvdrun::cluster
