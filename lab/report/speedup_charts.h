// The three charts of the lab report, drawn from the speedup table: throughput per worker, total
// throughput, and speedup beside the ideal (speedup = workers), each against the number of workers,
// with one series per backend. Cells that differ in other axes (model, batch size, ...) get charts
// of their own, one set per combination. When two cells of a series have the same number of
// workers on different numbers of servers, the series is split by servers. Error bars span one
// standard deviation over repeats on either side of the mean.
#ifndef HVDRUN_LAB_REPORT_SPEEDUP_CHARTS_H_
#define HVDRUN_LAB_REPORT_SPEEDUP_CHARTS_H_

#include <string>
#include <vector>

#include "lab/charts/line_chart.h"
#include "lab/report/results_table.h"

namespace hvdrun::lab {

struct NamedChart {
  std::string file;   // "speedup.svg", or "speedup-model-resnet50.svg" with several groups
  std::string group;  // DescribeGroup of the cells drawn; empty for an experiment with one group
  LineChart chart;
};

// Charts without data are left out: the throughput charts when no cell has the throughput
// figure, the speedup chart when no cell has a speedup.
std::vector<NamedChart> BuildSpeedupCharts(const std::vector<SpeedupRow>& rows,
                                           const std::string& throughput_unit);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_REPORT_SPEEDUP_CHARTS_H_
