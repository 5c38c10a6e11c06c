// ReportTables: every table and chart of an experiment's report, computed once from its stored
// results (lab/store/experiment_results.h), for every format to lay out (lab/report/report_writer.h).
#ifndef HVDRUN_LAB_REPORT_REPORT_TABLES_H_
#define HVDRUN_LAB_REPORT_REPORT_TABLES_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lab/host_facts.h"
#include "lab/report/breakdown_section.h"
#include "lab/report/compression_table.h"
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

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_REPORT_REPORT_TABLES_H_
