// The report's tables, computed from an experiment's stored results (lab/store/experiment_results.h).
//
// Figures come from every rank's report, never from rank 0 alone: a run's step time and throughput
// per worker are the means over its ranks, its total throughput the sum over its ranks. Each row
// gives the mean and standard deviation of those over the cell's ok runs (repeats), and the spread
// over ranks (every rank of every ok run). Speedup is against the 1-worker cell (np 1) with the
// same backend and the same values of every other axis (model, batch size, ...): the ratio of
// mean total throughputs when both cells have the throughput figure, otherwise
// workers × step time(1 worker) / step time (the same work per worker and step, as in the lab);
// efficiency is speedup / workers. A cell without such a 1-worker cell, or whose 1-worker cell
// has no ok run, has no speedup.
#ifndef HVDRUN_LAB_REPORT_RESULTS_TABLE_H_
#define HVDRUN_LAB_REPORT_RESULTS_TABLE_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lab/store/experiment_results.h"

namespace hvdrun::lab {

struct Spread {
  int n = 0;
  double mean = 0;
  double sd = 0;  // sample standard deviation (n - 1); 0 for fewer than two values
  double min = 0;
  double max = 0;
};

Spread SpreadOf(const std::vector<double>& values);

// numerator / denominator when the denominator is above 0 and the quotient finite; nullopt
// otherwise. Every figure the report derives by division goes through it, so that the report
// leaves out a figure it cannot give rather than print inf or nan.
std::optional<double> Ratio(double numerator, double denominator);

struct SpeedupRow {
  std::string cell_id;
  std::string backend;
  int servers = 1;
  int procs_per_server = 1;
  int workers = 1;
  // Threads each process computed with, as its report says (the "threads" member hvdrun-trainer
  // reports); 0 when the reports do not say or differ. The lab's number of CPUs is workers × threads.
  int threads = 0;
  // What carried the allreduces of the cell's ok runs, as their ranks' reports name it
  // (RankReport::allreduce_path: "shm", "shm+gloo", "gloo", ...): each name once, in the order
  // first seen, run by run and rank by rank; several when ranks or runs differ. Empty when no
  // report says.
  std::vector<std::string> allreduce_paths;
  // The cell's values of the axes other than backend, np and servers.
  std::vector<std::pair<std::string, std::string>> group;
  int runs_ok = 0;
  int runs_failed = 0;
  // Times an elastic job re-formed (hvdrun's summary.json: its rounds after the first), summed over
  // the cell's ok runs: their figures then mix rounds of different sizes. 0 for jobs that are not
  // elastic, and for results written before hvdrun recorded rounds.
  int reformations = 0;
  Spread step_time_s;                  // over ok runs: each run's mean over ranks
  Spread step_time_ranks_s;            // over every rank of every ok run
  bool has_throughput = false;         // every rank of every ok run reported it
  Spread throughput_per_worker;        // over ok runs: each run's mean over ranks
  Spread throughput_per_worker_ranks;  // over every rank of every ok run
  Spread total_throughput;             // over ok runs: each run's sum over ranks
  bool has_accuracy = false;
  Spread accuracy;  // over ok runs: each run's mean over ranks
  bool has_training_time = false;
  Spread training_time_s;  // over ok runs: each run's mean over ranks (FigureNames::training_time)
  std::optional<double> speedup;
  std::optional<double> efficiency;
  std::string speedup_basis;  // "throughput" or "step time"
  std::string baseline_cell;  // the 1-worker cell's id
};

// One row per cell with at least one ok run, ordered by backend, the other axes, servers and
// processes per server (each in the experiment's order of values).
std::vector<SpeedupRow> BuildSpeedupTable(const ExperimentResults& results);

// "model=resnet50 batch_size=32": a row's group, for captions.
std::string DescribeGroup(const std::vector<std::pair<std::string, std::string>>& group);

// "shm", or "shm, gloo" when the ranks or runs differ: a row's allreduce paths, for every format's
// table; "" when no report says.
std::string DescribeAllreducePaths(const SpeedupRow& row);

// Allreduce time and bus bandwidth by message size, from reports that carry hvdrun-bench's
// "results" list ({bytes, time_us, busbw_gbps}); means over ranks and ok runs.
struct SizeRow {
  std::string cell_id;
  std::string backend;
  int workers = 1;
  double bytes = 0;
  Spread time_us;
  Spread busbw_gbps;
};
std::vector<SizeRow> BuildSizeTable(const ExperimentResults& results);

// A table that sets the values of one axis (fusion_threshold, compression) side by side: rows of
// the speedup table that differ only in that axis, in groups, each row with its throughput per
// worker relative to the group's first value's. Empty unless the axis has two or more values.
struct ComparisonRow {
  std::string group;  // every other axis's value, "backend=gloo np=2 servers=1 model=..."
  std::string value;  // the compared axis's
  SpeedupRow row;
  std::optional<double> relative_throughput;
  std::optional<double> relative_step_time;
};
std::vector<ComparisonRow> BuildComparison(const ExperimentResults& results,
                                           const std::vector<SpeedupRow>& rows, const std::string& axis);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_REPORT_RESULTS_TABLE_H_
