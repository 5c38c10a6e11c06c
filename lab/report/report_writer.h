// The report of an experiment (`hvdrun-lab report DIR`): every table and chart, written as
//   report.md      the tables in Markdown, linking the SVG charts beside it
//   report.html    the same, self-contained: styles and charts inline, no script, nothing fetched
//   report.json    every table, for pandas or a notebook
//   *.csv          one file per table (speedup.csv, environment.csv, runs.csv, and sizes.csv,
//                  fusion.csv, responses.csv, fusion_threshold.csv, compression.csv, breakdown.csv when their
//                  sections exist)
//   *.svg          the charts (lab/report/speedup_charts.h), and the step breakdown's (breakdown*.svg)
// Sections whose data the results do not hold (allreduce sizes, fusion, response sizes,
// compression) are left out.
// Every file is written whole or not at all.
#ifndef HVDRUN_LAB_REPORT_REPORT_WRITER_H_
#define HVDRUN_LAB_REPORT_REPORT_WRITER_H_

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "hvdrun/status.h"
#include "lab/report/breakdown_section.h"
#include "lab/report/compression_table.h"
#include "lab/report/display_table.h"
#include "lab/report/environment_table.h"
#include "lab/report/fusion_tables.h"
#include "lab/report/results_table.h"
#include "lab/report/speedup_charts.h"
#include "lab/store/experiment_results.h"

namespace hvdrun::lab {

struct ReportTables {
  std::vector<SpeedupRow> speedup;
  EnvironmentTable environment;
  std::vector<SizeRow> sizes;
  // ("fusion_threshold", rows), when that axis has two or more values.
  std::vector<std::pair<std::string, std::vector<ComparisonRow>>> comparisons;
  std::vector<FusionRow> fusion;                  // the `fusion` axis's table (lab/report/fusion_tables.h)
  std::vector<CompressionRow> compression;        // the `compression` axis's (lab/report/compression_table.h)
  std::vector<ResponseSizeTable> response_sizes;  // one per cell with libhvdrun response statistics
  std::vector<BreakdownTable> breakdown;          // where a step's time goes (lab/report/breakdown_section.h)
  std::vector<NamedChart> charts;
};

// `probe_now`: see BuildEnvironmentTable.
ReportTables BuildReportTables(const ExperimentResults& results, const std::function<HostFacts()>& probe_now);

std::string RenderMarkdown(const ExperimentResults& results, const ReportTables& tables);
std::string RenderHtml(const ExperimentResults& results, const ReportTables& tables);
nlohmann::json RenderJson(const ExperimentResults& results, const ReportTables& tables);
// File name -> contents.
std::map<std::string, std::string> RenderCsvFiles(const ExperimentResults& results,
                                                  const ReportTables& tables);

// Writes every file of the report into `out_dir` (created if needed); returns their names.
StatusOr<std::vector<std::string>> WriteReport(const ExperimentResults& results, const ReportTables& tables,
                                               const std::string& out_dir);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_REPORT_REPORT_WRITER_H_
