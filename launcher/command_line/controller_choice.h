// The job's controller: which of libhvdrun's backends its ranks use, and so how they start (under
// Open MPI's mpirun for mpi, through hvdrun's agents otherwise). Part of ResolveLaunchFlags
// (launch_flags.h). Chosen, first rule that applies:
//   1. --gloo, --mpi or --nccl, or `controller:` in --config-file;
//   2. HOROVOD_CONTROLLER, else HOROVOD_CPU_OPERATIONS (gloo or mpi, any case), given with -x or
//      in hvdrun's environment: Horovod's runtime chooses by them, so the ranks can too;
//   3. mpi when --mpi-args or --binding-args is given: they are mpirun's arguments;
//   4. gloo.
// horovodrun's rule 4 is "MPI when Horovod was built with it and mpirun works, else Gloo". hvdrun
// chooses Gloo there because it knows better (docs/horovodrun.md, docs/benchmarks.md): libhvdrun
// always has Gloo; its agents start a job in about an eighth of mpirun's time; ranks on one host
// reduce through libhvdrun's shared memory over either backend; and across hosts of as many ranks
// each, the hierarchical allreduce (faster than a flat ring) runs over Gloo only.
#ifndef HVDRUN_LAUNCHER_COMMAND_LINE_CONTROLLER_CHOICE_H_
#define HVDRUN_LAUNCHER_COMMAND_LINE_CONTROLLER_CHOICE_H_

#include <string>

#include "common/environment_reader.h"
#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "launcher/command_line/launch_flags.h"
#include "launcher/launch_options.h"

namespace hvdrun {

struct ControllerChoice {
  BackendKind backend = BackendKind::kGloo;
  // Which rule chose it, in words: "--mpi", "HOROVOD_CONTROLLER=mpi in hvdrun's environment",
  // "hvdrun's default (no --gloo, --mpi or --nccl, HOROVOD_CONTROLLER or --mpi-args given)".
  std::string reason;
};

// The rules above; an error for a variable's value that is not a controller hvdrun has.
StatusOr<ControllerChoice> ChooseController(const LaunchFlags& flags, const EnvironmentLookup& getenv);

// options.backend and backend_reason from ChooseController; --jsrun refused; --dry-run,
// --mpi-args and --binding-args with the mpi controller only. In a gloo job, the ranks get
// HOROVOD_CONTROLLER=gloo and HOROVOD_CPU_OPERATIONS=gloo, as horovodrun --gloo gives them (added
// to `settings`); a value of the user's they replace is named in options.notices.
Status ResolveController(const LaunchFlags& flags, const EnvironmentLookup& getenv, LaunchOptions& options,
                         std::vector<RankSetting>& settings);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_COMMAND_LINE_CONTROLLER_CHOICE_H_
