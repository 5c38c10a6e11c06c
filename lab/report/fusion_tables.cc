#include "lab/report/fusion_tables.h"

#include <algorithm>
#include <map>
#include <utility>

#include "lab/number_text.h"

namespace hvdrun::lab {
namespace {

// "1 KB", "10 MB", "1.5 GB": decimal units, as the bins are.
std::string DecimalSize(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  size_t unit = 0;
  while (bytes >= 1000 && unit + 1 < sizeof(units) / sizeof(units[0])) {
    bytes /= 1000;
    ++unit;
  }
  return NumberText("%g ", bytes) + units[unit];
}

// Sums of one bin over the ranks of a run, or over runs.
struct BinSums {
  double responses = 0;
  double bytes = 0;
  double seconds = 0;
};

// The setting of the fusion axis's `value` in the cell `cell_id`: its values, or the tuner's outcomes.
std::string SettingText(const ExperimentResults& results, const std::string& cell_id,
                        const std::string& value) {
  const std::optional<FusionSetting> fixed = ParseFusionSetting(value);
  if (fixed && !fixed->autotune) {
    return NumberText("%g MiB, ", fixed->threshold_mb) + NumberText("%g ms", fixed->cycle_ms);
  }
  std::vector<std::string> outcomes;
  for (const StoredCell& stored : results.cells) {
    if (stored.cell.id != cell_id) continue;
    for (const StoredRun& run : stored.runs) {
      if (!run.record.ok || !run.autotune) continue;
      const std::string outcome = run.autotune->Describe();
      if (std::find(outcomes.begin(), outcomes.end(), outcome) == outcomes.end()) outcomes.push_back(outcome);
    }
  }
  std::string text;
  for (const std::string& outcome : outcomes) text += (text.empty() ? "" : "; ") + outcome;
  return text.empty() ? kNoNumber : text;
}

}  // namespace

std::string ResponseBinLabel(double lower_bytes, double upper_bytes) {
  return std::string("(").append(lower_bytes == 0 ? std::string("0") : DecimalSize(lower_bytes)) + ", " +
         DecimalSize(upper_bytes) + "]";
}

std::vector<ResponseSizeTable> BuildResponseSizeTables(const ExperimentResults& results) {
  std::vector<ResponseSizeTable> tables;
  for (const StoredCell& stored : results.cells) {
    ResponseSizeTable table;
    table.cell_id = stored.cell.id;
    table.cell = DescribeCell(stored.cell);
    // (lower, upper) -> the bin's figures summed over runs of each run's mean over ranks.
    std::map<std::pair<double, double>, BinSums> bins;
    for (const StoredRun& run : stored.runs) {
      if (!run.record.ok) continue;
      int reporting = 0;
      std::map<std::pair<double, double>, BinSums> run_bins;
      for (const RankReport& rank : run.ranks) {
        if (rank.responses.empty()) continue;
        ++reporting;
        for (const ResponseBin& bin : rank.responses) {
          BinSums& sums = run_bins[{bin.lower_bytes, bin.upper_bytes}];
          sums.responses += bin.responses;
          sums.bytes += bin.bytes;
          sums.seconds += bin.seconds;
        }
      }
      if (reporting == 0) continue;
      ++table.runs;
      for (const auto& [key, sums] : run_bins) {
        BinSums& total = bins[key];
        total.responses += sums.responses / reporting;
        total.bytes += sums.bytes / reporting;
        total.seconds += sums.seconds / reporting;
      }
    }
    if (table.runs == 0) continue;
    double all_seconds = 0;
    for (const auto& [key, sums] : bins) all_seconds += sums.seconds / table.runs;
    for (const auto& [key, sums] : bins) {
      ResponseSizeRow row;
      row.lower_bytes = key.first;
      row.upper_bytes = key.second;
      row.bin = ResponseBinLabel(key.first, key.second);
      row.count = sums.responses / table.runs;
      const double bytes = sums.bytes / table.runs;
      row.total_time_s = sums.seconds / table.runs;
      // 0 where a figure cannot be given (no responses, no time), as the table shows it.
      row.mean_size_mb = Ratio(bytes / 1e6, row.count).value_or(0);
      row.mean_time_ms = Ratio(row.total_time_s * 1e3, row.count).value_or(0);
      row.rate_mbps = Ratio(bytes * 8 / 1e6, row.total_time_s).value_or(0);
      row.share_of_time = Ratio(row.total_time_s, all_seconds).value_or(0);
      table.rows.push_back(row);
    }
    tables.push_back(std::move(table));
  }
  return tables;
}

std::vector<FusionRow> BuildFusionTable(const ExperimentResults& results,
                                        const std::vector<SpeedupRow>& rows) {
  std::vector<FusionRow> out;
  std::string group;
  SpeedupRow first;
  for (const ComparisonRow& comparison : BuildComparison(results, rows, "fusion")) {
    if (out.empty() || group != comparison.group) {
      group = comparison.group;
      first = comparison.row;
    }
    FusionRow fusion;
    fusion.group = comparison.group;
    fusion.value = comparison.value;
    fusion.setting = SettingText(results, comparison.row.cell_id, comparison.value);
    fusion.row = comparison.row;
    if (first.has_training_time && fusion.row.has_training_time) {
      fusion.training_ratio = Ratio(first.training_time_s.mean, fusion.row.training_time_s.mean);
    }
    fusion.step_time_ratio = Ratio(first.step_time_s.mean, fusion.row.step_time_s.mean);
    out.push_back(std::move(fusion));
  }
  return out;
}

}  // namespace hvdrun::lab
