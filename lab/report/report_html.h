// report.html: the report, self-contained (styles and charts inline, no script, nothing fetched).
#ifndef HVDRUN_LAB_REPORT_REPORT_HTML_H_
#define HVDRUN_LAB_REPORT_REPORT_HTML_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "lab/report/report_tables.h"
#include "lab/store/experiment_results.h"

namespace hvdrun::lab {

std::string RenderHtml(const ExperimentResults& results, const ReportTables& tables);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_REPORT_REPORT_HTML_H_
