// RunSummary: what hvdrun makes of the reports its ranks send to the collector.
//
// A rank's report is a JSON object (schema in docs/results.md). Its optional "summary" member is a
// flat object of named figures ({"busbw_gbps": 1.02, "time_us": 6540.1}); hvdrun aggregates each
// figure over the ranks that report it (mean, min, max) and prints them as a table at the end of
// the run. Reports that are not JSON objects are kept but add no figures.
#ifndef HVDRUN_LAUNCHER_RESULTS_RUN_SUMMARY_H_
#define HVDRUN_LAUNCHER_RESULTS_RUN_SUMMARY_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hvdrun {

struct FigureStats {
  std::string name;
  int ranks = 0;  // how many ranks reported it
  double mean = 0;
  double min = 0;
  double max = 0;
  std::map<int, double> by_rank;
};

struct RunSummary {
  int ranks_reporting = 0;
  std::vector<FigureStats> figures;   // in order of first appearance (rank order)
  std::vector<std::string> problems;  // e.g. "rank 2: report is not a JSON object"
};

// Aggregates `reports` (rank -> JSON text).
RunSummary SummarizeReports(const std::map<int, std::string>& reports);

// The table printed at the end of a run; empty when no rank sent figures.
std::string FormatRunSummary(const RunSummary& summary);

// summary.json's contents.
nlohmann::json RunSummaryToJson(const RunSummary& summary);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_RESULTS_RUN_SUMMARY_H_
