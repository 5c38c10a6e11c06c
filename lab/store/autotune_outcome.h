// AutotuneOutcome: what libhvdrun's autotuning did in one run of a `fusion: autotune` cell, read
// back from the run's autotune.csv (kAutotuneLogFile) (rank 0's --autotune-log-file, docs/autotune.md "The
// log file").
//
// The log has one line per setting scored, then, once the tuner has finished, one more with
// chosen = 1 naming the setting kept. A run whose training ended before the tuner finished has no
// such line: the outcome then says how many samples were scored and that the search had not ended.
// The file is the program's rank 0's, so it is read with bounds: at most kMaxAutotuneLogBytes,
// Horovod's and hvdrun's columns by the header's names, every number finite and within ±kMaxFigure.
#ifndef HVDRUN_LAB_STORE_AUTOTUNE_OUTCOME_H_
#define HVDRUN_LAB_STORE_AUTOTUNE_OUTCOME_H_

#include <cstddef>
#include <string>

#include "hvdrun/status.h"
#include "lab/experiment/experiment_config.h"

namespace hvdrun::lab {

// 20 samples take about 1.5 KB; a search of 10,000 samples stays under this.
inline constexpr size_t kMaxAutotuneLogBytes = size_t{1} << 20;

struct AutotuneOutcome {
  int samples = 0;                  // settings scored
  bool kept = false;                // the tuner finished, and the setting below is the one it kept
  double fusion_threshold_mib = 0;  // kept; when not finished, the last scored
  double cycle_time_ms = 0;
  double score_bytes_per_us = 0;
  // Kept off by the tuner's yes/no phases: off in the setting kept, on in a sample before it.
  bool hierarchical_allreduce_off = false;
  bool response_cache_off = false;

  // "16 MiB, 25 ms (kept after 20 samples)", "16 MiB, 25 ms, response cache off (kept after 28
  // samples)", or "still searching when the run ended (6 samples scored; last 16 MiB, 25 ms)".
  std::string Describe() const;
};

// The outcome of the log `text`; `file` names it in errors ("FILE:LINE: ..."). An empty log (the
// tuner scored nothing) is an outcome of 0 samples.
StatusOr<AutotuneOutcome> AutotuneOutcomeFromCsv(const std::string& text, const std::string& file);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_STORE_AUTOTUNE_OUTCOME_H_
