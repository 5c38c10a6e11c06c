// Wording shared by the KeyValueStore implementations in this folder, so that every store says
// "timed out" the same way.
#ifndef HVDRUN_RUNTIME_STORE_ERRORS_H_
#define HVDRUN_RUNTIME_STORE_ERRORS_H_

#include <chrono>
#include <string>
#include <vector>

namespace hvdrun {

// "250 ms", "60 s", "1.5 s".
std::string FormatDuration(std::chrono::milliseconds duration);

// "'a', 'b'" (at most eight keys, then "and N more").
std::string QuoteKeys(const std::vector<std::string>& keys);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_STORE_ERRORS_H_
