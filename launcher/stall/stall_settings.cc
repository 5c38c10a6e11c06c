#include "launcher/stall/stall_settings.h"

#include <optional>

#include "common/env_names.h"
#include "common/horovod_variables.h"
#include "common/whole_number.h"

namespace hvdrun {
namespace {

constexpr int64_t kMostSeconds = 86400;

// The value of `name`: its last entry in `exports`, else hvdrun's own; nullopt when neither has it.
std::optional<std::string> Value(const std::vector<std::string>& exports,
                                 const std::function<const char*(const char*)>& lookup,
                                 const std::string& name) {
  for (auto entry = exports.rbegin(); entry != exports.rend(); ++entry) {
    if (entry->size() > name.size() && entry->compare(0, name.size(), name) == 0 &&
        (*entry)[name.size()] == '=') {
      return entry->substr(name.size() + 1);
    }
  }
  const char* own = lookup ? lookup(name.c_str()) : nullptr;
  if (own == nullptr) return std::nullopt;
  return std::string(own);
}

void ReadSeconds(const std::optional<std::string>& text, int64_t min, std::chrono::seconds& seconds) {
  if (!text) return;
  ParsedWholeNumber number = ParseWholeNumber(*text, min, kMostSeconds);
  if (number.ok()) seconds = std::chrono::seconds(number.value);
}

}  // namespace

StallSettings ReadStallSettings(const std::vector<std::string>& exports,
                                const std::function<const char*(const char*)>& lookup) {
  StallSettings settings;
  if (std::optional<std::string> disable = Value(exports, lookup, env::kHorovodStallCheckDisable)) {
    std::optional<bool> off = ParseHorovodSwitch(*disable);
    if (off) settings.enabled = !*off;
  }
  ReadSeconds(Value(exports, lookup, env::kHorovodStallCheckTime), 1, settings.check_time);
  ReadSeconds(Value(exports, lookup, env::kHorovodStallShutdownTime), 0, settings.shutdown_time);
  return settings;
}

std::string RankStallShutdownExport(const StallSettings& settings) {
  if (!settings.enabled || settings.shutdown_time.count() == 0 ||
      settings.shutdown_time < settings.check_time) {
    return "";
  }
  std::string text = env::kHorovodStallShutdownTime;
  text += '=';
  text += std::to_string((settings.shutdown_time + kRankStallShutdownMargin).count());
  return text;
}

}  // namespace hvdrun
