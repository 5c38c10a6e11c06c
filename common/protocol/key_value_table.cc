#include "common/protocol/key_value_table.h"

#include <cstdint>
#include <type_traits>
#include <utility>
#include <variant>

#include "common/error_text.h"
#include "common/whole_number.h"

namespace hvdrun {
namespace {

using rendezvous::ErrorResponse;
using rendezvous::Message;

// Keys named in a wait's timeout error; the rest are counted.
constexpr size_t kMaxKeysNamed = 16;

std::string Quoted(std::string_view key) {
  std::string quoted = "'";
  quoted += PrintableText(key);
  quoted += '\'';
  return quoted;
}

std::string ExceedsText(std::string_view what, size_t size, size_t limit) {
  return std::string(what) + " of " + std::to_string(size) + " bytes exceeds the limit of " +
         std::to_string(limit) + " bytes";
}

}  // namespace

bool IsStoreRequest(const Message& message) {
  return std::holds_alternative<rendezvous::SetRequest>(message) ||
         std::holds_alternative<rendezvous::GetRequest>(message) ||
         std::holds_alternative<rendezvous::WaitRequest>(message) ||
         std::holds_alternative<rendezvous::AddRequest>(message) ||
         std::holds_alternative<rendezvous::CompareAndSetRequest>(message) ||
         std::holds_alternative<rendezvous::DeleteRequest>(message);
}

std::optional<Message> KeyValueTable::Answer(const Message& request) {
  return std::visit(
      [this, &request](const auto& typed) -> std::optional<Message> {
        using T = std::decay_t<decltype(typed)>;
        if constexpr (std::is_same_v<T, rendezvous::SetRequest>) return Set(typed);
        if constexpr (std::is_same_v<T, rendezvous::GetRequest>) return Get(typed);
        if constexpr (std::is_same_v<T, rendezvous::WaitRequest>) return Wait(typed);
        if constexpr (std::is_same_v<T, rendezvous::AddRequest>) return Add(typed);
        if constexpr (std::is_same_v<T, rendezvous::CompareAndSetRequest>) return CompareAndSet(typed);
        if constexpr (std::is_same_v<T, rendezvous::DeleteRequest>) return Delete(typed);
        return ErrorResponse{"not a store request: " + std::string(rendezvous::MessageName(request))};
      },
      request);
}

Message KeyValueTable::TimedOut(const Message& request) const {
  std::string text = "timed out after " + DurationText(rendezvous::WaitTimeout(request)) + " waiting for ";
  if (const auto* get = std::get_if<rendezvous::GetRequest>(&request)) {
    return ErrorResponse{text + "key " + Quoted(get->key)};
  }
  const auto* wait = std::get_if<rendezvous::WaitRequest>(&request);
  if (wait == nullptr) {
    return ErrorResponse{"not a get or wait: " + std::string(rendezvous::MessageName(request))};
  }
  std::vector<std::string> missing = MissingKeys(wait->keys);
  text += std::to_string(wait->keys.size()) + " keys; " + std::to_string(missing.size()) + " still missing";
  for (size_t i = 0; i < missing.size() && i < kMaxKeysNamed; ++i) {
    text += (i == 0 ? ": " : ", ") + Quoted(missing[i]);
  }
  if (missing.size() > kMaxKeysNamed) {
    text += " and " + std::to_string(missing.size() - kMaxKeysNamed) + " more";
  }
  return ErrorResponse{text};
}

std::map<std::string, std::string> KeyValueTable::ValuesWithPrefix(std::string_view prefix) const {
  std::map<std::string, std::string> values;
  for (auto it = values_.lower_bound(prefix); it != values_.end() && it->first.starts_with(prefix); ++it) {
    values.insert(*it);
  }
  return values;
}

std::optional<std::string> KeyValueTable::CheckKey(const std::string& key) const {
  if (key.size() > limits_.max_key_bytes) {
    return ExceedsText("key " + Quoted(key), key.size(), limits_.max_key_bytes);
  }
  return std::nullopt;
}

std::optional<std::string> KeyValueTable::Store(const std::string& key, std::string value) {
  if (value.size() > limits_.max_value_bytes) {
    return ExceedsText("value for key " + Quoted(key) + ",", value.size(), limits_.max_value_bytes);
  }
  auto it = values_.find(key);
  size_t old_bytes = it == values_.end() ? 0 : key.size() + it->second.size();
  if (it == values_.end() && values_.size() >= limits_.max_keys) {
    return "cannot add key " + Quoted(key) + ": the store holds " + std::to_string(values_.size()) +
           " keys, its limit";
  }
  size_t new_total = total_bytes_ - old_bytes + key.size() + value.size();
  if (new_total > limits_.max_total_bytes) {
    return "cannot store key " + Quoted(key) + ": the store would exceed its limit of " +
           std::to_string(limits_.max_total_bytes) + " bytes";
  }
  total_bytes_ = new_total;
  if (it == values_.end()) {
    values_.emplace(key, std::move(value));
  } else {
    it->second = std::move(value);
  }
  ++version_;
  return std::nullopt;
}

std::vector<std::string> KeyValueTable::MissingKeys(const std::vector<std::string>& keys) const {
  std::vector<std::string> missing;
  for (const std::string& key : keys) {
    if (values_.find(key) == values_.end()) missing.push_back(key);
  }
  return missing;
}

Message KeyValueTable::Set(const rendezvous::SetRequest& request) {
  if (std::optional<std::string> error = CheckKey(request.key)) return ErrorResponse{*error};
  if (std::optional<std::string> error = Store(request.key, request.value)) return ErrorResponse{*error};
  return rendezvous::OkResponse{};
}

std::optional<Message> KeyValueTable::Get(const rendezvous::GetRequest& request) const {
  if (std::optional<std::string> error = CheckKey(request.key)) return ErrorResponse{*error};
  auto it = values_.find(request.key);
  if (it != values_.end()) return rendezvous::ValueResponse{it->second};
  if (request.timeout_ms == 0) return TimedOut(request);
  return std::nullopt;
}

std::optional<Message> KeyValueTable::Wait(const rendezvous::WaitRequest& request) const {
  if (request.keys.size() > limits_.max_wait_keys) {
    return ErrorResponse{"wait for " + std::to_string(request.keys.size()) + " keys exceeds the limit of " +
                         std::to_string(limits_.max_wait_keys)};
  }
  bool complete = true;
  for (const std::string& key : request.keys) {
    if (std::optional<std::string> error = CheckKey(key)) return ErrorResponse{*error};
    complete = complete && values_.find(key) != values_.end();
  }
  if (complete) return rendezvous::OkResponse{};
  if (request.timeout_ms == 0) return TimedOut(request);
  return std::nullopt;
}

Message KeyValueTable::Add(const rendezvous::AddRequest& request) {
  if (std::optional<std::string> error = CheckKey(request.key)) return ErrorResponse{*error};
  int64_t current = 0;
  if (auto it = values_.find(request.key); it != values_.end()) {
    const std::string& text = it->second;
    ParsedWholeNumber parsed = ParseWholeNumber(text, INT64_MIN, INT64_MAX);
    if (!parsed.ok()) {
      return ErrorResponse{"cannot add to key " + Quoted(request.key) + ": its value '" +
                           PrintableText(text) + "' is not a whole number"};
    }
    current = parsed.value;
  }
  int64_t sum = 0;
  if (__builtin_add_overflow(current, request.delta, &sum)) {
    return ErrorResponse{"cannot add " + std::to_string(request.delta) + " to key " + Quoted(request.key) +
                         ": the result overflows 64 bits"};
  }
  if (std::optional<std::string> error = Store(request.key, std::to_string(sum))) {
    return ErrorResponse{*error};
  }
  return rendezvous::IntResponse{sum};
}

Message KeyValueTable::CompareAndSet(const rendezvous::CompareAndSetRequest& request) {
  if (std::optional<std::string> error = CheckKey(request.key)) return ErrorResponse{*error};
  auto it = values_.find(request.key);
  bool matches = it == values_.end() ? request.expected.empty() : it->second == request.expected;
  if (!matches) return rendezvous::ValueResponse{it == values_.end() ? std::string() : it->second};
  if (std::optional<std::string> error = Store(request.key, request.desired)) return ErrorResponse{*error};
  return rendezvous::ValueResponse{request.desired};
}

Message KeyValueTable::Delete(const rendezvous::DeleteRequest& request) {
  if (std::optional<std::string> error = CheckKey(request.key)) return ErrorResponse{*error};
  if (auto it = values_.find(request.key); it != values_.end()) {
    total_bytes_ -= it->first.size() + it->second.size();
    values_.erase(it);
    ++version_;
  }
  return rendezvous::OkResponse{};
}

}  // namespace hvdrun
