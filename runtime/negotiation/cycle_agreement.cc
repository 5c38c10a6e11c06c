#include "runtime/negotiation/cycle_agreement.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

namespace hvdrun {
namespace {

// The status fields of each cycle's allreduce, before the cache slots.
enum StatusField : size_t {
  kAnnounce = 0,  // this rank has announcements: every rank gathers them
  kCensus = 1,    // this rank has a cached request stalled: every rank probes its cached requests
  kStop = 2,      // this rank stops (its Runtime is closing, or it broke)
  kFirstSlot = 3,
};

}  // namespace

CycleAgreement::CycleAgreement(int rank, int size, size_t cache_capacity)
    : rank_(rank), size_(size), cache_(cache_capacity), table_(size) {}

StatusOr<CycleAgreement::Result> CycleAgreement::Agree(Backend& control, Clock::time_point now, bool stopping,
                                                       const std::optional<Announcement>& join,
                                                       PendingEntries& pending, const StallTracker& stalls) {
  Ballot ballot = Cast(now, stopping, join, pending, stalls);
  if (Status status = Exchange(control, now, ballot); !status.ok()) return status;
  Result result;
  if (ballot.fields.Count(kStop) > 0) {
    if (!ballot.timed_out.ok()) return ballot.timed_out;
    if (!stopping) {
      return Status::Error(
          "another rank's runtime stopped (closed, timed out or failed) while this rank had collectives "
          "pending");
    }
    result.stop = true;
    return result;
  }
  result.ready = ReadyInCache(ballot.fields);
  result.gathered = ballot.fields.Count(kAnnounce) > 0 || ballot.fields.Count(kCensus) > 0;
  if (result.gathered) {
    if (Status status = GatherAnnouncements(control, now, ballot, pending, &result); !status.ok()) {
      return status;
    }
  }
  return result;
}

void CycleAgreement::Learn(const std::vector<TensorRequest>& ran) {
  for (const TensorRequest& request : ran) {
    if (Cacheable(request)) cache_.Put(request);
  }
}

void CycleAgreement::SetCacheEnabled(bool enabled) { cache_enabled_ = enabled; }

CycleAgreement::Ballot CycleAgreement::Cast(Clock::time_point now, bool stopping,
                                            const std::optional<Announcement>& join, PendingEntries& pending,
                                            const StallTracker& stalls) {
  Ballot ballot(CountedFields(kFirstSlot + cache_.bit_count(), size_));
  bool census = false;  // an entry waited past the stall limit: every rank probes
  for (auto& [order, entry] : pending.InOrder()) {
    if (ballot.timed_out.ok()) ballot.timed_out = stalls.TimedOut(entry, now);
    if (entry.announced) continue;
    uint32_t bit = 0;
    // A name some rank announced (while the cache was off) completes through the readiness table:
    // every rank announces it, whether or not it is cached.
    const ResponseCache::Lookup lookup =
        cache_enabled_ && Cacheable(entry.request) && !table_.Announced(entry.request.name)
            ? cache_.Find(entry.request, &bit)
            : ResponseCache::Lookup::kMiss;
    // While a rank has joined, a cached broadcast goes through the readiness table, which fails it.
    const bool joined_ranks_refuse =
        table_.joined_count() > 0 && entry.request.kind != CollectiveKind::kAllreduce;
    if (lookup == ResponseCache::Lookup::kHit && !joined_ranks_refuse) {
      ballot.fields.Set(kFirstSlot + bit);
      ballot.cached.push_back(&entry);
      if (stalls.CensusDue(entry, now)) census = true;
      continue;
    }
    if (lookup == ResponseCache::Lookup::kMismatch) {
      ballot.mine.push_back(Announcement{Announcement::Kind::kInvalidate, entry.request});
      continue;  // announced afresh once every rank has erased the entry
    }
    ballot.mine.push_back(Announcement{Announcement::Kind::kRequest, entry.request});
    entry.announced = true;
  }
  if (join) ballot.mine.push_back(*join);
  // A joined rank has every cached allreduce pending (as zeros), as Horovod's joined ranks do.
  if (cache_enabled_ && table_.joined(rank_)) {
    for (uint32_t bit = 0; bit < cache_.bit_count(); ++bit) {
      if (cache_.InUse(bit) && cache_.At(bit).kind == CollectiveKind::kAllreduce) {
        ballot.fields.Set(kFirstSlot + bit);
      }
    }
  }
  if (!ballot.mine.empty()) ballot.fields.Set(kAnnounce);
  if (census) ballot.fields.Set(kCensus);
  if (stopping || !ballot.timed_out.ok()) ballot.fields.Set(kStop);
  return ballot;
}

Status CycleAgreement::Exchange(Backend& control, Clock::time_point now, Ballot& ballot) {
  std::vector<int64_t>& words = ballot.fields.words();
  Status status =
      control.Allreduce(words.data(), words.data(), words.size(), DataType::kInt64, ReduceOp::kSum);
  agreed_at_ = Clock::now();
  // The quickest agreement drifts up slowly, so that one lucky cycle does not count for ever.
  const Clock::duration took = agreed_at_ - now;
  quickest_agreement_ =
      took < quickest_agreement_ ? took : quickest_agreement_ + (took - quickest_agreement_) / 64;
  return status;
}

std::vector<TensorRequest> CycleAgreement::ReadyInCache(const CountedFields& fields) const {
  std::vector<TensorRequest> ready;
  for (size_t bit = 0; bit < cache_.bit_count(); ++bit) {
    if (fields.Count(kFirstSlot + bit) == size_) ready.push_back(cache_.At(static_cast<uint32_t>(bit)));
  }
  return ready;
}

Status CycleAgreement::GatherAnnouncements(Backend& control, Clock::time_point now, Ballot& ballot,
                                           PendingEntries& pending, Result* result) {
  // In a census, each cached request that some rank lacks is probed, so that rank 0 can name it.
  if (ballot.fields.Count(kCensus) > 0) {
    for (const PendingEntry* entry : ballot.cached) {
      uint32_t bit = 0;
      cache_.Find(entry->request, &bit);
      if (ballot.fields.Count(kFirstSlot + bit) < size_) {
        ballot.mine.push_back(Announcement{Announcement::Kind::kProbe, entry->request});
      }
    }
  }
  std::vector<std::vector<Announcement>> by_rank;
  if (Status status = Gather(control, ballot.mine, &by_rank); !status.ok()) return status;
  ReadinessTable::Outcome outcome = table_.Apply(by_rank, now);
  for (const std::string& name : outcome.invalidated) {
    uint32_t bit = 0;
    TensorRequest probe;
    probe.name = name;
    if (cache_.Find(probe, &bit) != ResponseCache::Lookup::kMiss) cache_.Erase(bit);
  }
  for (const ReadinessTable::Failure& failure : outcome.failed) {
    pending.Complete(failure.name, Status::Error(failure.error));
  }
  result->ready.insert(result->ready.end(), outcome.ready.begin(), outcome.ready.end());
  result->join_done = outcome.joined;
  return Status::Ok();
}

Status CycleAgreement::Gather(Backend& control, const std::vector<Announcement>& mine,
                              std::vector<std::vector<Announcement>>* by_rank) const {
  const std::string bytes = EncodeAnnouncements(mine);
  const auto size = static_cast<size_t>(size_);
  int64_t length = static_cast<int64_t>(bytes.size());
  std::vector<int64_t> lengths(size);
  Status status = control.Allgather(&length, lengths.data(), 1, DataType::kInt64);
  if (!status.ok()) return status;
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  const size_t words = (static_cast<size_t>(longest) + sizeof(int64_t) - 1) / sizeof(int64_t);
  std::vector<int64_t> send(words, 0);
  std::vector<int64_t> recv(words * size, 0);
  if (!bytes.empty()) std::memcpy(send.data(), bytes.data(), bytes.size());
  if (words > 0) {
    status = control.Allgather(send.data(), recv.data(), words, DataType::kInt64);
    if (!status.ok()) return status;
  }
  by_rank->clear();
  for (size_t rank = 0; rank < size; ++rank) {
    if (lengths[rank] < 0 || lengths[rank] > longest) {
      return Status::Error("negotiation: rank " + std::to_string(rank) + " announced a length of " +
                           std::to_string(lengths[rank]) + " bytes");
    }
    const std::string_view view(reinterpret_cast<const char*>(recv.data() + rank * words),
                                static_cast<size_t>(lengths[rank]));
    StatusOr<std::vector<Announcement>> decoded = DecodeAnnouncements(view);
    if (!decoded.ok()) {
      return Status::Error("rank " + std::to_string(rank) + ": " + decoded.status().message());
    }
    by_rank->push_back(std::move(decoded).value());
  }
  return Status::Ok();
}

}  // namespace hvdrun
