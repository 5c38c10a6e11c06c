// RendezvousClient: a rank's connection to hvdrun's rendezvous and collector service
// (launcher/rendezvous_server.h), as a KeyValueStore its backend bootstraps through, plus the
// end-of-run report.
//
// One TCP connection, authenticated at Connect with the job secret (docs/protocol.md, "Rendezvous
// service"); calls are blocking and serialized by a mutex, so the client is thread-safe, but one
// call waiting in Get/Wait holds up the others. Every error is one line that names the service
// ("rendezvous 127.0.0.1:4567: timed out after 30 s waiting for key 'gloo/3'") and never contains
// the secret. An error that breaks the connection (the service closed it, a malformed answer, an
// answer that never came) is sticky: every later call returns it.
#ifndef HVDRUN_RUNTIME_RENDEZVOUS_RENDEZVOUS_CLIENT_H_
#define HVDRUN_RUNTIME_RENDEZVOUS_RENDEZVOUS_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/file_descriptor.h"
#include "common/rendezvous_protocol.h"
#include "hvdrun/key_value_store.h"
#include "hvdrun/status.h"

namespace hvdrun {

class RendezvousClient : public KeyValueStore {
 public:
  // Connects to address:port (an IP literal or a host name) and authenticates with secret_hex (the
  // job secret, 64 hex digits). Refused connections are retried until `timeout`, in case the
  // service is not up yet; the handshake then has at least 10 s of its own.
  static StatusOr<std::unique_ptr<RendezvousClient>> Connect(const std::string& address, uint16_t port,
                                                             const std::string& secret_hex,
                                                             std::chrono::milliseconds timeout);
  ~RendezvousClient() override = default;
  RendezvousClient(const RendezvousClient&) = delete;
  RendezvousClient& operator=(const RendezvousClient&) = delete;

  Status Set(const std::string& key, const std::string& value) override;
  // Timeouts above 2^32 - 1 ms (49 days) are lowered to that.
  StatusOr<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) override;
  Status Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  StatusOr<int64_t> Add(const std::string& key, int64_t delta) override;
  StatusOr<std::string> CompareAndSet(const std::string& key, const std::string& expected,
                                      const std::string& desired) override;
  Status Delete(const std::string& key) override;

  // Sends this rank's end-of-run report (JSON text) to hvdrun's collector; a second report from the
  // same rank replaces the first.
  Status SendReport(int rank, const std::string& json) override;

 private:
  RendezvousClient(UniqueFd fd, std::string where);

  // Sends `request` and returns the response, or an error line (prefixed with where_) for an
  // ErrorResponse or a broken connection. `answer_within` bounds the wait for the response.
  StatusOr<rendezvous::Message> Call(const rendezvous::Message& request,
                                     std::chrono::milliseconds answer_within);

  std::mutex mutex_;
  UniqueFd fd_;                       // GUARDED_BY(mutex_)
  rendezvous::FrameDecoder decoder_;  // GUARDED_BY(mutex_)
  Status broken_;                     // GUARDED_BY(mutex_): the error that broke the connection
  const std::string where_;           // "rendezvous 127.0.0.1:4567"
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_RENDEZVOUS_RENDEZVOUS_CLIENT_H_
