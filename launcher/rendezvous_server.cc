#include "launcher/rendezvous_server.h"

#include <algorithm>
#include <array>
#include <boost/asio.hpp>
#include <charconv>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "common/job_secret.h"
#include "common/rendezvous_protocol.h"

namespace hvdrun {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using rendezvous::Message;

constexpr size_t kReadChunkBytes = 64u << 10;
// Keys listed by name in a wait's timeout error; the rest are counted.
constexpr size_t kMaxKeysNamed = 16;

// A key or peer text made safe for a one-line message: bytes outside printable ASCII become '?',
// and a very long one is cut.
std::string Printable(std::string_view text) {
  constexpr size_t kMaxShown = 80;
  std::string out;
  for (char c : text.substr(0, kMaxShown)) out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  if (text.size() > kMaxShown) out += "...";
  return out;
}

std::string Quoted(std::string_view key) { return "'" + Printable(key) + "'"; }

std::string DurationText(std::chrono::milliseconds duration) {
  if (duration.count() % 1000 == 0) return std::to_string(duration.count() / 1000) + " s";
  return std::to_string(duration.count()) + " ms";
}

std::string PeerText(const tcp::socket& socket) {
  boost::system::error_code ec;
  tcp::endpoint peer = socket.remote_endpoint(ec);
  if (ec) return "an unknown peer";
  std::string address = peer.address().to_string();
  if (peer.address().is_v6()) address = "[" + address + "]";
  return address + ":" + std::to_string(peer.port());
}

std::string ExceedsText(std::string_view what, size_t size, size_t limit) {
  return std::string(what) + " of " + std::to_string(size) + " bytes exceeds the limit of " +
         std::to_string(limit) + " bytes";
}

class Connection;

}  // namespace

class RendezvousServer::Impl {
 public:
  Impl(std::string secret, std::function<void(const std::string&)> log, RendezvousLimits limits)
      : acceptor_(io_), secret_(std::move(secret)), log_(std::move(log)), limits_(limits) {}

  Status Listen(const std::string& bind_address);
  void Run() {
    Accept();
    thread_ = std::thread([this] { io_.run(); });
  }
  // Called from the owner's thread: stops the service and waits for its thread.
  void Stop() {
    asio::post(io_, [this] { Shutdown(); });
    if (thread_.joinable()) thread_.join();
  }

  uint16_t port() const { return port_; }
  std::map<int, std::string> Reports() const {
    std::lock_guard<std::mutex> lock(reports_mutex_);
    return reports_;
  }
  std::map<std::string, std::string> ValuesWithPrefix(std::string_view prefix) const {
    std::lock_guard<std::mutex> lock(store_mutex_);
    std::map<std::string, std::string> values;
    for (auto it = store_.lower_bound(std::string(prefix));
         it != store_.end() && it->first.starts_with(prefix); ++it) {
      values.insert(*it);
    }
    return values;
  }

  // Used by connections, on the service thread.
  asio::io_context& io() { return io_; }
  const std::string& secret() const { return secret_; }
  const RendezvousLimits& limits() const { return limits_; }
  void Log(const std::string& line) {
    if (log_) log_(line);
  }
  void Forget(const std::shared_ptr<Connection>& connection);
  void StartWaiting(const std::shared_ptr<Connection>& connection) { waiting_.insert(connection); }
  void StopWaiting(const std::shared_ptr<Connection>& connection) { waiting_.erase(connection); }
  // Answers a request that does not wait; nullopt for a get/wait that must wait.
  std::optional<Message> Handle(const Message& request);
  bool Has(const std::string& key) const { return store_.count(key) != 0; }
  const std::string* Find(const std::string& key) const {
    auto it = store_.find(key);
    return it == store_.end() ? nullptr : &it->second;
  }

