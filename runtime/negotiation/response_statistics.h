// ResponseStatistics: every response a rank's negotiated path ran (one backend call: a fused
// buffer, or a tensor alone), summed exactly per size bin, for the rank's report: the lab's
// response-size table needs no timeline.
//
// Bins as the lab's table has them, in decimal units (1 KB = 1000 bytes, 1 MB = 10^6 bytes, like
// its "MB" and "Mbps" columns): (0, 1 KB], (1 KB, 1 MB], (1 MB, 10 MB], then 10 MB steps
// ((10 MB, 20 MB], ...). A response of 0 bytes counts in the first bin.
//
// Not thread-safe.
#ifndef HVDRUN_RUNTIME_NEGOTIATION_RESPONSE_STATISTICS_H_
#define HVDRUN_RUNTIME_NEGOTIATION_RESPONSE_STATISTICS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

namespace hvdrun {

class ResponseStatistics {
 public:
  struct Bin {
    uint64_t lower_bytes = 0;  // exclusive
    uint64_t upper_bytes = 0;  // inclusive
    uint64_t responses = 0;
    uint64_t tensors = 0;
    uint64_t bytes = 0;
    std::chrono::nanoseconds time{0};
  };

  void Record(uint64_t bytes, uint64_t tensors, std::chrono::nanoseconds time);
  // The bins that hold a response, smallest first.
  std::vector<Bin> Bins() const;
  uint64_t responses() const;
  uint64_t bytes() const;
  // {"bins": [{"lower_bytes", "upper_bytes", "responses", "tensors", "bytes", "seconds"}],
  //  "responses", "tensors", "bytes", "seconds"}
  nlohmann::json ToJson() const;

 private:
  std::map<uint64_t, Bin> bins_;  // by upper bound
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_NEGOTIATION_RESPONSE_STATISTICS_H_
