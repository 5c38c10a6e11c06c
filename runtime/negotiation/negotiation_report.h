// NegotiationReport: what the negotiated engine did on this rank, for its report (docs/results.md):
// the counters (NegotiationCounters), every response's bytes and time summed per size bin
// (runtime/negotiation/response_statistics.h), and the settings of its last cycle.
//
// Thread-safe: the collective thread records; counters and ToJson from any thread.
#ifndef HVDRUN_RUNTIME_NEGOTIATION_NEGOTIATION_REPORT_H_
#define HVDRUN_RUNTIME_NEGOTIATION_NEGOTIATION_REPORT_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>

#include "hvdrun/counters.h"
#include "runtime/negotiation/cycle_settings.h"
#include "runtime/negotiation/response_statistics.h"

namespace hvdrun {

class NegotiationReport {
 public:
  NegotiationReport(const CycleSettings& settings, size_t cache_capacity)
      : settings_(settings), cache_capacity_(cache_capacity) {}

  // A cycle ran with `settings`: it counts when it ran something (`ran` requests) or gathered
  // announcements, as settled by the cache alone when it did not gather. `cache_evictions`: the
  // cache's count so far.
  void RecordCycle(const CycleSettings& settings, bool gathered, size_t ran, uint64_t cache_evictions);
  // One response (one backend call) of `tensors` requests, `bytes` of theirs, that took `time`;
  // a fused one (tensors > 1) of `fused_bytes` went through the fusion buffer when `copied`, else
  // was reduced in place.
  void RecordResponse(uint64_t bytes, size_t tensors, size_t fused_bytes, bool copied,
                      std::chrono::nanoseconds time);

  NegotiationCounters counters() const;
  // {"negotiation": {the counters, "fusion_threshold_bytes", "cycle_time_ms", "cache_capacity"},
  //  "responses": ResponseStatistics::ToJson()}
  nlohmann::json ToJson() const;

 private:
  mutable std::mutex mutex_;
  CycleSettings settings_;  // GUARDED_BY(mutex_)
  const size_t cache_capacity_;
  NegotiationCounters counters_;   // GUARDED_BY(mutex_)
  ResponseStatistics statistics_;  // GUARDED_BY(mutex_)
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_NEGOTIATION_NEGOTIATION_REPORT_H_
