#include "runtime/shm/fd_handover.h"

#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string_view>
#include <utility>

#include "common/hex_text.h"

namespace hvdrun {
namespace {

using Clock = std::chrono::steady_clock;

std::string Errno(int error) { return std::strerror(error); }

// The abstract address of `name`: a NUL, then the name, with no terminator.
socklen_t AbstractAddress(const std::string& name, sockaddr_un* address) {
  *address = sockaddr_un{};
  address->sun_family = AF_UNIX;
  const size_t length = std::min(name.size(), sizeof(address->sun_path) - 1);
  std::memcpy(address->sun_path + 1, name.data(), length);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + length);
}

// Milliseconds left until `deadline` for poll, rounded up so that a wait never ends early; 0 once
// it has passed.
int PollMillis(Clock::time_point deadline) {
  const auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  const auto millis = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<decltype(millis)>(millis, 1 << 30));
}

StatusOr<PeerCredentials> Credentials(int socket) {
  ucred credentials{};
  socklen_t length = sizeof(credentials);
  if (::getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
    return Status::Error("getsockopt(SO_PEERCRED): " + Errno(errno));
  }
  return PeerCredentials{credentials.pid, credentials.uid};
}

std::string Describe(const PeerCredentials& peer) {
  return "pid " + std::to_string(peer.pid) + " (uid " + std::to_string(peer.uid) + ")";
}

// One byte of data with room for one descriptor: what SendFd sends and RecvFd receives. `message`
// points into the object itself, which therefore neither copies nor moves.
struct FdMessage {
  FdMessage() {
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
  }
  FdMessage(const FdMessage&) = delete;
  FdMessage& operator=(const FdMessage&) = delete;

  char byte = 0;
  iovec data{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
};

// Sends one byte with `fd` attached.
Status SendFd(int socket, int fd) {
  FdMessage sent_message;
  msghdr& message = sent_message.message;
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(header), &fd, sizeof(int));
  ssize_t sent = 0;
  do {
    sent = ::sendmsg(socket, &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent != 1) return Status::Error("sendmsg: " + Errno(sent < 0 ? errno : EIO));
  return Status::Ok();
}

// Receives the byte that SendFd sent and the descriptor with it (close-on-exec).
StatusOr<int> RecvFd(int socket) {
  FdMessage received_message;
  msghdr& message = received_message.message;
  ssize_t received = 0;
  do {
    received = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
  } while (received < 0 && errno == EINTR);
  if (received < 0) return Status::Error("recvmsg: " + Errno(errno));
  if (received == 0) return Status::Error("the connection was closed before the descriptor came");
  int fd = -1;
  for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr; header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS &&
        header->cmsg_len == CMSG_LEN(sizeof(int))) {
      std::memcpy(&fd, CMSG_DATA(header), sizeof(int));
    }
  }
  if ((message.msg_flags & MSG_CTRUNC) != 0 || fd < 0) {
    if (fd >= 0) ::close(fd);
    return Status::Error("the message came without a descriptor");
  }
  return fd;
}

// ReceiveFd's steps on `socket`, which the caller closes.
StatusOr<int> ConnectAndReceive(int socket, const std::string& name, pid_t server_pid,
                                Clock::time_point deadline) {
  // connect waits while the listener's backlog is full: at most until the deadline.
  const int wait = std::max(PollMillis(deadline), 1);
  timeval limit{wait / 1000, static_cast<suseconds_t>(wait % 1000) * 1000};
  ::setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
  sockaddr_un address{};
  const socklen_t length = AbstractAddress(name, &address);
  if (::connect(socket, reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    return Status::Error("connecting to @" + name + ": " + Errno(errno));
  }
  StatusOr<PeerCredentials> server = Credentials(socket);
  if (!server.ok()) return server.status();
  if (server->uid != ::geteuid() || server->pid != server_pid) {
    return Status::Error("@" + name + " is " + Describe(*server) + "'s, not pid " +
                         std::to_string(server_pid) + "'s of uid " + std::to_string(::geteuid()));
  }
  pollfd ready{socket, POLLIN, 0};
  int polled = 0;
  do {
    polled = ::poll(&ready, 1, PollMillis(deadline));
  } while ((polled < 0 && errno == EINTR) || (polled == 0 && Clock::now() < deadline));
  if (polled < 0) return Status::Error("poll: " + Errno(errno));
  if (polled == 0) return Status::Error("no descriptor came before the timeout");
  return RecvFd(socket);
}

}  // namespace

