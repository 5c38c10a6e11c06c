#include "common/protocol/request_store.h"

#include <algorithm>
#include <limits>

namespace hvdrun {
namespace {

uint32_t TimeoutMs(std::chrono::milliseconds timeout) {
  return static_cast<uint32_t>(std::clamp<int64_t>(timeout.count(), 0, std::numeric_limits<uint32_t>::max()));
}

}  // namespace

Status RequestStore::Set(const std::string& key, const std::string& value) {
  return CallFor<rendezvous::OkResponse>(rendezvous::SetRequest{key, value}).status();
}

StatusOr<std::string> RequestStore::Get(const std::string& key, std::chrono::milliseconds timeout) {
  StatusOr<rendezvous::ValueResponse> value =
      CallFor<rendezvous::ValueResponse>(rendezvous::GetRequest{key, TimeoutMs(timeout)});
  if (!value.ok()) return value.status();
  return std::move(value.value().value);
}

Status RequestStore::Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  return CallFor<rendezvous::OkResponse>(rendezvous::WaitRequest{keys, TimeoutMs(timeout)}).status();
}

StatusOr<int64_t> RequestStore::Add(const std::string& key, int64_t delta) {
  StatusOr<rendezvous::IntResponse> sum =
      CallFor<rendezvous::IntResponse>(rendezvous::AddRequest{key, delta});
  if (!sum.ok()) return sum.status();
  return sum.value().value;
}

StatusOr<std::string> RequestStore::CompareAndSet(const std::string& key, const std::string& expected,
                                                  const std::string& desired) {
  StatusOr<rendezvous::ValueResponse> stored =
      CallFor<rendezvous::ValueResponse>(rendezvous::CompareAndSetRequest{key, expected, desired});
  if (!stored.ok()) return stored.status();
  return std::move(stored.value().value);
}

Status RequestStore::Delete(const std::string& key) {
  return CallFor<rendezvous::OkResponse>(rendezvous::DeleteRequest{key}).status();
}

}  // namespace hvdrun
