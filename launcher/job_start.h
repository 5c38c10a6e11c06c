// What starting a job takes, whichever way its ranks are launched (launcher/job.h with hvdrun's
// agents, launcher/mpi_job.h with mpirun): the placement of its ranks, its identity, its
// rendezvous service, and the signals hvdrun watches while it runs. Errors are one line, without
// the "hvdrun: " prefix the caller prints.
#ifndef HVDRUN_LAUNCHER_JOB_START_H_
#define HVDRUN_LAUNCHER_JOB_START_H_

#include <memory>
#include <string>
#include <vector>

#include "common/file_descriptor.h"
#include "common/rank_assignment.h"
#include "common/status.h"
#include "launcher/failure_report.h"
#include "launcher/launch_options.h"
#include "launcher/rendezvous_server.h"

namespace hvdrun {

// Where the rendezvous service listens when every host of a job is this machine.
inline constexpr const char* kRendezvousAddress = "127.0.0.1";

// One outcome per rank, with its rank and host, nothing known yet about how it ends.
std::vector<RankOutcome> InitialOutcomes(const RankAssignment& assignment);

// A random identifier for a launch: 16 hex digits.
std::string NewJobId();

// The job's rendezvous service on `address` (an IPv4 address of this machine), whose refused or
// broken connections are reported on stderr as one "hvdrun: rendezvous: ..." line each.
StatusOr<std::unique_ptr<RendezvousServer>> StartJobRendezvous(
    const std::string& secret, const std::string& address = kRendezvousAddress);

// With --network-interface: this machine's address on the first of `names` it has, where the
// rendezvous service listens. The error starts "--network-interface: host <this host's name>: ".
StatusOr<std::string> ThisMachineInterfaceAddress(const std::vector<std::string>& names);

// Blocks SIGINT, SIGTERM, SIGHUP and SIGCHLD in the calling thread and returns a non-blocking
// signalfd that reads them; ignores SIGPIPE. Call it before starting any thread (threads inherit
// the mask; a thread that does not block them would take them instead of the signalfd). Children
// must unblock them before they exec.
StatusOr<UniqueFd> WatchJobSignals();

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_JOB_START_H_
