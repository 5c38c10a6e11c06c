#include "launcher/agent_connection.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hvdrun {
namespace {

// Shows the start of a stream that is not the protocol, printable bytes only, for the error line.
std::string Excerpt(std::string_view bytes) {
  std::string text;
  for (char c : bytes.substr(0, 60)) text.push_back(c >= 0x20 && c < 0x7f ? c : '.');
  return text;
}

}  // namespace

AgentConnection::AgentConnection(std::string host, pid_t pid, UniqueFd to_agent, UniqueFd from_agent)
    : host_(std::move(host)), pid_(pid), to_agent_(std::move(to_agent)), from_agent_(std::move(from_agent)) {}

AgentConnection::~AgentConnection() {
  if (remote_) {
    CloseInput();
    remote_.reset();  // drops the connection and waits for its thread
    return;
  }
  if (!reaped_) {
    CloseInput();
    Kill();
    ::waitpid(pid_, nullptr, 0);
  }
}

StatusOr<std::unique_ptr<AgentConnection>> AgentConnection::StartLocal(const std::string& host,
                                                                       const std::string& agent_path) {
  Pipe to_agent;
  Pipe from_agent;
  if (!MakePipe(&to_agent) || !MakePipe(&from_agent)) {
    return Status::Error("host " + host + ": agent start: cannot create pipes: " + std::strerror(errno));
  }
  // The exec status pipe tells a missing agent program apart from an agent that started.
  Pipe exec_status;
  if (!MakePipe(&exec_status)) {
    return Status::Error("host " + host + ": agent start: cannot create pipes: " + std::strerror(errno));
  }
  pid_t pid = ::fork();
  if (pid < 0) return Status::Error("host " + host + ": agent start: fork failed: " + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(to_agent.read.get(), STDIN_FILENO);
    ::dup2(from_agent.write.get(), STDOUT_FILENO);
    ::execlp(agent_path.c_str(), agent_path.c_str(), static_cast<char*>(nullptr));
    int error = errno;
    ssize_t ignored = ::write(exec_status.write.get(), &error, sizeof(error));
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  exec_status.write.Reset();
  int exec_error = 0;
  ssize_t n;
  do {
    n = ::read(exec_status.read.get(), &exec_error, sizeof(exec_error));
  } while (n < 0 && errno == EINTR);
  if (n == sizeof(exec_error)) {
    ::waitpid(pid, nullptr, 0);
    return Status::Error("host " + host + ": agent start: cannot run '" + agent_path + "': " +
                         std::strerror(exec_error) + " (install hvdrun-agent beside hvdrun or in PATH)");
  }
  SetNonBlocking(from_agent.read.get());
  return std::unique_ptr<AgentConnection>(
      new AgentConnection(host, pid, std::move(to_agent.write), std::move(from_agent.read)));
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
      new AgentConnection(host, -1, std::move(to_agent), std::move(from_agent)));
  connection->remote_ = std::move(transport).value();
  return connection;
}

std::string AgentConnection::Stage() const {
  return remote_ ? StageName(remote_->stage()) : StageName(SshStage::kAgentStart);
}

std::string AgentConnection::EndReason() const {
  return remote_ ? remote_->end().reason : "the agent exited unexpectedly";
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
      return Status::Error(next.status().message() + " (stream begins '" + Excerpt(decoder_.pending()) +
                           "')");
    }
    if (!next.value().has_value()) break;
    messages->push_back(std::move(*next.value()));
  }
  return Status::Ok();
}

bool AgentConnection::Reap(int* wait_status) {
  if (reaped_) return true;
  if (remote_) {
    *wait_status = 0;
    reaped_ = remote_->finished();
    return reaped_;
  }
  pid_t result = ::waitpid(pid_, wait_status, WNOHANG);
  if (result == pid_ || (result < 0 && errno == ECHILD)) reaped_ = true;
  return reaped_;
}

void AgentConnection::Kill() {
  if (remote_) {
    remote_->Abort();
    return;
  }
  if (!reaped_) ::killpg(pid_, SIGKILL);
}

}  // namespace hvdrun
