// AutotuneLog: the autotuner's CSV file (hvdrun --autotune-log-file, HOROVOD_AUTOTUNE_LOG), one line
// per scored sample, then the chosen setting's line.
//
// The columns are Horovod's, in its order and units, so that plots made for Horovod's log read it:
//   hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,cycle_time_ms,
//   tensor_fusion_threshold (MiB),score (bytes reduced per microsecond)
// then hvdrun's own: score_spread (the standard deviation of the sample's steps' rates, bytes per
// microsecond) and chosen (1 on the last line, which repeats the setting every rank keeps, with its
// score; 0 on every sample's line). The switches Horovod also tunes (hierarchical, torus, cache) are
// written as the job runs them, 1 or 0; of them hvdrun tunes the hierarchical allreduce and the
// cache (cycle_tuner.h).
//
// Each Add rewrites the whole file atomically (common/atomic_file.h): a reader, or a job that dies,
// finds the lines so far and never a part of one. Not thread-safe.
#ifndef HVDRUN_RUNTIME_AUTOTUNE_AUTOTUNE_LOG_H_
#define HVDRUN_RUNTIME_AUTOTUNE_AUTOTUNE_LOG_H_

#include <string>

#include "hvdrun/status.h"

namespace hvdrun {

class AutotuneLog {
 public:
  struct Row {
    bool hierarchical_allreduce = false;
    bool cache_enabled = false;
    double cycle_time_ms = 0;
    double fusion_threshold_mib = 0;
    double score_bytes_per_us = 0;
    double spread_bytes_per_us = 0;
    bool chosen = false;
  };

  // The CSV's first line, with its newline.
  static std::string Header();
  static std::string Line(const Row& row);

  // Writes to `path`; an empty path keeps the lines in memory only.
  explicit AutotuneLog(std::string path);

  // Appends `row` and rewrites the file; the error names the path.
  Status Add(const Row& row);
  // Drops every row and rewrites the file with the header alone (the tuner starts again).
  Status Clear();
  // The file's contents so far: the header and every row added.
  const std::string& text() const { return text_; }

 private:
  const std::string path_;
  std::string text_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_AUTOTUNE_AUTOTUNE_LOG_H_
