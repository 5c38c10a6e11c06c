#include "lab/report/speedup_charts.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "lab/experiment/matrix.h"

namespace hvdrun::lab {
namespace {

struct SeriesKey {
  std::string backend;
  int servers = 0;  // 0: not split by servers
  bool operator==(const SeriesKey&) const = default;
};

std::string SeriesName(const SeriesKey& key) {
  if (key.servers == 0) return key.backend;
  return key.backend + ", " + std::to_string(key.servers) + (key.servers == 1 ? " server" : " servers");
}

// One chart's series from `rows` of one group; `value` gives a row's point, or nothing to leave it out.
std::vector<ChartSeries> MakeSeries(
    const std::vector<const SpeedupRow*>& rows,
    const std::function<std::optional<ChartPoint>(const SpeedupRow&)>& value) {
  // Split a backend's series by servers when two of its cells have the same number of workers.
  std::set<std::string> split;
  std::set<std::pair<std::string, int>> seen;
  for (const SpeedupRow* row : rows) {
    if (!seen.insert({row->backend, row->workers}).second) split.insert(row->backend);
  }
  std::vector<SeriesKey> order;
  std::vector<ChartSeries> series;
  for (const SpeedupRow* row : rows) {
    std::optional<ChartPoint> point = value(*row);
    if (!point) continue;
    SeriesKey key{row->backend, split.count(row->backend) > 0 ? row->servers : 0};
    auto it = std::find(order.begin(), order.end(), key);
    if (it == order.end()) {
      order.push_back(key);
      ChartSeries added;
      added.name = SeriesName(key);
      series.push_back(added);
      it = order.end() - 1;
    }
    series[static_cast<size_t>(it - order.begin())].points.push_back(*point);
  }
  // Colours by backend, so that a backend looks the same in every chart; split series get the
  // palette's colours after the first.
  std::map<std::string, int> uses;
  for (size_t i = 0; i < series.size(); ++i) {
    const std::string& backend = order[i].backend;
    int use = uses[backend]++;
    series[i].color = use == 0 ? SeriesColor(backend, i) : SeriesColor("", i + static_cast<size_t>(use));
  }
  return series;
}

ChartPoint WithSpread(double x, const Spread& spread) {
  ChartPoint point;
  point.x = x;
  point.y = spread.mean;
  if (spread.n > 1) {
    point.low = spread.mean - spread.sd;
    point.high = spread.mean + spread.sd;
  }
  return point;
}

}  // namespace

std::vector<NamedChart> BuildSpeedupCharts(const std::vector<SpeedupRow>& rows,
                                           const std::string& throughput_unit) {
  std::vector<std::string> groups;
  std::map<std::string, std::vector<const SpeedupRow*>> by_group;
  for (const SpeedupRow& row : rows) {
    std::string group = DescribeGroup(row.group);
    if (by_group.find(group) == by_group.end()) groups.push_back(group);
    by_group[group].push_back(&row);
  }
  std::vector<NamedChart> charts;
  for (const std::string& group : groups) {
    const std::vector<const SpeedupRow*>& members = by_group[group];
    const std::string suffix = groups.size() > 1 ? "-" + SlugForFileName(group) : "";
    const std::string caption = groups.size() > 1 ? " (" + group + ")" : "";
    auto add = [&](const std::string& file, const std::string& title, const std::string& y_label,
                   std::vector<ChartSeries> series) {
      if (series.empty()) return;
      NamedChart named;
      named.file = file + suffix + ".svg";
      named.group = groups.size() > 1 ? group : "";
      named.chart.title = title + caption;
      named.chart.x_label = "workers (processes in all)";
      named.chart.y_label = y_label;
      named.chart.series = std::move(series);
      charts.push_back(std::move(named));
    };
    add("throughput_per_worker", "Throughput per worker", throughput_unit + " per worker",
        MakeSeries(members, [](const SpeedupRow& row) -> std::optional<ChartPoint> {
          if (!row.has_throughput) return std::nullopt;
          return WithSpread(row.workers, row.throughput_per_worker);
        }));
    add("total_throughput", "Total throughput", throughput_unit,
        MakeSeries(members, [](const SpeedupRow& row) -> std::optional<ChartPoint> {
          if (!row.has_throughput) return std::nullopt;
          return WithSpread(row.workers, row.total_throughput);
        }));
    std::vector<ChartSeries> speedup =
        MakeSeries(members, [](const SpeedupRow& row) -> std::optional<ChartPoint> {
          if (!row.speedup) return std::nullopt;
          ChartPoint point;
          point.x = row.workers;
          point.y = *row.speedup;
          return point;
        });
    if (!speedup.empty()) {
      ChartSeries ideal;
      ideal.name = "ideal";
      ideal.color = kIdealColor;
      ideal.dashed = true;
      std::set<int> workers;
      for (const SpeedupRow* row : members) workers.insert(row->workers);
      workers.insert(1);
      for (int count : workers) {
        ChartPoint point;
        point.x = count;
        point.y = count;
        ideal.points.push_back(point);
      }
      speedup.push_back(ideal);
    }
    add("speedup", "Speedup", "speedup over 1 worker", std::move(speedup));
  }
  return charts;
}

}  // namespace hvdrun::lab
