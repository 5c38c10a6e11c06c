// RequestStore: a KeyValueStore (hvdrun/key_value_store.h) each of whose calls is one request of the
// rendezvous protocol (common/protocol/rendezvous_protocol.h) and its response. What a call sends and what
// it makes of the answer is decided here once, for both stores hvdrun has: RendezvousClient, which
// sends the request to hvdrun's rendezvous service, and InMemoryStore, which answers it in this
// process; both answer with common/protocol/key_value_table.h's rules.
//
// Every error is one line that begins with the store's name ("store: ", "rendezvous
// 127.0.0.1:4567: "). Thread safety is the subclass's: Call() may be called from any thread.
#ifndef HVDRUN_COMMON_PROTOCOL_REQUEST_STORE_H_
#define HVDRUN_COMMON_PROTOCOL_REQUEST_STORE_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common/protocol/rendezvous_protocol.h"
#include "hvdrun/key_value_store.h"
#include "hvdrun/status.h"

namespace hvdrun {

class RequestStore : public KeyValueStore {
 public:
  Status Set(const std::string& key, const std::string& value) override;
  // Timeouts above 2^32 - 1 ms (49 days) are lowered to that, the protocol's largest.
  StatusOr<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) override;
  Status Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  StatusOr<int64_t> Add(const std::string& key, int64_t delta) override;
  StatusOr<std::string> CompareAndSet(const std::string& key, const std::string& expected,
                                      const std::string& desired) override;
  Status Delete(const std::string& key) override;

 protected:
  // `name` begins every error line: "store", "rendezvous 127.0.0.1:4567".
  explicit RequestStore(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }

  // Sends one request and returns its response, an ErrorResponse included; or, when no response
  // came, an error line that begins with name().
  virtual StatusOr<rendezvous::Message> Call(const rendezvous::Message& request) = 0;

  // Call(request), with an ErrorResponse, or a response other than a T, made an error line.
  template <typename T>
  StatusOr<T> CallFor(const rendezvous::Message& request) {
    StatusOr<rendezvous::Message> response = Call(request);
    if (!response.ok()) return response.status();
    if (auto* typed = std::get_if<T>(&response.value())) return std::move(*typed);
    if (const auto* error = std::get_if<rendezvous::ErrorResponse>(&response.value())) {
      return Status::Error(name_ + ": " + error->message);
    }
    return Status::Error(name_ + ": protocol error: unexpected " +
                         std::string(rendezvous::MessageName(response.value())));
  }

 private:
  const std::string name_;
};

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PROTOCOL_REQUEST_STORE_H_
