#include "lab/report/breakdown_section.h"

#include <map>

#include "lab/experiment/matrix.h"

namespace hvdrun::lab {
namespace {

// The three parts of a step, bottom first, and their colours in the chart.
const std::vector<BarSegmentKind>& Segments() {
  static const std::vector<BarSegmentKind> kSegments = {
      {"compute alone", "#4c78a8"},
      {"compute, communication in flight", "#9ecae9"},
      {"waiting on communication", "#e45756"},
  };
  return kSegments;
}

std::string OptionalSpread(const std::optional<Spread>& spread) { return spread ? MeanSd(*spread) : "—"; }

nlohmann::json SpreadJson(const Spread& spread) {
  return {
      {"n", spread.n}, {"mean", spread.mean}, {"sd", spread.sd}, {"min", spread.min}, {"max", spread.max}};
}

std::string Threads(const SpeedupRow& row) { return row.threads > 0 ? std::to_string(row.threads) : "—"; }

}  // namespace

const char* const kBreakdownNote =
    "From each rank's own timing (hvdrun-trainer's compute_time_s, comm_overlapped_s, comm_wait_s and "
    "bytes_reduced_per_step): a step is its compute (forward, backward, optimizer) plus the wait for "
    "gradient averages after backward, which is communication not overlapped with compute. Of the "
    "compute, \"communication in flight\" is the time from the step's first gradient reduction to the end "
    "of backward. Communication time = in flight + wait; algbw = bytes per step / communication time; "
    "busbw = algbw × 2(n − 1)/n (allreduce, n processes), in GB/s (10^9 bytes/s): lower bounds, since "
    "the backend may idle while communication is in flight. Each figure: mean over ranks, then mean ± "
    "sd over ok runs.";

std::vector<BreakdownTable> BuildBreakdownTables(const std::vector<BreakdownRow>& rows) {
  std::vector<std::string> groups;
  std::map<std::string, std::vector<BreakdownRow>> by_group;
  for (const BreakdownRow& row : rows) {
    if (by_group.find(row.group) == by_group.end()) groups.push_back(row.group);
    by_group[row.group].push_back(row);
  }
  std::vector<BreakdownTable> tables;
  for (const std::string& group : groups) {
    BreakdownTable table;
    table.group = groups.size() > 1 ? group : "";
    table.rows = by_group[group];
    table.explanation = ExplainLargestLoss(table.rows);
    table.chart_file = groups.size() > 1 ? "breakdown-" + SlugForFileName(group) + ".svg" : "breakdown.svg";
    table.chart.title = "Where a step's time goes" + (groups.size() > 1 ? " (" + group + ")" : "");
    table.chart.x_label = "backend, servers × processes per server";
    table.chart.y_label = "seconds per step";
    table.chart.segments = Segments();
    for (const BreakdownRow& row : table.rows) {
      StackedBar bar;
      bar.label = row.row.backend + " " + std::to_string(row.row.servers) + "×" +
                  std::to_string(row.row.procs_per_server);
      const double overlapped = std::min(row.comm_overlapped_s.mean, row.compute_s.mean);
      bar.values = {row.compute_s.mean - overlapped, overlapped, row.comm_wait_s.mean};
      table.chart.bars.push_back(bar);
    }
    tables.push_back(std::move(table));
  }
  return tables;
}

DisplayTable BreakdownDisplay(const BreakdownTable& table) {
  DisplayTable display;
  display.header = {"backend",
                    "servers",
                    "processes per server",
                    "threads per process",
                    "CPUs",
                    "step time (s)",
                    "compute (s)",
                    "of it, communication in flight (s)",
                    "waiting on communication (s)",
                    "wait, share of step",
                    "MB reduced per step",
                    "algbw (GB/s)",
                    "busbw (GB/s)"};
  display.text.assign(display.header.size(), false);
  display.text[0] = true;
  for (const BreakdownRow& row : table.rows) {
    const SpeedupRow& s = row.row;
    const double share = Ratio(row.comm_wait_s.mean, s.step_time_s.mean).value_or(0);
    Spread megabytes = row.bytes_per_step;
    megabytes.mean /= 1e6;
    megabytes.sd /= 1e6;
    display.rows.push_back({s.backend, std::to_string(s.servers), std::to_string(s.procs_per_server),
                            Threads(s), s.threads > 0 ? std::to_string(s.workers * s.threads) : "—",
                            MeanSd(s.step_time_s), MeanSd(row.compute_s), MeanSd(row.comm_overlapped_s),
                            MeanSd(row.comm_wait_s), FormatFigure(share * 100) + " %", MeanSd(megabytes),
                            OptionalSpread(row.algbw_gbps), OptionalSpread(row.busbw_gbps)});
  }
  return display;
}

nlohmann::json BreakdownJson(const std::vector<BreakdownTable>& tables) {
  nlohmann::json out = nlohmann::json::array();
  for (const BreakdownTable& table : tables) {
    nlohmann::json rows = nlohmann::json::array();
    for (const BreakdownRow& row : table.rows) {
      rows.push_back(
          {{"cell", row.row.cell_id},
           {"backend", row.row.backend},
           {"servers", row.row.servers},
           {"processes_per_server", row.row.procs_per_server},
           {"workers", row.row.workers},
           {"threads_per_process", row.row.threads > 0 ? nlohmann::json(row.row.threads) : nullptr},
           {"step_time_s", SpreadJson(row.row.step_time_s)},
           {"compute_s", SpreadJson(row.compute_s)},
           {"comm_overlapped_s", SpreadJson(row.comm_overlapped_s)},
           {"comm_wait_s", SpreadJson(row.comm_wait_s)},
           {"bytes_per_step", SpreadJson(row.bytes_per_step)},
           {"algbw_gbps", row.algbw_gbps ? SpreadJson(*row.algbw_gbps) : nullptr},
           {"busbw_gbps", row.busbw_gbps ? SpreadJson(*row.busbw_gbps) : nullptr}});
    }
    out.push_back({{"group", table.group},
                   {"explanation", table.explanation},
                   {"chart", table.chart_file},
                   {"rows", rows}});
  }
  return out;
}

std::string BreakdownCsv(const std::vector<BreakdownTable>& tables) {
  std::vector<std::vector<std::string>> rows;
  auto optional = [](const std::optional<Spread>& spread) { return spread ? Raw(spread->mean) : ""; };
  for (const BreakdownTable& table : tables) {
    for (const BreakdownRow& row : table.rows) {
      const SpeedupRow& s = row.row;
      rows.push_back({table.group, s.cell_id, s.backend, std::to_string(s.servers),
                      std::to_string(s.procs_per_server), s.threads > 0 ? std::to_string(s.threads) : "",
                      Raw(s.step_time_s.mean), Raw(row.compute_s.mean), Raw(row.comm_overlapped_s.mean),
                      Raw(row.comm_wait_s.mean), Raw(row.bytes_per_step.mean), optional(row.algbw_gbps),
                      optional(row.busbw_gbps)});
    }
  }
  return ToCsv(
      {"group", "cell", "backend", "servers", "processes_per_server", "threads_per_process", "step_time_s",
       "compute_s", "comm_overlapped_s", "comm_wait_s", "bytes_per_step", "algbw_gbps", "busbw_gbps"},
      rows);
}

}  // namespace hvdrun::lab
