#include "lab/report/results_table.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace hvdrun::lab {
namespace {

// The position of `value` among `axis`'s values in the experiment; unknown values sort last.
size_t ValueIndex(const ExperimentResults& results, const std::string& axis, const std::string& value) {
  for (const StoredAxis& stored : results.axes) {
    if (stored.name != axis) continue;
    auto it = std::find(stored.values.begin(), stored.values.end(), value);
    return static_cast<size_t>(it - stored.values.begin());
  }
  return 0;
}

std::vector<size_t> SortKey(const ExperimentResults& results, const SpeedupRow& row) {
  std::vector<size_t> key = {ValueIndex(results, "backend", row.backend)};
  for (const auto& [name, value] : row.group) key.push_back(ValueIndex(results, name, value));
  key.push_back(static_cast<size_t>(row.servers));
  key.push_back(static_cast<size_t>(row.procs_per_server));
  return key;
}

}  // namespace

std::optional<double> Ratio(double numerator, double denominator) {
  if (!(denominator > 0)) return std::nullopt;
  const double quotient = numerator / denominator;
  if (!std::isfinite(quotient)) return std::nullopt;
  return quotient;
}

Spread SpreadOf(const std::vector<double>& values) {
  Spread spread;
  spread.n = static_cast<int>(values.size());
  if (values.empty()) return spread;
  spread.mean = std::accumulate(values.begin(), values.end(), 0.0) / spread.n;
  spread.min = *std::min_element(values.begin(), values.end());
  spread.max = *std::max_element(values.begin(), values.end());
  if (spread.n > 1) {
    double squares = 0;
    for (double value : values) squares += (value - spread.mean) * (value - spread.mean);
    spread.sd = std::sqrt(squares / (spread.n - 1));
  }
  return spread;
}

std::string DescribeGroup(const std::vector<std::pair<std::string, std::string>>& group) {
  std::string out;
  for (const auto& [name, value] : group) out += (out.empty() ? "" : " ") + name + "=" + value;
  return out;
}

std::string DescribeAllreducePaths(const SpeedupRow& row) {
  std::string out;
  for (const std::string& path : row.allreduce_paths) out += (out.empty() ? "" : ", ") + path;
  return out;
}

