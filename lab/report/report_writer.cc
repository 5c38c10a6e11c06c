#include "lab/report/report_writer.h"

#include <filesystem>

#include "common/atomic_file.h"
#include "lab/json_file.h"

namespace hvdrun::lab {

std::vector<std::pair<std::string, std::string>> RenderReportFiles(const ExperimentResults& results,
                                                                   const ReportTables& tables) {
  std::vector<std::pair<std::string, std::string>> files = {
      {"report.md", RenderMarkdown(results, tables)},
      {"report.html", RenderHtml(results, tables)},
      {"report.json", JsonFileText(RenderJson(results, tables))}};
  for (auto& [name, contents] : RenderCsvFiles(results, tables)) files.emplace_back(name, contents);
  for (const NamedChart& chart : tables.charts) files.emplace_back(chart.file, RenderSvg(chart.chart));
  for (const BreakdownTable& table : tables.breakdown) {
    files.emplace_back(table.chart_file, RenderSvg(table.chart));
  }
  return files;
}

StatusOr<std::vector<std::string>> WriteReport(const ExperimentResults& results, const ReportTables& tables,
                                               const std::string& out_dir) {
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error) return Status::Error("cannot create '" + out_dir + "': " + error.message());
  std::vector<std::string> written;
  for (const auto& [name, contents] : RenderReportFiles(results, tables)) {
    if (Status status = WriteFileAtomically(out_dir + "/" + name, contents); !status.ok()) return status;
    written.push_back(name);
  }
  return written;
}

}  // namespace hvdrun::lab
