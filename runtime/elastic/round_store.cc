#include "runtime/elastic/round_store.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error_text.h"
#include "hvdrun/error_kind.h"

namespace hvdrun {
namespace {

// How often a wait for keys looks whether the round is over.
constexpr std::chrono::milliseconds kRoundCheck{500};

constexpr std::string_view kTimedOut = "timed out after ";
constexpr std::string_view kWaitingFor = " waiting for ";

// Whether the store's wait ended because its time was up (KeyValueTable's wording, after the store's
// own prefix), not because it failed.
bool TimedOut(const Status& status) {
  const size_t at = status.message().find(kTimedOut);
  return at != std::string::npos && status.message().find(kWaitingFor, at) != std::string::npos;
}

// The store's error for the last slice of a wait of `timeout` in all: a time-out names the whole wait
// ("... timed out after 30 s waiting for ..."), not the slice's.
Status WholeWait(const Status& status, std::chrono::milliseconds timeout) {
  if (!TimedOut(status)) return status;
  const std::string& message = status.message();
  const size_t at = message.find(kTimedOut);
  const size_t waiting = message.find(kWaitingFor, at);
  return Status::Error(message.substr(0, at) + std::string(kTimedOut) + DurationText(timeout) +
                       message.substr(waiting));
}

}  // namespace

StatusOr<int64_t> ReadNewestRound(KeyValueStore& job_store) {
  // Adding 0 reads a number without waiting (and stores 0 where hvdrun has written nothing yet).
  return job_store.Add(kElasticRoundKey, 0);
}

namespace {

// "r<round>/", appended rather than chained: GCC 12's -Wrestrict misreads a chain at -O3.
std::string RoundPrefix(int round) {
  std::string prefix = std::to_string(round);
  prefix.insert(0, 1, 'r');
  prefix.push_back('/');
  return prefix;
}

}  // namespace

RoundStore::RoundStore(std::shared_ptr<KeyValueStore> job_store, int round)
    : job_store_(std::move(job_store)), round_(round), prefix_(RoundPrefix(round)) {}

Status RoundStore::StillCurrent() const {
  StatusOr<int64_t> newest = ReadNewestRound(*job_store_);
  if (!newest.ok() || newest.value() <= round_) return Status::Ok();
  return ErrorOfKind(ErrorKind::kRecoverable, "elastic round " + std::to_string(round_) +
                                                  " is over: the job is in round " +
                                                  std::to_string(newest.value()));
}

Status RoundStore::Set(const std::string& key, const std::string& value) {
  return job_store_->Set(prefix_ + key, value);
}

StatusOr<std::string> RoundStore::Get(const std::string& key, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    StatusOr<std::string> value =
        job_store_->Get(prefix_ + key, std::clamp(left, std::chrono::milliseconds(0), kRoundCheck));
    if (value.ok() || !TimedOut(value.status())) return value;
    if (left <= kRoundCheck) return WholeWait(value.status(), timeout);
    if (Status current = StillCurrent(); !current.ok()) return current;
  }
}

Status RoundStore::Wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::vector<std::string> prefixed;
  prefixed.reserve(keys.size());
  for (const std::string& key : keys) prefixed.push_back(prefix_ + key);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    Status waited = job_store_->Wait(prefixed, std::clamp(left, std::chrono::milliseconds(0), kRoundCheck));
    if (waited.ok() || !TimedOut(waited)) return waited;
    if (left <= kRoundCheck) return WholeWait(waited, timeout);
    if (Status current = StillCurrent(); !current.ok()) return current;
  }
}

StatusOr<int64_t> RoundStore::Add(const std::string& key, int64_t delta) {
  return job_store_->Add(prefix_ + key, delta);
}

StatusOr<std::string> RoundStore::CompareAndSet(const std::string& key, const std::string& expected,
                                                const std::string& desired) {
  return job_store_->CompareAndSet(prefix_ + key, expected, desired);
}

Status RoundStore::Delete(const std::string& key) { return job_store_->Delete(prefix_ + key); }

Status RoundStore::SendReport(int rank, const std::string& json) {
  return job_store_->SendReport(rank, json);
}

Status RoundStore::SendTimelinePiece(int rank, uint64_t offset, const std::string& data) {
  return job_store_->SendTimelinePiece(rank, offset, data);
}

}  // namespace hvdrun
