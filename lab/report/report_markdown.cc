#include "lab/report/report_markdown.h"

#include <cstdio>
#include <string>
#include <vector>

#include "common/version.h"
#include "lab/report/display_table.h"
#include "lab/report/report_sections.h"
#include "lab/utc_time.h"

namespace hvdrun::lab {

std::string RenderMarkdown(const ExperimentResults& results, const ReportTables& tables) {
  std::vector<RunLine> runs = ListRuns(results);
  RunCounts counts = CountRuns(runs, results);
  std::string md = "# " + results.name + "\n\n";
  if (!results.description.empty()) md += results.description + "\n\n";
  md += SummaryLine(results, counts) + " Written by hvdrun-lab " + kVersion + " on " +
        UtcNow(UtcFormat::kReport) + " from `" + results.dir + "`.\n\n";
  if (!results.hvdrun_options.empty()) {
    md += "hvdrun options of every run: " + HvdrunOptionsLine(results) + ".\n\n";
  }
  md += "## Speedup\n\n";
  if (std::string constant = ConstantAxes(results); !constant.empty()) {
    md += "Every cell: " + constant + ".\n\n";
  }
  md += tables.speedup.empty() ? "No cell has an ok run yet.\n\n"
                               : ToMarkdown(SpeedupDisplay(results, tables)) + "\n";
  md += SpeedupNote(results) + "\n\n";
  for (const NamedChart& chart : tables.charts) md += "![" + chart.chart.title + "](" + chart.file + ")\n\n";
  if (!tables.breakdown.empty()) {
    md += "## Where a step's time goes\n\n" + std::string(kBreakdownNote) + "\n\n";
    for (const BreakdownTable& table : tables.breakdown) {
      if (!table.group.empty()) md += "### " + MarkdownCell(table.group) + "\n\n";
      md += ToMarkdown(BreakdownDisplay(table)) + "\n" + table.explanation + "\n\n";
      md += "![" + table.chart.title + "](" + table.chart_file + ")\n\n";
    }
  }
  md += "## Environment\n\n" + ToMarkdown(EnvironmentDisplay(tables)) + "\n";
  if (!tables.environment.note.empty()) md += tables.environment.note + "\n\n";
  if (!tables.sizes.empty()) {
    md += "## Allreduce by message size\n\nMean ± standard deviation over ranks and ok runs.\n\n" +
          ToMarkdown(SizesDisplay(tables)) + "\n";
  }
  if (!tables.fusion.empty()) {
    md += "## Tensor fusion on and off\n\n" + std::string(kFusionNote) + "\n\n" +
          ToMarkdown(FusionDisplay(tables)) + "\n";
  }
  if (!tables.response_sizes.empty()) {
    md += "## Responses by size\n\n" + std::string(kResponseSizesNote) + "\n\n";
    for (const ResponseSizeTable& sizes : tables.response_sizes) {
      md += "### " + MarkdownCell(sizes.cell) + "\n\n" + ToMarkdown(ResponseSizeDisplay(sizes)) + "\n";
    }
  }
  if (!tables.compression.empty()) {
    md += "## Gradient compression\n\n" + std::string(kCompressionNote) + "\n\n" +
          ToMarkdown(CompressionDisplay(tables)) + "\n";
  }
  for (const auto& [axis, rows] : tables.comparisons) {
    md += "## " + Title(axis) + "\n\nRelative figures: against the first value of " + axis +
          " in the same cells.\n\n" + ToMarkdown(ComparisonDisplay(results, axis, rows)) + "\n";
  }
  if (counts.skipped > 0) md += "## Skipped cells\n\n" + ToMarkdown(RunsDisplay(runs, {"skipped"})) + "\n";
  if (counts.failed > 0) md += "## Failed runs\n\n" + ToMarkdown(RunsDisplay(runs, {"failed"})) + "\n";
  if (counts.not_run > 0) {
    md += "## Runs not made yet\n\nRun the experiment again to make them.\n\n" +
          ToMarkdown(RunsDisplay(runs, {"not run"})) + "\n";
  }
  if (!results.problems.empty()) {
    md += "## Files that could not be read\n\n";
    for (const std::string& problem : results.problems) md += "- " + MarkdownCell(problem) + "\n";
    md += "\n";
  }
  return md;
}

}  // namespace hvdrun::lab
