#include "launcher/agents/agent_connection.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "common/error_text.h"
#include "common/process/wait_status.h"
#include "launcher/agents/srun_agent_command.h"

namespace hvdrun {
namespace {

// How long EndReason waits for an srun whose output ended to exit, for its exit status.
constexpr std::chrono::milliseconds kSrunExitWait{1000};

}  // namespace

AgentConnection::AgentConnection(std::string host, ChildProcess agent, UniqueFd to_agent, UniqueFd from_agent)
    : host_(std::move(host)),
      agent_(std::move(agent)),
      exit_watch_(ProcessExitWatch::Of(agent_.pid())),
      to_agent_(std::move(to_agent)),
      from_agent_(std::move(from_agent)) {}

AgentConnection::~AgentConnection() {
  CloseInput();
  // A remote agent's connection is dropped (and its thread waited for); a local agent that has not
  // been reaped is killed with its process group and reaped by ~ChildProcess.
  remote_.reset();
}

StatusOr<std::unique_ptr<AgentConnection>> AgentConnection::StartChild(const std::string& host,
                                                                       SpawnOptions options,
                                                                       const std::string& install_hint) {
  options.stdin_spec = StdioSpec::Pipe();
  options.stdout_spec = StdioSpec::Pipe();
  options.own_process_group = true;
  StatusOr<ChildProcess> child = SpawnInstalledProgram(options, install_hint);
  if (!child.ok()) return Status::Error("host " + host + ": agent start: " + child.status().message());
  UniqueFd to_agent = std::move(child->stdin_pipe());
  UniqueFd from_agent = std::move(child->stdout_pipe());
  return std::unique_ptr<AgentConnection>(
      new AgentConnection(host, std::move(child).value(), std::move(to_agent), std::move(from_agent)));
}

StatusOr<std::unique_ptr<AgentConnection>> AgentConnection::StartLocal(const std::string& host,
                                                                       const std::string& agent_path) {
  SpawnOptions options;
  options.argv = {agent_path};
  return StartChild(host, std::move(options), "install hvdrun-agent beside hvdrun or in PATH");
}

StatusOr<std::unique_ptr<AgentConnection>> AgentConnection::StartRemote(
    const std::string& host, const SshOptions& ssh_options, const std::string& agent_path,
    std::chrono::steady_clock::time_point deadline) {
  UniqueFd to_agent;
  UniqueFd from_agent;
  StatusOr<std::unique_ptr<SshAgentTransport>> transport =
      SshAgentTransport::Start(host, ssh_options, agent_path, deadline, &to_agent, &from_agent);
  if (!transport.ok()) return Status::Error("host " + host + ": " + transport.status().message());
  std::unique_ptr<AgentConnection> connection(
      new AgentConnection(host, ChildProcess(), std::move(to_agent), std::move(from_agent)));
  connection->remote_ = std::move(transport).value();
  return connection;
}

StatusOr<std::unique_ptr<AgentConnection>> AgentConnection::StartSlurm(const std::string& node,
                                                                       const std::string& agent_path) {
  SrunAgentCommand command = BuildSrunAgentCommand(node, agent_path);
  SpawnOptions options;
  options.argv = command.argv;
  options.env_mode = EnvironmentMode::kInheritWith;
  options.env = command.env;
  StatusOr<std::unique_ptr<AgentConnection>> connection =
      StartChild(node, std::move(options), "Slurm's srun must be in PATH for --launcher slurm");
  if (connection.ok()) connection.value()->through_srun_ = true;
  return connection;
}

std::string AgentConnection::Stage() const {
  return remote_ ? StageName(remote_->stage()) : StageName(SshStage::kAgentStart);
}

std::string AgentConnection::EndReason() {
  if (remote_) return remote_->end().reason;
  if (!through_srun_) return "the agent exited unexpectedly";
  std::optional<int> status = agent_.Poll();
  if (!status && exit_watch_.WaitFor(kSrunExitWait)) status = agent_.Poll();
  for (int i = 0; i < 20 && !status && !exit_watch_.valid(); ++i) {
    std::this_thread::sleep_for(kSrunExitWait / 20);  // a kernel without pidfds
    status = agent_.Poll();
  }
  if (!status) return "the agent's srun step closed its output (srun still runs)";
  if (WIFEXITED(*status) && WEXITSTATUS(*status) == 0) return "the agent's srun step ended";
  return "the agent's srun step ended (srun: " + DescribeWaitStatus(*status) +
         "; srun's own message, above, says why)";
}

bool AgentConnection::Send(const protocol::Message& message) {
  return to_agent_.valid() && WriteAll(to_agent_.get(), protocol::EncodeFrame(message));
}

Status AgentConnection::ReadMessages(std::vector<protocol::Message>* messages) {
  char buffer[64 * 1024];
  for (int round = 0; round < 16 && from_agent_.valid(); ++round) {
    ssize_t n = ::read(from_agent_.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    if (n <= 0) {
      from_agent_.Reset();
      break;
    }
    decoder_.Append(std::string_view(buffer, static_cast<size_t>(n)));
    if (static_cast<size_t>(n) < sizeof(buffer)) break;
  }
  while (true) {
    StatusOr<std::optional<protocol::Message>> next = decoder_.Next();
    if (!next.ok()) {
      from_agent_.Reset();
      return Status::Error(next.status().message() + " (stream begins '" + PrintableText(decoder_.pending()) +
                           "')");
    }
    if (!next.value().has_value()) break;
    messages->push_back(std::move(*next.value()));
  }
  return Status::Ok();
}

bool AgentConnection::Reap(int* wait_status) {
  if (remote_) {
    *wait_status = 0;
    return remote_->finished();
  }
  std::optional<int> status = agent_.Poll();
  if (status) *wait_status = *status;
  return status.has_value();
}

void AgentConnection::Kill() {
  if (remote_) {
    remote_->Abort();
    return;
  }
  if (through_srun_ && !srun_terminated_) {
    agent_.Signal(SIGTERM);
    srun_terminated_ = true;
    return;
  }
  agent_.KillGroup();
}

}  // namespace hvdrun
