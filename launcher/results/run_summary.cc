#include "launcher/results/run_summary.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace hvdrun {

RunSummary SummarizeReports(const std::map<int, std::string>& reports) {
  RunSummary summary;
  summary.ranks_reporting = static_cast<int>(reports.size());
  for (const auto& [rank, text] : reports) {
    nlohmann::json report = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!report.is_object()) {
      summary.problems.push_back("rank " + std::to_string(rank) + ": report is not a JSON object");
      continue;
    }
    auto figures = report.find("summary");
    if (figures == report.end()) continue;
    if (!figures->is_object()) {
      summary.problems.push_back("rank " + std::to_string(rank) +
                                 ": \"summary\" is not an object of figures");
      continue;
    }
    for (const auto& item : figures->items()) {
      const std::string& name = item.key();
      const nlohmann::json& value = item.value();
      if (!value.is_number()) continue;
      auto it = std::find_if(summary.figures.begin(), summary.figures.end(),
                             [&](const FigureStats& f) { return f.name == name; });
      if (it == summary.figures.end()) {
        FigureStats figure;
        figure.name = name;
        summary.figures.push_back(figure);
        it = summary.figures.end() - 1;
      }
      it->by_rank[rank] = value.get<double>();
    }
  }
  for (FigureStats& figure : summary.figures) {
    figure.ranks = static_cast<int>(figure.by_rank.size());
    figure.min = std::numeric_limits<double>::infinity();
    figure.max = -std::numeric_limits<double>::infinity();
    double total = 0;
    for (const auto& [rank, value] : figure.by_rank) {
      total += value;
      figure.min = std::min(figure.min, value);
      figure.max = std::max(figure.max, value);
    }
    figure.mean = total / figure.ranks;
  }
  return summary;
}

std::string FormatRunSummary(const RunSummary& summary) {
  if (summary.figures.empty()) return "";
  std::string out = "hvdrun: " + std::to_string(summary.ranks_reporting) + " ranks reported\n";
  char line[256];
  std::snprintf(line, sizeof(line), "  %-28s %6s %14s %14s %14s\n", "FIGURE", "RANKS", "MEAN", "MIN", "MAX");
  out += line;
  for (const FigureStats& figure : summary.figures) {
    std::snprintf(line, sizeof(line), "  %-28s %6d %14.6g %14.6g %14.6g\n", figure.name.c_str(), figure.ranks,
                  figure.mean, figure.min, figure.max);
    out += line;
  }
  return out;
}

nlohmann::json RunSummaryToJson(const RunSummary& summary) {
  nlohmann::json figures = nlohmann::json::object();
  for (const FigureStats& figure : summary.figures) {
    nlohmann::json by_rank = nlohmann::json::object();
    for (const auto& [rank, value] : figure.by_rank) by_rank[std::to_string(rank)] = value;
    figures[figure.name] = {{"ranks", figure.ranks},
                            {"mean", figure.mean},
                            {"min", figure.min},
                            {"max", figure.max},
                            {"by_rank", by_rank}};
  }
  return {{"ranks_reporting", summary.ranks_reporting}, {"figures", figures}, {"problems", summary.problems}};
}

}  // namespace hvdrun
