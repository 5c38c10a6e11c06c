#include "lab/report/report_tables.h"

namespace hvdrun::lab {

ReportTables BuildReportTables(const ExperimentResults& results,
                               const std::function<HostFacts()>& probe_now) {
  ReportTables tables;
  tables.speedup = BuildSpeedupTable(results);
  tables.environment = BuildEnvironmentTable(results, probe_now);
  tables.sizes = BuildSizeTable(results);
  std::vector<ComparisonRow> thresholds = BuildComparison(results, tables.speedup, "fusion_threshold");
  if (!thresholds.empty()) tables.comparisons.emplace_back("fusion_threshold", std::move(thresholds));
  tables.compression = BuildCompressionTable(results, tables.speedup);
  tables.fusion = BuildFusionTable(results, tables.speedup);
  tables.response_sizes = BuildResponseSizeTables(results);
  tables.charts = BuildSpeedupCharts(tables.speedup, results.figures.throughput_unit);
  tables.breakdown = BuildBreakdownTables(BuildStepBreakdown(results, tables.speedup));
  return tables;
}

}  // namespace hvdrun::lab
