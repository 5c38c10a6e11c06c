// SshSession: one SSH connection from hvdrun to a host, through libssh, in the stages a start-up
// error names: resolve, connect, host key, auth, then the agent start (a channel exec'ing the
// agent). Each step returns a Status whose one line names the stage and says what failed and,
// when not obvious, what to do; the caller prefixes the host.
//
// The TCP connection is made here (not by libssh), so that a name that does not resolve, a refused
// connection and a timeout are told apart, and so that another thread can break a blocked session
// with Abort(). Apart from Abort(), a session is used by one thread at a time; sessions on other
// threads may run their stages at the same time (VerifyHostKey serializes what they share).
#ifndef HVDRUN_LAUNCHER_SSH_SSH_SESSION_H_
#define HVDRUN_LAUNCHER_SSH_SSH_SESSION_H_

#include <libssh/libssh.h>
#include <netdb.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "hvdrun/status.h"
#include "launcher/ssh/ssh_options.h"

namespace hvdrun {

// The stages of reaching a host's agent, in order; StageName() is the word errors use.
enum class SshStage { kResolve, kConnect, kHostKey, kAuth, kAgentStart };
const char* StageName(SshStage stage);

class SshSession {
 public:
  using Clock = std::chrono::steady_clock;

  // A session for `host`, configured from ~/.ssh/config and then `options` (explicit flags win).
  // No network traffic yet.
  static StatusOr<std::unique_ptr<SshSession>> Create(const std::string& host, const SshOptions& options);
  ~SshSession();
  SshSession(const SshSession&) = delete;
  SshSession& operator=(const SshSession&) = delete;

  // Stage resolve: the address of the host (after ~/.ssh/config's HostName).
  Status Resolve();
  // Stage connect: TCP to the resolved addresses in turn, then the SSH handshake, by `deadline`.
  Status Connect(Clock::time_point deadline);
  // Stage host key: the server's key against known_hosts (see SshOptions::accept_new_host_keys).
  // One session of the process at a time checks and records, so that hosts reached at once for a
  // user without ~/.ssh each get their key recorded, once, and a check sees every earlier record.
  Status VerifyHostKey();
  // Stage auth: public keys from the ssh-agent, the identity file, the default keys.
  Status Authenticate();
  // Stage agent start: a session channel exec'ing `command`; channel() is then its stdin/stdout.
  Status OpenChannel(const std::string& command);

  ssh_session session() const { return session_; }
  ssh_channel channel() const { return channel_; }
  // The TCP socket, valid after Connect().
  int socket_fd() const;
  // The two ends of the TCP connection, numeric, valid after Connect(): the address through which
  // the host reaches this machine, and the host's own address on that network.
  const std::string& local_address() const { return local_address_; }
  const std::string& remote_address() const { return remote_address_; }

  // Thread-safe: shuts the TCP connection down, so that whatever blocks on it returns with an error.
  void Abort();

 private:
  SshSession() = default;
  // "user@host:port" for messages.
  std::string Target() const;

  std::string host_;      // as the user named it
  std::string hostname_;  // after ~/.ssh/config
  unsigned int port_ = 22;
  std::string user_;
  std::string identity_file_;
  std::string known_hosts_;
  bool accept_new_host_keys_ = false;
  ssh_session session_ = nullptr;
  ssh_channel channel_ = nullptr;
  // getaddrinfo's answer, freed with freeaddrinfo.
  std::shared_ptr<addrinfo> addresses_;
  // Guards socket_fd_ between Abort() and the owning thread. After Connect() libssh owns the
  // socket (and closes it when the session ends); -1 once closed.
  mutable std::mutex socket_mutex_;
  int socket_fd_ = -1;
  std::string local_address_;
  std::string remote_address_;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_SSH_SSH_SESSION_H_
