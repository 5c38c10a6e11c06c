// MpirunBannerFilter: which of mpirun's own lines hvdrun prints.
//
// Open MPI frames its messages in lines of dashes. When a rank fails, mpirun prints banners that
// restate what hvdrun's failure report says better ("Primary job terminated normally, but 1
// process returned a non-zero exit code...", "mpirun detected that one or more processes exited
// with non-zero status...", "mpirun noticed that process rank 1 ... exited on signal 11"). Its
// -q flag would silence them, but also the messages that explain why mpirun could not start a job
// (measured with Open MPI 4.1.4: "There are not enough slots available", "mpirun was unable to
// find the specified executable"), so hvdrun holds those three banners back instead and drops
// them when it prints its own report; every other line and banner passes at once, in order.
// Not thread-safe.
#ifndef HVDRUN_LAUNCHER_MPIRUN_MPIRUN_BANNER_FILTER_H_
#define HVDRUN_LAUNCHER_MPIRUN_MPIRUN_BANNER_FILTER_H_

#include <cstddef>
#include <string>
#include <vector>

namespace hvdrun {

class MpirunBannerFilter {
 public:
  // A banner that never closes is printed once it has this many lines.
  static constexpr size_t kMaxBannerLines = 200;

  // Takes one of mpirun's lines; returns the lines to print now, in order.
  std::vector<std::string> Add(std::string line);

  // At mpirun's end: an unfinished banner, and the held ones unless `drop_restated`.
  std::vector<std::string> Finish(bool drop_restated);

 private:
  std::vector<std::string> open_banner_;  // from its opening line of dashes; empty when none is open
  std::vector<std::string> held_;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_MPIRUN_MPIRUN_BANNER_FILTER_H_
