// What hvdrun-bench --replay measured (gradient_replay.h), and how it is shown: the report every rank
// sends to hvdrun (rank 0 also writes it for --json) and rank 0's tables.
#ifndef HVDRUN_EXAMPLES_BENCH_REPLAY_REPORT_H_
#define HVDRUN_EXAMPLES_BENCH_REPLAY_REPORT_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "examples/bench/gradient_replay.h"
#include "examples/bench/reduction_error.h"
#include "examples/bench/replay_gradients.h"
#include "hvdrun/runtime.h"

namespace hvdrun {

// One format's figures in a setting: the job's format (std::nullopt), or one of --compression's.
struct FormatResult {
  std::optional<CompressionFormat> format;
  double step_ms = 0;                      // median
  double wire_ratio = 1;                   // bytes sent ÷ a float32 ring allreduce's, over the timed steps
  std::optional<ReductionError> accuracy;  // with --compression: against the exact float32 sums
};

struct SettingResult {
  double threshold_mb = 0;
  double cycle_ms = 0;
  std::vector<FormatResult> formats;  // --compression's order; one, the job's, without it
  // Per step of any format.
  double responses_per_step = 0;
  double cache_only_cycle_share = 0;
  double copied_share = 0;  // of the bytes of fused responses: copied through the fusion buffer
};

struct BaselineResult {
  double whole_ms = 0;       // one allreduce of every gradient element
  double one_by_one_ms = 0;  // each tensor in its own call
};

// The name of `format` as the report shows it; std::nullopt: the job's (runtime.compression()).
std::string FormatName(const Runtime& runtime, std::optional<CompressionFormat> format);

// The report every rank sends to hvdrun (and rank 0 writes for --json, less "rank").
nlohmann::json ReplayDocument(const ReplayOptions& options, Runtime& runtime,
                              const ReplayGradients& gradients, const std::vector<SettingResult>& results,
                              const std::optional<BaselineResult>& baseline);

// Rank 0's tables on standard output: the run's header line, each setting (with --compression, each
// format of each setting) and, with --baseline, the raw library's figures.
void PrintReplayTables(const ReplayOptions& options, Runtime& runtime, const ReplayGradients& gradients,
                       const std::vector<SettingResult>& results,
                       const std::optional<BaselineResult>& baseline);

}  // namespace hvdrun

#endif  // HVDRUN_EXAMPLES_BENCH_REPLAY_REPORT_H_
