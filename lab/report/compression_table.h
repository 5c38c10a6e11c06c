// The compression lab's table (docs/lab.md, "Compression against accuracy"), shaped as the lab's own:
// one process first, then each setting of the `compression` axis on each number of processes, each
// row with its training time and test accuracy, from an experiment's stored results.
//
//   setting        "one process" (the uncompressed 1-process cell: no other rank to talk to),
//                  "uncompressed", "fp16", "bf16", "fp8", "fp8-e5m2", "naive fp8" (fp8-naive)
//   training time  FigureNames::training_time (hvdrun-trainer's wall_s), mean ± sd over ok runs
//   accuracy       FigureNames::accuracy, mean over ok runs
//   vs uncompressed  accuracy minus that of the uncompressed cell with the same processes and other
//                  axes, in percentage points
//   speedup        the one-process cell's training time / this one's
// Cells are grouped by backend, servers and the axes other than np and compression; a group's rows
// run in the axis's order of settings, then by processes.
#ifndef HVDRUN_LAB_REPORT_COMPRESSION_TABLE_H_
#define HVDRUN_LAB_REPORT_COMPRESSION_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "lab/report/results_table.h"
#include "lab/store/experiment_results.h"

namespace hvdrun::lab {

struct CompressionRow {
  std::string group;    // "backend=gloo servers=1 model=fmnist-cnn"
  std::string setting;  // as above
  SpeedupRow row;
  std::optional<double> accuracy_change_points;
  std::optional<double> training_speedup;
};

// Empty unless the experiment has a `compression` axis with two or more values.
std::vector<CompressionRow> BuildCompressionTable(const ExperimentResults& results,
                                                  const std::vector<SpeedupRow>& rows);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_REPORT_COMPRESSION_TABLE_H_