 private:
  void Accept();
  void Shutdown();
  // Lets every waiting connection check whether its keys now exist.
  void WakeWaiters();
  std::optional<std::string> CheckKey(const std::string& key) const;
  // Stores key = value, or says which limit it would break.
  std::optional<std::string> Store(const std::string& key, std::string value);
  Message HandleSet(const rendezvous::SetRequest& request);
  Message HandleAdd(const rendezvous::AddRequest& request);
  Message HandleCompareAndSet(const rendezvous::CompareAndSetRequest& request);
  Message HandleReport(const rendezvous::ReportRequest& request);

  // Declared first, destroyed last: handlers it still holds may own connections.
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  uint16_t port_ = 0;
  const std::string secret_;
  const std::function<void(const std::string&)> log_;
  const RendezvousLimits limits_;

  // Touched on the service thread only.
  std::set<std::shared_ptr<Connection>> connections_;
  std::set<std::shared_ptr<Connection>> waiting_;
  size_t store_bytes_ = 0;
  bool stopping_ = false;

  // The service thread is store_'s only writer: it writes holding store_mutex_ and reads without
  // it; any other thread reads holding it (ValuesWithPrefix).
  mutable std::mutex store_mutex_;
  std::map<std::string, std::string> store_;

  mutable std::mutex reports_mutex_;
  std::map<int, std::string> reports_;  // GUARDED_BY(reports_mutex_)
  size_t report_bytes_ = 0;             // GUARDED_BY(reports_mutex_)
};

namespace {

// One client connection, owned by shared_ptrs held by the server's set and by pending handlers.
// Every member is touched on the service thread only.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(RendezvousServer::Impl& server, tcp::socket socket)
      : server_(server),
        socket_(std::move(socket)),
        peer_(PeerText(socket_)),
        idle_timer_(server.io()),
        wait_timer_(server.io()),
        decoder_(rendezvous::kMaxHandshakeFrameBytes) {}

  // Sends the challenge and starts reading, with the authentication deadline armed.
  void Start() {
    nonce_ = RandomBytes(kJobSecretBytes);
    Send(rendezvous::Challenge{rendezvous::kProtocolVersion, nonce_});
    ArmIdleTimer(server_.limits().auth_timeout);
    Read();
  }

  // Closes at once (the service is stopping); a waiting client first gets an error response, sent
  // only if it fits the socket's buffer now, since the service thread must not block.
  void Stop() {
    if (closed_) return;
    if (waiting_ && !writing_) {
      std::string frame = rendezvous::EncodeFrame(
          rendezvous::ErrorResponse{"the rendezvous service stopped (hvdrun is shutting down)"});
      boost::system::error_code ec;
      socket_.non_blocking(true, ec);
      if (!ec) asio::write(socket_, asio::buffer(frame), ec);
    }
    CloseSocket();
  }

  // Finishes a pending get/wait if its keys now exist.
  void CheckWait() {
    if (!waiting_ || closed_) return;
    if (wait_is_get_) {
      const std::string* value = server_.Find(wait_keys_.front());
      if (value != nullptr) FinishWait(rendezvous::ValueResponse{*value});
      return;
    }
    for (const std::string& key : wait_keys_) {
      if (!server_.Has(key)) return;
    }
    FinishWait(rendezvous::OkResponse{});
  }

 private:
  void Read() {
    socket_.async_read_some(asio::buffer(read_buffer_),
                            [self = shared_from_this()](const boost::system::error_code& ec, size_t bytes) {
                              self->OnRead(ec, bytes);
                            });
  }

