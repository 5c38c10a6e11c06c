// The hosts of a job and how their agents start, from -H, --hostfile, --launcher and a Slurm
// allocation; and the network interfaces of --network-interface. Part of ResolveLaunchFlags
// (launch_flags.h); each error is the one usage line hvdrun prints.
#ifndef HVDRUN_LAUNCHER_COMMAND_LINE_HOST_FLAGS_H_
#define HVDRUN_LAUNCHER_COMMAND_LINE_HOST_FLAGS_H_

#include <string>
#include <vector>

#include "common/environment_reader.h"
#include "hvdrun/status.h"
#include "launcher/command_line/launch_flags.h"
#include "launcher/launch_options.h"

namespace hvdrun {

// --launcher, -H or --hostfile, the Slurm allocation (its nodes, slots and -np when hvdrun uses
// it), else localhost with -np slots; then -np's default, every slot.
Status ResolveHosts(const LaunchFlags& flags, const EnvironmentLookup& getenv, LaunchOptions& options);

// --network-interface's texts (each a comma-separated list) as interface names, each once.
StatusOr<std::vector<std::string>> ResolveNetworkInterfaces(const std::vector<std::string>& texts);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_COMMAND_LINE_HOST_FLAGS_H_
