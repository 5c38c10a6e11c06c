// The reaper: a process that removes a test cluster's run when the run's owner dies, however it
// dies (an exception, a failed assertion's exit, SIGINT, SIGTERM, SIGKILL, a ctest timeout).
//
// The owner starts it before creating anything of the run, keeping one end of a socket pair whose
// other end is the reaper's stdin. The owner's end is close-on-exec and in no other process, so the
// kernel closes it exactly when the owner ends; the reaper reads end of file and tears the run
// down (TeardownRun). An owner that has removed the run itself writes one byte first (Disarm), and
// the reaper exits without touching anything. The reaper runs in a session of its own, so that a
// terminal's Ctrl-C or a kill of the test's process group does not reach it, and ignores SIGINT,
// SIGHUP and SIGPIPE.
#ifndef HVDRUN_TESTS_CLUSTER_CLUSTER_REAPER_H_
#define HVDRUN_TESTS_CLUSTER_CLUSTER_REAPER_H_

#include <sys/types.h>

#include <string>

#include "common/process/file_descriptor.h"
#include "hvdrun/status.h"

namespace hvdrun::cluster {

// The owner's handle. Destroying it without Disarm() leaves the teardown to the reaper and waits
// for the reaper to finish it. Movable, not copyable, not thread-safe.
class ClusterReaper {
 public:
  // Starts `program reap <run_id>` (the hvdrun-test-cluster tool) as the reaper of `run_id`.
  static StatusOr<ClusterReaper> Start(const std::string& program, const std::string& run_id);

  ClusterReaper(ClusterReaper&& other) noexcept;
  ClusterReaper& operator=(ClusterReaper&&) = delete;
  ClusterReaper(const ClusterReaper&) = delete;
  ClusterReaper& operator=(const ClusterReaper&) = delete;
  ~ClusterReaper();

  pid_t pid() const { return pid_; }

  // Tells the reaper that the run is gone and waits for it to exit.
  void Disarm();

 private:
  ClusterReaper(pid_t pid, UniqueFd owner_end) : pid_(pid), owner_end_(std::move(owner_end)) {}
  // Closes the owner's end (after sending `byte`, unless 0) and reaps the reaper.
  void Finish(char byte);

  pid_t pid_ = -1;
  UniqueFd owner_end_;
};

// The reaper's side, for `hvdrun-test-cluster reap RUN_ID`, whose stdin is the owner's socket: closes
// every other descriptor but stdout and stderr, waits until the owner disarms it or ends, and in
// the latter case tears the run down, printing an error on stderr. Returns the process's exit
// code: 0 when disarmed or when the teardown succeeded, 1 otherwise.
int RunReaper(const std::string& run_id);

}  // namespace hvdrun::cluster

#endif  // HVDRUN_TESTS_CLUSTER_CLUSTER_REAPER_H_
