#include "lab/report/report_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "common/atomic_file.h"
#include "common/version.h"
#include "lab/report/display_table.h"
#include "lab/utc_time.h"

namespace hvdrun::lab {
namespace {

// One run of a cell as the runs table lists it.
struct RunLine {
  std::string cell_id;
  std::string cell;
  int repeat = 0;      // 0: the whole cell (skipped)
  std::string status;  // ok, failed, skipped, not run
  double duration_s = 0;
  std::string error;
};

std::string Percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %%", fraction * 100);
  return text;
}

// Axes other than backend, np and servers: those with several values get a column, the others a line.
std::vector<std::string> VaryingAxes(const ExperimentResults& results) {
  std::vector<std::string> names;
  for (const StoredAxis& axis : results.axes) {
    if (!IsPlacementAxis(axis.name) && axis.values.size() > 1) names.push_back(axis.name);
  }
  return names;
}

std::string ConstantAxes(const ExperimentResults& results) {
  std::string out;
  for (const StoredAxis& axis : results.axes) {
    if (!IsPlacementAxis(axis.name) && axis.values.size() == 1) {
      out += (out.empty() ? "" : ", ") + axis.name + "=" + axis.values[0];
    }
  }
  return out;
}

// "ssh_user=lab, ssh_port=2222": the experiment's `hvdrun` section.
std::string HvdrunOptionsLine(const ExperimentResults& results) {
  std::string out;
  for (const auto& [key, value] : results.hvdrun_options) {
    out += (out.empty() ? "" : ", ") + key + "=" + value;
  }
  return out;
}

std::string GroupValue(const SpeedupRow& row, const std::string& axis) {
  for (const auto& [name, value] : row.group) {
    if (name == axis) return value;
  }
  return "";
}

std::vector<RunLine> ListRuns(const ExperimentResults& results) {
  std::vector<RunLine> lines;
  for (const StoredCell& stored : results.cells) {
    std::string described = DescribeCell(stored.cell);
    if (!stored.cell.skip_reason.empty()) {
      lines.push_back({stored.cell.id, described, 0, "skipped", 0, stored.cell.skip_reason});
      continue;
    }
    for (int repeat = 1; repeat <= results.repeats; ++repeat) {
      auto run = std::find_if(stored.runs.begin(), stored.runs.end(),
                              [&](const StoredRun& r) { return r.repeat == repeat; });
      if (run == stored.runs.end()) {
        lines.push_back({stored.cell.id, described, repeat, "not run", 0, ""});
      } else {
        lines.push_back({stored.cell.id, described, repeat, run->record.ok ? "ok" : "failed",
                         run->record.duration_s, run->record.error});
      }
    }
  }
  return lines;
}

DisplayTable SpeedupDisplay(const ExperimentResults& results, const ReportTables& tables) {
  const std::string unit = results.figures.throughput_unit;
  DisplayTable table;
  table.header = {"backend"};
  std::vector<std::string> varying = VaryingAxes(results);
  table.header.insert(table.header.end(), varying.begin(), varying.end());
  const bool threads = std::any_of(tables.speedup.begin(), tables.speedup.end(),
                                   [](const SpeedupRow& row) { return row.threads > 0; });
  std::vector<std::string> figures = {"servers", "processes per server"};
  if (threads) figures.insert(figures.end(), {"threads per process", "CPUs"});
  figures.insert(figures.end(), {"step time (s)", "step time, ranks (s)",
                                 "throughput per worker (" + unit + ")", "per worker, ranks",
                                 "total throughput (" + unit + ")", "speedup", "efficiency", "runs ok"});
  table.header.insert(table.header.end(), figures.begin(), figures.end());
  table.text.assign(table.header.size(), false);
  for (size_t i = 0; i <= varying.size(); ++i) table.text[i] = true;
  for (const SpeedupRow& row : tables.speedup) {
    std::vector<std::string> cells = {row.backend};
    for (const std::string& axis : varying) cells.push_back(GroupValue(row, axis));
    cells.push_back(std::to_string(row.servers));
    cells.push_back(std::to_string(row.procs_per_server));
    if (threads) {
      cells.push_back(row.threads > 0 ? std::to_string(row.threads) : "—");
      cells.push_back(row.threads > 0 ? std::to_string(row.workers * row.threads) : "—");
    }
    cells.push_back(MeanSd(row.step_time_s));
    cells.push_back(Range(row.step_time_ranks_s));
    cells.push_back(row.has_throughput ? MeanSd(row.throughput_per_worker) : "—");
    cells.push_back(row.has_throughput ? Range(row.throughput_per_worker_ranks) : "—");
    cells.push_back(row.has_throughput ? MeanSd(row.total_throughput) : "—");
    cells.push_back(row.speedup ? FormatFigure(*row.speedup) : "—");
    cells.push_back(row.efficiency ? Percent(*row.efficiency) : "—");
    cells.push_back(std::to_string(row.runs_ok) + "/" + std::to_string(results.repeats));
    table.rows.push_back(std::move(cells));
  }
  return table;
}

DisplayTable EnvironmentDisplay(const ReportTables& tables) {
  DisplayTable table;
  table.header = {"item", "value", "source"};
  table.text = {true, true, true};
  for (const EnvironmentRow& row : tables.environment.rows) {
    table.rows.push_back({row.item, row.value, row.source});
  }
  return table;
}

DisplayTable SizesDisplay(const ReportTables& tables) {
  DisplayTable table;
  table.header = {"cell", "backend", "workers", "bytes", "time (us)", "busbw (GB/s)"};
  table.text = {true, true, false, false, false, false};
  for (const SizeRow& row : tables.sizes) {
    table.rows.push_back({row.cell_id, row.backend, std::to_string(row.workers), Raw(row.bytes),
                          MeanSd(row.time_us), MeanSd(row.busbw_gbps)});
  }
  return table;
}

DisplayTable ComparisonDisplay(const ExperimentResults& results, const std::string& axis,
                               const std::vector<ComparisonRow>& rows) {
  const std::string unit = results.figures.throughput_unit;
  const bool accuracy =
      std::any_of(rows.begin(), rows.end(), [](const ComparisonRow& r) { return r.row.has_accuracy; });
  DisplayTable table;
  table.header = {"cells",
                  axis,
                  "step time (s)",
                  "relative step time",
                  "throughput per worker (" + unit + ")",
                  "relative throughput"};
  if (accuracy) table.header.push_back("accuracy");
  table.text.assign(table.header.size(), false);
  table.text[0] = table.text[1] = true;
  for (const ComparisonRow& row : rows) {
    std::vector<std::string> cells = {row.group,
                                      row.value,
                                      MeanSd(row.row.step_time_s),
                                      row.relative_step_time ? FormatFigure(*row.relative_step_time) : "—",
                                      row.row.has_throughput ? MeanSd(row.row.throughput_per_worker) : "—",
                                      row.relative_throughput ? FormatFigure(*row.relative_throughput) : "—"};
    if (accuracy) cells.push_back(row.row.has_accuracy ? MeanSd(row.row.accuracy) : "—");
    table.rows.push_back(std::move(cells));
  }
  return table;
}

DisplayTable FusionDisplay(const ReportTables& tables) {
  DisplayTable table;
  table.header = {"cells",
                  "fusion",
                  "training time (s)",
                  "step time (s)",
                  "training: first / this",
                  "step: first / this",
                  "runs ok"};
  table.text = {true, true, false, false, false, false, false};
  for (const FusionRow& row : tables.fusion) {
    table.rows.push_back(
        {row.group, row.value, row.row.has_training_time ? MeanSd(row.row.training_time_s) : "—",
         MeanSd(row.row.step_time_s), row.training_ratio ? FormatFigure(*row.training_ratio) + "×" : "—",
         row.step_time_ratio ? FormatFigure(*row.step_time_ratio) + "×" : "—",
         std::to_string(row.row.runs_ok)});
  }
  return table;
}

DisplayTable CompressionDisplay(const ReportTables& tables) {
  DisplayTable table;
  table.header = {
      "cells",   "setting", "processes", "training time (s)", "test accuracy", "vs uncompressed (points)",
      "speedup", "runs ok"};
  table.text = {true, true, false, false, false, false, false, false};
  for (const CompressionRow& row : tables.compression) {
    table.rows.push_back({row.group, row.setting, std::to_string(row.row.workers),
                          row.row.has_training_time ? MeanSd(row.row.training_time_s) : "—",
                          row.row.has_accuracy ? FormatFigure(row.row.accuracy.mean) : "—",
                          row.accuracy_change_points ? FormatFigure(*row.accuracy_change_points) : "—",
                          row.training_speedup ? FormatFigure(*row.training_speedup) + "×" : "—",
                          std::to_string(row.row.runs_ok)});
  }
  return table;
}

DisplayTable ResponseSizeDisplay(const ResponseSizeTable& sizes) {
  DisplayTable table;
  table.header = {"response size",  "count",          "mean size (MB)", "rate (Mbps)",
                  "total time (s)", "mean time (ms)", "share of time"};
  table.text = {true, false, false, false, false, false, false};
  for (const ResponseSizeRow& row : sizes.rows) {
    table.rows.push_back({row.bin, FormatFigure(row.count), FormatFigure(row.mean_size_mb),
                          FormatFigure(row.rate_mbps), FormatFigure(row.total_time_s),
                          FormatFigure(row.mean_time_ms), Percent(row.share_of_time)});
  }
  return table;
}

DisplayTable RunsDisplay(const std::vector<RunLine>& lines, const std::vector<std::string>& statuses) {
  DisplayTable table;
  table.header = {"cell", "repeat", "status", "time (s)", "reason"};
  table.text = {true, false, true, false, true};
  for (const RunLine& line : lines) {
    if (std::find(statuses.begin(), statuses.end(), line.status) == statuses.end()) continue;
    table.rows.push_back({line.cell, line.repeat > 0 ? std::to_string(line.repeat) : "all", line.status,
                          line.duration_s > 0 ? FormatFigure(line.duration_s) : "", line.error});
  }
  return table;
}

std::string Optional(const std::optional<double>& value) { return value ? Raw(*value) : ""; }

nlohmann::json SpreadJson(const Spread& spread) {
  if (spread.n == 0) return nullptr;
  return {
      {"n", spread.n}, {"mean", spread.mean}, {"sd", spread.sd}, {"min", spread.min}, {"max", spread.max}};
}

nlohmann::json OptionalJson(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nullptr;
}

nlohmann::json SpeedupRowJson(const SpeedupRow& row) {
  nlohmann::json group = nlohmann::json::object();
  for (const auto& [name, value] : row.group) group[name] = value;
  return {{"cell", row.cell_id},
          {"backend", row.backend},
          {"axes", group},
          {"servers", row.servers},
          {"processes_per_server", row.procs_per_server},
          {"workers", row.workers},
          {"threads_per_process", row.threads > 0 ? nlohmann::json(row.threads) : nullptr},
          {"cpus", row.threads > 0 ? nlohmann::json(row.workers * row.threads) : nullptr},
          {"runs_ok", row.runs_ok},
          {"runs_failed", row.runs_failed},
          {"step_time_s", SpreadJson(row.step_time_s)},
          {"step_time_s_over_ranks", SpreadJson(row.step_time_ranks_s)},
          {"throughput_per_worker", row.has_throughput ? SpreadJson(row.throughput_per_worker) : nullptr},
          {"throughput_per_worker_over_ranks",
           row.has_throughput ? SpreadJson(row.throughput_per_worker_ranks) : nullptr},
          {"total_throughput", row.has_throughput ? SpreadJson(row.total_throughput) : nullptr},
          {"accuracy", row.has_accuracy ? SpreadJson(row.accuracy) : nullptr},
          {"speedup", OptionalJson(row.speedup)},
          {"efficiency", OptionalJson(row.efficiency)},
          {"speedup_basis", row.speedup_basis},
          {"baseline_cell", row.baseline_cell}};
}

std::string Title(const std::string& axis) { return axis == "fusion_threshold" ? "Tensor fusion" : axis; }

struct RunCounts {
  int cells = 0;
  int skipped = 0;
  int ok = 0;
  int failed = 0;
  int not_run = 0;
};

RunCounts CountRuns(const std::vector<RunLine>& lines, const ExperimentResults& results) {
  RunCounts counts;
  counts.cells = static_cast<int>(results.cells.size());
  for (const RunLine& line : lines) {
    if (line.status == "skipped") ++counts.skipped;
    if (line.status == "ok") ++counts.ok;
    if (line.status == "failed") ++counts.failed;
    if (line.status == "not run") ++counts.not_run;
  }
  return counts;
}

std::string SummaryLine(const ExperimentResults& results, const RunCounts& counts) {
  return std::to_string(counts.cells) + " cells (" + std::to_string(counts.skipped) +
         " skipped on this machine, " + std::to_string(results.excluded) + " combinations excluded), " +
         std::to_string(results.repeats) + (results.repeats == 1 ? " run" : " runs") +
         " per cell: " + std::to_string(counts.ok) + " ok, " + std::to_string(counts.failed) + " failed, " +
         std::to_string(counts.not_run) + " not run yet.";
}

std::string SpeedupNote(const ExperimentResults& results) {
  const FigureNames& figures = results.figures;
  return "Step time and throughput per worker: mean ± standard deviation over a cell's ok runs of each run's "
         "mean over its ranks; the \"ranks\" columns span the lowest to the highest rank of any run. Total "
         "throughput: the sum over ranks. Speedup: against the 1-worker cell of the same backend and axes, "
         "by total "
         "throughput (by step time when there is no throughput figure); efficiency = speedup / workers. "
         "Figures "
         "read from every rank's report: step time '" +
         figures.step_time + "' × " + Raw(figures.step_time_scale) + ", throughput '" + figures.throughput +
         "' (" + figures.throughput_unit + ").";
}

constexpr const char* kFusionNote =
    "Cells that differ only in their fusion setting, side by side (off: --fusion-threshold-mb 0; on: "
    "libhvdrun's defaults, 128 MiB and 1 ms; horovod-0.19/0.20: 64 MiB and 5 ms). Training time and step "
    "time: mean ± standard deviation over ok runs of each run's mean over its ranks. The ratios divide "
    "the first setting's time by this one's: with `off` first, the speedup fusion gives.";

constexpr const char* kCompressionNote =
    "The lab's table: one process, then each compression setting on each number of processes (naive fp8: "
    "fp8 with every safeguard off, docs/compression.md). Training time: mean ± standard deviation over ok "
    "runs of each run's mean over its ranks; test accuracy: the mean over ok runs; vs uncompressed: the "
    "accuracy minus that of the uncompressed cell with as many processes, in percentage points; speedup: "
    "the one-process cell's training time / this one's.";

constexpr const char* kResponseSizesNote =
    "Every backend call of libhvdrun's negotiated path (a response: one fused buffer, or a tensor "
    "alone) by size, from the response statistics in each rank's report (no timeline needed). Each "
    "figure is the mean over ranks, then over ok runs, of a whole run (warm-up included). Mean size = "
    "bytes / count; rate = bytes × 8 / total time (Mbps, 10^6 bit/s); mean time = total time / count; "
    "share of time = this size's total time / every size's. Sizes are decimal (1 MB = 10^6 bytes).";

}  // namespace

