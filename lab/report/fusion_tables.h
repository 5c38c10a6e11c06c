// The tensor-fusion lab's two tables (docs/lab.md, "Tensor fusion"), from an experiment's stored
// results (lab/store/experiment_results.h).
//
// Responses by size: every backend call of libhvdrun's negotiated path (a "response": one fused
// buffer, or one tensor alone) binned by its bytes as the lab's table bins them — (0, 1 KB],
// (1 KB, 1 MB], (1 MB, 10 MB], then 10 MB steps, decimal — from the response statistics in each
// rank's report (docs/results.md: libhvdrun.responses). Horovod's users read this table off rank 0's
// timeline; here no timeline is needed. For each bin a run counts the mean over its ranks of the
// responses, bytes and seconds (every rank makes the same responses; their times differ by how
// long each waited inside the call), and a cell the mean over its ok runs; the columns follow:
//   count          responses in the bin (a run's whole training, warm-up steps included)
//   mean size MB   bytes / count / 10^6
//   rate Mbps      bytes × 8 / seconds / 10^6: the data reduced per second of the bin's calls
//   total time s   seconds in the bin's calls
//   mean time ms   seconds / count × 1000
//   share of time  the bin's seconds / every bin's seconds
//
// Fusion on and off: cells that differ only in the `fusion` axis side by side, each with its
// training time (FigureNames::training_time, hvdrun-trainer's wall_s) and step time, means over ok
// runs of each run's mean over ranks, and the ratio of the first value's time to this one's (the
// speedup fusion gives when the first value is `off`: the lab's 141.0 s / 119.8 s = 1.18×). Each
// row also names its setting: a fixed one's values ("64 MiB, 5 ms"), and for `autotune` what the
// tuner kept in each ok run, from the run's autotune.csv ("16 MiB, 25 ms (kept after 20 samples)",
// or that it was still searching when the run ended); an autotune row's times include its search.
#ifndef HVDRUN_LAB_REPORT_FUSION_TABLES_H_
#define HVDRUN_LAB_REPORT_FUSION_TABLES_H_

#include <optional>
#include <string>
#include <vector>

#include "lab/report/results_table.h"
#include "lab/store/experiment_results.h"

namespace hvdrun::lab {

struct ResponseSizeRow {
  double lower_bytes = 0;
  double upper_bytes = 0;
  std::string bin;  // "(1 MB, 10 MB]"
  double count = 0;
  double mean_size_mb = 0;
  double rate_mbps = 0;
  double total_time_s = 0;
  double mean_time_ms = 0;
  double share_of_time = 0;  // 0..1
};

struct ResponseSizeTable {
  std::string cell_id;
  std::string cell;  // the cell's values, "backend=gloo np=2 servers=1 model=resnet50 fusion=on"
  int runs = 0;      // ok runs whose ranks reported response statistics
  std::vector<ResponseSizeRow> rows;  // bins in order, those with responses
};

// One table per cell with response statistics, in the experiment's cell order.
std::vector<ResponseSizeTable> BuildResponseSizeTables(const ExperimentResults& results);

// "(0, 1 KB]", "(1 KB, 1 MB]", "(1 MB, 10 MB]", "(10 MB, 20 MB]", ... (decimal units).
std::string ResponseBinLabel(double lower_bytes, double upper_bytes);

struct FusionRow {
  std::string group;  // every other axis's value
  std::string value;  // the fusion axis's
  // The setting: a fixed value's threshold and cycle, or what the tuner kept in each ok run (the
  // runs' distinct outcomes joined by "; "); "—" for an autotune cell without a log.
  std::string setting;
  SpeedupRow row;
  std::optional<double> training_ratio;   // the group's first value's training time / this one's
  std::optional<double> step_time_ratio;  // the same for step time
};

// Rows of the speedup table that differ only in `fusion`, grouped, each group in the axis's order;
// empty unless the axis has two or more values.
std::vector<FusionRow> BuildFusionTable(const ExperimentResults& results,
                                        const std::vector<SpeedupRow>& rows);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_REPORT_FUSION_TABLES_H_
