#include "launcher/rendezvous/rendezvous_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "common/process/file_descriptor.h"

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
  if (const auto* piece = std::get_if<rendezvous::TimelineRequest>(&request)) return AnswerTimeline(*piece);
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

void RendezvousStore::KeepTimelines(std::string dir) {
  std::lock_guard<std::mutex> lock(mutex_);
  timeline_dir_ = std::move(dir);
}

rendezvous::Message RendezvousStore::AnswerTimeline(const rendezvous::TimelineRequest& request) {
  const std::string what = "timeline of rank " + std::to_string(request.rank);
  std::string dir;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dir = timeline_dir_;
  }
  if (dir.empty()) {
    return rendezvous::ErrorResponse{what + ": this job keeps no timelines (hvdrun --timeline-filename)"};
  }
  if (request.rank < 0) return rendezvous::ErrorResponse{what + ": a rank is a whole number from 0"};
  if (request.data.size() > kMaxTimelinePieceBytes) {
    return rendezvous::ErrorResponse{what + ": a piece of " + std::to_string(request.data.size()) +
                                     " bytes exceeds the limit of " + std::to_string(kMaxTimelinePieceBytes)};
  }
  if (request.offset > kMaxTimelineBytes || request.data.size() > kMaxTimelineBytes - request.offset) {
    return rendezvous::ErrorResponse{what + ": the copy would exceed its limit of " +
                                     std::to_string(kMaxTimelineBytes) + " bytes"};
  }
  // Each rank sends its own file, from one thread, once: pieces of one rank never race.
  const std::string path = dir + "/rank-" + std::to_string(request.rank) + ".json";
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (request.offset == 0 ? O_TRUNC : 0);
  UniqueFd fd(::open(path.c_str(), flags, 0644));
  size_t written = 0;
  while (fd.valid() && written < request.data.size()) {
    const ssize_t n = ::pwrite(fd.get(), request.data.data() + written, request.data.size() - written,
                               static_cast<off_t>(request.offset + written));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  if (!fd.valid() || written < request.data.size()) {
    return rendezvous::ErrorResponse{what + ": cannot write '" + path + "': " + std::strerror(errno)};
  }
  return rendezvous::OkResponse{};
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
