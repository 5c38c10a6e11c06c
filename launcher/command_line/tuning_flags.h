// libhvdrun's own tuning flags (--compression, fp8's safeguards, --shared-memory), checked against
// the job's controller, and the timeline's file (--timeline-filename or HOROVOD_TIMELINE). Part of
// ResolveLaunchFlags (launch_flags.h); each error is the one usage line hvdrun prints. Horovod's
// tuning options (--fusion-threshold-mb, --hierarchical-allreduce ...) are rows of the option table,
// checked as they are read (option_table.h).
#ifndef HVDRUN_LAUNCHER_COMMAND_LINE_TUNING_FLAGS_H_
#define HVDRUN_LAUNCHER_COMMAND_LINE_TUNING_FLAGS_H_

#include <optional>
#include <vector>

#include "common/environment_reader.h"
#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "launcher/command_line/launch_flags.h"
#include "launcher/launch_options.h"

namespace hvdrun {

// The variables of libhvdrun's own tuning flags for the ranks, in flag order: compression, fp8's
// safeguards, shared memory; after them, the option table's settings (flags.rank_settings). Also
// refuses --hierarchical-allreduce beside --shared-memory off, which it needs.
StatusOr<std::vector<RankSetting>> ResolveTuning(const LaunchFlags& flags,
                                                 const std::optional<BackendKind>& backend);

// --timeline-filename, else HOROVOD_TIMELINE from -x (taken out of the exports), else from hvdrun's
// environment; and --timeline-mark-cycles.
Status ResolveTimeline(const LaunchFlags& flags, const EnvironmentLookup& getenv, LaunchOptions& options);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_COMMAND_LINE_TUNING_FLAGS_H_
