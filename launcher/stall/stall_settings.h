// StallSettings: hvdrun's stall check as the job asked for it, from Horovod's variables: those the
// command line sets for the ranks (--stall-check-time, --no-stall-check, ... and -x), else hvdrun's
// own environment, else Horovod's defaults. The ranks' libhvdrun reads the same variables.
#ifndef HVDRUN_LAUNCHER_STALL_STALL_SETTINGS_H_
#define HVDRUN_LAUNCHER_STALL_STALL_SETTINGS_H_

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace hvdrun {

struct StallSettings {
  bool enabled = true;                    // --no-stall-check / HOROVOD_STALL_CHECK_DISABLE=1: false
  std::chrono::seconds check_time{60};    // HOROVOD_STALL_CHECK_TIME_SECONDS, Horovod's default
  std::chrono::seconds shutdown_time{0};  // HOROVOD_STALL_SHUTDOWN_TIME_SECONDS; 0: never
};

// `exports`: NAME=VALUE, the ranks' variables (LaunchOptions::exports; the last of a name counts);
// `lookup`: hvdrun's own environment (nullptr for a name it lacks). A value out of its form or range
// (1 to 86400 s for the check time, 0 to 86400 for the shutdown time) leaves the default: the
// command line has checked the flags' values, and libhvdrun rejects such a variable at init.
StallSettings ReadStallSettings(const std::vector<std::string>& exports,
                                const std::function<const char*(const char*)>& lookup);

// Where hvdrun's agents report the ranks' progress, hvdrun itself ends a job stalled for the shutdown
// time (exit kExitStall, the stalled rank named). The ranks' own libhvdrun would end it at the same
// moment, each waiting rank failing on its own; so the ranks get the shutdown time plus this margin
// (one progress period and hvdrun's reaction), and hvdrun's report is the one the job ends with.
inline constexpr std::chrono::seconds kRankStallShutdownMargin{3};

// The NAME=VALUE to add to the ranks' variables for that (HOROVOD_STALL_SHUTDOWN_TIME_SECONDS of the
// shutdown time plus the margin), or "" where hvdrun does not end stalls itself: the check off, no
// shutdown time, or one below the check time (ignored, as Horovod ignores it).
std::string RankStallShutdownExport(const StallSettings& settings);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_STALL_STALL_SETTINGS_H_
