// The option table's value checks (OptionRow::check, option_table.h): each checks the value of an
// option that sets a variable for the ranks and returns it in the variable's form; the error names
// `shown` (the option as typed, or its config file place) and the form expected. The forms are
// common/horovod_variables.h's, which libhvdrun reads the variables by. Pure and thread-safe.
#ifndef HVDRUN_LAUNCHER_COMMAND_LINE_OPTION_VALUE_CHECKS_H_
#define HVDRUN_LAUNCHER_COMMAND_LINE_OPTION_VALUE_CHECKS_H_

#include <string>

#include "hvdrun/status.h"

namespace hvdrun {

// Whole numbers in horovod_variables.h's ranges.
StatusOr<std::string> CheckSeconds(const std::string& shown, const std::string& text);
StatusOr<std::string> CheckShutdownSeconds(const std::string& shown, const std::string& text);
StatusOr<std::string> CheckNcclStreams(const std::string& shown, const std::string& text);
StatusOr<std::string> CheckCacheCapacity(const std::string& shown, const std::string& text);
// MiB on the command line, bytes for the ranks (horovodrun's conversion).
StatusOr<std::string> CheckFusionThreshold(const std::string& shown, const std::string& text);
StatusOr<std::string> CheckCycleTime(const std::string& shown, const std::string& text);
StatusOr<std::string> CheckAutotuneWarmup(const std::string& shown, const std::string& text);
// Steps per sample and samples scored.
StatusOr<std::string> CheckAutotuneSamples(const std::string& shown, const std::string& text);
StatusOr<std::string> CheckAutotuneNoise(const std::string& shown, const std::string& text);
StatusOr<std::string> CheckCoreList(const std::string& shown, const std::string& text);
// A log level, written in capitals.
StatusOr<std::string> CheckLogLevelOf(const std::string& shown, const std::string& text);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_COMMAND_LINE_OPTION_VALUE_CHECKS_H_