namespace {

// A cell's figures gathered over its ok runs: each run's mean (or sum) over ranks, and every rank's.
struct CellFigures {
  std::vector<double> step_by_run, step_by_rank, per_worker_by_run, per_worker_by_rank, total_by_run,
      accuracy_by_run, training_by_run;
  bool throughput_everywhere = true;
  std::vector<int> threads;
};

// Adds one ok run of `row`'s cell to `gathered`; a run whose ranks report no step time is left out.
void GatherRun(const StoredRun& run, const FigureNames& figures, SpeedupRow& row, CellFigures& gathered) {
  std::vector<double> steps, throughputs, accuracies, trainings;
  std::vector<std::string> paths;
  for (const RankReport& rank : run.ranks) {
    gathered.threads.push_back(rank.threads);
    if (!rank.allreduce_path.empty()) paths.push_back(rank.allreduce_path);
    auto step = rank.figures.find(figures.step_time);
    if (step != rank.figures.end()) steps.push_back(step->second * figures.step_time_scale);
    auto throughput = rank.figures.find(figures.throughput);
    if (throughput != rank.figures.end()) {
      throughputs.push_back(throughput->second);
    } else {
      gathered.throughput_everywhere = false;
    }
    auto accuracy = rank.figures.find(figures.accuracy);
    if (accuracy != rank.figures.end()) accuracies.push_back(accuracy->second);
    auto training = rank.figures.find(figures.training_time);
    if (training != rank.figures.end()) trainings.push_back(training->second);
  }
  if (steps.empty()) return;
  ++row.runs_ok;
  row.reformations += std::max(run.rounds - 1, 0);
  for (const std::string& path : paths) {
    if (std::find(row.allreduce_paths.begin(), row.allreduce_paths.end(), path) ==
        row.allreduce_paths.end()) {
      row.allreduce_paths.push_back(path);
    }
  }
  gathered.step_by_run.push_back(SpreadOf(steps).mean);
  gathered.step_by_rank.insert(gathered.step_by_rank.end(), steps.begin(), steps.end());
  if (!throughputs.empty()) {
    gathered.per_worker_by_run.push_back(SpreadOf(throughputs).mean);
    gathered.per_worker_by_rank.insert(gathered.per_worker_by_rank.end(), throughputs.begin(),
                                       throughputs.end());
    gathered.total_by_run.push_back(std::accumulate(throughputs.begin(), throughputs.end(), 0.0));
  }
  if (!accuracies.empty()) gathered.accuracy_by_run.push_back(SpreadOf(accuracies).mean);
  if (!trainings.empty()) gathered.training_by_run.push_back(SpreadOf(trainings).mean);
}

// The cell's row, without its speedup; nullopt when it has no ok run with a step time.
std::optional<SpeedupRow> CellRow(const StoredCell& stored, const FigureNames& figures) {
  SpeedupRow row;
  row.cell_id = stored.cell.id;
  row.backend = stored.cell.backend;
  row.servers = stored.cell.servers;
  row.procs_per_server = stored.cell.procs_per_server;
  row.workers = stored.cell.num_proc;
  for (const auto& [name, value] : stored.cell.values) {
    if (!IsPlacementAxis(name)) row.group.emplace_back(name, value);
  }
  CellFigures gathered;
  for (const StoredRun& run : stored.runs) {
    if (run.record.ok) {
      GatherRun(run, figures, row, gathered);
    } else {
      ++row.runs_failed;
    }
  }
  if (row.runs_ok == 0) return std::nullopt;
  const std::vector<int>& threads = gathered.threads;
  if (!threads.empty() &&
      std::all_of(threads.begin(), threads.end(), [&](int t) { return t == threads[0]; })) {
    row.threads = threads[0];
  }
  row.step_time_s = SpreadOf(gathered.step_by_run);
  row.step_time_ranks_s = SpreadOf(gathered.step_by_rank);
  row.has_throughput = gathered.throughput_everywhere && !gathered.per_worker_by_run.empty();
  if (row.has_throughput) {
    row.throughput_per_worker = SpreadOf(gathered.per_worker_by_run);
    row.throughput_per_worker_ranks = SpreadOf(gathered.per_worker_by_rank);
    row.total_throughput = SpreadOf(gathered.total_by_run);
  }
  row.has_accuracy = !gathered.accuracy_by_run.empty();
  if (row.has_accuracy) row.accuracy = SpreadOf(gathered.accuracy_by_run);
  row.has_training_time = !gathered.training_by_run.empty();
  if (row.has_training_time) row.training_time_s = SpreadOf(gathered.training_by_run);
  return row;
}

// Each row's speedup and efficiency against the 1-worker row of its backend and group.
void AddSpeedups(std::vector<SpeedupRow>& rows) {
  std::map<std::string, const SpeedupRow*> baselines;
  auto group_key = [](const SpeedupRow& row) { return row.backend + '\0' + DescribeGroup(row.group); };
  for (const SpeedupRow& row : rows) {
    if (row.workers == 1) baselines[group_key(row)] = &row;
  }
  for (SpeedupRow& row : rows) {
    auto it = baselines.find(group_key(row));
    if (it == baselines.end()) continue;
    const SpeedupRow& base = *it->second;
    const std::optional<double> by_throughput =
        row.has_throughput && base.has_throughput
            ? Ratio(row.total_throughput.mean, base.total_throughput.mean)
            : std::nullopt;
    if (by_throughput) {
      row.speedup = by_throughput;
      row.speedup_basis = "throughput";
    } else if (std::optional<double> by_step =
                   Ratio(row.workers * base.step_time_s.mean, row.step_time_s.mean)) {
      row.speedup = by_step;
      row.speedup_basis = "step time";
    }
    if (row.speedup) row.efficiency = Ratio(*row.speedup, row.workers);
    row.baseline_cell = base.cell_id;
  }
}

}  // namespace

