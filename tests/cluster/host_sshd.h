// One test host's OpenSSH server: its configuration, its start as a child of this process inside
// the host's namespace, and the wait until it listens.
//
// Each sshd is started with -D (it stays the child that was started, so its pid is known and it can
// be reaped) and -E (its log goes to a file of the host). It writes its pid file after binding its
// listening socket, which is how WaitUntilListening knows it is ready. Movable, not copyable, not
// thread-safe.
#ifndef HVDRUN_TESTS_CLUSTER_HOST_SSHD_H_
#define HVDRUN_TESTS_CLUSTER_HOST_SSHD_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun::cluster {

// The files of one host's sshd, all in the host's directory of the run.
struct SshdFiles {
  std::string config;           // sshd_config
  std::string host_key;         // ssh_host_ed25519_key (private); ".pub" beside it
  std::string authorized_keys;  // the keys it accepts for root; the cluster's user key at first
  std::string pid_file;         // sshd.pid
  std::string log;              // sshd.log: sshd's own log (LogLevel VERBOSE) and anything on its stderr

  static SshdFiles In(const std::string& dir);
};

// The sshd_config for a host listening on `address` port 22: public-key logins as root only, with
// `files.authorized_keys` (any file mode: StrictModes no), without PAM, DNS lookups or banners.
std::string SshdConfigText(const SshdFiles& files, const std::string& address, const std::string& about);

class HostSshd {
 public:
  // Starts `argv` (sshd -D -f config -E log, wrapped to enter the host's namespace; argv[0] an
  // absolute path) with stdin from /dev/null and stdout and stderr appended to `files.log`, in a
  // process group of its own. `host` names it in errors.
  static StatusOr<HostSshd> Start(const std::string& host, const std::vector<std::string>& argv,
                                  const SshdFiles& files);

  HostSshd(HostSshd&& other) noexcept
      : host_(std::move(other.host_)), files_(std::move(other.files_)), pid_(std::exchange(other.pid_, -1)) {}
  HostSshd& operator=(HostSshd&&) = delete;
  HostSshd(const HostSshd&) = delete;
  HostSshd& operator=(const HostSshd&) = delete;
  // Kill().
  ~HostSshd();

  // -1 once killed.
  pid_t pid() const { return pid_; }

  // OK once sshd has written its pid file, i.e. listens; an error naming the host when sshd exits
  // first (with the last line of its log) or `deadline` passes.
  Status WaitUntilListening(std::chrono::steady_clock::time_point deadline) const;

  // SIGKILL to sshd, which is then reaped; does nothing once done. Sessions it started are not
  // its children once it is gone: removing the host's namespace (TeardownRun) ends them.
  void Kill();

 private:
  HostSshd(std::string host, SshdFiles files, pid_t pid)
      : host_(std::move(host)), files_(std::move(files)), pid_(pid) {}

  std::string host_;
  SshdFiles files_;
  pid_t pid_ = -1;
};

}  // namespace hvdrun::cluster

#endif  // HVDRUN_TESTS_CLUSTER_HOST_SSHD_H_
