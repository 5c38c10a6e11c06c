// The report's section "Where a step's time goes" (lab/report/step_breakdown.h): per group of cells (the
// values of the axes other than backend, np and servers), a table of each cell's step split into
// compute, communication overlapped with it and the wait on communication, with bytes per step and
// bandwidths; the paragraph that names the largest loss of efficiency; and a stacked-bar chart of
// the split beside the speedup chart (breakdown.svg, or breakdown-<group>.svg with several groups).
#ifndef HVDRUN_LAB_REPORT_BREAKDOWN_SECTION_H_
#define HVDRUN_LAB_REPORT_BREAKDOWN_SECTION_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lab/charts/bar_chart.h"
#include "lab/report/display_table.h"
#include "lab/report/step_breakdown.h"

namespace hvdrun::lab {

struct BreakdownTable {
  std::string group;  // "" for an experiment with one group
  std::vector<BreakdownRow> rows;
  std::string explanation;  // ExplainLargestLoss(rows)
  std::string chart_file;   // "breakdown.svg", "breakdown-model-resnet18.svg"
  StackedBarChart chart;
};

// One table per group, in the order of `rows`; none when `rows` is empty.
std::vector<BreakdownTable> BuildBreakdownTables(const std::vector<BreakdownRow>& rows);

DisplayTable BreakdownDisplay(const BreakdownTable& table);
nlohmann::json BreakdownJson(const std::vector<BreakdownTable>& tables);
// breakdown.csv: every row of every table.
std::string BreakdownCsv(const std::vector<BreakdownTable>& tables);

// How the section's figures are computed, for the report.
extern const char* const kBreakdownNote;

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_REPORT_BREAKDOWN_SECTION_H_