  void OnRead(const boost::system::error_code& ec, size_t bytes) {
    if (closed_) return;
    if (ec) {
      // A refused connection was logged already; an orderly end between frames is not an error.
      bool quiet = close_after_write_ || (authenticated_ && decoder_.pending().empty() &&
                                          (ec == asio::error::eof || ec == asio::error::connection_reset));
      if (quiet) {
        Close("", "");
      } else if (!authenticated_) {
        Close("refused", "closed the connection without authenticating");
      } else if (!decoder_.pending().empty()) {
        Close("closed", "connection ended inside a frame (" + std::to_string(decoder_.pending().size()) +
                            " bytes of it received)");
      } else {
        Close("closed", "read failed: " + ec.message());
      }
      return;
    }
    if (authenticated_ && !waiting_) ArmIdleTimer(server_.limits().idle_timeout);
    decoder_.Append(std::string_view(read_buffer_.data(), bytes));
    ProcessFrames();
    if (closed_) return;
    // A client may send its next request before the answer to a waiting one, but not a flood.
    if (waiting_ && decoder_.pending().size() > rendezvous::kMaxFrameBytes) {
      Close("closed", "sent more than " + std::to_string(rendezvous::kMaxFrameBytes) +
                          " bytes while a request was waiting");
      return;
    }
    Read();
  }

  void ProcessFrames() {
    while (!closed_ && !waiting_ && !close_after_write_) {
      StatusOr<std::optional<Message>> next = decoder_.Next();
      if (!next.ok()) {
        Close(authenticated_ ? "closed" : "refused", "protocol error: " + next.status().message());
        return;
      }
      if (!next.value()) return;
      if (authenticated_) {
        HandleRequest(*next.value());
      } else {
        HandleProof(*next.value());
      }
    }
  }

  void HandleProof(const Message& message) {
    const auto* proof = std::get_if<rendezvous::Proof>(&message);
    if (proof == nullptr) {
      Close("refused",
            "protocol error: expected Proof, got " + std::string(rendezvous::MessageName(message)));
      return;
    }
    if (proof->protocol_version != rendezvous::kProtocolVersion) {
      Refuse("protocol version mismatch: the client speaks " + std::to_string(proof->protocol_version) +
             ", this hvdrun " + std::to_string(rendezvous::kProtocolVersion) +
             "; use the same hvdrun on every host");
      return;
    }
    std::string expected =
        HmacSha256Hex(server_.secret(), nonce_ + std::string(rendezvous::kClientProofSuffix));
    if (!ConstantTimeEquals(proof->proof, expected)) {
      Refuse("wrong secret");
      return;
    }
    authenticated_ = true;
    decoder_.set_max_frame_bytes(rendezvous::kMaxFrameBytes);
    Send(rendezvous::Welcome{
        HmacSha256Hex(server_.secret(), nonce_ + std::string(rendezvous::kServerProofSuffix))});
    ArmIdleTimer(server_.limits().idle_timeout);
  }

  // Tells the client why it is refused, logs it, and closes once the answer is sent.
  void Refuse(const std::string& reason) {
    server_.Log("hvdrun: rendezvous: refused " + peer_ + ": " + reason);
    Send(rendezvous::ErrorResponse{reason});
    close_after_write_ = true;
    CancelTimers();
  }

  void HandleRequest(const Message& message) {
    if (std::holds_alternative<rendezvous::GetRequest>(message)) {
      const auto& get = std::get<rendezvous::GetRequest>(message);
      if (std::optional<Message> error = server_.Handle(message)) {
        Send(*error);
      } else {
        StartWait({get.key}, true, get.timeout_ms);
      }
      return;
    }
    if (std::holds_alternative<rendezvous::WaitRequest>(message)) {
      const auto& wait = std::get<rendezvous::WaitRequest>(message);
      if (std::optional<Message> answer = server_.Handle(message)) {
        Send(*answer);
      } else {
        StartWait(wait.keys, false, wait.timeout_ms);
      }
      return;
    }
    std::optional<Message> response = server_.Handle(message);
    if (!response) {
      Close("closed", "protocol error: unexpected " + std::string(rendezvous::MessageName(message)));
      return;
    }
    Send(*response);
  }

