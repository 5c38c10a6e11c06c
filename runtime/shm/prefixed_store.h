// PrefixedStore: a KeyValueStore that puts every key of another one under a prefix, so that a
// backend created for a group of the job's ranks (the hierarchical allreduce's cross-host groups,
// runtime/shm/shm_backend.h) bootstraps through the job's store without meeting the job-wide
// backend's keys or another group's. Reports and timeline pieces go to the store unchanged.
// Thread-safe as the store it wraps, which must outlive it.
#ifndef HVDRUN_RUNTIME_SHM_PREFIXED_STORE_H_
#define HVDRUN_RUNTIME_SHM_PREFIXED_STORE_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "hvdrun/key_value_store.h"
#include "hvdrun/status.h"

namespace hvdrun {

class PrefixedStore : public KeyValueStore {
 public:
  PrefixedStore(KeyValueStore& store, std::string prefix) : store_(store), prefix_(std::move(prefix)) {}

  Status Set(const std::string& key, const std::string& value) override {
    return store_.Set(prefix_ + key, value);
  }
  StatusOr<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) override {
    return store_.Get(prefix_ + key, timeout);
  }
  Status Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    std::vector<std::string> prefixed;
    prefixed.reserve(keys.size());
    for (const std::string& key : keys) prefixed.push_back(prefix_ + key);
    return store_.Wait(prefixed, timeout);
  }
  StatusOr<int64_t> Add(const std::string& key, int64_t delta) override {
    return store_.Add(prefix_ + key, delta);
  }
  StatusOr<std::string> CompareAndSet(const std::string& key, const std::string& expected,
                                      const std::string& desired) override {
    return store_.CompareAndSet(prefix_ + key, expected, desired);
  }
  Status Delete(const std::string& key) override { return store_.Delete(prefix_ + key); }
  Status SendReport(int rank, const std::string& json) override { return store_.SendReport(rank, json); }
  Status SendTimelinePiece(int rank, uint64_t offset, const std::string& data) override {
    return store_.SendTimelinePiece(rank, offset, data);
  }

 private:
  KeyValueStore& store_;
  const std::string prefix_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_SHM_PREFIXED_STORE_H_
