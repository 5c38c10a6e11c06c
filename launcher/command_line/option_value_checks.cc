#include "launcher/command_line/option_value_checks.h"

#include "common/error_text.h"
#include "common/horovod_variables.h"
#include "launcher/command_line/launch_flags.h"

namespace hvdrun {
namespace {

StatusOr<std::string> WholeNumberIn(const std::string& shown, const std::string& text, WholeRange range) {
  StatusOr<int> number =
      ResolveWholeNumber(shown, text, static_cast<int>(range.min), static_cast<int>(range.max));
  if (!number.ok()) return number.status();
  return std::to_string(number.value());
}

}  // namespace

StatusOr<std::string> CheckSeconds(const std::string& shown, const std::string& text) {
  return WholeNumberIn(shown, text, kSecondsRange);
}

StatusOr<std::string> CheckShutdownSeconds(const std::string& shown, const std::string& text) {
  return WholeNumberIn(shown, text, kShutdownSecondsRange);
}

StatusOr<std::string> CheckNcclStreams(const std::string& shown, const std::string& text) {
  return WholeNumberIn(shown, text, kNcclStreamsRange);
}

StatusOr<std::string> CheckCacheCapacity(const std::string& shown, const std::string& text) {
  return WholeNumberIn(shown, text, kCacheCapacityRange);
}

// MiB on the command line, bytes for the ranks (horovodrun's conversion).
StatusOr<std::string> CheckFusionThreshold(const std::string& shown, const std::string& text) {
  StatusOr<std::string> mib = WholeNumberIn(shown, text, kFusionMebibytesRange);
  if (!mib.ok()) return mib.status();
  return std::to_string(std::stoll(mib.value()) << 20);
}

StatusOr<std::string> CheckCycleTime(const std::string& shown, const std::string& text) {
  if (!ParseCycleTime(text)) {
    return Status::Error(shown + ": '" + PrintableText(text) + "' is not " + kCycleTimeForm);
  }
  return text;
}

StatusOr<std::string> CheckAutotuneWarmup(const std::string& shown, const std::string& text) {
  return WholeNumberIn(shown, text, kAutotuneWarmupRange);
}

StatusOr<std::string> CheckAutotuneSamples(const std::string& shown, const std::string& text) {
  return WholeNumberIn(shown, text, kAutotuneSamplesRange);
}

StatusOr<std::string> CheckAutotuneNoise(const std::string& shown, const std::string& text) {
  if (!ParseAutotuneNoise(text)) {
    return Status::Error(shown + ": '" + PrintableText(text) + "' is not " + kAutotuneNoiseForm);
  }
  return text;
}

StatusOr<std::string> CheckCoreList(const std::string& shown, const std::string& text) {
  if (!ParseCoreList(text)) {
    return Status::Error(shown + ": '" + PrintableText(text) + "' is not " + kCoreListForm);
  }
  return text;
}

StatusOr<std::string> CheckLogLevelOf(const std::string& shown, const std::string& text) {
  std::optional<LogLevel> level = ParseLogLevel(text);
  if (!level) return Status::Error(shown + ": '" + PrintableText(text) + "' is not " + kLogLevelForm);
  return std::string(LogLevelName(*level));
}

}  // namespace hvdrun
