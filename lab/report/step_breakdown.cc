#include "lab/report/step_breakdown.h"

#include <cmath>
#include <map>
#include <string>

#include "lab/number_text.h"

namespace hvdrun::lab {
namespace {

// Seconds as the paragraph gives them: "0.105", "1.05", "12.3".
std::string Seconds(double value) { return NumberText("%.3g s", value); }

std::string Percent(double fraction) { return NumberText("%.0f%%", fraction * 100); }

std::string Number(double value) { return NumberText("%.3g", value); }

// "12%": `part` of `whole`; "an unknown share" when there is none to give.
std::string ShareText(double part, double whole) {
  std::optional<double> share = Ratio(part, whole);
  return share ? Percent(*share) : "an unknown share";
}

std::string Plural(int count, const std::string& word) {
  if (count == 1) return "1 " + word;
  return std::to_string(count) + " " + word + (word.back() == 's' ? "es" : "s");
}

std::string DescribeCellInProse(const SpeedupRow& row) {
  std::string text = BackendTitle(row.backend) + " on " + Plural(row.workers, "process");
  text += " (" + Plural(row.servers, "server");
  if (row.threads > 0) text += ", " + Plural(row.threads, "thread") + " each";
  return text + ")";
}

const StoredCell* FindCell(const ExperimentResults& results, const std::string& id) {
  for (const StoredCell& cell : results.cells) {
    if (cell.cell.id == id) return &cell;
  }
  return nullptr;
}

double Figure(const RankReport& rank, const char* name, bool& missing) {
  auto it = rank.figures.find(name);
  if (it == rank.figures.end()) {
    missing = true;
    return 0;
  }
  return it->second;
}

}  // namespace

std::string BackendTitle(const std::string& backend) {
  if (backend == "gloo") return "Gloo";
  if (backend == "mpi") return "MPI";
  if (backend == "nccl") return "NCCL";
  return backend;
}

std::vector<BreakdownRow> BuildStepBreakdown(const ExperimentResults& results,
                                             const std::vector<SpeedupRow>& speedup_rows) {
  std::vector<BreakdownRow> rows;
  for (const SpeedupRow& speedup : speedup_rows) {
    const StoredCell* cell = FindCell(results, speedup.cell_id);
    if (cell == nullptr) continue;
    std::vector<double> compute, overlapped, wait, bytes, algbw, busbw;
    bool missing = false;
    for (const StoredRun& run : cell->runs) {
      if (!run.record.ok || run.ranks.empty()) continue;
      double run_compute = 0;
      double run_overlapped = 0;
      double run_wait = 0;
      double run_bytes = 0;
      for (const RankReport& rank : run.ranks) {
        run_compute += Figure(rank, kComputeTimeFigure, missing);
        run_wait += Figure(rank, kCommWaitFigure, missing);
        bool no_overlap = false;
        run_overlapped += Figure(rank, kCommOverlappedFigure, no_overlap);
        bool no_bytes = false;
        run_bytes += Figure(rank, kBytesPerStepFigure, no_bytes);
      }
      const auto ranks = static_cast<double>(run.ranks.size());
      compute.push_back(run_compute / ranks);
      overlapped.push_back(run_overlapped / ranks);
      wait.push_back(run_wait / ranks);
      bytes.push_back(run_bytes / ranks);
      const double comm_s = (run_overlapped + run_wait) / ranks;
      const int n = speedup.workers;
      if (std::optional<double> alg = Ratio(run_bytes / ranks / 1e9, comm_s); n > 1 && alg && run_bytes > 0) {
        algbw.push_back(*alg);
        busbw.push_back(*alg * 2.0 * (n - 1) / n);
      }
    }
    if (missing || compute.empty()) continue;
    BreakdownRow row;
    row.row = speedup;
    row.group = DescribeGroup(speedup.group);
    row.compute_s = SpreadOf(compute);
    row.comm_overlapped_s = SpreadOf(overlapped);
    row.comm_wait_s = SpreadOf(wait);
    row.bytes_per_step = SpreadOf(bytes);
    // Bandwidths only when every ok run had communication to measure.
    if (!algbw.empty() && algbw.size() == compute.size()) {
      row.algbw_gbps = SpreadOf(algbw);
      row.busbw_gbps = SpreadOf(busbw);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string ExplainLargestLoss(const std::vector<BreakdownRow>& group_rows) {
  std::map<std::string, const BreakdownRow*> baselines;  // backend -> its one-process row
  for (const BreakdownRow& row : group_rows) {
    if (row.row.workers == 1) baselines[row.row.backend] = &row;
  }
  const BreakdownRow* worst = nullptr;
  const BreakdownRow* worst_base = nullptr;
  double worst_efficiency = 2;
  const BreakdownRow* longest_wait = nullptr;
  for (const BreakdownRow& row : group_rows) {
    if (row.row.workers == 1) continue;
    if (longest_wait == nullptr || row.comm_wait_s.mean > longest_wait->comm_wait_s.mean) longest_wait = &row;
    auto base = baselines.find(row.row.backend);
    if (base == baselines.end()) continue;
    const std::optional<double> efficiency =
        Ratio(base->second->row.step_time_s.mean, row.row.step_time_s.mean);
    if (efficiency && *efficiency < worst_efficiency) {
      worst_efficiency = *efficiency;
      worst = &row;
      worst_base = base->second;
    }
  }
  if (longest_wait == nullptr) {
    return "Every cell here runs one process: nothing is communicated, and a step is compute alone.";
  }
  if (worst == nullptr) {
    const BreakdownRow& row = *longest_wait;
    return "No one-process cell of the same backend to compare with. The longest wait on communication: " +
           DescribeCellInProse(row.row) + ", " + Seconds(row.comm_wait_s.mean) + " of each " +
           Seconds(row.row.step_time_s.mean) + " step (" +
           ShareText(row.comm_wait_s.mean, row.row.step_time_s.mean) + ").";
  }
  const BreakdownRow& row = *worst;
  const BreakdownRow& base = *worst_base;
  const double step = row.row.step_time_s.mean;
  const double loss = step - base.row.step_time_s.mean;
  const double wait_loss = row.comm_wait_s.mean - base.comm_wait_s.mean;
  const double compute_loss = row.compute_s.mean - base.compute_s.mean;
  const std::string backend = BackendTitle(row.row.backend);
  std::string text = "Largest loss of efficiency: " + DescribeCellInProse(row.row) + ", " +
                     Percent(worst_efficiency) + " of one process's step rate (" + Seconds(step) +
                     " a step against " + Seconds(base.row.step_time_s.mean) + "). ";
  if (loss <= 0) {
    return text + "Its steps are no slower than one process's: no efficiency is lost to communication.";
  }
  text += Seconds(row.comm_wait_s.mean) + " of each " + Seconds(step) + " step waits on " + backend +
          " after backward (" + ShareText(row.comm_wait_s.mean, step) + ")";
  if (row.comm_overlapped_s.mean > 0) {
    text +=
        ", and communication was in flight during " + Seconds(row.comm_overlapped_s.mean) + " of backward";
  }
  text += "; the compute itself takes " + Seconds(row.compute_s.mean) + ", ";
  if (std::optional<double> ratio = Ratio(row.compute_s.mean, base.compute_s.mean)) {
    const double change = *ratio - 1;
    text += Percent(std::fabs(change)) + (change >= 0 ? " slower" : " faster") + " than on one process";
  } else {
    text += "against " + Seconds(base.compute_s.mean) + " on one process";
  }
  if (row.row.threads > 0 && base.row.threads > 0 && row.row.threads != base.row.threads) {
    text += ", which computes with " + Plural(base.row.threads, "thread") + " against " +
            Plural(row.row.threads, "thread") + " here";
  }
  text += ". ";
  const bool wait_larger = wait_loss >= compute_loss;
  text += "The larger part of the " + Seconds(loss) + " lost a step is " +
          (wait_larger ? "the wait on communication (" + Seconds(wait_loss) + ")"
                       : "slower compute (" + Seconds(compute_loss) + ")") +
          ".";
  if (row.busbw_gbps) {
    text += " " + backend + " moved " + Number(row.bytes_per_step.mean / 1e6) + " MB a step at " +
            Number(row.busbw_gbps->mean) + " GB/s bus bandwidth.";
  }
  return text;
}

}  // namespace hvdrun::lab
