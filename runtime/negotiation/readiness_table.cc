#include "runtime/negotiation/readiness_table.h"

#include <algorithm>
#include <utility>

#include "common/error_text.h"
#include "common/shortest_number.h"

namespace hvdrun {

namespace {

// " scaled by 0.5 then 2" when a request has scale factors; empty otherwise.
std::string FactorsText(const TensorRequest& request) {
  if (request.prescale == 1.0 && request.postscale == 1.0) return {};
  return " scaled by " + ShortestNumberText(request.prescale) + " then " +
         ShortestNumberText(request.postscale);
}

// The collective, its elements and parameters, without the shape.
std::string DescribeCall(const TensorRequest& request) {
  switch (request.kind) {
    case CollectiveKind::kAllreduce:
      return "allreduce of " + std::string(DataTypeName(request.type)) + " x " +
             std::to_string(request.count) + " " + std::string(ReduceOpName(request.op)) +
             (request.compression == CompressionFormat::kNone
                  ? std::string()
                  : " in " + std::string(CompressionFormatName(request.compression))) +
             FactorsText(request);
    case CollectiveKind::kBroadcast:
      return "broadcast of " + std::string(DataTypeName(request.type)) + " x " +
             std::to_string(request.count) + " from rank " + std::to_string(request.root);
    case CollectiveKind::kAllgather:
      return "allgather of " + std::string(DataTypeName(request.type)) + " x " +
             std::to_string(request.count);
    case CollectiveKind::kBarrier:
      return "barrier";
    case CollectiveKind::kAllgatherv:
      return "allgather of " + std::string(DataTypeName(request.type)) + " in rows of " +
             std::to_string(request.row);
    case CollectiveKind::kAlltoallv:
      return "alltoall of " + std::string(DataTypeName(request.type)) + " in rows of " +
             std::to_string(request.row);
    case CollectiveKind::kAlltoall:
      return "alltoall of " + std::string(DataTypeName(request.type)) + " x " +
             std::to_string(request.count) + " to each rank";
    case CollectiveKind::kReducescatter:
      return "reducescatter of " + std::string(DataTypeName(request.type)) + " x " +
             std::to_string(request.count) + " " + std::string(ReduceOpName(request.op)) + " in rows of " +
             std::to_string(request.row) + FactorsText(request);
    case CollectiveKind::kBaselineAllreduce:
      return "baseline allreduce of " + std::string(DataTypeName(request.type)) + " x " +
             std::to_string(request.count) + " " + std::string(ReduceOpName(request.op));
  }
  return "unknown collective";
}

}  // namespace

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(shape[i]);
  return text + "]";
}

std::string DescribeRequest(const TensorRequest& request) {
  if (request.shape.empty()) return DescribeCall(request);
  return DescribeCall(request) + ", shape " + ShapeText(request.shape);
}

ReadinessTable::ReadinessTable(int size) : size_(size), joined_(static_cast<size_t>(size), false) {}

bool ReadinessTable::Covered(const Entry& entry) const {
  for (size_t rank = 0; rank < static_cast<size_t>(size_); ++rank) {
    if (!entry.announced[rank] && !joined_[rank]) return false;
  }
  return true;
}

std::string ReadinessTable::FailureOf(const Entry& entry) const {
  if (!entry.mismatch.empty()) return entry.mismatch;
  if (joined_count_ == 0 || entry.request.kind == CollectiveKind::kAllreduce) return {};
  std::vector<int> joined;
  for (int rank = 0; rank < size_; ++rank) {
    if (joined_[static_cast<size_t>(rank)]) joined.push_back(rank);
  }
  return "'" + entry.request.name + "': a " + DescribeRequest(entry.request) + " cannot run while " +
         RankListText(joined) + (joined.size() == 1 ? " has" : " have") +
         " joined (Join): only allreduces run until every rank has joined, as in Horovod";
}

ReadinessTable::Outcome ReadinessTable::Apply(const std::vector<std::vector<Announcement>>& by_rank,
                                              Clock::time_point now) {
  Outcome outcome;
  probes_.clear();
  std::vector<std::string> completed;
  bool joins = false;
  for (int rank = 0; rank < static_cast<int>(by_rank.size()); ++rank) {
    for (const Announcement& announcement : by_rank[static_cast<size_t>(rank)]) {
      const TensorRequest& request = announcement.request;
      switch (announcement.kind) {
        case Announcement::Kind::kJoin:
          RecordJoin(rank, request.count);
          joins = true;
          break;
        case Announcement::Kind::kInvalidate:
          if (std::find(outcome.invalidated.begin(), outcome.invalidated.end(), request.name) ==
              outcome.invalidated.end()) {
            outcome.invalidated.push_back(request.name);
          }
          break;
        case Announcement::Kind::kProbe:
          RecordProbe(rank, request.name, now);
          break;
        default:
          if (RecordRequest(rank, request, now)) completed.push_back(request.name);
          break;
      }
    }
  }
  if (joined_count_ > 0) {
    // A join may complete names announced in earlier cycles: every entry is checked.
    completed.clear();
    for (const auto& [name, entry] : entries_) {
      if (Covered(entry)) completed.push_back(name);
    }
  }
  Conclude(completed, outcome);
  if (joins && joined_count_ == size_) outcome.joined = EndJoin();
  return outcome;
}

