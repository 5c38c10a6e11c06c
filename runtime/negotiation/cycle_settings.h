// CycleSettings: the negotiated engine's tuning that takes effect per cycle (NegotiationOptions'
// cycle_time and fusion_threshold_bytes, and whether the response cache serves). The engine reads
// them once at the start of each cycle (NegotiatedStream::Run) and uses that copy throughout it: how
// long until the next cycle, how much fusion packs into one buffer, whether the cache is looked in.
// Every rank must use the same settings in the same cycle, since the ranks' fusion plans and caches
// must agree.
#ifndef HVDRUN_RUNTIME_NEGOTIATION_CYCLE_SETTINGS_H_
#define HVDRUN_RUNTIME_NEGOTIATION_CYCLE_SETTINGS_H_

#include <chrono>
#include <cstddef>

#include "hvdrun/options.h"
#include "runtime/negotiation/fusion_plan.h"

namespace hvdrun {

struct CycleSettings {
  std::chrono::microseconds cycle_time{0};
  size_t fusion_threshold_bytes = 0;  // as used: EffectiveFusionThreshold's
  // The response cache serves (CycleAgreement::SetCacheEnabled); never with a capacity of 0.
  bool response_cache = true;
  // The allreduces run hierarchically (ShmBackend::set_hierarchical); only in a job that reduces
  // hierarchically (NegotiatedStream::AllowHierarchicalSwitch), which the options alone do not tell.
  bool hierarchical_allreduce = false;

  // The settings `options` start a runtime with.
  static CycleSettings From(const RuntimeOptions& options) {
    return {options.negotiation.cycle_time,
            EffectiveFusionThreshold(options.negotiation.fusion_threshold_bytes, options.local_size),
            options.negotiation.cache_capacity > 0, false};
  }
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_NEGOTIATION_CYCLE_SETTINGS_H_
