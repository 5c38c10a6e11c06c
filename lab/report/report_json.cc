#include "lab/report/report_json.h"

#include <cstdio>
#include <string>
#include <vector>

#include "common/version.h"
#include "lab/report/display_table.h"
#include "lab/report/report_sections.h"
#include "lab/utc_time.h"

namespace hvdrun::lab {

namespace {

nlohmann::json SizesJson(const ReportTables& tables) {
  nlohmann::json sizes = nlohmann::json::array();
  for (const SizeRow& row : tables.sizes) {
    sizes.push_back({{"cell", row.cell_id},
                     {"backend", row.backend},
                     {"workers", row.workers},
                     {"bytes", row.bytes},
                     {"time_us", SpreadJson(row.time_us)},
                     {"busbw_gbps", SpreadJson(row.busbw_gbps)}});
  }
  return sizes;
}

nlohmann::json ComparisonsJson(const ReportTables& tables) {
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
  return comparisons;
}

// The compression and fusion tables: rows of the speedup table with what each compares.
nlohmann::json CompressionJson(const ReportTables& tables) {
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
  return compression;
}

nlohmann::json FusionJson(const ReportTables& tables) {
  nlohmann::json fusion = nlohmann::json::array();
  for (const FusionRow& row : tables.fusion) {
    fusion.push_back(
        {{"cells", row.group},
         {"fusion", row.value},
         {"setting", row.setting},
         {"row", SpeedupRowJson(row.row)},
         {"training_time_s", row.row.has_training_time ? SpreadJson(row.row.training_time_s) : nullptr},
         {"training_ratio", OptionalJson(row.training_ratio)},
         {"step_time_ratio", OptionalJson(row.step_time_ratio)}});
  }
  return fusion;
}

nlohmann::json ResponseSizesJson(const ReportTables& tables) {
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
  return response_sizes;
}

// Every run's line, and the charts' files with their titles.
nlohmann::json RunsJson(const ExperimentResults& results) {
  nlohmann::json runs = nlohmann::json::array();
  for (const RunLine& line : ListRuns(results)) {
    runs.push_back({{"cell", line.cell_id},
                    {"repeat", line.repeat},
                    {"status", line.status},
                    {"duration_s", line.duration_s},
                    {"reason", line.error},
                    {"reformations", Reformations(line) ? nlohmann::json(*Reformations(line)) : nullptr}});
  }
  return runs;
}

nlohmann::json ChartsJson(const ReportTables& tables) {
  nlohmann::json charts = nlohmann::json::array();
  for (const NamedChart& chart : tables.charts) {
    charts.push_back({{"file", chart.file}, {"title", chart.chart.title}});
  }
  for (const BreakdownTable& table : tables.breakdown) {
    charts.push_back({{"file", table.chart_file}, {"title", table.chart.title}});
  }
  return charts;
}

nlohmann::json ExperimentJson(const ExperimentResults& results) {
  const FigureNames& figures = results.figures;
  return {{"name", results.name},
          {"description", results.description},
          {"results_dir", results.dir},
          {"repeats", results.repeats},
          {"excluded", results.excluded},
          {"figures",
           {{"step_time", figures.step_time},
            {"step_time_scale", figures.step_time_scale},
            {"throughput", figures.throughput},
            {"throughput_unit", figures.throughput_unit},
            {"accuracy", figures.accuracy}}}};
}

}  // namespace

nlohmann::json RenderJson(const ExperimentResults& results, const ReportTables& tables) {
  nlohmann::json speedup = nlohmann::json::array();
  for (const SpeedupRow& row : tables.speedup) speedup.push_back(SpeedupRowJson(row));
  nlohmann::json environment = nlohmann::json::array();
  for (const EnvironmentRow& row : tables.environment.rows) {
    environment.push_back({{"item", row.item}, {"value", row.value}, {"source", row.source}});
  }
  nlohmann::json hvdrun_options = nlohmann::json::object();
  for (const auto& [key, value] : results.hvdrun_options) hvdrun_options[key] = value;
  return {{"experiment", ExperimentJson(results)},
          {"speedup", speedup},
          {"environment", environment},
          {"sizes", SizesJson(tables)},
          {"comparisons", ComparisonsJson(tables)},
          {"fusion", FusionJson(tables)},
          {"compression", CompressionJson(tables)},
          {"response_sizes", ResponseSizesJson(tables)},
          {"runs", RunsJson(results)},
          {"charts", ChartsJson(tables)},
          {"breakdown", BreakdownJson(tables.breakdown)},
          {"hvdrun_options", hvdrun_options},
          {"problems", results.problems}};
}

}  // namespace hvdrun::lab