ReportTables BuildReportTables(const ExperimentResults& results,
                               const std::function<HostFacts()>& probe_now) {
  ReportTables tables;
  tables.speedup = BuildSpeedupTable(results);
  tables.environment = BuildEnvironmentTable(results, probe_now);
  tables.sizes = BuildSizeTable(results);
  std::vector<ComparisonRow> thresholds = BuildComparison(results, tables.speedup, "fusion_threshold");
  if (!thresholds.empty()) tables.comparisons.emplace_back("fusion_threshold", std::move(thresholds));
  tables.compression = BuildCompressionTable(results, tables.speedup);
  tables.fusion = BuildFusionTable(results, tables.speedup);
  tables.response_sizes = BuildResponseSizeTables(results);
  tables.charts = BuildSpeedupCharts(tables.speedup, results.figures.throughput_unit);
  tables.breakdown = BuildBreakdownTables(BuildStepBreakdown(results, tables.speedup));
  return tables;
}

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

std::string RenderHtml(const ExperimentResults& results, const ReportTables& tables) {
  std::vector<RunLine> runs = ListRuns(results);
  RunCounts counts = CountRuns(runs, results);
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
  html += "<h2>Environment</h2>\n" + ToHtml(EnvironmentDisplay(tables), "environment-table");
  if (!tables.environment.note.empty()) {
    html += "<p class=\"note\">" + EscapeXml(tables.environment.note) + "</p>\n";
  }
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
  return html + "</body>\n</html>\n";
}

