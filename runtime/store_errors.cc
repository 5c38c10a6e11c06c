#include "runtime/store_errors.h"

#include <cstddef>

namespace hvdrun {

std::string FormatDuration(std::chrono::milliseconds duration) {
  const auto ms = duration.count();
  if (ms < 1000) return std::to_string(ms) + " ms";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  std::string text = std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 + 1000).substr(1);
  while (text.back() == '0') text.pop_back();
  return text + " s";
}

std::string QuoteKeys(const std::vector<std::string>& keys) {
  constexpr size_t kMaxNamed = 8;
  std::string text;
  for (size_t i = 0; i < keys.size() && i < kMaxNamed; ++i) {
    if (i > 0) text += ", ";
    text += "'" + keys[i] + "'";
  }
  if (keys.size() > kMaxNamed) text += " and " + std::to_string(keys.size() - kMaxNamed) + " more";
  return text;
}

}  // namespace hvdrun
