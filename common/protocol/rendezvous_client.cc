#include "common/protocol/rendezvous_client.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <thread>

#include "common/error_text.h"
#include "common/protocol/job_secret.h"

namespace hvdrun {
namespace {

using Clock = std::chrono::steady_clock;
using rendezvous::Message;

// How long a request that does not wait may take to be answered, and how much longer than its
// own timeout a get/wait may: the service answers at once, so only a hung service takes this long.
constexpr std::chrono::milliseconds kAnswerTimeout = std::chrono::seconds(60);
constexpr std::chrono::milliseconds kRetryInterval = std::chrono::milliseconds(100);
constexpr std::chrono::milliseconds kMinHandshakeTime = std::chrono::seconds(10);
// How long a reconnection may take to connect, and then to authenticate.
constexpr std::chrono::milliseconds kReconnectTimeout = std::chrono::seconds(10);

// Milliseconds left until `deadline`, for poll(); 0 when it has passed.
int PollTimeout(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, std::numeric_limits<int>::max()));
}

// Waits until `fd` is ready for `events`; false with errno = ETIMEDOUT at the deadline.
bool PollFor(int fd, decltype(pollfd::events) events, Clock::time_point deadline) {
  while (true) {
    pollfd entry{fd, events, 0};
    int ready = poll(&entry, 1, PollTimeout(deadline));
    if (ready > 0) return true;
    if (ready == 0) {
      errno = ETIMEDOUT;
      return false;
    }
    if (errno != EINTR) return false;
  }
}

// One connection attempt to one resolved address, bounded by `deadline`. Returns the connected
// socket, or an invalid one with errno set.
UniqueFd ConnectOnce(const addrinfo& address, Clock::time_point deadline) {
  UniqueFd fd(
      socket(address.ai_family, address.ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, address.ai_protocol));
  if (!fd.valid()) return fd;
  if (connect(fd.get(), address.ai_addr, address.ai_addrlen) != 0) {
    if (errno != EINPROGRESS) return UniqueFd();
    if (!PollFor(fd.get(), POLLOUT, deadline)) return UniqueFd();
    int error = 0;
    socklen_t size = sizeof(error);
    if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &size) != 0) return UniqueFd();
    if (error != 0) {
      errno = error;
      return UniqueFd();
    }
  }
  int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

// Whether errno says the peer ended the connection.
bool PeerClosed() { return errno == ECONNRESET || errno == EPIPE; }

// Sends all of `data` before `deadline`; an error line on failure, with *closed (when given) set
// if the failure is the peer having closed the connection.
Status SendAll(int fd, std::string_view data, Clock::time_point deadline, bool* closed = nullptr) {
  while (!data.empty()) {
    ssize_t sent = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent >= 0) {
      data.remove_prefix(static_cast<size_t>(sent));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (PollFor(fd, POLLOUT, deadline)) continue;
      if (errno == ETIMEDOUT) return Status::Error("sending timed out");
    }
    if (closed != nullptr) *closed = PeerClosed();
    return Status::Error(std::string("send failed: ") + std::strerror(errno));
  }
  return Status::Ok();
}

// Reads the next message before `deadline`; an error line on failure, with *closed (when given)
// set if the failure is the peer having closed the connection before any byte of the message.
StatusOr<Message> Receive(int fd, rendezvous::FrameDecoder& decoder, Clock::time_point deadline,
                          std::chrono::milliseconds waited, bool* closed = nullptr) {
  char buffer[64 * 1024];
  while (true) {
    StatusOr<std::optional<Message>> next = decoder.Next();
    if (!next.ok()) {
      return Status::Error("protocol error in the service's answer: " + next.status().message());
    }
    if (next.value()) return std::move(*next.value());
    if (!PollFor(fd, POLLIN, deadline)) {
      if (errno == ETIMEDOUT) return Status::Error("no answer within " + DurationText(waited));
      return Status::Error(std::string("poll failed: ") + std::strerror(errno));
    }
    ssize_t got = recv(fd, buffer, sizeof(buffer), 0);
    if (got == 0) {
      if (closed != nullptr) *closed = decoder.pending().empty();
      return Status::Error("the service closed the connection");
    }
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      if (closed != nullptr) *closed = PeerClosed() && decoder.pending().empty();
      return Status::Error(std::string("receive failed: ") + std::strerror(errno));
    }
    decoder.Append(std::string_view(buffer, static_cast<size_t>(got)));
  }
}

