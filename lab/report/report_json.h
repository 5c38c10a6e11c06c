// report.json: every table of the report, for pandas or a notebook.
#ifndef HVDRUN_LAB_REPORT_REPORT_JSON_H_
#define HVDRUN_LAB_REPORT_REPORT_JSON_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "lab/report/report_tables.h"
#include "lab/store/experiment_results.h"

namespace hvdrun::lab {

nlohmann::json RenderJson(const ExperimentResults& results, const ReportTables& tables);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_REPORT_REPORT_JSON_H_
