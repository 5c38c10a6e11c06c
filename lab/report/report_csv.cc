#include "lab/report/report_csv.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "lab/report/display_table.h"
#include "lab/report/report_sections.h"

namespace hvdrun::lab {

namespace {

// The speedup table's columns after `first`: the cell, its backend and the axes that group cells.
std::vector<std::string> SpeedupHeader(std::vector<std::string> first,
                                       const std::vector<std::string>& group_axes) {
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
                               "cpus",
                               "allreduce_path",
                               "reformations"});
  return header;
}

std::vector<std::string> SpeedupCells(const SpeedupRow& row, const std::vector<std::string>& group_axes) {
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
                                      row.threads > 0 ? std::to_string(row.workers * row.threads) : "",
                                      DescribeAllreducePaths(row),
                                      std::to_string(row.reformations)};
  cells.insert(cells.end(), figures.begin(), figures.end());
  return cells;
}

using Rows = std::vector<std::vector<std::string>>;

std::string RunsCsv(const ExperimentResults& results) {
  Rows rows;
  for (const RunLine& line : ListRuns(results)) {
    const std::optional<int> reformations = Reformations(line);
    rows.push_back({line.cell_id, std::to_string(line.repeat), line.status, Raw(line.duration_s), line.error,
                    reformations ? std::to_string(*reformations) : ""});
  }
  return ToCsv({"cell", "repeat", "status", "duration_s", "reason", "reformations"}, rows);
}

std::string SizesCsv(const std::vector<SizeRow>& sizes) {
  Rows rows;
  for (const SizeRow& row : sizes) {
    rows.push_back({row.cell_id, row.backend, std::to_string(row.workers), Raw(row.bytes),
                    Raw(row.time_us.mean), Raw(row.time_us.sd),
                    row.busbw_gbps.n > 0 ? Raw(row.busbw_gbps.mean) : "",
                    row.busbw_gbps.n > 0 ? Raw(row.busbw_gbps.sd) : ""});
  }
  return ToCsv({"cell", "backend", "workers", "bytes", "time_us_mean", "time_us_sd", "busbw_gbps_mean",
                "busbw_gbps_sd"},
               rows);
}

std::string CompressionCsv(const std::vector<CompressionRow>& compression) {
  Rows rows;
  for (const CompressionRow& row : compression) {
    rows.push_back({row.group, row.setting, row.row.cell_id, std::to_string(row.row.workers),
                    row.row.has_training_time ? Raw(row.row.training_time_s.mean) : "",
                    row.row.has_training_time ? Raw(row.row.training_time_s.sd) : "",
                    row.row.has_accuracy ? Raw(row.row.accuracy.mean) : "",
                    Optional(row.accuracy_change_points), Optional(row.training_speedup),
                    std::to_string(row.row.runs_ok)});
  }
  return ToCsv({"cells", "setting", "cell", "processes", "training_time_s", "training_time_sd", "accuracy",
                "accuracy_change_points", "training_speedup", "runs_ok"},
               rows);
}

std::string FusionCsv(const std::vector<FusionRow>& fusion) {
  Rows rows;
  for (const FusionRow& row : fusion) {
    rows.push_back({row.group, row.value, row.setting, row.row.cell_id,
                    row.row.has_training_time ? Raw(row.row.training_time_s.mean) : "",
                    row.row.has_training_time ? Raw(row.row.training_time_s.sd) : "",
                    Raw(row.row.step_time_s.mean), Raw(row.row.step_time_s.sd), Optional(row.training_ratio),
                    Optional(row.step_time_ratio), std::to_string(row.row.runs_ok)});
  }
  return ToCsv({"cells", "fusion", "setting", "cell", "training_time_s_mean", "training_time_s_sd",
                "step_time_s_mean", "step_time_s_sd", "training_ratio", "step_time_ratio", "runs_ok"},
               rows);
}

std::string ResponsesCsv(const std::vector<ResponseSizeTable>& tables) {
  Rows rows;
  for (const ResponseSizeTable& sizes : tables) {
    for (const ResponseSizeRow& row : sizes.rows) {
      rows.push_back({sizes.cell_id, Raw(row.lower_bytes), Raw(row.upper_bytes), Raw(row.count),
                      Raw(row.mean_size_mb), Raw(row.rate_mbps), Raw(row.total_time_s), Raw(row.mean_time_ms),
                      Raw(row.share_of_time)});
    }
  }
  return ToCsv({"cell", "lower_bytes", "upper_bytes", "count", "mean_size_mb", "rate_mbps", "total_time_s",
                "mean_time_ms", "share_of_time"},
               rows);
}

// An axis's comparison (fusion_threshold.csv): each row's relative figures, then its speedup row.
std::string ComparisonCsv(const std::string& axis, const std::vector<ComparisonRow>& comparison,
                          const std::vector<std::string>& group_axes) {
  Rows rows;
  for (const ComparisonRow& row : comparison) {
    std::vector<std::string> cells = {row.group, row.value, Optional(row.relative_step_time),
                                      Optional(row.relative_throughput)};
    std::vector<std::string> speedup = SpeedupCells(row.row, group_axes);
    cells.insert(cells.end(), speedup.begin(), speedup.end());
    rows.push_back(std::move(cells));
  }
  return ToCsv(
      SpeedupHeader({"cells", axis + "_value", "relative_step_time", "relative_throughput"}, group_axes),
      rows);
}

}  // namespace

std::map<std::string, std::string> RenderCsvFiles(const ExperimentResults& results,
                                                  const ReportTables& tables) {
  std::vector<std::string> group_axes;
  for (const StoredAxis& axis : results.axes) {
    if (!IsPlacementAxis(axis.name)) group_axes.push_back(axis.name);
  }
  std::map<std::string, std::string> files;
  Rows speedup;
  for (const SpeedupRow& row : tables.speedup) speedup.push_back(SpeedupCells(row, group_axes));
  files["speedup.csv"] = ToCsv(SpeedupHeader({}, group_axes), speedup);
  Rows environment;
  for (const EnvironmentRow& row : tables.environment.rows) {
    environment.push_back({row.item, row.value, row.source});
  }
  files["environment.csv"] = ToCsv({"item", "value", "source"}, environment);
  files["runs.csv"] = RunsCsv(results);
  if (!tables.sizes.empty()) files["sizes.csv"] = SizesCsv(tables.sizes);
  if (!tables.compression.empty()) files["compression.csv"] = CompressionCsv(tables.compression);
  if (!tables.fusion.empty()) files["fusion.csv"] = FusionCsv(tables.fusion);
  if (!tables.response_sizes.empty()) files["responses.csv"] = ResponsesCsv(tables.response_sizes);
  if (!tables.breakdown.empty()) files["breakdown.csv"] = BreakdownCsv(tables.breakdown);
  for (const auto& [axis, comparison] : tables.comparisons) {
    files[axis + ".csv"] = ComparisonCsv(axis, comparison, group_axes);
  }
  return files;
}

}  // namespace hvdrun::lab