// Whether the peer has ended the connection on `fd` while no request was in flight: the socket is
// readable and what is there is the end of the stream or an error. Returns at once and reads
// nothing.
bool ClosedWhileIdle(int fd) {
  pollfd entry{fd, POLLIN, 0};
  int ready = 0;
  do {
    ready = poll(&entry, 1, 0);
  } while (ready < 0 && errno == EINTR);
  if (ready <= 0) return false;
  char byte = 0;
  ssize_t got = 0;
  do {
    got = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  } while (got < 0 && errno == EINTR);
  return got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

// Connects to the first address of `address` that accepts, retrying refusals until `deadline`
// when `retry_refused` (else one round over the addresses).
StatusOr<UniqueFd> ConnectWithRetry(const std::string& address, uint16_t port, Clock::time_point deadline,
                                    std::chrono::milliseconds timeout, bool retry_refused) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* resolved = nullptr;
  std::string port_text = std::to_string(port);
  if (int error = getaddrinfo(address.c_str(), port_text.c_str(), &hints, &resolved); error != 0) {
    return Status::Error("resolve: " + std::string(gai_strerror(error)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(resolved, &freeaddrinfo);
  int last_error = 0;
  while (true) {
    for (const addrinfo* entry = resolved; entry != nullptr; entry = entry->ai_next) {
      UniqueFd fd = ConnectOnce(*entry, deadline);
      if (fd.valid()) return fd;
      last_error = errno;
    }
    bool retry = retry_refused && (last_error == ECONNREFUSED || last_error == ECONNRESET ||
                                   last_error == ENETUNREACH || last_error == EHOSTUNREACH);
    if (!retry || Clock::now() + kRetryInterval >= deadline) break;
    std::this_thread::sleep_for(kRetryInterval);
  }
  std::string reason = last_error == ETIMEDOUT ? "no answer" : std::strerror(last_error);
  std::string within = retry_refused || last_error == ETIMEDOUT
                           ? "cannot connect within " + DurationText(timeout) + ": "
                           : std::string();
  return Status::Error("connect: " + within + reason + " (is hvdrun still running?)");
}

// The handshake: Challenge, Proof, Welcome (docs/protocol.md).
Status Authenticate(int fd, rendezvous::FrameDecoder& decoder, const std::string& secret_hex,
                    Clock::time_point deadline, std::chrono::milliseconds waited) {
  StatusOr<Message> first = Receive(fd, decoder, deadline, waited);
  if (!first.ok()) return Status::Error("authentication: " + first.status().message());
  const auto* challenge = std::get_if<rendezvous::Challenge>(&first.value());
  if (challenge == nullptr) {
    return Status::Error("authentication: expected Challenge, got " +
                         std::string(rendezvous::MessageName(first.value())));
  }
  if (challenge->protocol_version != rendezvous::kProtocolVersion) {
    return Status::Error("protocol version mismatch: the service speaks " +
                         std::to_string(challenge->protocol_version) + ", this client " +
                         std::to_string(rendezvous::kProtocolVersion) +
                         "; use the same hvdrun on every host");
  }
  std::string client_proof =
      HmacSha256Hex(secret_hex, challenge->nonce + std::string(rendezvous::kClientProofSuffix));
  std::string server_proof =
      HmacSha256Hex(secret_hex, challenge->nonce + std::string(rendezvous::kServerProofSuffix));
  std::string frame =
      rendezvous::EncodeFrame(rendezvous::Proof{rendezvous::kProtocolVersion, std::move(client_proof)});
  if (Status sent = SendAll(fd, frame, deadline); !sent.ok()) {
    return Status::Error("authentication: " + sent.message());
  }
  StatusOr<Message> answer = Receive(fd, decoder, deadline, waited);
  if (!answer.ok()) return Status::Error("authentication: " + answer.status().message());
  if (const auto* error = std::get_if<rendezvous::ErrorResponse>(&answer.value())) {
    return Status::Error("authentication refused: " + error->message);
  }
  const auto* welcome = std::get_if<rendezvous::Welcome>(&answer.value());
  if (welcome == nullptr) {
    return Status::Error("authentication: expected Welcome, got " +
                         std::string(rendezvous::MessageName(answer.value())));
  }
  if (!ConstantTimeEquals(welcome->proof, server_proof)) {
    return Status::Error(
        "authentication: the service did not prove it holds the job secret (is another program "
        "listening on this port?)");
  }
  return Status::Ok();
}

// Connects and authenticates: connect_timeout for connecting (retrying refusals if retry_refused),
// then at least kMinHandshakeTime for the handshake. `decoder` reads the handshake and is left
// holding whatever followed it. An error line, without the service's address, on failure.
StatusOr<UniqueFd> OpenAuthenticated(const std::string& address, uint16_t port, const std::string& secret_hex,
                                     std::chrono::milliseconds connect_timeout, bool retry_refused,
                                     rendezvous::FrameDecoder& decoder) {
  StatusOr<UniqueFd> fd =
      ConnectWithRetry(address, port, Clock::now() + connect_timeout, connect_timeout, retry_refused);
  if (!fd.ok()) return fd.status();
  std::chrono::milliseconds handshake_time = std::max(connect_timeout, kMinHandshakeTime);
  Status authenticated =
      Authenticate(fd.value().get(), decoder, secret_hex, Clock::now() + handshake_time, handshake_time);
  if (!authenticated.ok()) return authenticated;
  return fd;
}

// Whether a request may be sent twice with the same outcome as once: everything but add and
// compare-and-set (a report replaces the rank's earlier one).
bool SafeToRepeat(const Message& request) {
  return !std::holds_alternative<rendezvous::AddRequest>(request) &&
         !std::holds_alternative<rendezvous::CompareAndSetRequest>(request);
}

}  // namespace

StatusOr<std::unique_ptr<RendezvousClient>> RendezvousClient::Connect(const std::string& address,
                                                                      uint16_t port,
                                                                      const std::string& secret_hex,
                                                                      std::chrono::milliseconds timeout) {
  std::string host = address.find(':') != std::string::npos ? "[" + address + "]" : address;
  std::string where = "rendezvous " + host + ":" + std::to_string(port);
  if (!IsValidJobSecret(secret_hex)) {
    return Status::Error(where + ": the job secret (HVDRUN_SECRET) must be 64 lower-case hexadecimal digits");
  }
  rendezvous::FrameDecoder decoder;
  StatusOr<UniqueFd> fd =
      OpenAuthenticated(address, port, secret_hex, timeout, /*retry_refused=*/true, decoder);
  if (!fd.ok()) return Status::Error(where + ": " + fd.status().message());
  return std::unique_ptr<RendezvousClient>(new RendezvousClient(
      std::move(fd).value(), std::move(decoder), Endpoint{address, port, secret_hex}, std::move(where)));
}

RendezvousClient::RendezvousClient(UniqueFd fd, rendezvous::FrameDecoder decoder, Endpoint endpoint,
                                   std::string name)
    : RequestStore(std::move(name)),
      endpoint_(std::move(endpoint)),
      fd_(std::move(fd)),
      decoder_(std::move(decoder)) {}

Status RendezvousClient::Reconnect() {
  fd_.Reset();
  decoder_ = rendezvous::FrameDecoder();
  StatusOr<UniqueFd> fd = OpenAuthenticated(endpoint_.address, endpoint_.port, endpoint_.secret_hex,
                                            kReconnectTimeout, /*retry_refused=*/false, decoder_);
  if (!fd.ok()) return fd.status();
  fd_ = std::move(fd).value();
  return Status::Ok();
}

RendezvousClient::Exchange RendezvousClient::SendAndReceive(const Message& request, const std::string& frame,
                                                            std::chrono::milliseconds answer_within) {
  Clock::time_point deadline = Clock::now() + answer_within;
  bool closed = false;
  if (Status sent = SendAll(fd_.get(), frame, deadline, &closed); !sent.ok()) {
    // The service never had the whole request, so it cannot have acted on it.
    return Exchange{sent, closed};
  }
  StatusOr<Message> response = Receive(fd_.get(), decoder_, deadline, answer_within, &closed);
  bool may_retry = !response.ok() && closed && SafeToRepeat(request);
  return Exchange{std::move(response), may_retry};
}

StatusOr<Message> RendezvousClient::Call(const Message& request) {
  std::chrono::milliseconds answer_within = rendezvous::WaitTimeout(request) + kAnswerTimeout;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!broken_.ok()) return broken_;
  std::string frame = rendezvous::EncodeFrame(request);
  if (frame.size() - framing::kLengthBytes > rendezvous::kMaxFrameBytes) {
    return Status::Error(name() + ": " + std::string(rendezvous::MessageName(request)) + " of " +
                         std::to_string(frame.size() - framing::kLengthBytes) +
                         " bytes exceeds the protocol's limit of " +
                         std::to_string(rendezvous::kMaxFrameBytes) + " bytes");
  }
  // Reconnects at most once per request: before sending, or after a failure that allows it.
  bool reconnected = false;
  auto reconnect = [&]() -> bool {
    reconnected = true;
    Status again = Reconnect();
    if (!again.ok()) {
      std::string lost = ": connection lost: the service closed the connection; reconnecting failed: ";
      broken_ = Status::Error(name() + lost + again.message());
    }
    return again.ok();
  };
  if (ClosedWhileIdle(fd_.get()) && !reconnect()) return broken_;
  Exchange attempt = SendAndReceive(request, frame, answer_within);
  if (!attempt.response.ok() && attempt.may_retry && !reconnected) {
    if (!reconnect()) return broken_;
    attempt = SendAndReceive(request, frame, answer_within);
  }
  StatusOr<Message>& response = attempt.response;
  if (!response.ok()) {
    broken_ = Status::Error(name() + ": connection lost: " + response.status().message() +
                            (reconnected ? " (after reconnecting)" : ""));
    fd_.Reset();
    return broken_;
  }
  return response;
}

Status RendezvousClient::SendReport(int rank, const std::string& json) {
  return CallFor<rendezvous::OkResponse>(rendezvous::ReportRequest{rank, json}).status();
}

Status RendezvousClient::SendTimelinePiece(int rank, uint64_t offset, const std::string& data) {
  return CallFor<rendezvous::OkResponse>(rendezvous::TimelineRequest{rank, offset, data}).status();
}

}  // namespace hvdrun
