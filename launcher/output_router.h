// OutputRouter: where the ranks' output lines go in the launcher.
//
// Every line is printed tagged, horovodrun's way: `[3]<stdout>:text` on hvdrun's stdout and
// `[3]<stderr>:text` on its stderr. With an output directory, each rank's bytes are also written,
// exactly as the rank wrote them, to DIR/rank.N/stdout and DIR/rank.N/stderr. The last few stderr
// lines of each rank are kept for the failure report. Console output is buffered and written by
// Flush(), which the launcher calls once per event-loop round. Not thread-safe.
#ifndef HVDRUN_LAUNCHER_OUTPUT_ROUTER_H_
#define HVDRUN_LAUNCHER_OUTPUT_ROUTER_H_

#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/protocol/agent_protocol.h"
#include "hvdrun/status.h"

namespace hvdrun {

class OutputRouter {
 public:
  // Lines of stderr kept per rank for the failure report.
  static constexpr size_t kStderrTailLines = 5;

  // `out` and `err` receive the tagged lines (normally stdout and stderr); not owned.
  OutputRouter(std::FILE* out, std::FILE* err) : out_(out), err_(err) {}

  // Creates DIR/rank.N/ for every rank of the job. Fails naming the directory that cannot be made.
  Status OpenRankFiles(const std::string& dir, int num_ranks);

  void Write(const protocol::RankOutput& output);
  void Flush();

  // The last kStderrTailLines complete stderr lines of `rank`, oldest first.
  std::vector<std::string> StderrTail(int rank) const;

 private:
  struct RankFiles {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> out{nullptr, &std::fclose};
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> err{nullptr, &std::fclose};
  };

  std::FILE* out_;
  std::FILE* err_;
  std::vector<RankFiles> files_;
  std::map<int, std::deque<std::string>> stderr_tail_;
  std::map<int, std::string> stderr_partial_;  // pieces of a long stderr line not yet complete
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_OUTPUT_ROUTER_H_
