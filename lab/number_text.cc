#include "lab/number_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace hvdrun::lab {

std::string NumberText(const char* format, double value) {
  if (!std::isfinite(value)) {
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    std::abort();  // the fuzzers' signal: a figure that the report's checks let through
#endif
    return kNoNumber;
  }
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

}  // namespace hvdrun::lab
