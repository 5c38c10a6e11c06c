// The elastic flags of horovodrun (--min-np, --max-np, --host-discovery-script, --slots-per-host,
// --elastic-timeout, --reset-limit, --blacklist-cooldown-range) resolved into
// LaunchOptions::elastic. Part of ResolveLaunchFlags (launch_flags.h), after the controller and the
// hosts; each error is the one usage line hvdrun prints, naming the flag.
//
// A job is elastic when --min-np or --host-discovery-script is given (horovodrun's rule); the other
// elastic flags alone are an error. An elastic job needs the Gloo controller (or NCCL, whose host
// memory goes over Gloo); mpirun's ranks cannot re-form. With --host-discovery-script the hosts come
// from the script, so -H and --hostfile are refused; without it, the hosts of -H/--hostfile or the
// Slurm allocation can only be lost.
#ifndef HVDRUN_LAUNCHER_COMMAND_LINE_ELASTIC_FLAGS_H_
#define HVDRUN_LAUNCHER_COMMAND_LINE_ELASTIC_FLAGS_H_

#include "common/environment_reader.h"
#include "hvdrun/status.h"
#include "launcher/command_line/launch_flags.h"
#include "launcher/launch_options.h"

namespace hvdrun {

// Sets options.elastic for an elastic job; reads HOROVOD_ELASTIC_TIMEOUT when --elastic-timeout is
// not given. Needs options.num_proc, options.backend and options.hosts resolved.
Status ResolveElastic(const LaunchFlags& flags, const EnvironmentLookup& getenv, LaunchOptions& options);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_COMMAND_LINE_ELASTIC_FLAGS_H_
