#include "runtime/negotiation/response_cache.h"

namespace hvdrun {

ResponseCache::ResponseCache(size_t capacity) : slots_(capacity) {
  for (size_t bit = 0; bit < capacity; ++bit) free_.insert(free_.end(), static_cast<uint32_t>(bit));
}

ResponseCache::Lookup ResponseCache::Find(const TensorRequest& request, uint32_t* bit) const {
  auto found = by_name_.find(request.name);
  if (found == by_name_.end()) return Lookup::kMiss;
  *bit = found->second;
  return slots_[found->second].request.Matches(request) ? Lookup::kHit : Lookup::kMismatch;
}

uint32_t ResponseCache::Put(const TensorRequest& request) {
  if (slots_.empty()) return 0;
  auto found = by_name_.find(request.name);
  if (found != by_name_.end()) {
    Slot& slot = slots_[found->second];
    slot.request = request;
    recency_.splice(recency_.begin(), recency_, slot.recency);
    return found->second;
  }
  if (free_.empty()) {
    Erase(recency_.back());
    ++evictions_;
  }
  const uint32_t bit = *free_.begin();
  free_.erase(free_.begin());
  Slot& slot = slots_[bit];
  slot.request = request;
  slot.in_use = true;
  recency_.push_front(bit);
  slot.recency = recency_.begin();
  by_name_.emplace(request.name, bit);
  return bit;
}

void ResponseCache::Erase(uint32_t bit) {
  Slot& slot = slots_[bit];
  if (!slot.in_use) return;
  by_name_.erase(slot.request.name);
  recency_.erase(slot.recency);
  slot.in_use = false;
  free_.insert(bit);
}

}  // namespace hvdrun