  void StartWait(std::vector<std::string> keys, bool is_get, uint32_t timeout_ms) {
    waiting_ = true;
    wait_is_get_ = is_get;
    wait_keys_ = std::move(keys);
    wait_timeout_ = std::chrono::milliseconds(timeout_ms);
    idle_timer_.cancel();
    ++idle_generation_;
    server_.StartWaiting(shared_from_this());
    uint64_t generation = ++wait_generation_;
    wait_timer_.expires_after(wait_timeout_);
    wait_timer_.async_wait([self = shared_from_this(), generation](const boost::system::error_code& ec) {
      if (ec || generation != self->wait_generation_ || !self->waiting_ || self->closed_) return;
      self->FinishWait(rendezvous::ErrorResponse{self->TimeoutText()});
    });
  }

  std::string TimeoutText() const {
    std::string text = "timed out after " + DurationText(wait_timeout_) + " waiting for ";
    if (wait_is_get_) return text + "key " + Quoted(wait_keys_.front());
    std::vector<std::string> missing;
    for (const std::string& key : wait_keys_) {
      if (!server_.Has(key)) missing.push_back(key);
    }
    text +=
        std::to_string(wait_keys_.size()) + " keys; " + std::to_string(missing.size()) + " still missing: ";
    for (size_t i = 0; i < missing.size() && i < kMaxKeysNamed; ++i) {
      text += (i == 0 ? "" : ", ") + Quoted(missing[i]);
    }
    if (missing.size() > kMaxKeysNamed) {
      text += " and " + std::to_string(missing.size() - kMaxKeysNamed) + " more";
    }
    return text;
  }

  void FinishWait(const Message& response) {
    waiting_ = false;
    ++wait_generation_;
    wait_timer_.cancel();
    server_.StopWaiting(shared_from_this());
    Send(response);
    ArmIdleTimer(server_.limits().idle_timeout);
    // Requests that arrived meanwhile are handled later, not from inside the caller's loop over
    // the waiting connections.
    asio::post(server_.io(), [self = shared_from_this()] { self->ProcessFrames(); });
  }

  void Send(const Message& message) {
    outbox_.push_back(rendezvous::EncodeFrame(message));
    if (!writing_) WriteNext();
  }

  void WriteNext() {
    if (closed_) return;
    if (outbox_.empty()) {
      if (close_after_write_) Close("", "");
      return;
    }
    writing_ = true;
    asio::async_write(socket_, asio::buffer(outbox_.front()),
                      [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                        self->writing_ = false;
                        if (self->closed_) return;
                        if (ec) {
                          self->Close(self->authenticated_ ? "closed" : "refused",
                                      "write failed: " + ec.message());
                          return;
                        }
                        self->outbox_.pop_front();
                        self->WriteNext();
                      });
  }

  void ArmIdleTimer(std::chrono::milliseconds timeout) {
    uint64_t generation = ++idle_generation_;
    idle_timer_.cancel();
    if (timeout.count() <= 0) return;
    idle_timer_.expires_after(timeout);
    idle_timer_.async_wait(
        [self = shared_from_this(), generation, timeout](const boost::system::error_code& ec) {
          if (ec || generation != self->idle_generation_ || self->closed_ || self->waiting_) return;
          if (self->authenticated_) {
            // Bytes that arrived as the timer fired are read and served (the read re-arms the
            // timer): an idle close then crosses only a request still on the wire, which the
            // client resends if it is safe to (rendezvous_client.h).
            boost::system::error_code unread_ec;
            if (self->socket_.available(unread_ec) > 0 && !unread_ec) return;
            self->Close("closed", "idle for " + DurationText(timeout));
          } else {
            self->Close("refused", "no authentication within " + DurationText(timeout));
          }
        });
  }

  void CancelTimers() {
    ++idle_generation_;
    ++wait_generation_;
    idle_timer_.cancel();
    wait_timer_.cancel();
  }

  // Closes the connection; logs "hvdrun: rendezvous: <verb> <peer>: <reason>" when verb is given.
  void Close(const std::string& verb, const std::string& reason) {
    if (closed_) return;
    if (!verb.empty()) server_.Log("hvdrun: rendezvous: " + verb + " " + peer_ + ": " + reason);
    if (waiting_) server_.StopWaiting(shared_from_this());
    CloseSocket();
    server_.Forget(shared_from_this());
  }