std::vector<SpeedupRow> BuildSpeedupTable(const ExperimentResults& results) {
  std::vector<SpeedupRow> rows;
  for (const StoredCell& stored : results.cells) {
    if (std::optional<SpeedupRow> row = CellRow(stored, results.figures)) rows.push_back(std::move(*row));
  }
  AddSpeedups(rows);
  std::stable_sort(rows.begin(), rows.end(), [&](const SpeedupRow& a, const SpeedupRow& b) {
    return SortKey(results, a) < SortKey(results, b);
  });
  return rows;
}

std::vector<SizeRow> BuildSizeTable(const ExperimentResults& results) {
  std::vector<SizeRow> rows;
  for (const StoredCell& stored : results.cells) {
    // bytes -> (times, bandwidths), over ranks and ok runs, in the order sizes first appear.
    std::vector<double> order;
    std::map<double, std::pair<std::vector<double>, std::vector<double>>> by_size;
    for (const StoredRun& run : stored.runs) {
      if (!run.record.ok) continue;
      for (const RankReport& rank : run.ranks) {
        for (const AllreduceSize& size : rank.sizes) {
          if (by_size.find(size.bytes) == by_size.end()) order.push_back(size.bytes);
          by_size[size.bytes].first.push_back(size.time_us);
          if (size.busbw_gbps) by_size[size.bytes].second.push_back(*size.busbw_gbps);
        }
      }
    }
    for (double bytes : order) {
      SizeRow row;
      row.cell_id = stored.cell.id;
      row.backend = stored.cell.backend;
      row.workers = stored.cell.num_proc;
      row.bytes = bytes;
      row.time_us = SpreadOf(by_size[bytes].first);
      row.busbw_gbps = SpreadOf(by_size[bytes].second);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::vector<ComparisonRow> BuildComparison(const ExperimentResults& results,
                                           const std::vector<SpeedupRow>& rows, const std::string& axis) {
  auto stored = std::find_if(results.axes.begin(), results.axes.end(),
                             [&](const StoredAxis& a) { return a.name == axis; });
  if (stored == results.axes.end() || stored->values.size() < 2) return {};
  // group -> rows, groups in the order of their first row.
  std::vector<std::string> groups;
  std::map<std::string, std::vector<ComparisonRow>> by_group;
  for (const SpeedupRow& row : rows) {
    ComparisonRow comparison;
    std::vector<std::pair<std::string, std::string>> others;
    for (const auto& [name, value] : row.group) {
      if (name == axis) {
        comparison.value = value;
      } else {
        others.emplace_back(name, value);
      }
    }
    comparison.group = "backend=" + row.backend + " np=" + std::to_string(row.workers) +
                       " servers=" + std::to_string(row.servers) +
                       (others.empty() ? "" : " " + DescribeGroup(others));
    comparison.row = row;
    if (by_group.find(comparison.group) == by_group.end()) groups.push_back(comparison.group);
    by_group[comparison.group].push_back(std::move(comparison));
  }
  std::vector<ComparisonRow> out;
  for (const std::string& group : groups) {
    std::vector<ComparisonRow>& members = by_group[group];
    std::stable_sort(members.begin(), members.end(), [&](const ComparisonRow& a, const ComparisonRow& b) {
      return ValueIndex(results, axis, a.value) < ValueIndex(results, axis, b.value);
    });
    const SpeedupRow& first = members.front().row;
    for (ComparisonRow& member : members) {
      if (member.row.has_throughput && first.has_throughput) {
        member.relative_throughput =
            Ratio(member.row.throughput_per_worker.mean, first.throughput_per_worker.mean);
      }
      member.relative_step_time = Ratio(member.row.step_time_s.mean, first.step_time_s.mean);
      out.push_back(std::move(member));
    }
  }
  return out;
}

}  // namespace hvdrun::lab
