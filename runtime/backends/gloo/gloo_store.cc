#include "runtime/backends/gloo/gloo_store.h"

#include <gloo/common/error.h>

#include <algorithm>
#include <utility>

namespace hvdrun {

GlooStore::GlooStore(KeyValueStore* store, std::string prefix, std::chrono::milliseconds timeout)
    : store_(store), prefix_(std::move(prefix)), timeout_(timeout) {}

void GlooStore::set(const std::string& key, const std::vector<char>& data) {
  Status status = store_->Set(Scoped(key), std::string(data.begin(), data.end()));
  if (!status.ok()) throw gloo::IoException(status.message());
}

std::vector<char> GlooStore::get(const std::string& key) {
  StatusOr<std::string> value = store_->Get(Scoped(key), timeout_);
  if (!value.ok()) throw gloo::IoException(value.status().message());
  return std::vector<char>(value->begin(), value->end());
}

void GlooStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void GlooStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  std::vector<std::string> scoped;
  scoped.reserve(keys.size());
  for (const std::string& key : keys) scoped.push_back(Scoped(key));
  // gloo passes its context timeout, or kNoTimeout (zero) for "wait forever"; ours bounds both.
  const std::chrono::milliseconds limit =
      timeout == std::chrono::milliseconds::zero() ? timeout_ : std::min(timeout, timeout_);
  Status status = store_->Wait(scoped, limit);
  if (!status.ok()) throw gloo::IoException(status.message());
}

}  // namespace hvdrun
