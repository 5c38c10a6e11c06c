// Where a training step's time goes, per cell, from what the ranks measured (hvdrun-trainer's
// summary figures, docs/trainer.md):
//   compute_time_s     step time minus the wait below: forward, backward, optimizer
//   comm_overlapped_s  of that, the time gradient reductions were in flight while backward still ran
//   comm_wait_s        the wait for gradient averages after backward: communication not overlapped
//   bytes_reduced_per_step
// A step is then compute without communication (compute − overlapped), compute with communication in
// flight (overlapped), and the wait (step = compute + wait). Communication time per step is
// overlapped + wait; the algorithm bandwidth is bytes / that time and the bus bandwidth
// algbw × 2(n − 1)/n, as nccl-tests gives it for allreduce (n: processes). The time is the span in
// which communication was in flight, so these bandwidths are lower bounds of what the backend did.
//
// Every figure is per run the mean over its ranks, then mean ± sd over the cell's ok runs (as the
// speedup table's). A cell is in the breakdown when every rank of its ok runs reports
// compute_time_s and comm_wait_s.
#ifndef HVDRUN_LAB_REPORT_STEP_BREAKDOWN_H_
#define HVDRUN_LAB_REPORT_STEP_BREAKDOWN_H_

#include <optional>
#include <string>
#include <vector>

#include "lab/report/results_table.h"
#include "lab/store/experiment_results.h"

namespace hvdrun::lab {

// The summary figures the breakdown reads (hvdrun-trainer's names).
inline constexpr const char* kComputeTimeFigure = "compute_time_s";
inline constexpr const char* kCommWaitFigure = "comm_wait_s";
inline constexpr const char* kCommOverlappedFigure = "comm_overlapped_s";
inline constexpr const char* kBytesPerStepFigure = "bytes_reduced_per_step";

struct BreakdownRow {
  SpeedupRow row;     // the cell's row of the speedup table (step time, workers, threads, ...)
  std::string group;  // DescribeGroup(row.group): one table per group
  Spread compute_s;
  Spread comm_overlapped_s;  // 0 where the ranks do not report it
  Spread comm_wait_s;
  Spread bytes_per_step;
  std::optional<Spread> algbw_gbps;  // GB/s (10^9 bytes); none without bytes or communication time
  std::optional<Spread> busbw_gbps;
};

// In the order of `speedup_rows`, those cells that have the figures.
std::vector<BreakdownRow> BuildStepBreakdown(const ExperimentResults& results,
                                             const std::vector<SpeedupRow>& speedup_rows);

// A short paragraph on the rows of one group: the cell that loses the most efficiency against the
// one-process cell of its backend (step time, the same work per process), and how much of that
// loss is the wait on communication and how much slower compute; or why there is nothing to
// compare. Every figure in it is computed from the rows.
std::string ExplainLargestLoss(const std::vector<BreakdownRow>& group_rows);

// "Gloo", "MPI", "NCCL": a backend as the report's prose names it.
std::string BackendTitle(const std::string& backend);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_REPORT_STEP_BREAKDOWN_H_
