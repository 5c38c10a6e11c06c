#include "common/whole_number.h"

#include <algorithm>
#include <charconv>
#include <system_error>

namespace hvdrun {

ParsedWholeNumber ParseWholeNumber(std::string_view text, int64_t min, int64_t max) {
  const bool negative = text.starts_with('-');
  const std::string_view digits = negative ? text.substr(1) : text;
  if (digits.empty() ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return {0, WholeNumberProblem::kNotWholeNumber};
  }
  // Only the range can be wrong now: from_chars takes the whole text, or says it is out of int64.
  int64_t value = 0;
  if (std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc()) {
    return {0, negative ? WholeNumberProblem::kTooSmall : WholeNumberProblem::kTooLarge};
  }
  if (value < min) return {0, WholeNumberProblem::kTooSmall};
  if (value > max) return {0, WholeNumberProblem::kTooLarge};
  return {value, WholeNumberProblem::kNone};
}

}  // namespace hvdrun
