// SshAgentTransport: a remote agent's control stream, carried over an SSH channel and handed to
// the launcher as two pipes, so that the launcher's poll loop treats a remote agent as a local one.
//
// Start() returns at once; a thread of its own then goes through the stages of SshSession
// (resolve, connect, host key, auth, agent start) and, once the agent runs, pumps bytes: the
// launcher's pipe to the channel's stdin, the channel's stdout to the launcher's pipe, the
// channel's stderr (the agent's own diagnostics) to hvdrun's stderr. The launcher learns that the
// stream ended, for whatever reason, from the end of file on its read pipe; end() then says why,
// naming the stage. Closing the launcher's write pipe sends EOF to the agent, which then stops its
// ranks and exits.
//
// Thread safety: every public member may be called from the launcher's thread while the pump runs.
// The thread inherits the caller's signal mask: start it with the job's signals blocked.
#ifndef HVDRUN_LAUNCHER_SSH_SSH_AGENT_TRANSPORT_H_
#define HVDRUN_LAUNCHER_SSH_SSH_AGENT_TRANSPORT_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/process/file_descriptor.h"
#include "hvdrun/status.h"
#include "launcher/ssh/ssh_options.h"
#include "launcher/ssh/ssh_session.h"

namespace hvdrun {

class SshAgentTransport {
 public:
  using Clock = std::chrono::steady_clock;

  // Why the stream ended: the stage it had reached and one line (without the host).
  struct End {
    SshStage stage = SshStage::kResolve;
    std::string reason;
  };

  // Starts reaching `host`'s agent (`agent_path`, a path or a name in the remote PATH, else
  // options.agent_fallback_path when set); the SSH connection must be up by `deadline`.
  // `to_agent` receives the pipe end the launcher writes frames to, `from_agent` the non-blocking
  // end it reads frames from. Fails only when pipes or the thread cannot be made.
  static StatusOr<std::unique_ptr<SshAgentTransport>> Start(const std::string& host,
                                                            const SshOptions& options,
                                                            const std::string& agent_path,
                                                            Clock::time_point deadline, UniqueFd* to_agent,
                                                            UniqueFd* from_agent);
  // Abort(), then waits for the thread.
  ~SshAgentTransport();
  SshAgentTransport(const SshAgentTransport&) = delete;
  SshAgentTransport& operator=(const SshAgentTransport&) = delete;

  // The stage reached so far (kAgentStart once the channel is open).
  SshStage stage() const { return stage_.load(); }
  // Whether the thread is done; end() is then final.
  bool finished() const { return finished_.load(); }
  End end() const;
  // The ends of the TCP connection (SshSession); empty until it is connected.
  std::string local_address() const;
  std::string remote_address() const;

  // Drops the SSH connection (the remote sshd then closes the agent's stdin) and ends the thread.
  void Abort();

 private:
  SshAgentTransport() = default;
  void Run(const std::string& host, const SshOptions& options, const std::string& agent_path,
           Clock::time_point deadline);
  // Moves bytes until the channel or the connection ends.
  void Pump(ssh_channel channel, int socket_fd);
  void Finish(std::string reason);
  std::string ExitReason(int exit_status) const;

  std::string agent_path_;
  std::string fallback_path_;  // SshOptions::agent_fallback_path
  std::atomic<SshStage> stage_{SshStage::kResolve};
  std::atomic<bool> finished_{false};
  std::atomic<bool> aborted_{false};
  UniqueFd input_;   // read end of the launcher's frames
  UniqueFd output_;  // write end towards the launcher; closed at the end
  Pipe wake_;        // Abort() writes one byte to wake the pump
  mutable std::mutex mutex_;
  End end_;                              // guarded by mutex_
  std::string local_address_;            // guarded by mutex_
  std::string remote_address_;           // guarded by mutex_
  std::unique_ptr<SshSession> session_;  // set under mutex_; used by the thread, Abort() by others
  std::thread thread_;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_SSH_SSH_AGENT_TRANSPORT_H_
