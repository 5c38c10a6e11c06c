#include "common/shortest_number.h"

#include <array>
#include <cstdio>
#include <cstdlib>

namespace hvdrun {

std::string ShortestNumberText(double value) {
  std::array<char, 32> text{};
  for (int digits = 1; digits < 17; ++digits) {
    std::snprintf(text.data(), text.size(), "%.*g", digits, value);
    if (std::strtod(text.data(), nullptr) == value) return text.data();
  }
  std::snprintf(text.data(), text.size(), "%.17g", value);
  return text.data();
}

}  // namespace hvdrun
