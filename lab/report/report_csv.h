// The report's CSV files, one per table (speedup.csv, environment.csv, runs.csv, and sizes.csv,
// fusion.csv, responses.csv, fusion_threshold.csv, compression.csv, breakdown.csv when their sections
// exist); figures with up to 10 significant digits.
#ifndef HVDRUN_LAB_REPORT_REPORT_CSV_H_
#define HVDRUN_LAB_REPORT_REPORT_CSV_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "lab/report/report_tables.h"
#include "lab/store/experiment_results.h"

namespace hvdrun::lab {

// File name -> contents.
std::map<std::string, std::string> RenderCsvFiles(const ExperimentResults& results,
                                                  const ReportTables& tables);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_REPORT_REPORT_CSV_H_
