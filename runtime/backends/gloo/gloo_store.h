// GlooStore: gloo's rendezvous store interface over hvdrun's KeyValueStore.
//
// Gloo bootstraps a context by exchanging transport addresses through a gloo::rendezvous::Store;
// this adapter puts every key under `prefix` (so that several contexts sharing the job's key-value store
// cannot see each other's keys) and bounds every blocking call by `timeout` (gloo's own get() has
// no timeout). Gloo reports store failures by exception, so every failure is thrown as
// gloo::IoException carrying the store's one-line error; the backend catches it at its boundary.
//
// Thread safety: as the underlying KeyValueStore; the adapter itself holds no mutable state.
#ifndef HVDRUN_RUNTIME_BACKENDS_GLOO_GLOO_STORE_H_
#define HVDRUN_RUNTIME_BACKENDS_GLOO_GLOO_STORE_H_

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <string>
#include <vector>

#include "hvdrun/key_value_store.h"

namespace hvdrun {

class GlooStore : public gloo::rendezvous::Store {
 public:
  // `store` is not owned and must outlive this adapter.
  GlooStore(KeyValueStore* store, std::string prefix, std::chrono::milliseconds timeout);

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

 private:
  std::string Scoped(const std::string& key) const { return prefix_ + key; }

  KeyValueStore* store_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BACKENDS_GLOO_GLOO_STORE_H_
