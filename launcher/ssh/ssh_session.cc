#include "launcher/ssh/ssh_session.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hvdrun {
namespace {

std::once_flag ssh_init_once;

// Held by every session of the process from checking a host's key against known_hosts to recording
// a new one. Recording (libssh's ssh_session_update_known_hosts) creates the file's directory when
// the file cannot be opened for want of it, which fails with EEXIST when another thread made it in
// between, and appends a line that another thread's check could read half-written. Under the lock
// each check reads the file as the previous recording closed it.
std::mutex known_hosts_mutex;

std::string SshError(ssh_session session) { return ssh_get_error(session); }

// The numeric address of a socket address, without the port.
std::string NumericAddress(const sockaddr* address, socklen_t length) {
  char text[NI_MAXHOST] = {};
  if (::getnameinfo(address, length, text, sizeof(text), nullptr, 0, NI_NUMERICHOST) != 0) return "";
  return text;
}

// The server key's SHA256 fingerprint as ssh-keygen prints it, or "" when unavailable.
std::string ServerKeyFingerprint(ssh_session session) {
  ssh_key key = nullptr;
  if (ssh_get_server_publickey(session, &key) != SSH_OK) return "";
  unsigned char* hash = nullptr;
  size_t length = 0;
  std::string fingerprint;
  if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &length) == 0) {
    char* text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, length);
    if (text != nullptr) {
      fingerprint = std::string(ssh_key_type_to_char(ssh_key_type(key))) + " " + text;
      ssh_string_free_char(text);
    }
    ssh_clean_pubkey_hash(&hash);
  }
  ssh_key_free(key);
  return fingerprint;
}

}  // namespace

const char* StageName(SshStage stage) {
  switch (stage) {
    case SshStage::kResolve:
      return "resolve";
    case SshStage::kConnect:
      return "connect";
    case SshStage::kHostKey:
      return "host key";
    case SshStage::kAuth:
      return "auth";
    case SshStage::kAgentStart:
      return "agent start";
  }
  return "agent start";
}

StatusOr<std::unique_ptr<SshSession>> SshSession::Create(const std::string& host, const SshOptions& options) {
  std::call_once(ssh_init_once, [] { ssh_init(); });
  std::unique_ptr<SshSession> ssh(new SshSession());
  ssh->host_ = host;
  ssh->accept_new_host_keys_ = options.accept_new_host_keys;
  ssh->session_ = ssh_new();
  if (ssh->session_ == nullptr) return Status::Error("resolve: cannot create an SSH session (out of memory)");
  ssh_session s = ssh->session_;
  if (ssh_options_set(s, SSH_OPTIONS_HOST, host.c_str()) != SSH_OK) {
    const std::string reason = SshError(s);
    return Status::Error("resolve: '" + host + "' is not a host name libssh accepts" +
                         (reason.empty() ? "" : ": " + reason));
  }
  // ~/.ssh/config (and the system's) first: the flags below override what it says.
  if (ssh_options_parse_config(s, nullptr) != SSH_OK) {
    return Status::Error("resolve: cannot read the ssh configuration (~/.ssh/config): " + SshError(s));
  }
  bool no = false;
  ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no);
  if (!options.user.empty()) ssh_options_set(s, SSH_OPTIONS_USER, options.user.c_str());
  if (options.port > 0) {
    unsigned int port = static_cast<unsigned int>(options.port);
    ssh_options_set(s, SSH_OPTIONS_PORT, &port);
  }
  if (!options.identity_file.empty()) ssh_options_set(s, SSH_OPTIONS_IDENTITY, options.identity_file.c_str());
  if (!options.known_hosts.empty()) ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, options.known_hosts.c_str());
  ssh->identity_file_ = options.identity_file;

  char* value = nullptr;
  if (ssh_options_get(s, SSH_OPTIONS_HOST, &value) == SSH_OK) {
    ssh->hostname_ = value;
    ssh_string_free_char(value);
  } else {
    ssh->hostname_ = host;
  }
  if (ssh_options_get(s, SSH_OPTIONS_USER, &value) == SSH_OK) {
    ssh->user_ = value;
    ssh_string_free_char(value);
  }
  if (ssh_options_get(s, SSH_OPTIONS_KNOWNHOSTS, &value) == SSH_OK) {
    ssh->known_hosts_ = value;
    ssh_string_free_char(value);
  } else {
    ssh->known_hosts_ = options.known_hosts.empty() ? "~/.ssh/known_hosts" : options.known_hosts;
  }
  if (ssh->user_.empty()) {
    passwd* entry = ::getpwuid(::getuid());
    if (entry != nullptr) ssh->user_ = entry->pw_name;
  }
  ssh_options_get_port(s, &ssh->port_);
  return ssh;
}

SshSession::~SshSession() {
  std::lock_guard<std::mutex> lock(socket_mutex_);
  if (channel_ != nullptr) ssh_channel_free(channel_);
  if (session_ != nullptr) {
    if (ssh_is_connected(session_) != 0) ssh_disconnect(session_);
    ssh_free(session_);  // closes the socket it was given
  } else if (socket_fd_ >= 0) {
    ::close(socket_fd_);
  }
  socket_fd_ = -1;
}

std::string SshSession::Target() const {
  std::string address = hostname_.find(':') != std::string::npos ? "[" + hostname_ + "]" : hostname_;
  return address + " port " + std::to_string(port_);
}

int SshSession::socket_fd() const {
  std::lock_guard<std::mutex> lock(socket_mutex_);
  return socket_fd_;
}

