// NegotiationCounters and CompressionCounters: what a Runtime has done, for the rank's report
// (Runtime::negotiation_counters(), Runtime::compression_counters()).
//
// Plain values: each call returns a snapshot, which may be taken from any thread while collectives
// run. Every figure starts at zero with its Runtime and only grows.
#ifndef HVDRUN_COUNTERS_H_
#define HVDRUN_COUNTERS_H_

#include <cstdint>

namespace hvdrun {

// What negotiation did on this rank, for its report.
struct NegotiationCounters {
  uint64_t cycles = 0;             // cycles that had something to run or agree on
  uint64_t cache_only_cycles = 0;  // of those, agreed by the cache's allreduce alone, with no gather
  uint64_t responses = 0;          // backend calls made for named collectives (one per fused buffer)
  uint64_t tensors = 0;            // collectives they carried
  uint64_t copied_bytes = 0;       // bytes of fused responses copied through the fusion buffer
  uint64_t in_place_bytes = 0;     // bytes of fused responses whose tensors lay back to back in memory,
                                   // reduced where they were (no copy)
  uint64_t cache_evictions = 0;
};

// What compression did on this rank, for its report.
struct CompressionCounters {
  uint64_t compressed_bytes = 0;    // float32 bytes reduced through compression
  uint64_t wire_bytes = 0;          // bytes this rank sent for them (as the collectives' algorithms send)
  uint64_t float32_wire_bytes = 0;  // what a float32 ring allreduce of the same values would have sent
};

}  // namespace hvdrun

#endif  // HVDRUN_COUNTERS_H_
