// What the fuzzers of hvdrun's text inputs check beyond the sanitizers: an error is one line (no
// control character breaks it or reaches a terminal), and a number written for a person is finite.
// A check that fails aborts, which libFuzzer reports as a crash with the input that made it.
#ifndef HVDRUN_TESTS_FUZZ_FUZZ_CHECKS_H_
#define HVDRUN_TESTS_FUZZ_FUZZ_CHECKS_H_

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace hvdrun::fuzzing {

// An error message: not empty, no byte below 0x20 and no DEL.
inline void CheckOneLine(std::string_view message) {
  if (message.empty()) std::abort();
  for (char c : message) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) std::abort();
  }
}

// Every number in `json` finite (nlohmann would write one that is not as null). Iterative: the
// values checked were built by the program, not parsed, and may be of any depth.
inline void CheckFiniteNumbers(const nlohmann::json& json) {
  std::vector<const nlohmann::json*> pending = {&json};
  while (!pending.empty()) {
    const nlohmann::json* value = pending.back();
    pending.pop_back();
    if (value->is_number_float() && !std::isfinite(value->get<double>())) std::abort();
    if (value->is_structured()) {
      for (const nlohmann::json& child : *value) pending.push_back(&child);
    }
  }
}

}  // namespace hvdrun::fuzzing

#endif  // HVDRUN_TESTS_FUZZ_FUZZ_CHECKS_H_
