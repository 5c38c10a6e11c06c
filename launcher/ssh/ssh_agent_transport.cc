#include "launcher/ssh/ssh_agent_transport.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "launcher/ssh/remote_agent_command.h"

namespace hvdrun {

StatusOr<std::unique_ptr<SshAgentTransport>> SshAgentTransport::Start(
    const std::string& host, const SshOptions& options, const std::string& agent_path,
    Clock::time_point deadline, UniqueFd* to_agent, UniqueFd* from_agent) {
  std::unique_ptr<SshAgentTransport> transport(new SshAgentTransport());
  Pipe input;
  Pipe output;
  if (!MakePipe(&input) || !MakePipe(&output) || !MakePipe(&transport->wake_)) {
    return Status::Error(std::string("agent start: cannot create pipes: ") + std::strerror(errno));
  }
  SetNonBlocking(output.read.get());
  SetNonBlocking(transport->wake_.read.get());
  transport->agent_path_ = agent_path;
  transport->fallback_path_ = options.agent_fallback_path;
  transport->input_ = std::move(input.read);
  transport->output_ = std::move(output.write);
  SshAgentTransport* self = transport.get();
  try {
    transport->thread_ = std::thread(
        [self, host, options, agent_path, deadline] { self->Run(host, options, agent_path, deadline); });
  } catch (const std::system_error& error) {
    return Status::Error(std::string("agent start: cannot start a thread: ") + error.what());
  }
  *to_agent = std::move(input.write);
  *from_agent = std::move(output.read);
  return transport;
}

SshAgentTransport::~SshAgentTransport() {
  Abort();
  if (thread_.joinable()) thread_.join();
}

SshAgentTransport::End SshAgentTransport::end() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return end_;
}

std::string SshAgentTransport::local_address() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return local_address_;
}

std::string SshAgentTransport::remote_address() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return remote_address_;
}

void SshAgentTransport::Abort() {
  aborted_ = true;
  char byte = 0;
  ssize_t ignored = ::write(wake_.write.get(), &byte, 1);
  (void)ignored;
  std::lock_guard<std::mutex> lock(mutex_);
  if (session_) session_->Abort();
}

void SshAgentTransport::Finish(std::string reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    end_.stage = stage_.load();
    end_.reason = std::move(reason);
  }
  finished_ = true;
  output_.Reset();  // the launcher's end of file
}

void SshAgentTransport::Run(const std::string& host, const SshOptions& options, const std::string& agent_path,
                            Clock::time_point deadline) {
  // Each stage's error already begins with the stage's name; strip it, end() carries the stage.
  auto fail = [this](const Status& status) {
    const std::string& message = status.message();
    std::string prefix = std::string(StageName(stage_.load())) + ": ";
    Finish(message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message);
  };
  StatusOr<std::unique_ptr<SshSession>> created = SshSession::Create(host, options);
  if (!created.ok()) return fail(created.status());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    session_ = std::move(created).value();
  }
  SshSession& session = *session_;
  auto aborted = [this] {
    if (aborted_) Finish("stopped by hvdrun before the agent started");
    return aborted_.load();
  };
  if (aborted()) return;
  if (Status status = session.Resolve(); !status.ok()) return fail(status);
  stage_ = SshStage::kConnect;
  if (aborted()) return;
  if (Status status = session.Connect(deadline); !status.ok()) return fail(status);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    local_address_ = session.local_address();
    remote_address_ = session.remote_address();
  }
  stage_ = SshStage::kHostKey;
  if (aborted()) return;
  if (Status status = session.VerifyHostKey(); !status.ok()) return fail(status);
  stage_ = SshStage::kAuth;
  if (aborted()) return;
  if (Status status = session.Authenticate(); !status.ok()) return fail(status);
  stage_ = SshStage::kAgentStart;
  if (aborted()) return;
  std::string command = RemoteAgentCommand(agent_path, fallback_path_, "", "");
  if (Status status = session.OpenChannel(command); !status.ok()) return fail(status);
  Pump(session.channel(), session.socket_fd());
}

void SshAgentTransport::Pump(ssh_channel channel, int socket_fd) {
  std::string buffer(size_t{64} * 1024, '\0');
  bool input_open = true;
  while (true) {
    // Drain what libssh holds before sleeping in poll: a write may have read packets into its
    // buffers that the socket no longer signals.
    for (int is_stderr : {0, 1}) {
      int n;
      while ((n = ssh_channel_read_nonblocking(channel, buffer.data(), static_cast<uint32_t>(buffer.size()),
                                               is_stderr)) > 0) {
        std::string_view data(buffer.data(), static_cast<size_t>(n));
        // A launcher that stopped reading is tearing the connection down; keep draining until then.
        if (is_stderr != 0) {
          WriteAll(STDERR_FILENO, data);
        } else if (output_.valid() && !WriteAll(output_.get(), data)) {
          output_.Reset();
        }
      }
      if (n == SSH_ERROR) {
        return Finish(aborted_ ? "stopped by hvdrun"
                               : "the SSH connection was lost: " +
                                     std::string(ssh_get_error(ssh_channel_get_session(channel))));
      }
    }
    if (ssh_channel_is_eof(channel) != 0 || ssh_channel_is_closed(channel) != 0) {
      return Finish(ExitReason(ssh_channel_get_exit_status(channel)));
    }
    if (aborted_) return Finish("stopped by hvdrun");
    pollfd fds[3] = {
        {socket_fd, POLLIN, 0}, {wake_.read.get(), POLLIN, 0}, {input_open ? input_.get() : -1, POLLIN, 0}};
    int ready = ::poll(fds, 3, 1000);
    if (ready < 0 && errno != EINTR) return Finish(std::string("poll failed: ") + std::strerror(errno));
    if (ready <= 0 || fds[2].revents == 0) continue;
    ssize_t n = ::read(input_.get(), buffer.data(), buffer.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      ssh_channel_send_eof(channel);
      input_open = false;
      continue;
    }
    if (ssh_channel_write(channel, buffer.data(), static_cast<uint32_t>(n)) == SSH_ERROR) {
      return Finish(aborted_ ? "stopped by hvdrun"
                             : "the SSH connection was lost: " +
                                   std::string(ssh_get_error(ssh_channel_get_session(channel))));
    }
  }
}

std::string SshAgentTransport::ExitReason(int exit_status) const {
  switch (exit_status) {
    case 0:
      return "the agent exited unexpectedly";
    case 127:
      return AgentNotFoundReason(agent_path_, fallback_path_);
    case 126:
      return AgentNotExecutableReason(agent_path_, fallback_path_);
    case -1:
      return "the agent ended without an exit status (killed by a signal, or the connection closed)";
    default:
      return "the agent exited unexpectedly (exit status " + std::to_string(exit_status) + ")";
  }
}

}  // namespace hvdrun
