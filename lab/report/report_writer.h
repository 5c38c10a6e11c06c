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
#include "lab/report/report_csv.h"
#include "lab/report/report_html.h"
#include "lab/report/report_json.h"
#include "lab/report/report_markdown.h"
#include "lab/report/report_tables.h"
#include "lab/store/experiment_results.h"

namespace hvdrun::lab {

// Every file of the report: (name, contents), in the order they are written. Pure.
std::vector<std::pair<std::string, std::string>> RenderReportFiles(const ExperimentResults& results,
                                                                   const ReportTables& tables);

// Writes every file of the report into `out_dir` (created if needed); returns their names.
StatusOr<std::vector<std::string>> WriteReport(const ExperimentResults& results, const ReportTables& tables,
                                               const std::string& out_dir);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_REPORT_REPORT_WRITER_H_
