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

// The columns the outcome reads, by the header's names: the first four must be there; the yes/no
// switches (Horovod's columns, which hvdrun's log writes as the job ran them) are read where they are.
constexpr const char* kColumnNames[] = {"cycle_time_ms", "tensor_fusion_threshold", "score",
                                        "chosen",        "hierarchical_allreduce",  "cache_enabled"};
constexpr size_t kRequiredColumns = 4;
constexpr size_t kColumns = sizeof(kColumnNames) / sizeof(kColumnNames[0]);

struct Columns {
  std::optional<size_t> at[kColumns];  // each column's place in a line
  size_t count = 0;                    // the header's fields
};

std::optional<Columns> FindColumns(const std::vector<std::string>& header) {
  Columns columns;
  columns.count = header.size();
  for (size_t i = 0; i < header.size(); ++i) {
    for (size_t name = 0; name < kColumns; ++name) {
      if (header[i] == kColumnNames[name]) columns.at[name] = i;
    }
  }
  for (size_t name = 0; name < kRequiredColumns; ++name) {
    if (!columns.at[name]) return std::nullopt;
  }
  return columns;
}

std::string SettingText(double fusion_threshold_mib, double cycle_time_ms) {
  return NumberText("%.4g MiB, ", fusion_threshold_mib) + NumberText("%.4g ms", cycle_time_ms);
}

}  // namespace

std::string AutotuneOutcome::Describe() const {
  if (kept) {
    std::string switches;
    if (hierarchical_allreduce_off) switches += ", hierarchical allreduce off";
    if (response_cache_off) switches += ", response cache off";
    return SettingText(fusion_threshold_mib, cycle_time_ms) + switches + " (kept after " +
           std::to_string(samples) + " samples)";
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
  bool hierarchical_seen_on = false;
  bool cache_seen_on = false;
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const std::vector<std::string> fields = SplitFields(line);
    const std::string place = file + ":" + std::to_string(number) + ": ";
    if (fields.size() != columns->count) {
      return Status::Error(place + std::to_string(fields.size()) + " fields; the header has " +
                           std::to_string(columns->count));
    }
    double values[kColumns] = {};
    for (size_t i = 0; i < kColumns; ++i) {
      if (!columns->at[i]) continue;
      const std::string& field = fields[*columns->at[i]];
      const std::optional<double> value = experiment_file::ParseNumber(field);
      if (!value || *value < 0 || *value > kMaxFigure) {
        return Status::Error(place + "'" + field + "' is not a number from 0 to 1e+15");
      }
      values[i] = *value;
    }
    if (outcome.kept) return Status::Error(place + "a line after the setting kept");
    outcome.cycle_time_ms = values[0];
    outcome.fusion_threshold_mib = values[1];
    outcome.score_bytes_per_us = values[2];
    outcome.kept = values[3] != 0;
    // A switch is off in the kept setting where it was on in a sample before: tuned off.
    hierarchical_seen_on = hierarchical_seen_on || values[4] != 0;
    cache_seen_on = cache_seen_on || values[5] != 0;
    outcome.hierarchical_allreduce_off = outcome.kept && hierarchical_seen_on && values[4] == 0;
    outcome.response_cache_off = outcome.kept && cache_seen_on && values[5] == 0;
    if (!outcome.kept) ++outcome.samples;
  }
  return outcome;
}

}  // namespace hvdrun::lab
