#include "common/horovod_variables.h"

#include <cctype>
#include <cstdlib>
#include <string>

#include "common/whole_number.h"

namespace hvdrun {
namespace {

bool SameLetters(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

constexpr std::string_view kLogLevelNames[] = {"TRACE", "DEBUG", "INFO", "WARNING", "ERROR", "FATAL"};

}  // namespace

std::optional<LogLevel> ParseLogLevel(std::string_view text) {
  for (size_t i = 0; i < std::size(kLogLevelNames); ++i) {
    if (SameLetters(text, kLogLevelNames[i])) return static_cast<LogLevel>(i);
  }
  return std::nullopt;
}

std::string_view LogLevelName(LogLevel level) { return kLogLevelNames[static_cast<size_t>(level)]; }

std::optional<bool> ParseHorovodSwitch(std::string_view text) {
  if (text == "1" || text == "true") return true;
  if (text == "0" || text == "false") return false;
  return std::nullopt;
}

std::optional<double> ParseCycleTime(std::string_view text) {
  const std::string copy(text);
  char* end = nullptr;
  const double ms = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end == nullptr || *end != '\0' || !(ms >= 0 && ms <= 60000)) return std::nullopt;
  return ms;
}

std::optional<double> ParseAutotuneNoise(std::string_view text) {
  const std::string copy(text);
  char* end = nullptr;
  const double noise = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end == nullptr || *end != '\0' || !(noise >= 0 && noise <= 1)) return std::nullopt;
  return noise;
}

std::optional<std::vector<int>> ParseCoreList(std::string_view text) {
  std::vector<int> cores;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const ParsedWholeNumber core = ParseWholeNumber(text.substr(start, comma - start), 0, 65535);
    if (!core.ok()) return std::nullopt;
    cores.push_back(static_cast<int>(core.value));
    start = comma + 1;
  }
  return cores;
}

std::optional<HostLibrary> ParseHostLibrary(std::string_view text) {
  if (SameLetters(text, "gloo")) return HostLibrary::kGloo;
  if (SameLetters(text, "mpi")) return HostLibrary::kMpi;
  if (SameLetters(text, "ccl")) return HostLibrary::kCcl;
  return std::nullopt;
}

}  // namespace hvdrun