nlohmann::json RenderJson(const ExperimentResults& results, const ReportTables& tables) {
  nlohmann::json speedup = nlohmann::json::array();
  for (const SpeedupRow& row : tables.speedup) speedup.push_back(SpeedupRowJson(row));
  nlohmann::json environment = nlohmann::json::array();
  for (const EnvironmentRow& row : tables.environment.rows) {
    environment.push_back({{"item", row.item}, {"value", row.value}, {"source", row.source}});
  }
  nlohmann::json sizes = nlohmann::json::array();
  for (const SizeRow& row : tables.sizes) {
    sizes.push_back({{"cell", row.cell_id},
                     {"backend", row.backend},
                     {"workers", row.workers},
                     {"bytes", row.bytes},
                     {"time_us", SpreadJson(row.time_us)},
                     {"busbw_gbps", SpreadJson(row.busbw_gbps)}});
  }
  nlohmann::json comparisons = nlohmann::json::object();
  for (const auto& [axis, rows] : tables.comparisons) {
    nlohmann::json list = nlohmann::json::array();
    for (const ComparisonRow& row : rows) {
      list.push_back({{"cells", row.group},
                      {"value", row.value},
                      {"row", SpeedupRowJson(row.row)},
                      {"relative_step_time", OptionalJson(row.relative_step_time)},
                      {"relative_throughput", OptionalJson(row.relative_throughput)}});
    }
    comparisons[axis] = list;
  }
  nlohmann::json compression = nlohmann::json::array();
  for (const CompressionRow& row : tables.compression) {
    compression.push_back(
        {{"cells", row.group},
         {"setting", row.setting},
         {"row", SpeedupRowJson(row.row)},
         {"training_time_s", row.row.has_training_time ? SpreadJson(row.row.training_time_s) : nullptr},
         {"accuracy_change_points", OptionalJson(row.accuracy_change_points)},
         {"training_speedup", OptionalJson(row.training_speedup)}});
  }
  nlohmann::json fusion = nlohmann::json::array();
  for (const FusionRow& row : tables.fusion) {
    fusion.push_back(
        {{"cells", row.group},
         {"fusion", row.value},
         {"row", SpeedupRowJson(row.row)},
         {"training_time_s", row.row.has_training_time ? SpreadJson(row.row.training_time_s) : nullptr},
         {"training_ratio", OptionalJson(row.training_ratio)},
         {"step_time_ratio", OptionalJson(row.step_time_ratio)}});
  }
  nlohmann::json response_sizes = nlohmann::json::array();
  for (const ResponseSizeTable& table : tables.response_sizes) {
    nlohmann::json bins = nlohmann::json::array();
    for (const ResponseSizeRow& row : table.rows) {
      bins.push_back({{"lower_bytes", row.lower_bytes},
                      {"upper_bytes", row.upper_bytes},
                      {"bin", row.bin},
                      {"count", row.count},
                      {"mean_size_mb", row.mean_size_mb},
                      {"rate_mbps", row.rate_mbps},
                      {"total_time_s", row.total_time_s},
                      {"mean_time_ms", row.mean_time_ms},
                      {"share_of_time", row.share_of_time}});
    }
    response_sizes.push_back(
        {{"cell", table.cell_id}, {"values", table.cell}, {"runs", table.runs}, {"bins", bins}});
  }
  nlohmann::json runs = nlohmann::json::array();
  for (const RunLine& line : ListRuns(results)) {
    runs.push_back({{"cell", line.cell_id},
                    {"repeat", line.repeat},
                    {"status", line.status},
                    {"duration_s", line.duration_s},
                    {"reason", line.error}});
  }
  nlohmann::json charts = nlohmann::json::array();
  for (const NamedChart& chart : tables.charts) {
    charts.push_back({{"file", chart.file}, {"title", chart.chart.title}});
  }
  for (const BreakdownTable& table : tables.breakdown) {
    charts.push_back({{"file", table.chart_file}, {"title", table.chart.title}});
  }
  nlohmann::json hvdrun_options = nlohmann::json::object();
  for (const auto& [key, value] : results.hvdrun_options) hvdrun_options[key] = value;
  const FigureNames& figures = results.figures;
  return {{"experiment",
           {{"name", results.name},
            {"description", results.description},
            {"results_dir", results.dir},
            {"repeats", results.repeats},
            {"excluded", results.excluded},
            {"figures",
             {{"step_time", figures.step_time},
              {"step_time_scale", figures.step_time_scale},
              {"throughput", figures.throughput},
              {"throughput_unit", figures.throughput_unit},
              {"accuracy", figures.accuracy}}}}},
          {"speedup", speedup},
          {"environment", environment},
          {"sizes", sizes},
          {"comparisons", comparisons},
          {"fusion", fusion},
          {"compression", compression},
          {"response_sizes", response_sizes},
          {"runs", runs},
          {"charts", charts},
          {"breakdown", BreakdownJson(tables.breakdown)},
          {"hvdrun_options", hvdrun_options},
          {"problems", results.problems}};
}

