// KeyValueTable: the rules of the job's key-value store (hvdrun/key_value_store.h), written
// once for the store's two homes: hvdrun's rendezvous service, which answers ranks over TCP
// (launcher/rendezvous/rendezvous_store.h), and InMemoryStore, which answers the threads of one process
// (runtime/in_memory_store.h). Both hand the table the rendezvous protocol's requests
// (common/protocol/rendezvous_protocol.h) and pass on its answers, so the store behaves, and words its
// errors, the same in either home. docs/protocol.md, "Operations", is the reference:
//   Set            stores key = value, replacing.
//   Get            the key's value, once the key exists.
//   Wait           Ok, once every key exists.
//   Add            the value read as a decimal int64 (0 when absent) plus delta, stored as decimal
//                  text and returned; a value that is not a whole number, or a sum that overflows,
//                  is an error.
//   CompareAndSet  stores `desired` if the value equals `expected` (an absent key equals an empty
//                  `expected`); returns the value now stored (empty when the key stays absent).
//   Delete         removes the key, whether or not it existed.
//
// Waiting is the owner's. A get or wait whose keys are not all there gets no answer from Answer(),
// unless its timeout is 0 (then it times out at once); the owner waits — on a condition variable,
// on a timer — and asks again after each change (version() moves), until an answer comes or the
// request's timeout passes, and then answers with TimedOut().
//
// Limits (KeyValueLimits, none by default): a request that would break one is answered with an
// ErrorResponse naming the key and the limit, and changes nothing. So is an Add that fails.
// Error lines show keys and values through PrintableText (common/error_text.h).
//
// Not thread-safe: the owner serializes every call.
#ifndef HVDRUN_COMMON_PROTOCOL_KEY_VALUE_TABLE_H_
#define HVDRUN_COMMON_PROTOCOL_KEY_VALUE_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/protocol/rendezvous_protocol.h"

namespace hvdrun {

struct KeyValueLimits {
  static constexpr size_t kNone = std::numeric_limits<size_t>::max();
  size_t max_key_bytes = kNone;
  size_t max_value_bytes = kNone;
  size_t max_keys = kNone;
  size_t max_total_bytes = kNone;  // of every key and value together
  size_t max_wait_keys = kNone;    // keys named in one wait
};

// Whether `message` is a request that KeyValueTable answers: a set, get, wait, add,
// compare-and-set or delete.
bool IsStoreRequest(const rendezvous::Message& message);

class KeyValueTable {
 public:
  explicit KeyValueTable(KeyValueLimits limits = {}) : limits_(limits) {}

  // The answer to a store request (IsStoreRequest): OkResponse, ValueResponse, IntResponse or
  // ErrorResponse, as the rules above give it; std::nullopt for a get or wait that must wait.
  std::optional<rendezvous::Message> Answer(const rendezvous::Message& request);
  // The answer to a get or wait whose timeout has passed: an ErrorResponse that names the keys
  // still missing ("timed out after 30 s waiting for key 'gloo/3'").
  rendezvous::Message TimedOut(const rendezvous::Message& request) const;

  // Moves on every change to the table.
  uint64_t version() const { return version_; }
  // The keys that begin with `prefix`, with their values.
  std::map<std::string, std::string> ValuesWithPrefix(std::string_view prefix) const;

 private:
  std::optional<std::string> CheckKey(const std::string& key) const;
  // Stores key = value, or says which limit that would break.
  std::optional<std::string> Store(const std::string& key, std::string value);
  std::vector<std::string> MissingKeys(const std::vector<std::string>& keys) const;

  rendezvous::Message Set(const rendezvous::SetRequest& request);
  std::optional<rendezvous::Message> Get(const rendezvous::GetRequest& request) const;
  std::optional<rendezvous::Message> Wait(const rendezvous::WaitRequest& request) const;
  rendezvous::Message Add(const rendezvous::AddRequest& request);
  rendezvous::Message CompareAndSet(const rendezvous::CompareAndSetRequest& request);
  rendezvous::Message Delete(const rendezvous::DeleteRequest& request);

  const KeyValueLimits limits_;
  std::map<std::string, std::string, std::less<>> values_;
  size_t total_bytes_ = 0;
  uint64_t version_ = 0;
};

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PROTOCOL_KEY_VALUE_TABLE_H_
