#include "lab/report/compression_table.h"

#include <algorithm>
#include <map>
#include <utility>

namespace hvdrun::lab {
namespace {

constexpr const char* kAxis = "compression";

std::string ValueOf(const SpeedupRow& row) {
  for (const auto& [name, value] : row.group) {
    if (name == kAxis) return value;
  }
  return "none";
}

std::string SettingName(const std::string& value, int workers) {
  if (value == "none") return workers == 1 ? "one process" : "uncompressed";
  if (value == "fp8-naive") return "naive fp8";
  return value;
}

std::string GroupOf(const SpeedupRow& row) {
  std::vector<std::pair<std::string, std::string>> others;
  for (const auto& [name, value] : row.group) {
    if (name != kAxis) others.emplace_back(name, value);
  }
  return "backend=" + row.backend + " servers=" + std::to_string(row.servers) +
         (others.empty() ? "" : std::string(" ").append(DescribeGroup(others)));
}

}  // namespace

std::vector<CompressionRow> BuildCompressionTable(const ExperimentResults& results,
                                                  const std::vector<SpeedupRow>& rows) {
  auto axis = std::find_if(results.axes.begin(), results.axes.end(),
                           [](const StoredAxis& stored) { return stored.name == kAxis; });
  if (axis == results.axes.end() || axis->values.size() < 2) return {};
  const std::vector<std::string>& order = axis->values;
  const auto rank_of = [&](const std::string& value) {
    return static_cast<size_t>(std::find(order.begin(), order.end(), value) - order.begin());
  };

  std::vector<std::string> groups;  // in the order of their first row
  std::map<std::string, std::vector<const SpeedupRow*>> by_group;
  for (const SpeedupRow& row : rows) {
    const std::string group = GroupOf(row);
    if (by_group.find(group) == by_group.end()) groups.push_back(group);
    by_group[group].push_back(&row);
  }
  std::vector<CompressionRow> out;
  for (const std::string& group : groups) {
    std::vector<const SpeedupRow*>& members = by_group[group];
    // The one-process uncompressed cell first; then by setting, then by processes.
    std::stable_sort(members.begin(), members.end(), [&](const SpeedupRow* a, const SpeedupRow* b) {
      const bool a_alone = a->workers == 1 && ValueOf(*a) == "none";
      const bool b_alone = b->workers == 1 && ValueOf(*b) == "none";
      if (a_alone != b_alone) return a_alone;
      const size_t a_rank = rank_of(ValueOf(*a));
      const size_t b_rank = rank_of(ValueOf(*b));
      return a_rank != b_rank ? a_rank < b_rank : a->workers < b->workers;
    });
    const SpeedupRow* alone =
        members.front()->workers == 1 && ValueOf(*members.front()) == "none" ? members.front() : nullptr;
    for (const SpeedupRow* member : members) {
      CompressionRow row;
      row.group = group;
      row.setting = SettingName(ValueOf(*member), member->workers);
      row.row = *member;
      const auto uncompressed = std::find_if(members.begin(), members.end(), [&](const SpeedupRow* other) {
        return other->workers == member->workers && ValueOf(*other) == "none";
      });
      if (uncompressed != members.end() && member->has_accuracy && (*uncompressed)->has_accuracy) {
        row.accuracy_change_points = 100 * (member->accuracy.mean - (*uncompressed)->accuracy.mean);
      }
      if (alone != nullptr && alone->has_training_time && member->has_training_time) {
        row.training_speedup = Ratio(alone->training_time_s.mean, member->training_time_s.mean);
      }
      out.push_back(std::move(row));
    }
  }
  return out;
}

}  // namespace hvdrun::lab