  void CloseSocket() {
    closed_ = true;
    waiting_ = false;
    CancelTimers();
    boost::system::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }

  RendezvousServer::Impl& server_;
  tcp::socket socket_;
  const std::string peer_;
  asio::steady_timer idle_timer_;  // authentication deadline, then idle deadline
  asio::steady_timer wait_timer_;  // deadline of a waiting get/wait
  uint64_t idle_generation_ = 0;   // bumped to void a timer handler already queued
  uint64_t wait_generation_ = 0;
  rendezvous::FrameDecoder decoder_;
  std::array<char, kReadChunkBytes> read_buffer_{};
  std::deque<std::string> outbox_;
  std::string nonce_;
  bool authenticated_ = false;
  bool writing_ = false;
  bool close_after_write_ = false;
  bool closed_ = false;
  bool waiting_ = false;
  bool wait_is_get_ = false;
  std::vector<std::string> wait_keys_;
  std::chrono::milliseconds wait_timeout_{0};
};

}  // namespace

Status RendezvousServer::Impl::Listen(const std::string& bind_address) {
  boost::system::error_code ec;
  asio::ip::address address = asio::ip::make_address(bind_address, ec);
  if (ec) {
    return Status::Error("rendezvous: cannot listen on '" + Printable(bind_address) +
                         "': not an IP address (give one of this machine's addresses, e.g. 127.0.0.1)");
  }
  if (address.is_unspecified()) {
    return Status::Error("rendezvous: refusing to listen on the wildcard address " + bind_address +
                         ", which would expose the service on every network; give one of this "
                         "machine's addresses");
  }
  tcp::endpoint endpoint(address, 0);
  if (acceptor_.open(endpoint.protocol(), ec); !ec) {
    if (acceptor_.bind(endpoint, ec); !ec) {
      if (acceptor_.listen(asio::socket_base::max_listen_connections, ec); !ec) {
        port_ = acceptor_.local_endpoint(ec).port();
      }
    }
  }
  if (ec) return Status::Error("rendezvous: cannot listen on " + bind_address + ": " + ec.message());
  return Status::Ok();
}

void RendezvousServer::Impl::Accept() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (stopping_ || !acceptor_.is_open()) return;
    if (!ec) {
      if (connections_.size() >= limits_.max_connections) {
        Log("hvdrun: rendezvous: refused " + PeerText(socket) + ": too many connections (limit " +
            std::to_string(limits_.max_connections) + ")");
        boost::system::error_code ignored;
        socket.close(ignored);
      } else {
        auto connection = std::make_shared<Connection>(*this, std::move(socket));
        connections_.insert(connection);
        connection->Start();
      }
    }
    // Errors such as running out of file descriptors are transient: keep accepting.
    Accept();
  });
}

void RendezvousServer::Impl::Forget(const std::shared_ptr<Connection>& connection) {
  waiting_.erase(connection);
  connections_.erase(connection);
}

void RendezvousServer::Impl::Shutdown() {
  stopping_ = true;
  boost::system::error_code ec;
  acceptor_.close(ec);
  for (const std::shared_ptr<Connection>& connection : connections_) connection->Stop();
  connections_.clear();
  waiting_.clear();
  io_.stop();
}

void RendezvousServer::Impl::WakeWaiters() {
  std::vector<std::shared_ptr<Connection>> waiting(waiting_.begin(), waiting_.end());
  for (const std::shared_ptr<Connection>& connection : waiting) connection->CheckWait();
}

std::optional<std::string> RendezvousServer::Impl::CheckKey(const std::string& key) const {
  if (key.size() > limits_.max_key_bytes) {
    return ExceedsText("key " + Quoted(key), key.size(), limits_.max_key_bytes);
  }
  return std::nullopt;
}

