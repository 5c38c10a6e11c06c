#include "runtime/negotiation/negotiation_report.h"

namespace hvdrun {

void NegotiationReport::RecordCycle(const CycleSettings& settings, bool gathered, size_t ran,
                                    uint64_t cache_evictions) {
  std::lock_guard<std::mutex> lock(mutex_);
  settings_ = settings;
  if (ran > 0 || gathered) {
    ++counters_.cycles;
    if (!gathered) ++counters_.cache_only_cycles;
  }
  counters_.cache_evictions = cache_evictions;
}

void NegotiationReport::RecordResponse(uint64_t bytes, size_t tensors, size_t fused_bytes, bool copied,
                                       std::chrono::nanoseconds time) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++counters_.responses;
  counters_.tensors += tensors;
  statistics_.Record(bytes, tensors, time);
  if (tensors > 1) (copied ? counters_.copied_bytes : counters_.in_place_bytes) += fused_bytes;
}

NegotiationCounters NegotiationReport::counters() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counters_;
}

nlohmann::json NegotiationReport::ToJson() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {{"negotiation",
           {{"cycles", counters_.cycles},
            {"cache_only_cycles", counters_.cache_only_cycles},
            {"responses", counters_.responses},
            {"tensors", counters_.tensors},
            {"copied_bytes", counters_.copied_bytes},
            {"in_place_bytes", counters_.in_place_bytes},
            {"cache_evictions", counters_.cache_evictions},
            {"fusion_threshold_bytes", settings_.fusion_threshold_bytes},
            {"cycle_time_ms", std::chrono::duration<double, std::milli>(settings_.cycle_time).count()},
            {"cache_capacity", cache_capacity_},
            {"response_cache", settings_.response_cache},
            {"hierarchical_allreduce", settings_.hierarchical_allreduce}}},
          {"responses", statistics_.ToJson()}};
}

}  // namespace hvdrun
