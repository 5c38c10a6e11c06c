#include "runtime/in_memory_store.h"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>

#include "common/protocol/key_value_table.h"
#include "common/protocol/rendezvous_protocol.h"
#include "common/protocol/request_store.h"

namespace hvdrun {
namespace {

class InMemoryStore : public RequestStore {
 public:
  InMemoryStore() : RequestStore("store") {}

 private:
  // Answers `request` from table_, waiting on changed_ while a get or wait must wait.
  StatusOr<rendezvous::Message> Call(const rendezvous::Message& request) override {
    std::optional<rendezvous::Message> answer;
    bool changed = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const uint64_t version = table_.version();
      answer = table_.Answer(request);
      if (!answer) {
        changed_.wait_for(lock, rendezvous::WaitTimeout(request), [&] {
          answer = table_.Answer(request);
          return answer.has_value();
        });
        if (!answer) answer = table_.TimedOut(request);
      }
      changed = table_.version() != version;
    }
    if (changed) changed_.notify_all();
    return *std::move(answer);
  }

  std::mutex mutex_;
  std::condition_variable changed_;  // notified whenever table_ changes
  KeyValueTable table_;              // GUARDED_BY(mutex_)
};

}  // namespace

std::shared_ptr<KeyValueStore> NewInMemoryStore() { return std::make_shared<InMemoryStore>(); }

}  // namespace hvdrun
