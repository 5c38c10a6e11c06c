// report.md: the report's tables in Markdown, linking the SVG charts beside it.
#ifndef HVDRUN_LAB_REPORT_REPORT_MARKDOWN_H_
#define HVDRUN_LAB_REPORT_REPORT_MARKDOWN_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "lab/report/report_tables.h"
#include "lab/store/experiment_results.h"

namespace hvdrun::lab {

std::string RenderMarkdown(const ExperimentResults& results, const ReportTables& tables);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_REPORT_REPORT_MARKDOWN_H_