std::string FdListenerName(const unsigned char (&random)[16]) {
  return "hvdrun-" + HexEncode(std::string_view(reinterpret_cast<const char*>(random), sizeof(random)));
}

StatusOr<std::unique_ptr<FdListener>> FdListener::Listen() {
  unsigned char random[16];
  if (::getrandom(random, sizeof(random), 0) != static_cast<ssize_t>(sizeof(random))) {
    return Status::Error("getrandom: " + Errno(errno));
  }
  std::string name = FdListenerName(random);
  const int socket = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (socket < 0) return Status::Error("socket(AF_UNIX): " + Errno(errno));
  sockaddr_un address{};
  const socklen_t length = AbstractAddress(name, &address);
  if (::bind(socket, reinterpret_cast<const sockaddr*>(&address), length) != 0 ||
      ::listen(socket, SOMAXCONN) != 0) {
    const int error = errno;
    ::close(socket);
    return Status::Error("listening on @" + name + ": " + Errno(error));
  }
  return std::unique_ptr<FdListener>(new FdListener(socket, std::move(name)));
}

FdListener::~FdListener() { ::close(socket_); }

Status FdListener::Serve(int fd, int peers, Clock::time_point deadline, std::chrono::milliseconds timeout,
                         const Admit& admit) {
  const uid_t self = ::geteuid();
  std::string turned_away;
  int rejected = 0;
  for (int served = 0; served < peers;) {
    pollfd ready{socket_, POLLIN, 0};
    const int polled = ::poll(&ready, 1, PollMillis(deadline));
    if (polled < 0 && errno != EINTR) return Status::Error("poll: " + Errno(errno));
    if (polled <= 0) {
      if (Clock::now() < deadline) continue;
      std::string message = "did not connect within " + std::to_string(timeout.count()) + " ms";
      if (rejected > 0) {
        message += "; turned away " + turned_away +
                   (rejected > 3 ? " and " + std::to_string(rejected - 3) + " more" : "");
      }
      return Status::Error(message);
    }
    const int peer = ::accept4(socket_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (peer < 0) {
      if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED) continue;
      return Status::Error("accept: " + Errno(errno));
    }
    StatusOr<PeerCredentials> credentials = Credentials(peer);
    std::string refusal;
    if (!credentials.ok()) {
      refusal = credentials.status().message();
    } else if (credentials->uid != self) {
      refusal = "another user";
    } else {
      refusal = admit(*credentials);
    }
    if (refusal.empty()) {
      Status sent = SendFd(peer, fd);
      ::close(peer);
      if (!sent.ok()) return Status::Error("handing it to " + Describe(*credentials) + ": " + sent.message());
      ++served;
      continue;
    }
    ::close(peer);
    if (++rejected <= 3) {
      turned_away += (rejected > 1 ? ", " : "") + (credentials.ok() ? Describe(*credentials) : "a peer") +
                     ": " + refusal;
    }
  }
  return Status::Ok();
}

StatusOr<int> ReceiveFd(const std::string& name, pid_t server_pid, Clock::time_point deadline) {
  const int socket = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (socket < 0) return Status::Error("socket(AF_UNIX): " + Errno(errno));
  StatusOr<int> fd = ConnectAndReceive(socket, name, server_pid, deadline);
  ::close(socket);
  return fd;
}

}  // namespace hvdrun
