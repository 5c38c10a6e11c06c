// AgentConnection: the launcher's end of one agent's control stream.
//
// It owns the agent's process (started here, for a host that is this machine) and the two pipe
// ends that carry the agent protocol: frames are written to the agent's stdin and decoded from its
// stdout. For a host that is not this machine the pipes lead to an SshAgentTransport instead,
// whose thread carries the same bytes over an SSH channel; inside a Slurm allocation they lead to the
// srun that runs the agent on its node (launcher/agents/srun_agent_command.h), whose stdin and stdout Slurm
// carries to the agent's. The view from job.cc is the same. The agent's
// stderr is hvdrun's, so an agent's own diagnostics reach the user untagged. The agent runs in its own
// process group, so a Ctrl-C at the terminal reaches hvdrun alone, and hvdrun stops the ranks in order. Not
// thread-safe.
#ifndef HVDRUN_LAUNCHER_AGENTS_AGENT_CONNECTION_H_
#define HVDRUN_LAUNCHER_AGENTS_AGENT_CONNECTION_H_

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/process/file_descriptor.h"
#include "common/process/process_spawner.h"
#include "common/protocol/agent_protocol.h"
#include "hvdrun/status.h"
#include "launcher/agents/process_exit_watch.h"
#include "launcher/ssh/ssh_agent_transport.h"
#include "launcher/ssh/ssh_options.h"

namespace hvdrun {

class AgentConnection {
 public:
  // Starts the agent program `agent_path` (a path, or a name looked up in PATH) for `host`.
  // Fails with a one-line reason.
  static StatusOr<std::unique_ptr<AgentConnection>> StartLocal(const std::string& host,
                                                               const std::string& agent_path);
  // Starts reaching `host`'s agent over SSH (SshAgentTransport) and returns at once; a failure
  // shows as the end of the stream, EndReason() naming the stage.
  static StatusOr<std::unique_ptr<AgentConnection>> StartRemote(
      const std::string& host, const SshOptions& ssh_options, const std::string& agent_path,
      std::chrono::steady_clock::time_point deadline);
  // Starts `node`'s agent (`agent_path`, a path on the node) through srun, a child of hvdrun here.
  // Fails with a one-line reason when srun cannot be run; an agent that srun cannot start shows as
  // the end of the stream, EndReason() giving srun's exit status.
  static StatusOr<std::unique_ptr<AgentConnection>> StartSlurm(const std::string& node,
                                                               const std::string& agent_path);
  ~AgentConnection();

  const std::string& host() const { return host_; }
  // The local agent's pid (srun's, for an agent started through srun); -1 for an agent over SSH.
  pid_t pid() const { return agent_.pid(); }
  bool remote() const { return remote_ != nullptr; }
  // The remote agent's SSH connection (nullptr for a local agent).
  const SshAgentTransport* transport() const { return remote_.get(); }
  // The stage reached ("agent start" for a local agent) and, once the stream has closed, why it
  // did, in one line without the host. For an agent through srun, EndReason waits up to a second
  // for srun to exit, so as to give its exit status.
  std::string Stage() const;
  std::string EndReason();
  // Readable when the agent sent something or closed its stream; -1 once the stream is closed.
  int read_fd() const { return from_agent_.get(); }
  bool stream_closed() const { return !from_agent_.valid(); }
  // Readable once the agent's process here (the agent, or its srun) has ended, so that a poll loop
  // waits for the end it is to reap (launcher/agents/process_exit_watch.h); -1 for a remote agent, whose
  // stream ends only once its connection has (Reap() is then true), and on a kernel without pidfds.
  int exit_fd() const { return exit_watch_.fd(); }

  // Writes one frame. A failure means the agent is gone; the caller learns why from ReadMessages.
  bool Send(const protocol::Message& message);

  // Reads what the agent sent and appends each complete message to `messages`. Returns an error
  // for bytes that are not the protocol (showing the first of them); closes the stream at its end.
  Status ReadMessages(std::vector<protocol::Message>* messages);

  // Closes the agent's stdin: it stops whatever ranks remain and exits.
  void CloseInput() { to_agent_.Reset(); }

  // Reaps the agent if it has exited; returns true once it has. `wait_status` gets waitpid's status
  // (0 for a remote agent, whose SSH connection has then ended), each time it is asked.
  bool Reap(int* wait_status);
  // SIGKILL to the agent's process group, for an agent that does not exit when asked; for a remote
  // agent, drops its SSH connection (its sshd closes the agent's stdin, and it stops its ranks). For
  // an agent through srun: SIGTERM to srun, which passes it to the agent, which stops its ranks and
  // exits; a second Kill (srun did not exit: its node is gone) SIGKILLs srun's process group, as
  // does destroying the connection before srun has exited.
  void Kill();

 private:
  AgentConnection(std::string host, ChildProcess agent, UniqueFd to_agent, UniqueFd from_agent);
  // An agent that this process starts, itself or through srun (`options`' argv and environment),
  // connected by its stdin and stdout; `install_hint` says how to get the program when it cannot
  // be executed.
  static StatusOr<std::unique_ptr<AgentConnection>> StartChild(const std::string& host, SpawnOptions options,
                                                               const std::string& install_hint);

  std::string host_;
  ChildProcess agent_;           // the local agent; no child for a remote one
  ProcessExitWatch exit_watch_;  // agent_'s end
  std::unique_ptr<SshAgentTransport> remote_;
  bool through_srun_ = false;     // agent_ is the srun that runs the agent on its node
  bool srun_terminated_ = false;  // Kill() has sent srun SIGTERM
  UniqueFd to_agent_;
  UniqueFd from_agent_;
  protocol::FrameDecoder decoder_;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_AGENTS_AGENT_CONNECTION_H_