void ReadinessTable::RecordJoin(int rank, uint64_t unnamed_calls) {
  if (!joined_[static_cast<size_t>(rank)]) {
    joined_[static_cast<size_t>(rank)] = true;
    ++joined_count_;
  }
  last_joined_ = rank;
  joined_unnamed_calls_ = std::max(joined_unnamed_calls_, unnamed_calls);
}

void ReadinessTable::RecordProbe(int rank, const std::string& name, Clock::time_point now) {
  Probe& probe = probes_[name];
  if (probe.pending.empty()) probe = Probe{std::vector<bool>(static_cast<size_t>(size_), false), now};
  probe.pending[static_cast<size_t>(rank)] = true;
}

bool ReadinessTable::RecordRequest(int rank, const TensorRequest& request, Clock::time_point now) {
  auto [it, inserted] = entries_.try_emplace(request.name);
  Entry& entry = it->second;
  if (inserted) {
    entry.request = request;
    entry.request_rank = rank;
    entry.announced.assign(static_cast<size_t>(size_), false);
    entry.counts.assign(static_cast<size_t>(size_), 0);
    entry.order = next_order_++;
    entry.since = now;
  } else if (entry.mismatch.empty() && !entry.request.Matches(request)) {
    // The rank whose request is kept: with per-rank first dimensions (allgather), the lowest rank that
    // announced may have given another shape than the one compared.
    const int first = entry.request_rank;
    // Lower rank first, so that the message does not depend on who announced first.
    const bool first_is_lower = first < rank;
    entry.mismatch = "'" + request.name + "' was submitted as " +
                     DescribeRequest(first_is_lower ? entry.request : request) + " by rank " +
                     std::to_string(first_is_lower ? first : rank) + " but as " +
                     DescribeRequest(first_is_lower ? request : entry.request) + " by rank " +
                     std::to_string(first_is_lower ? rank : first);
  }
  if (entry.announced[static_cast<size_t>(rank)]) return false;  // announced once per submission
  entry.announced[static_cast<size_t>(rank)] = true;
  entry.counts[static_cast<size_t>(rank)] = request.count;
  return ++entry.count == size_;
}

void ReadinessTable::Conclude(const std::vector<std::string>& completed, Outcome& outcome) {
  std::vector<const Entry*> done;
  done.reserve(completed.size());
  for (const std::string& name : completed) done.push_back(&entries_.at(name));
  std::sort(done.begin(), done.end(), [](const Entry* a, const Entry* b) { return a->order < b->order; });
  for (const Entry* entry : done) {
    std::string failure = FailureOf(*entry);
    if (failure.empty()) {
      outcome.ready.push_back(entry->request);
      if (entry->request.kind == CollectiveKind::kAllgatherv) outcome.ready.back().counts = entry->counts;
    } else {
      outcome.failed.push_back(Failure{entry->request.name, std::move(failure)});
    }
  }
  for (const std::string& name : completed) entries_.erase(name);
}

ReadinessTable::JoinDone ReadinessTable::EndJoin() {
  const JoinDone done{last_joined_, joined_unnamed_calls_};
  joined_.assign(static_cast<size_t>(size_), false);
  joined_count_ = 0;
  last_joined_ = -1;
  joined_unnamed_calls_ = 0;
  return done;
}

std::vector<ReadinessTable::Waiting> ReadinessTable::Stalled(Clock::time_point now,
                                                             Clock::duration limit) const {
  std::vector<Waiting> waiting;
  auto describe = [&](const std::string& name, const std::vector<bool>& pending, Clock::time_point since) {
    Waiting w;
    w.name = name;
    w.waited = now - since;
    for (int rank = 0; rank < size_; ++rank) {
      if (pending[static_cast<size_t>(rank)]) {
        w.submitted.push_back(rank);
      } else if (!joined_[static_cast<size_t>(rank)]) {  // a joined rank stands in: not missing
        w.missing.push_back(rank);
      }
    }
    waiting.push_back(std::move(w));
  };
  for (const auto& [name, entry] : entries_) {
    if (now - entry.since >= limit) describe(name, entry.announced, entry.since);
  }
  for (const auto& [name, probe] : probes_) describe(name, probe.pending, probe.since);
  std::sort(waiting.begin(), waiting.end(),
            [](const Waiting& a, const Waiting& b) { return a.name < b.name; });
  return waiting;
}

}  // namespace hvdrun
