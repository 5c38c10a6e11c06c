#include "lab/report/report_html.h"

#include <cstdio>
#include <string>
#include <vector>

#include "common/version.h"
#include "lab/charts/line_chart.h"
#include "lab/charts/svg_document.h"
#include "lab/report/display_table.h"
#include "lab/report/report_sections.h"
#include "lab/utc_time.h"

namespace hvdrun::lab {

namespace {

// The document's opening, styles, title and the line that says what the report covers.
std::string HtmlStart(const ExperimentResults& results, const RunCounts& counts) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
      EscapeXml(results.name) +
      "</title>\n<style>\n"
      "body { font-family: sans-serif; margin: 24px; color: #222222; background: #ffffff; }\n"
      "table { border-collapse: collapse; margin: 8px 0 16px 0; font-size: 13px; }\n"
      "th, td { border: 1px solid #cccccc; padding: 3px 8px; text-align: right; vertical-align: top; }\n"
      "th { background: #f2f2f2; }\n"
      ".text { text-align: left; }\n"
      ".charts { display: flex; flex-wrap: wrap; gap: 16px; }\n"
      "figure { margin: 0; }\n"
      ".note { color: #555555; max-width: 70em; }\n"
      ".explanation { max-width: 70em; }\n"
      "</style>\n</head>\n<body>\n";
  html += "<h1>" + EscapeXml(results.name) + "</h1>\n";
  if (!results.description.empty()) html += "<p>" + EscapeXml(results.description) + "</p>\n";
  html += "<p class=\"note\">" + EscapeXml(SummaryLine(results, counts)) + " Written by hvdrun-lab " +
          kVersion + " on " + UtcNow(UtcFormat::kReport) + " from <code>" + EscapeXml(results.dir) +
          "</code>.</p>\n";
  if (!results.hvdrun_options.empty()) {
    html +=
        "<p class=\"note\">hvdrun options of every run: " + EscapeXml(HvdrunOptionsLine(results)) + ".</p>\n";
  }
  return html;
}

// The speedup table and its notes, the charts, and where a step's time goes.
std::string SpeedupHtml(const ExperimentResults& results, const ReportTables& tables) {
  std::string html;
  html += "<h2>Speedup</h2>\n";
  if (std::string constant = ConstantAxes(results); !constant.empty()) {
    html += "<p>Every cell: " + EscapeXml(constant) + ".</p>\n";
  }
  html += tables.speedup.empty() ? "<p>No cell has an ok run yet.</p>\n"
                                 : ToHtml(SpeedupDisplay(results, tables), "speedup-table");
  html += "<p class=\"note\">" + EscapeXml(SpeedupNote(results)) + "</p>\n";
  html += "<div class=\"charts\">\n";
  for (const NamedChart& chart : tables.charts) {
    std::string id = chart.file.substr(0, chart.file.size() - 4);
    html += "<figure id=\"chart-" + EscapeXml(id) + "\">\n" + RenderSvg(chart.chart) + "</figure>\n";
  }
  for (const BreakdownTable& table : tables.breakdown) {
    std::string id = table.chart_file.substr(0, table.chart_file.size() - 4);
    html += "<figure id=\"chart-" + EscapeXml(id) + "\">\n" + RenderSvg(table.chart) + "</figure>\n";
  }
  html += "</div>\n";
  if (!tables.breakdown.empty()) {
    html += "<h2>Where a step's time goes</h2>\n<p class=\"note\">" + EscapeXml(kBreakdownNote) + "</p>\n";
    for (const BreakdownTable& table : tables.breakdown) {
      if (!table.group.empty()) html += "<h3>" + EscapeXml(table.group) + "</h3>\n";
      html += ToHtml(
          BreakdownDisplay(table),
          "breakdown-table" + (table.group.empty() ? "" : "-" + EscapeXml(SlugForFileName(table.group))));
      html += "<p class=\"explanation\">" + EscapeXml(table.explanation) + "</p>\n";
    }
  }
  return html;
}

// The sections that exist when the results hold their data: allreduce sizes, fusion, response
// sizes, compression, and each compared axis.
std::string OptionalSectionsHtml(const ExperimentResults& results, const ReportTables& tables) {
  std::string html;
  if (!tables.sizes.empty()) {
    html +=
        "<h2>Allreduce by message size</h2>\n<p class=\"note\">Mean ± standard deviation over ranks and ok "
        "runs.</p>\n" +
        ToHtml(SizesDisplay(tables), "sizes-table");
  }
  if (!tables.fusion.empty()) {
    html += "<h2>Tensor fusion on and off</h2>\n<p class=\"note\">" + EscapeXml(kFusionNote) + "</p>\n" +
            ToHtml(FusionDisplay(tables), "fusion-table");
  }
  if (!tables.response_sizes.empty()) {
    html += "<h2>Responses by size</h2>\n<p class=\"note\">" + EscapeXml(kResponseSizesNote) + "</p>\n";
    for (const ResponseSizeTable& sizes : tables.response_sizes) {
      html += "<h3>" + EscapeXml(sizes.cell) + "</h3>\n" +
              ToHtml(ResponseSizeDisplay(sizes), "responses-" + EscapeXml(sizes.cell_id));
    }
  }
  if (!tables.compression.empty()) {
    html += "<h2>Gradient compression</h2>\n<p class=\"note\">" + EscapeXml(kCompressionNote) + "</p>\n" +
            ToHtml(CompressionDisplay(tables), "compression-table");
  }
  for (const auto& [axis, rows] : tables.comparisons) {
    html += "<h2>" + EscapeXml(Title(axis)) +
            "</h2>\n<p class=\"note\">Relative figures: against the "
            "first value of " +
            EscapeXml(axis) + " in the same cells.</p>\n" +
            ToHtml(ComparisonDisplay(results, axis, rows), axis + "-table");
  }
  return html;
}

// Skipped cells, failed runs, runs not made yet, and the files that could not be read.
std::string RunsHtml(const ExperimentResults& results, const std::vector<RunLine>& runs,
                     const RunCounts& counts) {
  std::string html;
  if (counts.skipped > 0) {
    html += "<h2>Skipped cells</h2>\n" + ToHtml(RunsDisplay(runs, {"skipped"}), "skipped-table");
  }
  if (counts.failed > 0) {
    html += "<h2>Failed runs</h2>\n" + ToHtml(RunsDisplay(runs, {"failed"}), "failed-table");
  }
  if (counts.not_run > 0) {
    html += "<h2>Runs not made yet</h2>\n<p>Run the experiment again to make them.</p>\n" +
            ToHtml(RunsDisplay(runs, {"not run"}), "not-run-table");
  }
  if (!results.problems.empty()) {
    html += "<h2>Files that could not be read</h2>\n<ul>\n";
    for (const std::string& problem : results.problems) html += "<li>" + EscapeXml(problem) + "</li>\n";
    html += "</ul>\n";
  }
  return html;
}

}  // namespace

std::string RenderHtml(const ExperimentResults& results, const ReportTables& tables) {
  std::vector<RunLine> runs = ListRuns(results);
  RunCounts counts = CountRuns(runs, results);
  std::string html = HtmlStart(results, counts) + SpeedupHtml(results, tables);
  html += "<h2>Environment</h2>\n" + ToHtml(EnvironmentDisplay(tables), "environment-table");
  if (!tables.environment.note.empty()) {
    html += "<p class=\"note\">" + EscapeXml(tables.environment.note) + "</p>\n";
  }
  html += OptionalSectionsHtml(results, tables);
  html += RunsHtml(results, runs, counts);
  return html + "</body>\n</html>\n";
}

}  // namespace hvdrun::lab