std::optional<std::string> RendezvousServer::Impl::Store(const std::string& key, std::string value) {
  if (value.size() > limits_.max_value_bytes) {
    return ExceedsText("value for key " + Quoted(key) + ",", value.size(), limits_.max_value_bytes);
  }
  auto it = store_.find(key);
  size_t old_bytes = it == store_.end() ? 0 : key.size() + it->second.size();
  if (it == store_.end() && store_.size() >= limits_.max_keys) {
    return "cannot add key " + Quoted(key) + ": the store holds " + std::to_string(store_.size()) +
           " keys, its limit";
  }
  if (store_bytes_ - old_bytes + key.size() + value.size() > limits_.max_store_bytes) {
    return "cannot store key " + Quoted(key) + ": the store would exceed its limit of " +
           std::to_string(limits_.max_store_bytes) + " bytes";
  }
  store_bytes_ = store_bytes_ - old_bytes + key.size() + value.size();
  std::lock_guard<std::mutex> lock(store_mutex_);
  store_[key] = std::move(value);
  return std::nullopt;
}

Message RendezvousServer::Impl::HandleSet(const rendezvous::SetRequest& request) {
  if (std::optional<std::string> error = CheckKey(request.key)) return rendezvous::ErrorResponse{*error};
  if (std::optional<std::string> error = Store(request.key, request.value)) {
    return rendezvous::ErrorResponse{*error};
  }
  WakeWaiters();
  return rendezvous::OkResponse{};
}

Message RendezvousServer::Impl::HandleAdd(const rendezvous::AddRequest& request) {
  if (std::optional<std::string> error = CheckKey(request.key)) return rendezvous::ErrorResponse{*error};
  int64_t current = 0;
  if (const std::string* value = Find(request.key)) {
    const char* end = value->data() + value->size();
    auto [ptr, ec] = std::from_chars(value->data(), end, current);
    if (ec != std::errc() || ptr != end) {
      return rendezvous::ErrorResponse{"cannot add to key " + Quoted(request.key) + ": its value '" +
                                       Printable(*value) + "' is not a whole number"};
    }
  }
  int64_t sum = 0;
  if (__builtin_add_overflow(current, request.delta, &sum)) {
    return rendezvous::ErrorResponse{"cannot add " + std::to_string(request.delta) + " to key " +
                                     Quoted(request.key) + ": the result overflows 64 bits"};
  }
  if (std::optional<std::string> error = Store(request.key, std::to_string(sum))) {
    return rendezvous::ErrorResponse{*error};
  }
  WakeWaiters();
  return rendezvous::IntResponse{sum};
}

Message RendezvousServer::Impl::HandleCompareAndSet(const rendezvous::CompareAndSetRequest& request) {
  if (std::optional<std::string> error = CheckKey(request.key)) return rendezvous::ErrorResponse{*error};
  const std::string* current = Find(request.key);
  bool matches = current == nullptr ? request.expected.empty() : *current == request.expected;
  if (!matches) return rendezvous::ValueResponse{current == nullptr ? std::string() : *current};
  if (std::optional<std::string> error = Store(request.key, request.desired)) {
    return rendezvous::ErrorResponse{*error};
  }
  WakeWaiters();
  return rendezvous::ValueResponse{request.desired};
}

Message RendezvousServer::Impl::HandleReport(const rendezvous::ReportRequest& request) {
  if (request.rank < 0) {
    return rendezvous::ErrorResponse{"report from rank " + std::to_string(request.rank) +
                                     ": a rank is a whole number from 0"};
  }
  size_t limit = std::min<size_t>(limits_.max_report_bytes, rendezvous::kMaxFrameBytes - 1024);
  if (request.json.size() > limit) {
    return rendezvous::ErrorResponse{
        ExceedsText("report of rank " + std::to_string(request.rank) + ",", request.json.size(), limit)};
  }
  std::lock_guard<std::mutex> lock(reports_mutex_);
  auto it = reports_.find(request.rank);
  size_t old_bytes = it == reports_.end() ? 0 : it->second.size();
  if (report_bytes_ - old_bytes + request.json.size() > limits_.max_total_report_bytes) {
    return rendezvous::ErrorResponse{"report of rank " + std::to_string(request.rank) +
                                     ": the reports would exceed their limit of " +
                                     std::to_string(limits_.max_total_report_bytes) + " bytes in all"};
  }
  report_bytes_ = report_bytes_ - old_bytes + request.json.size();
  reports_[request.rank] = request.json;
  return rendezvous::OkResponse{};
}

