// RendezvousConnection: one client connection of hvdrun's rendezvous service, as a state machine.
//   1. Handshake: the service sends Challenge; the client must answer with a right Proof within
//      RendezvousLimits::auth_timeout (frames are capped at kMaxHandshakeFrameBytes until then), or
//      it is refused; a right one gets Welcome.
//   2. Requests, answered in order from the job's RendezvousStore. A get or wait whose keys are
//      not there yet parks the connection (further requests are read but not handled, up to one
//      frame's worth) until its keys exist or its timeout passes.
//   3. Idle: a connection with no request in flight that sends nothing for
//      RendezvousLimits::idle_timeout is closed (the client reconnects: common/protocol/rendezvous_client.h).
// A protocol error, a broken limit that cannot be answered, a refusal or an idle close ends the
// connection with one log line naming the peer, never the secret ("hvdrun: rendezvous: refused
// 127.0.0.1:41234: wrong secret"). docs/protocol.md, "Rendezvous service", is the reference.
//
// Owned by shared_ptrs: the listener's (rendezvous_listener.h) and those of handlers in flight.
// Every method runs on the service thread.
#ifndef HVDRUN_LAUNCHER_RENDEZVOUS_RENDEZVOUS_CONNECTION_H_
#define HVDRUN_LAUNCHER_RENDEZVOUS_RENDEZVOUS_CONNECTION_H_

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "common/protocol/rendezvous_protocol.h"

namespace hvdrun {

class RendezvousListener;

class RendezvousConnection : public std::enable_shared_from_this<RendezvousConnection> {
 public:
  RendezvousConnection(RendezvousListener& listener, boost::asio::ip::tcp::socket socket);

  // Sends the challenge and starts reading, with the authentication deadline armed.
  void Start();
  // Closes at once (the service is stopping); a waiting client first gets an error response, sent
  // only if it fits the socket's buffer now, since the service thread must not block.
  void Stop();
  // Finishes a waiting get/wait if its keys now exist.
  void CheckWait();

  // "127.0.0.1:41234", "[::1]:41234", or "an unknown peer", for log lines.
  static std::string PeerText(const boost::asio::ip::tcp::socket& socket);

 private:
  void Read();
  void OnRead(const boost::system::error_code& ec, size_t bytes);
  void ProcessFrames();
  void HandleProof(const rendezvous::Message& message);
  // Tells the client why it is refused, logs it, and closes once the answer is sent.
  void Refuse(const std::string& reason);
  void HandleRequest(const rendezvous::Message& request);
  void StartWait(rendezvous::Message request);
  void FinishWait(const rendezvous::Message& response);
  void Send(const rendezvous::Message& message);
  void WriteNext();
  void ArmIdleTimer(std::chrono::milliseconds timeout);
  void CancelTimers();
  // Closes the connection; logs "hvdrun: rendezvous: <verb> <peer>: <reason>" when verb is given.
  void Close(const std::string& verb, const std::string& reason);
  void CloseSocket();

  static constexpr size_t kReadChunkBytes = 64u << 10;

  RendezvousListener& listener_;
  boost::asio::ip::tcp::socket socket_;
  const std::string peer_;
  boost::asio::steady_timer idle_timer_;  // authentication deadline, then idle deadline
  boost::asio::steady_timer wait_timer_;  // deadline of a waiting get/wait
  uint64_t idle_generation_ = 0;          // bumped to void a timer handler already queued
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
  rendezvous::Message waiting_request_;  // the get or wait, while waiting_
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_RENDEZVOUS_RENDEZVOUS_CONNECTION_H_
