#include "tests/cluster/host_sshd.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "tests/e2e/detached_spawn.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::cluster {
namespace {

constexpr std::chrono::milliseconds kPollInterval{5};

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string LastLineOf(const std::string& path) {
  std::string text = Trimmed(e2e::ReadFileBytes(path));
  size_t start = text.rfind('\n');
  return start == std::string::npos ? text : text.substr(start + 1);
}

}  // namespace

SshdFiles SshdFiles::In(const std::string& dir) {
  return SshdFiles{.config = dir + "/sshd_config",
                   .host_key = dir + "/ssh_host_ed25519_key",
                   .authorized_keys = dir + "/authorized_keys",
                   .pid_file = dir + "/sshd.pid",
                   .log = dir + "/sshd.log"};
}

std::string SshdConfigText(const SshdFiles& files, const std::string& address, const std::string& about) {
  std::string text = "# " + about + "\n";
  text += "ListenAddress " + address + ":22\n";
  text += "HostKey " + files.host_key + "\n";
  text += "PidFile " + files.pid_file + "\n";
  text += "AuthorizedKeysFile " + files.authorized_keys + "\n";
  text +=
      "PermitRootLogin prohibit-password\n"
      "PubkeyAuthentication yes\n"
      "PasswordAuthentication no\n"
      "KbdInteractiveAuthentication no\n"
      // Tests rewrite authorized_keys to refuse or swap keys; its mode is not under test.
      "StrictModes no\n"
      // Without PAM no session module (loginuid, limits, motd) can fail inside a container.
      "UsePAM no\n"
      "UseDNS no\n"
      "PrintMotd no\n"
      "PrintLastLog no\n"
      // Accepted and refused keys are logged, for tests of wrong keys.
      "LogLevel VERBOSE\n"
      // Tests open many connections at once (a launcher per test, a session per rank); the
      // defaults (10 pending, 10 sessions per connection) would drop some at random.
      "MaxStartups 100\n"
      "MaxSessions 100\n";
  return text;
}

StatusOr<HostSshd> HostSshd::Start(const std::string& host, const std::vector<std::string>& argv,
                                   const SshdFiles& files) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, files.log.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  StatusOr<pid_t> pid = e2e::SpawnDetached(argv, actions, e2e::Detach::kProcessGroup);
  posix_spawn_file_actions_destroy(&actions);
  if (!pid.ok()) {
    return Status::Error("test host " + host + ": cannot start sshd ('" + argv.front() +
                         "'): " + pid.status().message());
  }
  return HostSshd(host, files, pid.value());
}

HostSshd::~HostSshd() { Kill(); }

Status HostSshd::WaitUntilListening(std::chrono::steady_clock::time_point deadline) const {
  const std::string expected = std::to_string(pid_) + "\n";
  while (true) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid_) {
      std::string how = info.si_code == CLD_EXITED ? "exit " + std::to_string(info.si_status)
                                                   : "signal " + std::to_string(info.si_status);
      return Status::Error("test host " + host_ + ": sshd ended (" + how +
                           ") before listening: " + LastLineOf(files_.log) + " (log: " + files_.log + ")");
    }
    // sshd writes "<pid>\n" once it listens; anything shorter is still being written.
    std::string written = e2e::ReadFileBytes(files_.pid_file);
    if (written == expected) return Status::Ok();
    if (!written.empty() && written.back() == '\n') {
      return Status::Error("test host " + host_ + ": " + files_.pid_file + " names pid " + Trimmed(written) +
                           ", but the sshd started is " + std::to_string(pid_));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::Error("test host " + host_ + ": sshd did not write " + files_.pid_file +
                           " (it does once it listens) in time; see " + files_.log);
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

void HostSshd::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

}  // namespace hvdrun::cluster
