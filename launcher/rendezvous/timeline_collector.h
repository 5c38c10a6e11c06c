// TimelineCollector: hvdrun's side of --timeline-filename (docs/timeline.md).
//
// Every rank's runtime writes its timeline on its own host, in rank_dir() (HVDRUN_TIMELINE:
// /tmp/hvdrun-JOB-timeline), and when it ends sends the file to hvdrun's rendezvous service, which
// writes it to copies_dir()/rank-R.json (RendezvousServer::KeepTimelines); the rank then deletes its
// own. So the files of ranks on every host, started by agents, over SSH or by mpirun, come back
// the same way. At the end Merge() merges the copies into the user's file (common/timeline/timeline_merge.h),
// one process per rank. A rank that never sent its file (killed, or it ended inside its runtime)
// is taken from rank_dir() where it ran on this machine, as far as it got; on another host its file
// stays there, which the merged file's note for that rank says.
//
// copies_dir() is DIR/timeline under --results, so that the per-rank files are kept with the run's
// results, else a temporary directory removed by the destructor, as is rank_dir() on this machine.
#ifndef HVDRUN_LAUNCHER_RENDEZVOUS_TIMELINE_COLLECTOR_H_
#define HVDRUN_LAUNCHER_RENDEZVOUS_TIMELINE_COLLECTOR_H_

#include <memory>
#include <string>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun {

class TimelineCollector {
 public:
  // Creates copies_dir(). Errors: "--timeline-filename: cannot create 'DIR': REASON".
  static StatusOr<std::unique_ptr<TimelineCollector>> Create(const std::string& out_file,
                                                             const std::string& results_dir,
                                                             const std::string& job_id);
  ~TimelineCollector();
  TimelineCollector(const TimelineCollector&) = delete;
  TimelineCollector& operator=(const TimelineCollector&) = delete;

  const std::string& rank_dir() const { return rank_dir_; }
  const std::string& copies_dir() const { return copies_dir_; }

  // Merges the ranks' files into the output file and prints one line saying where it is, then one
  // per rank whose timeline is incomplete. on_this_machine[r]: rank r ran on this machine. Errors
  // only from writing the output: "--timeline-filename: cannot write 'FILE': REASON".
  Status Merge(const std::vector<bool>& on_this_machine);

 private:
  TimelineCollector(std::string out_file, std::string rank_dir, std::string copies_dir, bool temporary);

  const std::string out_file_;
  const std::string rank_dir_;
  const std::string copies_dir_;
  const bool temporary_;  // copies_dir_ is removed with the collector
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_RENDEZVOUS_TIMELINE_COLLECTOR_H_
