// What every format of the report shows, computed once: the sections' tables as DisplayTables
// (lab/report/display_table.h), the runs list and its counts, the notes and summary lines, and the
// JSON forms of the figures. Each format (report_markdown.cc, report_html.cc, report_json.cc,
// report_csv.cc) lays them out its own way.
#ifndef HVDRUN_LAB_REPORT_REPORT_SECTIONS_H_
#define HVDRUN_LAB_REPORT_REPORT_SECTIONS_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "lab/report/display_table.h"
#include "lab/report/report_tables.h"
#include "lab/store/experiment_results.h"

namespace hvdrun::lab {

// One run of a cell as the runs table lists it.
struct RunLine {
  std::string cell_id;
  std::string cell;
  int repeat = 0;      // 0: the whole cell (skipped)
  std::string status;  // ok, failed, skipped, not run
  double duration_s = 0;
  std::string error;
  int rounds = 0;  // the rounds hvdrun recorded (StoredRun::rounds); 0: none recorded
};

// A run's re-formations for the CSV and JSON runs lists: its rounds after the first; nullopt when
// hvdrun recorded no rounds.
std::optional<int> Reformations(const RunLine& line);

// "12.5 %".
std::string Percent(double fraction);

// Axes other than backend, np and servers: those with several values get a column, the others a line.
std::vector<std::string> VaryingAxes(const ExperimentResults& results);

// "model=resnet50, fusion=on": the axes with one value, for the line above the tables.
std::string ConstantAxes(const ExperimentResults& results);

// "ssh_user=lab, ssh_port=2222": the experiment's `hvdrun` section.
std::string HvdrunOptionsLine(const ExperimentResults& results);

// The row's value of `axis` ("" when it has none).
std::string GroupValue(const SpeedupRow& row, const std::string& axis);

// Every run of every cell, and each skipped cell, in the matrix's order.
std::vector<RunLine> ListRuns(const ExperimentResults& results);

// The sections' tables, as Markdown and HTML show them (figures rounded, lab/report/display_table.h).
DisplayTable SpeedupDisplay(const ExperimentResults& results, const ReportTables& tables);

DisplayTable EnvironmentDisplay(const ReportTables& tables);

DisplayTable SizesDisplay(const ReportTables& tables);

DisplayTable ComparisonDisplay(const ExperimentResults& results, const std::string& axis,
                               const std::vector<ComparisonRow>& rows);

DisplayTable FusionDisplay(const ReportTables& tables);

DisplayTable CompressionDisplay(const ReportTables& tables);

DisplayTable ResponseSizeDisplay(const ResponseSizeTable& sizes);

DisplayTable RunsDisplay(const std::vector<RunLine>& lines, const std::vector<std::string>& statuses);

// A figure for CSV ("" for none), and the JSON forms of figures (null for none).
std::string Optional(const std::optional<double>& value);

nlohmann::json SpreadJson(const Spread& spread);

nlohmann::json OptionalJson(const std::optional<double>& value);

nlohmann::json SpeedupRowJson(const SpeedupRow& row);

// The heading of an axis's comparison section.
std::string Title(const std::string& axis);

// How many cells and runs, by status.
struct RunCounts {
  int cells = 0;
  int skipped = 0;
  int ok = 0;
  int failed = 0;
  int not_run = 0;
};

RunCounts CountRuns(const std::vector<RunLine>& lines, const ExperimentResults& results);

// "6 cells (1 skipped on this machine, ...), 1 run per cell: 4 ok, ..." and the speedup table's note.
std::string SummaryLine(const ExperimentResults& results, const RunCounts& counts);

std::string SpeedupNote(const ExperimentResults& results);

// The notes under the fusion, compression and response-size sections.
inline constexpr const char* kFusionNote =
    "Cells that differ only in their fusion setting, side by side (off: --fusion-threshold-mb 0; on: "
    "libhvdrun's defaults, 128 MiB and 1 ms; horovod-0.19/0.20: 64 MiB and 5 ms; autotune: hvdrun "
    "--autotune, whose setting is the one the tuner kept, or how far it got, in each run). Training time "
    "and step time: mean ± standard deviation over ok runs of each run's mean over its ranks (an autotune "
    "run's include its search). The ratios divide the first setting's time by this one's: with `off` "
    "first, the speedup fusion gives.";

inline constexpr const char* kCompressionNote =
    "The lab's table: one process, then each compression setting on each number of processes (naive fp8: "
    "fp8 with every safeguard off, docs/compression.md). Training time: mean ± standard deviation over ok "
    "runs of each run's mean over its ranks; test accuracy: the mean over ok runs; vs uncompressed: the "
    "accuracy minus that of the uncompressed cell with as many processes, in percentage points; speedup: "
    "the one-process cell's training time / this one's.";

inline constexpr const char* kResponseSizesNote =
    "Every backend call of libhvdrun's negotiated path (a response: one fused buffer, or a tensor "
    "alone) by size, from the response statistics in each rank's report (no timeline needed). Each "
    "figure is the mean over ranks, then over ok runs, of a whole run (warm-up included). Mean size = "
    "bytes / count; rate = bytes × 8 / total time (Mbps, 10^6 bit/s); mean time = total time / count; "
    "share of time = this size's total time / every size's. Sizes are decimal (1 MB = 10^6 bytes).";

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_REPORT_REPORT_SECTIONS_H_
