// MergeTimelines: every rank's timeline file (runtime/timeline/timeline.h writes one per rank) into one
// Chrome-trace JSON file, one process per rank, which the launcher puts in the results directory.
//
// rank_files[r] is rank r's file. Every event of every file is copied, one per line, with its pid
// set to r; metadata events (names, sort indices, the rank's clock) are kept. Ranks' ts values are
// copied as they are: each rank's zero was set after the job's bootstrap barrier, so they compare
// to within its skew.
//
// Damaged inputs are merged, not refused. A file that ends before its closing bracket (its rank
// was killed inside a flush) gives its events up to the last whole one; a file that is missing,
// unreadable or not a Chrome-trace array gives none. Such a rank gets a TIMELINE_TRUNCATED instant
// event saying why (common/timeline/timeline_format.h), its summary says it too, and a rank whose file
// named no process still appears as "rank R".
//
// Streaming: inputs are read in pieces of 1 MiB, and each event is parsed on its own (to check it
// and set its pid) and written out in pieces of 1 MiB, so memory stays at a few MiB whatever the
// files' sizes. The output is written atomically (common/atomic_file.h): a reader sees no merged
// file or the whole one.
#ifndef HVDRUN_COMMON_TIMELINE_TIMELINE_MERGE_H_
#define HVDRUN_COMMON_TIMELINE_TIMELINE_MERGE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun {

struct RankTimelineSummary {
  std::string path;
  // Events copied from the file.
  uint64_t events = 0;
  // The file ended with its closing bracket.
  bool complete = false;
  // Why the file is not complete, naming it ("timeline 'PATH' ends inside an event at byte 8192",
  // "cannot read timeline 'PATH': REASON"); empty when it is.
  std::string note;
  // Where the rank's zero lay on its host's wall clock, when the file says.
  std::optional<int64_t> zero_unix_micros;
  // Events the rank itself dropped at its byte limit.
  uint64_t dropped_events = 0;
};

struct TimelineMergeSummary {
  std::vector<RankTimelineSummary> ranks;  // indexed by rank
  // The largest difference between two ranks' zero_unix_micros: the barrier's skew plus the offsets
  // between the hosts' wall clocks; 0 with fewer than two known.
  int64_t zero_spread_micros = 0;
};

// Errors only from writing `out_path`: "cannot write 'OUT_PATH': REASON".
StatusOr<TimelineMergeSummary> MergeTimelines(const std::vector<std::string>& rank_files,
                                              const std::string& out_path);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_TIMELINE_TIMELINE_MERGE_H_
