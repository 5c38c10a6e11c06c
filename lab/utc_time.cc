#include "lab/utc_time.h"

namespace hvdrun::lab {

std::string FormatUtc(std::time_t when, UtcFormat format) {
  std::tm utc{};
  ::gmtime_r(&when, &utc);
  char text[32];
  std::strftime(text, sizeof(text),
                format == UtcFormat::kIso8601 ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%d %H:%M UTC", &utc);
  return text;
}

std::string UtcNow(UtcFormat format) { return FormatUtc(std::time(nullptr), format); }

}  // namespace hvdrun::lab
