// PendingEntries: the requests this rank's negotiated engine has taken in (RequestQueue::Take) and
// not yet completed, by name, iterated in submission order: the order announcements and cache slots
// follow, so that tensors submitted in memory order are packed in memory order.
//
// Completing an entry (Complete, FailAll) removes it, frees its name in the RequestQueue for the
// next submission, and completes its handle. Not thread-safe: the collective thread owns it.
#ifndef HVDRUN_RUNTIME_NEGOTIATION_PENDING_ENTRIES_H_
#define HVDRUN_RUNTIME_NEGOTIATION_PENDING_ENTRIES_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "hvdrun/status.h"
#include "runtime/backend.h"
#include "runtime/collective_state.h"
#include "runtime/request/tensor_request.h"

namespace hvdrun {

// One request of this rank, with its buffers and handle.
struct PendingEntry {
  TensorRequest request;
  const void* send = nullptr;
  void* recv = nullptr;
  std::shared_ptr<CollectiveHandle::State> state;
  BackendMemory::ReadyMark ready;  // what the data backend waits for before it reads `send`
  std::chrono::steady_clock::time_point submitted;
  // While it is cached and not ready: when this rank next asks every rank which of them lack it, so
  // that rank 0 can name them (StallTracker::CensusDue).
  std::chrono::steady_clock::time_point next_census;
  bool announced = false;       // in the readiness tables: waits there, not in the cache
  bool stand_in = false;        // this rank has joined: zeros in its place (zeros holds them)
  BackendMemory::Buffer zeros;  // in the data backend's memory
};

// Whether `request` may enter the response cache: named by the caller, not by its place in the
// sequence of unnamed calls, and not a varied allgather or an alltoall with splits, whose counts
// change from call to call (they are always announced).
bool Cacheable(const TensorRequest& request);
// The name compression's error feedback keys on: none for unnamed calls and stand-ins.
std::string FeedbackName(const PendingEntry& entry);

class PendingEntries {
 public:
  // Frees a completed entry's name for the next submission (RequestQueue::Release).
  using Release =
      std::function<void(const std::string& name, const std::shared_ptr<CollectiveHandle::State>&)>;

  explicit PendingEntries(Release release) : release_(std::move(release)) {}

  void Add(PendingEntry entry);
  PendingEntry& At(const std::string& name) { return by_order_.at(order_of_.at(name)); }
  const PendingEntry& At(const std::string& name) const { return by_order_.at(order_of_.at(name)); }
  bool Contains(const std::string& name) const { return order_of_.count(name) > 0; }
  std::map<uint64_t, PendingEntry>& InOrder() { return by_order_; }
  bool empty() const { return by_order_.empty(); }
  // Removes `name`'s entry, frees the name and completes the handle with `status`; nothing when
  // `name` is not pending.
  void Complete(const std::string& name, const Status& status);
  // Completes every entry with `status` (the runtime broke: the queue has dropped every name).
  void FailAll(const Status& status);

 private:
  const Release release_;
  uint64_t next_ = 0;
  std::map<uint64_t, PendingEntry> by_order_;
  std::unordered_map<std::string, uint64_t> order_of_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_NEGOTIATION_PENDING_ENTRIES_H_