std::optional<Message> RendezvousServer::Impl::Handle(const Message& request) {
  if (const auto* set = std::get_if<rendezvous::SetRequest>(&request)) return HandleSet(*set);
  if (const auto* get = std::get_if<rendezvous::GetRequest>(&request)) {
    if (std::optional<std::string> error = CheckKey(get->key)) return rendezvous::ErrorResponse{*error};
    if (const std::string* value = Find(get->key)) return rendezvous::ValueResponse{*value};
    if (get->timeout_ms == 0) {
      return rendezvous::ErrorResponse{"timed out after 0 s waiting for key " + Quoted(get->key)};
    }
    return std::nullopt;
  }
  if (const auto* wait = std::get_if<rendezvous::WaitRequest>(&request)) {
    if (wait->keys.size() > limits_.max_wait_keys) {
      return rendezvous::ErrorResponse{"wait for " + std::to_string(wait->keys.size()) +
                                       " keys exceeds the limit of " + std::to_string(limits_.max_wait_keys)};
    }
    size_t missing = 0;
    for (const std::string& key : wait->keys) {
      if (std::optional<std::string> error = CheckKey(key)) return rendezvous::ErrorResponse{*error};
      if (!Has(key)) ++missing;
    }
    if (missing == 0) return rendezvous::OkResponse{};
    if (wait->timeout_ms == 0) {
      return rendezvous::ErrorResponse{"timed out after 0 s waiting for " +
                                       std::to_string(wait->keys.size()) + " keys; " +
                                       std::to_string(missing) + " still missing"};
    }
    return std::nullopt;
  }
  if (const auto* add = std::get_if<rendezvous::AddRequest>(&request)) return HandleAdd(*add);
  if (const auto* cas = std::get_if<rendezvous::CompareAndSetRequest>(&request)) {
    return HandleCompareAndSet(*cas);
  }
  if (const auto* del = std::get_if<rendezvous::DeleteRequest>(&request)) {
    if (std::optional<std::string> error = CheckKey(del->key)) return rendezvous::ErrorResponse{*error};
    auto it = store_.find(del->key);
    if (it != store_.end()) {
      store_bytes_ -= it->first.size() + it->second.size();
      std::lock_guard<std::mutex> lock(store_mutex_);
      store_.erase(it);
    }
    return rendezvous::OkResponse{};
  }
  if (const auto* report = std::get_if<rendezvous::ReportRequest>(&request)) return HandleReport(*report);
  return std::nullopt;  // not a request
}

StatusOr<std::unique_ptr<RendezvousServer>> RendezvousServer::Start(
    const std::string& bind_address, const std::string& secret_hex,
    std::function<void(const std::string&)> log, RendezvousLimits limits) {
  if (!IsValidJobSecret(secret_hex)) {
    return Status::Error("rendezvous: the job secret must be 64 lower-case hexadecimal digits");
  }
  auto impl = std::make_unique<Impl>(secret_hex, std::move(log), limits);
  if (Status status = impl->Listen(bind_address); !status.ok()) return status;
  impl->Run();
  return std::unique_ptr<RendezvousServer>(new RendezvousServer(std::move(impl)));
}

RendezvousServer::RendezvousServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RendezvousServer::~RendezvousServer() { impl_->Stop(); }

uint16_t RendezvousServer::port() const { return impl_->port(); }

std::map<int, std::string> RendezvousServer::Reports() const { return impl_->Reports(); }

std::map<std::string, std::string> RendezvousServer::ValuesWithPrefix(std::string_view prefix) const {
  return impl_->ValuesWithPrefix(prefix);
}

}  // namespace hvdrun
