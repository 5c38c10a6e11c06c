#include "lab/store/autotune_outcome.h"

#include <cmath>
#include <optional>
#include <sstream>
#include <vector>

#include "lab/experiment/experiment_parser.h"
#include "lab/number_text.h"
#include "lab/store/rank_report.h"

namespace hvdrun::lab {
namespace {

std::vector<std::string> SplitFields(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

// The columns the outcome reads, by the header's names.
struct Columns {
  size_t cycle_time_ms = 0;
  size_t fusion_threshold = 0;
  size_t score = 0;
  size_t chosen = 0;
  size_t count = 0;
};

std::optional<Columns> FindColumns(const std::vector<std::string>& header) {
  Columns columns;
  columns.count = header.size();
  bool found[4] = {false, false, false, false};
  const char* names[4] = {"cycle_time_ms", "tensor_fusion_threshold", "score", "chosen"};
  size_t* places[4] = {&columns.cycle_time_ms, &columns.fusion_threshold, &columns.score, &columns.chosen};
  for (size_t i = 0; i < header.size(); ++i) {
    for (size_t name = 0; name < 4; ++name) {
      if (header[i] == names[name]) {
        *places[name] = i;
        found[name] = true;
      }
    }
  }
  for (const bool column : found) {
    if (!column) return std::nullopt;
  }
  return columns;
}

std::string SettingText(double fusion_threshold_mib, double cycle_time_ms) {
  return NumberText("%.4g MiB, ", fusion_threshold_mib) + NumberText("%.4g ms", cycle_time_ms);
}

}  // namespace

std::string AutotuneOutcome::Describe() const {
  if (kept) {
    return SettingText(fusion_threshold_mib, cycle_time_ms) + " (kept after " + std::to_string(samples) +
           " samples)";
  }
  if (samples == 0) return "still searching when the run ended (no sample scored)";
  return "still searching when the run ended (" + std::to_string(samples) + " samples scored; last " +
         SettingText(fusion_threshold_mib, cycle_time_ms) + ")";
}

StatusOr<AutotuneOutcome> AutotuneOutcomeFromCsv(const std::string& text, const std::string& file) {
  std::stringstream in(text);
  std::string line;
  AutotuneOutcome outcome;
  if (!std::getline(in, line)) return outcome;
  const std::optional<Columns> columns = FindColumns(SplitFields(line));
  if (!columns) {
    return Status::Error(file +
                         ":1: not an autotune log: the header lacks cycle_time_ms, "
                         "tensor_fusion_threshold, score or chosen");
  }
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const std::vector<std::string> fields = SplitFields(line);
    const std::string place = file + ":" + std::to_string(number) + ": ";
    if (fields.size() != columns->count) {
      return Status::Error(place + std::to_string(fields.size()) + " fields; the header has " +
                           std::to_string(columns->count));
    }
    double values[4] = {0, 0, 0, 0};
    const size_t at[4] = {columns->cycle_time_ms, columns->fusion_threshold, columns->score, columns->chosen};
    for (size_t i = 0; i < 4; ++i) {
      const std::optional<double> value = experiment_file::ParseNumber(fields[at[i]]);
      if (!value || *value < 0 || *value > kMaxFigure) {
        return Status::Error(place + "'" + fields[at[i]] + "' is not a number from 0 to 1e+15");
      }
      values[i] = *value;
    }
    if (outcome.kept) return Status::Error(place + "a line after the setting kept");
    outcome.cycle_time_ms = values[0];
    outcome.fusion_threshold_mib = values[1];
    outcome.score_bytes_per_us = values[2];
    outcome.kept = values[3] != 0;
    if (!outcome.kept) ++outcome.samples;
  }
  return outcome;
}

}  // namespace hvdrun::lab