Status SshSession::Resolve() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  std::string port = std::to_string(port_);
  int rc = ::getaddrinfo(hostname_.c_str(), port.c_str(), &hints, &list);
  if (rc != 0 || list == nullptr) {
    std::string reason = rc == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(rc);
    return Status::Error("resolve: cannot resolve '" + hostname_ + "': " + reason);
  }
  addresses_ = std::shared_ptr<addrinfo>(list, ::freeaddrinfo);
  return Status::Ok();
}

Status SshSession::Connect(Clock::time_point deadline) {
  std::string last_error = "no address";
  int fd = -1;
  for (addrinfo* entry = addresses_.get(); entry != nullptr && fd < 0; entry = entry->ai_next) {
    std::string address = NumericAddress(entry->ai_addr, entry->ai_addrlen);
    int candidate = ::socket(entry->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (candidate < 0) {
      last_error = std::string("cannot create a socket: ") + std::strerror(errno);
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(socket_mutex_);
      socket_fd_ = candidate;
    }
    int error = 0;
    if (::connect(candidate, entry->ai_addr, entry->ai_addrlen) != 0) error = errno;
    if (error == EINPROGRESS) {
      error = ETIMEDOUT;
      while (true) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) break;
        pollfd pfd{candidate, POLLOUT, 0};
        int ready = ::poll(&pfd, 1, static_cast<int>(left));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) break;
        socklen_t length = sizeof(error);
        if (::getsockopt(candidate, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
        break;
      }
    }
    if (error == 0) {
      fd = candidate;
      remote_address_ = address;
      break;
    }
    last_error = address + " port " + std::to_string(port_) + ": " +
                 (error == ETIMEDOUT ? "no answer by the deadline (--start-timeout)" : std::strerror(error));
    if (error == ECONNREFUSED) last_error += " (is sshd running there, on that port?)";
    std::lock_guard<std::mutex> lock(socket_mutex_);
    ::close(candidate);
    socket_fd_ = -1;
  }
  if (fd < 0) return Status::Error("connect: " + last_error);

  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  sockaddr_storage local{};
  socklen_t local_length = sizeof(local);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_length) == 0) {
    local_address_ = NumericAddress(reinterpret_cast<sockaddr*>(&local), local_length);
  }
  auto left = std::chrono::duration_cast<std::chrono::seconds>(deadline - Clock::now()).count();
  long timeout_s = left > 0 ? static_cast<long>(left) : 1;  // NOLINT(google-runtime-int): libssh's type
  ssh_options_set(session_, SSH_OPTIONS_TIMEOUT, &timeout_s);
  socket_t socket = fd;
  ssh_options_set(session_, SSH_OPTIONS_FD, &socket);
  if (ssh_connect(session_) != SSH_OK) {
    return Status::Error("connect: SSH handshake with " + remote_address_ + " port " + std::to_string(port_) +
                         " failed: " + SshError(session_));
  }
  return Status::Ok();
}

Status SshSession::VerifyHostKey() {
  std::lock_guard<std::mutex> lock(known_hosts_mutex);
  ssh_known_hosts_e state = ssh_session_is_known_server(session_);
  std::string fingerprint = ServerKeyFingerprint(session_);
  switch (state) {
    case SSH_KNOWN_HOSTS_OK:
      return Status::Ok();
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER:
      return Status::Error(
          "host key: the host's key (" + fingerprint + ") is not the one " + known_hosts_ + " holds for '" +
          host_ +
          "': refused (a reinstalled host, or an attack); if the new key is right, remove the "
          "old one with ssh-keygen -R " +
          host_ + " -f " + known_hosts_);
    case SSH_KNOWN_HOSTS_NOT_FOUND:
    case SSH_KNOWN_HOSTS_UNKNOWN:
      if (!accept_new_host_keys_) {
        return Status::Error("host key: " + known_hosts_ + " holds no key for '" + host_ + "' (it offers " +
                             fingerprint +
                             "); add it, e.g. by ssh to it once, or give --ssh-accept-new-host-keys");
      }
      if (ssh_session_update_known_hosts(session_) != SSH_OK) {
        return Status::Error("host key: cannot record the key of '" + host_ + "' in " + known_hosts_ + ": " +
                             SshError(session_));
      }
      return Status::Ok();
    case SSH_KNOWN_HOSTS_ERROR:
      break;
  }
  return Status::Error("host key: cannot check the key of '" + host_ + "' against " + known_hosts_ + ": " +
                       SshError(session_));
}

Status SshSession::Authenticate() {
  int rc = ssh_userauth_publickey_auto(session_, nullptr, nullptr);
  if (rc == SSH_AUTH_SUCCESS) return Status::Ok();
  if (rc == SSH_AUTH_ERROR) return Status::Error("auth: " + SshError(session_));
  std::string tried = "the ssh-agent's keys, ";
  if (!identity_file_.empty()) tried += identity_file_ + ", ";
  tried += "~/.ssh/id_*";
  return Status::Error("auth: the host refused user '" + user_ + "' (public keys tried: " + tried +
                       "); check --ssh-user and -i, and the user's authorized_keys there");
}

Status SshSession::OpenChannel(const std::string& command) {
  channel_ = ssh_channel_new(session_);
  if (channel_ == nullptr) {
    return Status::Error("agent start: cannot create a channel: " + SshError(session_));
  }
  if (ssh_channel_open_session(channel_) != SSH_OK) {
    return Status::Error("agent start: the host refused a session channel: " + SshError(session_));
  }
  if (ssh_channel_request_exec(channel_, command.c_str()) != SSH_OK) {
    return Status::Error("agent start: the host refused to run the agent: " + SshError(session_));
  }
  return Status::Ok();
}

void SshSession::Abort() {
  std::lock_guard<std::mutex> lock(socket_mutex_);
  if (socket_fd_ >= 0) ::shutdown(socket_fd_, SHUT_RDWR);
}

}  // namespace hvdrun
