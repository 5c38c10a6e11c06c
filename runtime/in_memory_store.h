// InMemoryStore: a KeyValueStore held in this process's memory, for tests (ranks as threads) and
// for single-process jobs.
//
// Thread-safe: every method may be called from any thread. Get and Wait block on a condition
// variable until the keys appear or the timeout passes; a timeout is an error naming the keys.
// Values are arbitrary bytes. Keys are not scoped: share one store per job.
#ifndef HVDRUN_RUNTIME_IN_MEMORY_STORE_H_
#define HVDRUN_RUNTIME_IN_MEMORY_STORE_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "hvdrun/key_value_store.h"
#include "hvdrun/status.h"

namespace hvdrun {

class InMemoryStore : public KeyValueStore {
 public:
  InMemoryStore() = default;
  InMemoryStore(const InMemoryStore&) = delete;
  InMemoryStore& operator=(const InMemoryStore&) = delete;

  Status Set(const std::string& key, const std::string& value) override;
  StatusOr<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) override;
  Status Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  // A value that is not a decimal integer is an error naming the key; the value is left as it is.
  StatusOr<int64_t> Add(const std::string& key, int64_t delta) override;
  StatusOr<std::string> CompareAndSet(const std::string& key, const std::string& expected,
                                      const std::string& desired) override;
  // Deleting an absent key is not an error.
  Status Delete(const std::string& key) override;

 private:
  // Keys of `keys` not in values_; mutex_ must be held.
  std::vector<std::string> MissingKeys(const std::vector<std::string>& keys) const;

  std::mutex mutex_;
  std::condition_variable changed_;            // notified on every Set, Add and CompareAndSet
  std::map<std::string, std::string> values_;  // GUARDED_BY(mutex_)
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_IN_MEMORY_STORE_H_
