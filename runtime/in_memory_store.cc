#include "runtime/in_memory_store.h"

#include <charconv>
#include <system_error>

#include "runtime/store_errors.h"

namespace hvdrun {
namespace {

// condition_variable::wait_for adds the timeout to now(); keep that sum from overflowing.
std::chrono::milliseconds Clamp(std::chrono::milliseconds timeout) {
  constexpr std::chrono::milliseconds kLongest = std::chrono::hours(24 * 365);
  return timeout < kLongest ? timeout : kLongest;
}

}  // namespace

Status InMemoryStore::Set(const std::string& key, const std::string& value) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    values_[key] = value;
  }
  changed_.notify_all();
  return Status::Ok();
}

StatusOr<std::string> InMemoryStore::Get(const std::string& key, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto found = values_.end();
  const bool present = changed_.wait_for(lock, Clamp(timeout), [&] {
    found = values_.find(key);
    return found != values_.end();
  });
  if (!present) {
    return Status::Error("store: key '" + key + "' was not set within " + FormatDuration(timeout));
  }
  return found->second;
}

Status InMemoryStore::Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  const bool present = changed_.wait_for(lock, Clamp(timeout), [&] { return MissingKeys(keys).empty(); });
  if (!present) {
    const std::vector<std::string> missing = MissingKeys(keys);
    return Status::Error("store: " + std::string(missing.size() == 1 ? "key " : "keys ") +
                         QuoteKeys(missing) + (missing.size() == 1 ? " was" : " were") + " not set within " +
                         FormatDuration(timeout));
  }
  return Status::Ok();
}

StatusOr<int64_t> InMemoryStore::Add(const std::string& key, int64_t delta) {
  int64_t sum = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = values_.find(key);
    int64_t current = 0;
    if (found != values_.end()) {
      const std::string& text = found->second;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), current);
      if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
        return Status::Error("store: Add on key '" + key + "' whose value is not an integer");
      }
    }
    if (__builtin_add_overflow(current, delta, &sum)) {
      return Status::Error("store: Add on key '" + key + "' overflows a 64-bit integer");
    }
    values_[key] = std::to_string(sum);
  }
  changed_.notify_all();
  return sum;
}

StatusOr<std::string> InMemoryStore::CompareAndSet(const std::string& key, const std::string& expected,
                                                   const std::string& desired) {
  std::string now;
  bool swapped = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = values_.find(key);
    const bool matches = found == values_.end() ? expected.empty() : found->second == expected;
    if (matches) {
      values_[key] = desired;
      swapped = true;
      now = desired;
    } else {
      now = found == values_.end() ? std::string() : found->second;
    }
  }
  if (swapped) changed_.notify_all();
  return now;
}

Status InMemoryStore::Delete(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  values_.erase(key);
  return Status::Ok();
}

std::vector<std::string> InMemoryStore::MissingKeys(const std::vector<std::string>& keys) const {
  std::vector<std::string> missing;
  for (const std::string& key : keys) {
    if (values_.find(key) == values_.end()) missing.push_back(key);
  }
  return missing;
}

}  // namespace hvdrun
