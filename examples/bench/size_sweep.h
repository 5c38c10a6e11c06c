// SizeSweep: the message sizes hvdrun-bench measures, and the bandwidth arithmetic of nccl-tests.
//
// Sizes go from `min_bytes` to `max_bytes`, multiplying by `factor` each step (nccl-tests' -b, -e,
// -f); each size is rounded down to whole elements. Sizes on the command line take K, M and G
// suffixes, binary like nccl-tests' (1K = 1024 bytes).
#ifndef HVDRUN_EXAMPLES_BENCH_SIZE_SWEEP_H_
#define HVDRUN_EXAMPLES_BENCH_SIZE_SWEEP_H_

#include <cstddef>
#include <string_view>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun {

// Parses "8", "1K", "256M", "1G", given to `flag`, into bytes (at most 2^40). Errors:
// "FLAG: 'TEXT' is not a size (...)" and "FLAG: 'TEXT' is too large".
StatusOr<size_t> ParseByteSize(std::string_view flag, std::string_view text);

// The sweep's sizes in bytes, each a multiple of element_bytes (a size below one element gives 0
// elements and is kept: the zero-length collective is measured too).
StatusOr<std::vector<size_t>> SweepSizes(size_t min_bytes, size_t max_bytes, size_t factor,
                                         size_t element_bytes);

// Algorithm bandwidth, decimal GB/s: bytes per rank moved per second.
double AlgorithmBandwidth(size_t bytes, double seconds);
// Bus bandwidth of an allreduce over `ranks` ranks (nccl-tests): algbw * 2(n-1)/n, comparable
// with the link's speed whatever the rank count.
double AllreduceBusBandwidth(double algorithm_bandwidth, int ranks);

}  // namespace hvdrun

#endif  // HVDRUN_EXAMPLES_BENCH_SIZE_SWEEP_H_
