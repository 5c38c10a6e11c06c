#include "examples/shared/whole_number_flag.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <system_error>

namespace hvdrun::examples {

StatusOr<int64_t> ParseWholeNumberFlag(std::string_view flag, std::string_view text, int64_t min,
                                       int64_t max) {
  const std::string_view digits = text.substr(text.starts_with('-') ? 1 : 0);
  const bool well_formed = !digits.empty() && std::all_of(digits.begin(), digits.end(),
                                                          [](char c) { return c >= '0' && c <= '9'; });
  if (!well_formed) {
    return Status::Error(std::string(flag) + ": '" + std::string(text) + "' is not a whole number");
  }
  // Digits only: what from_chars can still refuse is a number beyond 64 bits, also out of range.
  int64_t value = 0;
  const bool in_int64 = std::from_chars(text.data(), text.data() + text.size(), value).ec == std::errc();
  if (!in_int64 || value < min || value > max) {
    return Status::Error(std::string(flag) + ": " + std::string(text) + " is out of range (" +
                         std::to_string(min) + " to " + std::to_string(max) + ")");
  }
  return value;
}

}  // namespace hvdrun::examples
