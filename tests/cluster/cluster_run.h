// One run of the test cluster: its id, the names of everything it creates, and their removal.
//
// A run's id is "hvdt<pid>-<n>": the pid of the process that owns the run (creates and uses it) and
// that process's n-th run. Everything a run creates is named after its id, so that it can be found
// and removed with no other record, by its owner, by its reaper, or by any later run:
//   network namespaces  <id>-<host>, in /run/netns (where `ip netns add` puts them)
//   hosts files         /etc/netns/<id>-<host>/hosts (`ip netns exec` mounts it on /etc/hosts)
//   files               /run/hvdrun-cluster/<id>/ (keys, sshd configs and logs, known_hosts)
// A run is stale when its owner no longer runs: killed together with its reaper, or by a reboot
// that kept /etc. Functions here touch only runs named this way; they are thread-compatible.
#ifndef HVDRUN_TESTS_CLUSTER_CLUSTER_RUN_H_
#define HVDRUN_TESTS_CLUSTER_CLUSTER_RUN_H_

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun::cluster {

inline constexpr char kNetnsRunDir[] = "/run/netns";
inline constexpr char kNetnsEtcDir[] = "/etc/netns";
inline constexpr char kClusterFilesDir[] = "/run/hvdrun-cluster";

// A fresh id owned by this process: "hvdt<getpid()>-<n>", n counting from 1.
std::string NewRunId();

// The run id that `name` (a namespace, /etc/netns entry or files directory name) belongs to:
// "hvdt12-3" for "hvdt12-3-server1" and for "hvdt12-3"; empty when it is no run's.
std::string RunIdOf(std::string_view name);

// The owner's pid of a run id; -1 when `run_id` is not one.
pid_t RunOwner(std::string_view run_id);

std::string NetnsName(const std::string& run_id, const std::string& host);
// /etc/netns/<netns>: files there replace those of /etc for `ip netns exec`.
std::string NetnsEtcDir(const std::string& netns);
// /run/hvdrun-cluster/<run_id>.
std::string RunDir(const std::string& run_id);

// The run's network namespaces that exist now, sorted.
std::vector<std::string> NamespacesOfRun(const std::string& run_id);

// The processes inside network namespace `netns`, as `ip netns pids` lists them (a zombie is in no
// namespace); empty when there is no such namespace.
std::vector<pid_t> PidsInNetns(const std::string& netns);

// Removes whatever of the run exists: SIGKILL to every process in its namespaces (repeated until
// none is left, for at most 5 s), then the namespaces, their /etc/netns directories and the run's
// files. Safe to call for a run that is partly or entirely gone, and concurrently with another
// removal of the same run. On failure it still removes what it can and returns the first error.
Status TeardownRun(const std::string& run_id);

// Removes every stale run (TeardownRun) and appends the ids it removed to `removed` (may be null).
// Returns the first error.
Status RemoveStaleRuns(std::vector<std::string>* removed);

}  // namespace hvdrun::cluster

#endif  // HVDRUN_TESTS_CLUSTER_CLUSTER_RUN_H_
