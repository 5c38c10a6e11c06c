// RendezvousClient: a rank's connection to hvdrun's rendezvous and collector service
// (launcher/rendezvous/rendezvous_server.h), as a KeyValueStore its backend bootstraps through (a
// RequestStore: common/protocol/request_store.h), plus the end-of-run report. It lives beside the protocol
// it speaks, in common/, because libhvdrun (InitFromEnvironment) and hvdrun-agent (a rank's exit
// record under mpirun, agent/mpi_rank.h) both use it.
//
// One TCP connection, authenticated at Connect with the job secret (docs/protocol.md, "Rendezvous
// service"); calls are blocking and serialized by a mutex, so the client is thread-safe, but one
// call waiting in Get/Wait holds up the others. Every error is one line that names the service
// ("rendezvous 127.0.0.1:4567: timed out after 30 s waiting for key 'gloo/3'") and never contains
// the secret.
//
// Reconnection. The service closes a connection that stays idle too long (10 minutes by default,
// RendezvousLimits::idle_timeout), and a rank that trains for hours is that quiet between its
// bootstrap and its report. The service closes only a connection with no request in flight, so the
// client reconnects, authenticates again with the same secret and sends the request on the new
// connection, once per request, when it finds the old connection closed:
//   - before sending: the socket is readable and at end of stream (or reset) — any request;
//   - while sending: the service reset the connection before taking the whole request — any
//     request, since the service acts only on a complete request;
//   - while waiting for the answer, before any byte of it came (the close crossed the request on
//     its way): only for requests that are safe to repeat (set, get, wait, delete, report). Add and
//     compare-and-set are not repeated: from the client's side, a service that applied one and then
//     went looks the same, and a second one would apply twice.
// Anything else breaks the connection: it ending inside an answer, a malformed answer, an answer
// that never came, the reconnection failing (the service is gone: "connection lost: the service
// closed the connection; reconnecting failed: connect: Connection refused (is hvdrun still
// running?)"), or the repeated request failing too. Such an error is sticky: every later call
// returns it. To authenticate again, the client keeps the secret in memory for its lifetime.
#ifndef HVDRUN_COMMON_PROTOCOL_RENDEZVOUS_CLIENT_H_
#define HVDRUN_COMMON_PROTOCOL_RENDEZVOUS_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "common/process/file_descriptor.h"
#include "common/protocol/rendezvous_protocol.h"
#include "common/protocol/request_store.h"
#include "hvdrun/status.h"

namespace hvdrun {

class RendezvousClient : public RequestStore {
 public:
  // Connects to address:port (an IP literal or a host name) and authenticates with secret_hex (the
  // job secret, 64 hex digits). Refused connections are retried until `timeout`, in case the
  // service is not up yet; the handshake then has at least 10 s of its own. A reconnection tries
  // once, refusals included (the service was up, so a refusal means it is gone), with 10 s for
  // connecting and 10 s for the handshake.
  static StatusOr<std::unique_ptr<RendezvousClient>> Connect(const std::string& address, uint16_t port,
                                                             const std::string& secret_hex,
                                                             std::chrono::milliseconds timeout);
  ~RendezvousClient() override = default;
  RendezvousClient(const RendezvousClient&) = delete;
  RendezvousClient& operator=(const RendezvousClient&) = delete;

  // Sends this rank's end-of-run report (JSON text) to hvdrun's collector; a second report from the
  // same rank replaces the first.
  Status SendReport(int rank, const std::string& json) override;
  // Sends a piece of this rank's timeline file, to be written at `offset` of hvdrun's copy.
  Status SendTimelinePiece(int rank, uint64_t offset, const std::string& data) override;

 private:
  // Where the service is, and the secret to authenticate with, again on each reconnection.
  struct Endpoint {
    std::string address;
    uint16_t port = 0;
    std::string secret_hex;
  };
  // How one attempt at a request ended.
  struct Exchange {
    StatusOr<rendezvous::Message> response;
    // The connection was closed such that sending the request again on a new one is safe (see
    // "Reconnection" above).
    bool may_retry = false;
  };

  RendezvousClient(UniqueFd fd, rendezvous::FrameDecoder decoder, Endpoint endpoint, std::string name);

  // Sends `request` and returns the response, or an error line (prefixed with name()) for a broken
  // connection. A get or wait may take its timeout and 60 s more to be answered; any other request
  // 60 s.
  StatusOr<rendezvous::Message> Call(const rendezvous::Message& request) override;
  // One attempt at sending `frame` (encoding `request`) and reading its answer. Needs mutex_.
  Exchange SendAndReceive(const rendezvous::Message& request, const std::string& frame,
                          std::chrono::milliseconds answer_within);
  // Replaces the connection with a new, authenticated one; an error line without name() on
  // failure, the old connection closed either way. Needs mutex_.
  Status Reconnect();

  const Endpoint endpoint_;
  std::mutex mutex_;
  UniqueFd fd_;                       // GUARDED_BY(mutex_)
  rendezvous::FrameDecoder decoder_;  // GUARDED_BY(mutex_)
  Status broken_;                     // GUARDED_BY(mutex_): the error that broke the connection
};

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PROTOCOL_RENDEZVOUS_CLIENT_H_
