#include "launcher/rendezvous/rendezvous_connection.h"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <optional>
#include <string_view>
#include <utility>
#include <variant>

#include "common/error_text.h"
#include "common/protocol/job_secret.h"
#include "launcher/rendezvous/rendezvous_listener.h"

namespace hvdrun {

namespace asio = boost::asio;
using asio::ip::tcp;
using rendezvous::Message;

RendezvousConnection::RendezvousConnection(RendezvousListener& listener, tcp::socket socket)
    : listener_(listener),
      socket_(std::move(socket)),
      peer_(PeerText(socket_)),
      idle_timer_(listener.io()),
      wait_timer_(listener.io()),
      decoder_(rendezvous::kMaxHandshakeFrameBytes) {}

std::string RendezvousConnection::PeerText(const tcp::socket& socket) {
  boost::system::error_code ec;
  tcp::endpoint peer = socket.remote_endpoint(ec);
  if (ec) return "an unknown peer";
  std::string address = peer.address().to_string();
  if (peer.address().is_v6()) address = "[" + address + "]";
  return address + ":" + std::to_string(peer.port());
}

void RendezvousConnection::Start() {
  nonce_ = RandomBytes(kJobSecretBytes);
  Send(rendezvous::Challenge{rendezvous::kProtocolVersion, nonce_});
  ArmIdleTimer(listener_.limits().auth_timeout);
  Read();
}

void RendezvousConnection::Stop() {
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

void RendezvousConnection::CheckWait() {
  if (!waiting_ || closed_) return;
  if (std::optional<Message> answer = listener_.Answer(waiting_request_)) FinishWait(*answer);
}

void RendezvousConnection::Read() {
  socket_.async_read_some(asio::buffer(read_buffer_),
                          [self = shared_from_this()](const boost::system::error_code& ec, size_t bytes) {
                            self->OnRead(ec, bytes);
                          });
}

void RendezvousConnection::OnRead(const boost::system::error_code& ec, size_t bytes) {
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
  if (authenticated_ && !waiting_) ArmIdleTimer(listener_.limits().idle_timeout);
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

void RendezvousConnection::ProcessFrames() {
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

void RendezvousConnection::HandleProof(const Message& message) {
  const auto* proof = std::get_if<rendezvous::Proof>(&message);
  if (proof == nullptr) {
    Close("refused", "protocol error: expected Proof, got " + std::string(rendezvous::MessageName(message)));
    return;
  }
  if (proof->protocol_version != rendezvous::kProtocolVersion) {
    Refuse("protocol version mismatch: the client speaks " + std::to_string(proof->protocol_version) +
           ", this hvdrun " + std::to_string(rendezvous::kProtocolVersion) +
           "; use the same hvdrun on every host");
    return;
  }
  std::string expected =
      HmacSha256Hex(listener_.secret(), nonce_ + std::string(rendezvous::kClientProofSuffix));
  if (!ConstantTimeEquals(proof->proof, expected)) {
    Refuse("wrong secret");
    return;
  }
  authenticated_ = true;
  decoder_.set_max_frame_bytes(rendezvous::kMaxFrameBytes);
  Send(rendezvous::Welcome{
      HmacSha256Hex(listener_.secret(), nonce_ + std::string(rendezvous::kServerProofSuffix))});
  ArmIdleTimer(listener_.limits().idle_timeout);
}

void RendezvousConnection::Refuse(const std::string& reason) {
  listener_.Log("hvdrun: rendezvous: refused " + peer_ + ": " + reason);
  Send(rendezvous::ErrorResponse{reason});
  close_after_write_ = true;
  CancelTimers();
}

void RendezvousConnection::HandleRequest(const Message& request) {
  if (!rendezvous::IsRequest(request)) {
    Close("closed", "protocol error: unexpected " + std::string(rendezvous::MessageName(request)));
    return;
  }
  if (std::optional<Message> answer = listener_.Answer(request)) {
    Send(*answer);
  } else {
    StartWait(request);
  }
}

void RendezvousConnection::StartWait(Message request) {
  waiting_ = true;
  waiting_request_ = std::move(request);
  idle_timer_.cancel();
  ++idle_generation_;
  listener_.StartWaiting(shared_from_this());
  uint64_t generation = ++wait_generation_;
  wait_timer_.expires_after(rendezvous::WaitTimeout(waiting_request_));
  wait_timer_.async_wait([self = shared_from_this(), generation](const boost::system::error_code& ec) {
    if (ec || generation != self->wait_generation_ || !self->waiting_ || self->closed_) return;
    self->FinishWait(self->listener_.TimedOut(self->waiting_request_));
  });
}

void RendezvousConnection::FinishWait(const Message& response) {
  waiting_ = false;
  ++wait_generation_;
  wait_timer_.cancel();
  listener_.StopWaiting(shared_from_this());
  Send(response);
  ArmIdleTimer(listener_.limits().idle_timeout);
  // Requests that arrived meanwhile are handled later, not from inside the caller's loop over the
  // waiting connections.
  asio::post(listener_.io(), [self = shared_from_this()] { self->ProcessFrames(); });
}

void RendezvousConnection::Send(const Message& message) {
  outbox_.push_back(rendezvous::EncodeFrame(message));
  if (!writing_) WriteNext();
}

void RendezvousConnection::WriteNext() {
  if (closed_) return;
  if (outbox_.empty()) {
    if (close_after_write_) Close("", "");
    return;
  }
  writing_ = true;
  asio::async_write(socket_, asio::buffer(outbox_.front()),
                    [self = shared_from_this()](const boost::system::error_code& ec, size_t /*bytes*/) {
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

void RendezvousConnection::ArmIdleTimer(std::chrono::milliseconds timeout) {
  uint64_t generation = ++idle_generation_;
  idle_timer_.cancel();
  if (timeout.count() <= 0) return;
  idle_timer_.expires_after(timeout);
  idle_timer_.async_wait(
      [self = shared_from_this(), generation, timeout](const boost::system::error_code& ec) {
        if (ec || generation != self->idle_generation_ || self->closed_ || self->waiting_) return;
        if (self->authenticated_) {
          // Bytes that arrived as the timer fired are read and served (the read re-arms the timer): an
          // idle close then crosses only a request still on the wire, which the client resends if it
          // is safe to (common/protocol/rendezvous_client.h).
          boost::system::error_code unread_ec;
          if (self->socket_.available(unread_ec) > 0 && !unread_ec) return;
          self->Close("closed", "idle for " + DurationText(timeout));
        } else {
          self->Close("refused", "no authentication within " + DurationText(timeout));
        }
      });
}

void RendezvousConnection::CancelTimers() {
  ++idle_generation_;
  ++wait_generation_;
  idle_timer_.cancel();
  wait_timer_.cancel();
}

void RendezvousConnection::Close(const std::string& verb, const std::string& reason) {
  if (closed_) return;
  if (!verb.empty()) listener_.Log("hvdrun: rendezvous: " + verb + " " + peer_ + ": " + reason);
  if (waiting_) listener_.StopWaiting(shared_from_this());
  CloseSocket();
  listener_.Forget(shared_from_this());
}

void RendezvousConnection::CloseSocket() {
  closed_ = true;
  waiting_ = false;
  CancelTimers();
  boost::system::error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
}

}  // namespace hvdrun
