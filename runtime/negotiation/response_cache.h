// ResponseCache: the negotiated requests every rank remembers, so that later cycles agree on them
// by one small allreduce of slot counters (runtime/negotiation/negotiation_message.h) instead of a gather.
//
// Every rank keeps an identical cache: it changes only through Put and Erase, which every rank calls
// with the same arguments in the same order (the order of the agreed responses), so a slot ("bit")
// names the same request on every rank. A bit is given to a new entry only when it is free: never
// renumbered, it changes owner only when its entry is evicted or erased (Horovod reassigned every
// bit each cycle until its PR #1988, which was slow). A new name takes the lowest free bit; a full
// cache evicts its least recently used entry and gives its bit to the new one. Capacity 0 disables
// the cache: Put does nothing and Find always misses.
//
// Not thread-safe: the collective thread owns it.
#ifndef HVDRUN_RUNTIME_NEGOTIATION_RESPONSE_CACHE_H_
#define HVDRUN_RUNTIME_NEGOTIATION_RESPONSE_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/request/tensor_request.h"

namespace hvdrun {

class ResponseCache {
 public:
  explicit ResponseCache(size_t capacity);

  enum class Lookup {
    kMiss,
    kHit,
    kMismatch,  // the name is cached with other parameters
  };
  // How `request` (by name) stands against the cache; `bit` gets the entry's bit on kHit and
  // kMismatch.
  Lookup Find(const TensorRequest& request, uint32_t* bit) const;
  // Records an agreed request as the most recently used and returns its bit. A cached name keeps its
  // bit (and takes the new parameters if they differ).
  uint32_t Put(const TensorRequest& request);
  void Erase(uint32_t bit);
  const TensorRequest& At(uint32_t bit) const { return slots_[bit].request; }
  bool InUse(uint32_t bit) const { return slots_[bit].in_use; }

  size_t size() const { return by_name_.size(); }
  size_t capacity() const { return slots_.size(); }
  // Bits that exist (the capacity): the cycle's counters hold one per bit.
  size_t bit_count() const { return slots_.size(); }
  uint64_t evictions() const { return evictions_; }

 private:
  struct Slot {
    TensorRequest request;
    bool in_use = false;
    std::list<uint32_t>::iterator recency;  // position in recency_, while in use
  };

  std::vector<Slot> slots_;
  std::list<uint32_t> recency_;  // most recently used first
  std::set<uint32_t> free_;
  std::unordered_map<std::string, uint32_t> by_name_;
  uint64_t evictions_ = 0;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_NEGOTIATION_RESPONSE_CACHE_H_
