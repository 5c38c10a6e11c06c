// The forms of the values of Horovod's runtime variables (common/env_names.h), one reader each, for
// both sides that handle them: hvdrun's flags, which set them for the ranks, and libhvdrun, which
// reads them at init. Each returns nullopt for a text that is not of its form; the caller words the
// one-line error (naming the flag or the variable) with the form's description below. Pure and
// thread-safe.
#ifndef HVDRUN_COMMON_HOROVOD_VARIABLES_H_
#define HVDRUN_COMMON_HOROVOD_VARIABLES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hvdrun {

// Horovod's log levels, least severe first.
enum class LogLevel { kTrace, kDebug, kInfo, kWarning, kError, kFatal };
// TRACE ... FATAL, in any case (Horovod reads them so).
std::optional<LogLevel> ParseLogLevel(std::string_view text);
std::string_view LogLevelName(LogLevel level);  // "TRACE" ... "FATAL"
inline constexpr const char* kLogLevelForm = "a log level (TRACE, DEBUG, INFO, WARNING, ERROR, FATAL)";

// Horovod's switches: "1" or "0" (also "true" and "false").
std::optional<bool> ParseHorovodSwitch(std::string_view text);
inline constexpr const char* kSwitchForm = "1 or 0";

// Milliseconds as a decimal number from 0 to 60000 (HOROVOD_CYCLE_TIME).
std::optional<double> ParseCycleTime(std::string_view text);
inline constexpr const char* kCycleTimeForm = "a number of milliseconds from 0 to 60000";

// Autotuning's Gaussian-process noise: a decimal from 0 to 1, as horovodrun checks it
// (HOROVOD_AUTOTUNE_GAUSSIAN_PROCESS_NOISE).
std::optional<double> ParseAutotuneNoise(std::string_view text);
inline constexpr const char* kAutotuneNoiseForm = "a number from 0 to 1";

// Core ids, comma-separated ("0,2"), each a whole number from 0 to 65535 (HOROVOD_THREAD_AFFINITY).
std::optional<std::vector<int>> ParseCoreList(std::string_view text);
inline constexpr const char* kCoreListForm = "core ids separated by commas, one per local rank (0,1)";

// The library of Horovod's controller or CPU operations: "gloo" or "mpi", in any case; "ccl" is
// Horovod's too but not a library libhvdrun has.
enum class HostLibrary { kGloo, kMpi, kCcl };
std::optional<HostLibrary> ParseHostLibrary(std::string_view text);
inline constexpr const char* kHostLibraryForm = "gloo or mpi";

// The whole-number ranges of the others (common/whole_number.h reads them).
struct WholeRange {
  int64_t min;
  int64_t max;
};
inline constexpr WholeRange kSecondsRange{1, 86400};          // timeouts, the stall warning
inline constexpr WholeRange kShutdownSecondsRange{0, 86400};  // 0: never
inline constexpr WholeRange kNcclStreamsRange{1, 64};
inline constexpr WholeRange kCacheCapacityRange{0, 1 << 20};
inline constexpr WholeRange kFusionMebibytesRange{0, 1 << 20};
inline constexpr WholeRange kAutotuneWarmupRange{0, 100000};   // warm-up samples
inline constexpr WholeRange kAutotuneSamplesRange{1, 100000};  // steps per sample, samples scored

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_HOROVOD_VARIABLES_H_
