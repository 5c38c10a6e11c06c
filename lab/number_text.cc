#include "lab/number_text.h"

#include <cstdio>

namespace hvdrun::lab {

std::string NumberText(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

}  // namespace hvdrun::lab