std::map<std::string, std::string> RenderCsvFiles(const ExperimentResults& results,
                                                  const ReportTables& tables) {
  std::map<std::string, std::string> files;
  std::vector<std::string> group_axes;
  for (const StoredAxis& axis : results.axes) {
    if (!IsPlacementAxis(axis.name)) group_axes.push_back(axis.name);
  }
  auto speedup_header = [&](std::vector<std::string> first) {
    std::vector<std::string> header = std::move(first);
    header.insert(header.end(), {"cell", "backend"});
    header.insert(header.end(), group_axes.begin(), group_axes.end());
    header.insert(header.end(), {"servers",
                                 "processes_per_server",
                                 "workers",
                                 "runs_ok",
                                 "runs_failed",
                                 "step_time_s_mean",
                                 "step_time_s_sd",
                                 "step_time_s_rank_min",
                                 "step_time_s_rank_max",
                                 "throughput_per_worker_mean",
                                 "throughput_per_worker_sd",
                                 "throughput_per_worker_rank_min",
                                 "throughput_per_worker_rank_max",
                                 "total_throughput_mean",
                                 "total_throughput_sd",
                                 "accuracy_mean",
                                 "speedup",
                                 "efficiency",
                                 "speedup_basis",
                                 "baseline_cell",
                                 "threads_per_process",
                                 "cpus"});
    return header;
  };
  auto speedup_cells = [&](const SpeedupRow& row) {
    std::vector<std::string> cells = {row.cell_id, row.backend};
    for (const std::string& axis : group_axes) cells.push_back(GroupValue(row, axis));
    auto spread = [](bool has, double value) { return has ? Raw(value) : std::string(); };
    const bool t = row.has_throughput;
    std::vector<std::string> figures = {std::to_string(row.servers),
                                        std::to_string(row.procs_per_server),
                                        std::to_string(row.workers),
                                        std::to_string(row.runs_ok),
                                        std::to_string(row.runs_failed),
                                        Raw(row.step_time_s.mean),
                                        Raw(row.step_time_s.sd),
                                        Raw(row.step_time_ranks_s.min),
                                        Raw(row.step_time_ranks_s.max),
                                        spread(t, row.throughput_per_worker.mean),
                                        spread(t, row.throughput_per_worker.sd),
                                        spread(t, row.throughput_per_worker_ranks.min),
                                        spread(t, row.throughput_per_worker_ranks.max),
                                        spread(t, row.total_throughput.mean),
                                        spread(t, row.total_throughput.sd),
                                        spread(row.has_accuracy, row.accuracy.mean),
                                        Optional(row.speedup),
                                        Optional(row.efficiency),
                                        row.speedup_basis,
                                        row.baseline_cell,
                                        row.threads > 0 ? std::to_string(row.threads) : "",
                                        row.threads > 0 ? std::to_string(row.workers * row.threads) : ""};
    cells.insert(cells.end(), figures.begin(), figures.end());
    return cells;
  };
  std::vector<std::vector<std::string>> rows;
  for (const SpeedupRow& row : tables.speedup) rows.push_back(speedup_cells(row));
  files["speedup.csv"] = ToCsv(speedup_header({}), rows);

  rows.clear();
  for (const EnvironmentRow& row : tables.environment.rows) rows.push_back({row.item, row.value, row.source});
  files["environment.csv"] = ToCsv({"item", "value", "source"}, rows);

  rows.clear();
  for (const RunLine& line : ListRuns(results)) {
    rows.push_back(
        {line.cell_id, std::to_string(line.repeat), line.status, Raw(line.duration_s), line.error});
  }
  files["runs.csv"] = ToCsv({"cell", "repeat", "status", "duration_s", "reason"}, rows);

  if (!tables.sizes.empty()) {
    rows.clear();
    for (const SizeRow& row : tables.sizes) {
      rows.push_back({row.cell_id, row.backend, std::to_string(row.workers), Raw(row.bytes),
                      Raw(row.time_us.mean), Raw(row.time_us.sd),
                      row.busbw_gbps.n > 0 ? Raw(row.busbw_gbps.mean) : "",
                      row.busbw_gbps.n > 0 ? Raw(row.busbw_gbps.sd) : ""});
    }
    files["sizes.csv"] = ToCsv({"cell", "backend", "workers", "bytes", "time_us_mean", "time_us_sd",
                                "busbw_gbps_mean", "busbw_gbps_sd"},
                               rows);
  }
  if (!tables.compression.empty()) {
    rows.clear();
    for (const CompressionRow& row : tables.compression) {
      rows.push_back({row.group, row.setting, row.row.cell_id, std::to_string(row.row.workers),
                      row.row.has_training_time ? Raw(row.row.training_time_s.mean) : "",
                      row.row.has_training_time ? Raw(row.row.training_time_s.sd) : "",
                      row.row.has_accuracy ? Raw(row.row.accuracy.mean) : "",
                      Optional(row.accuracy_change_points), Optional(row.training_speedup),
                      std::to_string(row.row.runs_ok)});
    }
    files["compression.csv"] =
        ToCsv({"cells", "setting", "cell", "processes", "training_time_s", "training_time_sd", "accuracy",
               "accuracy_change_points", "training_speedup", "runs_ok"},
              rows);
  }
  if (!tables.fusion.empty()) {
    rows.clear();
    for (const FusionRow& row : tables.fusion) {
      rows.push_back({row.group, row.value, row.row.cell_id,
                      row.row.has_training_time ? Raw(row.row.training_time_s.mean) : "",
                      row.row.has_training_time ? Raw(row.row.training_time_s.sd) : "",
                      Raw(row.row.step_time_s.mean), Raw(row.row.step_time_s.sd),
                      Optional(row.training_ratio), Optional(row.step_time_ratio),
                      std::to_string(row.row.runs_ok)});
    }
    files["fusion.csv"] =
        ToCsv({"cells", "fusion", "cell", "training_time_s_mean", "training_time_s_sd", "step_time_s_mean",
               "step_time_s_sd", "training_ratio", "step_time_ratio", "runs_ok"},
              rows);
  }
  if (!tables.response_sizes.empty()) {
    rows.clear();
    for (const ResponseSizeTable& sizes : tables.response_sizes) {
      for (const ResponseSizeRow& row : sizes.rows) {
        rows.push_back({sizes.cell_id, Raw(row.lower_bytes), Raw(row.upper_bytes), Raw(row.count),
                        Raw(row.mean_size_mb), Raw(row.rate_mbps), Raw(row.total_time_s),
                        Raw(row.mean_time_ms), Raw(row.share_of_time)});
      }
    }
    files["responses.csv"] = ToCsv({"cell", "lower_bytes", "upper_bytes", "count", "mean_size_mb",
                                    "rate_mbps", "total_time_s", "mean_time_ms", "share_of_time"},
                                   rows);
  }
  if (!tables.breakdown.empty()) files["breakdown.csv"] = BreakdownCsv(tables.breakdown);
  for (const auto& [axis, comparison] : tables.comparisons) {
    rows.clear();
    for (const ComparisonRow& row : comparison) {
      std::vector<std::string> cells = {row.group, row.value, Optional(row.relative_step_time),
                                        Optional(row.relative_throughput)};
      std::vector<std::string> speedup = speedup_cells(row.row);
      cells.insert(cells.end(), speedup.begin(), speedup.end());
      rows.push_back(std::move(cells));
    }
    files[axis + ".csv"] =
        ToCsv(speedup_header({"cells", axis + "_value", "relative_step_time", "relative_throughput"}), rows);
  }
  return files;
}

StatusOr<std::vector<std::string>> WriteReport(const ExperimentResults& results, const ReportTables& tables,
                                               const std::string& out_dir) {
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error) return Status::Error("cannot create '" + out_dir + "': " + error.message());
  std::vector<std::pair<std::string, std::string>> files = {
      {"report.md", RenderMarkdown(results, tables)},
      {"report.html", RenderHtml(results, tables)},
      {"report.json", RenderJson(results, tables).dump(2) + "\n"}};
  for (auto& [name, contents] : RenderCsvFiles(results, tables)) files.emplace_back(name, contents);
  for (const NamedChart& chart : tables.charts) files.emplace_back(chart.file, RenderSvg(chart.chart));
  for (const BreakdownTable& table : tables.breakdown) {
    files.emplace_back(table.chart_file, RenderSvg(table.chart));
  }
  std::vector<std::string> written;
  for (const auto& [name, contents] : files) {
    if (Status status = WriteFileAtomically(out_dir + "/" + name, contents); !status.ok()) return status;
    written.push_back(name);
  }
  return written;
}

}  // namespace hvdrun::lab
