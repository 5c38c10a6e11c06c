#include "lab/report/report_sections.h"

#include <algorithm>
#include <cmath>

#include "common/version.h"
#include "lab/number_text.h"
#include "lab/utc_time.h"

namespace hvdrun::lab {

std::string Percent(double fraction) { return NumberText("%.1f %%", fraction * 100); }

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

std::optional<int> Reformations(const RunLine& line) {
  if (line.rounds <= 0) return std::nullopt;
  return line.rounds - 1;
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
                         run->record.duration_s, run->record.error, run->rounds});
      }
    }
  }
  return lines;
}

DisplayTable SpeedupDisplay(const ExperimentResults& results, const ReportTables& tables) {
  const std::string unit = results.figures.throughput_unit;
  DisplayTable table;
  // The allreduce path beside the backend it refines, when any cell's reports name one.
  const bool paths = std::any_of(tables.speedup.begin(), tables.speedup.end(),
                                 [](const SpeedupRow& row) { return !row.allreduce_paths.empty(); });
  table.header = {"backend"};
  if (paths) table.header.emplace_back("allreduce path");
  std::vector<std::string> varying = VaryingAxes(results);
  table.header.insert(table.header.end(), varying.begin(), varying.end());
  const size_t text_columns = table.header.size();
  const bool threads = std::any_of(tables.speedup.begin(), tables.speedup.end(),
                                   [](const SpeedupRow& row) { return row.threads > 0; });
  std::vector<std::string> figures = {"servers", "processes per server"};
  if (threads) figures.insert(figures.end(), {"threads per process", "CPUs"});
  figures.insert(figures.end(), {"step time (s)", "step time, ranks (s)",
                                 "throughput per worker (" + unit + ")", "per worker, ranks",
                                 "total throughput (" + unit + ")", "speedup", "efficiency", "runs ok"});
  // Elastic jobs that re-formed: how often, beside the runs their figures come from.
  const bool reformed = std::any_of(tables.speedup.begin(), tables.speedup.end(),
                                    [](const SpeedupRow& row) { return row.reformations > 0; });
  if (reformed) figures.emplace_back("re-formations");
  table.header.insert(table.header.end(), figures.begin(), figures.end());
  table.text.assign(table.header.size(), false);
  for (size_t i = 0; i < text_columns; ++i) table.text[i] = true;
  for (const SpeedupRow& row : tables.speedup) {
    std::vector<std::string> cells = {row.backend};
    if (paths) cells.push_back(row.allreduce_paths.empty() ? "—" : DescribeAllreducePaths(row));
    for (const std::string& axis : varying) cells.push_back(GroupValue(row, axis));
    cells.push_back(std::to_string(row.servers));
    cells.push_back(std::to_string(row.procs_per_server));
    if (threads) {
      cells.push_back(row.threads > 0 ? std::to_string(row.threads) : "—");
      cells.push_back(row.threads > 0 ? std::to_string(int64_t{row.workers} * row.threads) : "—");
    }
    cells.push_back(MeanSd(row.step_time_s));
    cells.push_back(Range(row.step_time_ranks_s));
    cells.push_back(row.has_throughput ? MeanSd(row.throughput_per_worker) : "—");
    cells.push_back(row.has_throughput ? Range(row.throughput_per_worker_ranks) : "—");
    cells.push_back(row.has_throughput ? MeanSd(row.total_throughput) : "—");
    cells.push_back(row.speedup ? FormatFigure(*row.speedup) : "—");
    cells.push_back(row.efficiency ? Percent(*row.efficiency) : "—");
    cells.push_back(std::to_string(row.runs_ok) + "/" + std::to_string(results.repeats));
    if (reformed) cells.push_back(std::to_string(row.reformations));
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
                  "setting",
                  "training time (s)",
                  "step time (s)",
                  "training: first / this",
                  "step: first / this",
                  "runs ok"};
  table.text = {true, true, true, false, false, false, false, false};
  for (const FusionRow& row : tables.fusion) {
    table.rows.push_back(
        {row.group, row.value, row.setting, row.row.has_training_time ? MeanSd(row.row.training_time_s) : "—",
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
          {"allreduce_path", row.allreduce_paths.empty() ? nlohmann::json(nullptr)
                                                         : nlohmann::json(DescribeAllreducePaths(row))},
          {"threads_per_process", row.threads > 0 ? nlohmann::json(row.threads) : nullptr},
          {"cpus", row.threads > 0 ? nlohmann::json(row.workers * row.threads) : nullptr},
          {"runs_ok", row.runs_ok},
          {"runs_failed", row.runs_failed},
          {"reformations", row.reformations},
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

}  // namespace hvdrun::lab
