#include "launcher/rendezvous_store.h"

#include <algorithm>

namespace hvdrun {
namespace {

KeyValueLimits TableLimits(const RendezvousLimits& limits) {
  KeyValueLimits table;
  table.max_key_bytes = limits.max_key_bytes;
  table.max_value_bytes = limits.max_value_bytes;
  table.max_keys = limits.max_keys;
  table.max_total_bytes = limits.max_store_bytes;
  table.max_wait_keys = limits.max_wait_keys;
  return table;
}

}  // namespace

RendezvousStore::RendezvousStore(const RendezvousLimits& limits)
    : limits_(limits), table_(TableLimits(limits)) {}

std::optional<rendezvous::Message> RendezvousStore::Answer(const rendezvous::Message& request) {
  if (const auto* report = std::get_if<rendezvous::ReportRequest>(&request)) return AnswerReport(*report);
  std::lock_guard<std::mutex> lock(mutex_);
  return table_.Answer(request);
}

rendezvous::Message RendezvousStore::TimedOut(const rendezvous::Message& request) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return table_.TimedOut(request);
}

uint64_t RendezvousStore::version() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return table_.version();
}

std::map<int, std::string> RendezvousStore::Reports() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reports_;
}

std::map<std::string, std::string> RendezvousStore::ValuesWithPrefix(std::string_view prefix) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return table_.ValuesWithPrefix(prefix);
}

rendezvous::Message RendezvousStore::AnswerReport(const rendezvous::ReportRequest& request) {
  if (request.rank < 0) {
    return rendezvous::ErrorResponse{"report from rank " + std::to_string(request.rank) +
                                     ": a rank is a whole number from 0"};
  }
  // A report and its fields must fit in one frame.
  size_t limit = std::min<size_t>(limits_.max_report_bytes, rendezvous::kMaxFrameBytes - 1024);
  if (request.json.size() > limit) {
    return rendezvous::ErrorResponse{"report of rank " + std::to_string(request.rank) + ", of " +
                                     std::to_string(request.json.size()) + " bytes exceeds the limit of " +
                                     std::to_string(limit) + " bytes"};
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = reports_.find(request.rank);
  size_t old_bytes = it == reports_.end() ? 0 : it->second.size();
  if (report_bytes_ - old_bytes + request.json.size() > limits_.max_total_report_bytes) {
    return rendezvous::ErrorResponse{"report of rank " + std::to_string(request.rank) +
                                     ": the reports would exceed their limit of " +
                                     std::to_string(limits_.max_total_report_bytes) + " bytes in all"};
  }
  report_bytes_ = report_bytes_ - old_bytes + request.json.size();
  reports_[request.rank] = request.json;
  return rendezvous::OkResponse{};
}

}  // namespace hvdrun
