#include "lab/report/results_table.h"

#include <gtest/gtest.h>

#include <cmath>

namespace hvdrun::lab {
namespace {

// Results built in memory: cells with runs whose ranks report the given figures.
class ResultsBuilder {
 public:
  ResultsBuilder() {
    results_.repeats = 2;
    results_.axes = {{"backend", {"gloo", "mpi"}}, {"np", {"1", "2"}}, {"servers", {"1"}}, {"model", {"m"}}};
  }

  StoredCell& Cell(const std::string& backend, int np,
                   const std::vector<std::pair<std::string, std::string>>& extra = {}) {
    StoredCell stored;
    stored.cell.id = backend + "-np" + std::to_string(np);
    stored.cell.backend = backend;
    stored.cell.num_proc = np;
    stored.cell.procs_per_server = np;
    stored.cell.values = {{"backend", backend}, {"np", std::to_string(np)}, {"servers", "1"}, {"model", "m"}};
    for (const auto& value : extra) {
      stored.cell.id += "-" + value.second;
      stored.cell.values.push_back(value);
    }
    results_.cells.push_back(stored);
    return results_.cells.back();
  }

  // A run whose rank r reports figures[r].
  static void AddRun(StoredCell& cell, int repeat, const std::vector<std::map<std::string, double>>& figures,
                     bool ok = true) {
    StoredRun run;
    run.repeat = repeat;
    run.record.ok = ok;
    for (size_t rank = 0; rank < figures.size(); ++rank) {
      RankReport report;
      report.rank = static_cast<int>(rank);
      report.figures = figures[rank];
      run.ranks.push_back(report);
    }
    cell.runs.push_back(run);
  }

  ExperimentResults& results() { return results_; }

 private:
  ExperimentResults results_;
};

ExperimentResults Fixture() {
  ResultsBuilder builder;
  StoredCell& gloo1 = builder.Cell("gloo", 1);
  ResultsBuilder::AddRun(gloo1, 1, {{{"step_time_s", 0.50}, {"img_per_sec", 64}}});
  ResultsBuilder::AddRun(gloo1, 2, {{{"step_time_s", 0.52}, {"img_per_sec", 61}}});
  StoredCell& gloo2 = builder.Cell("gloo", 2);
  ResultsBuilder::AddRun(
      gloo2, 1, {{{"step_time_s", 0.60}, {"img_per_sec", 53}}, {{"step_time_s", 0.64}, {"img_per_sec", 50}}});
  ResultsBuilder::AddRun(
      gloo2, 2, {{{"step_time_s", 0.62}, {"img_per_sec", 52}}, {{"step_time_s", 0.66}, {"img_per_sec", 48}}});
  StoredCell& mpi1 = builder.Cell("mpi", 1);
  ResultsBuilder::AddRun(mpi1, 1, {}, /*ok=*/false);
  ResultsBuilder::AddRun(mpi1, 2, {{{"step_time_s", 0.40}, {"img_per_sec", 80}}});
  StoredCell& mpi2 = builder.Cell("mpi", 2);  // reports without the throughput figure
  ResultsBuilder::AddRun(mpi2, 1, {{{"step_time_s", 0.50}}, {{"step_time_s", 0.50}}});
  builder.Cell("gloo", 4);  // no run yet: no row
  return builder.results();
}

TEST(ResultsTable, SpreadOfValues) {
  Spread spread = SpreadOf({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(spread.n, 8);
  EXPECT_DOUBLE_EQ(spread.mean, 5);
  EXPECT_NEAR(spread.sd, std::sqrt(32.0 / 7), 1e-12);  // sample standard deviation
  EXPECT_DOUBLE_EQ(spread.min, 2);
  EXPECT_DOUBLE_EQ(spread.max, 9);
  EXPECT_DOUBLE_EQ(SpreadOf({3}).sd, 0);
  EXPECT_EQ(SpreadOf({}).n, 0);
}

TEST(ResultsTable, FiguresFromEveryRankAgainstHandComputedValues) {
  ExperimentResults results = Fixture();
  std::vector<SpeedupRow> rows = BuildSpeedupTable(results);
  ASSERT_EQ(rows.size(), 4u);
  const SpeedupRow& gloo1 = rows[0];
  const SpeedupRow& gloo2 = rows[1];
  const SpeedupRow& mpi1 = rows[2];
  const SpeedupRow& mpi2 = rows[3];
  EXPECT_EQ(gloo1.cell_id, "gloo-np1");
  EXPECT_EQ(gloo2.cell_id, "gloo-np2");
  EXPECT_EQ(mpi1.cell_id, "mpi-np1");
  EXPECT_EQ(mpi2.cell_id, "mpi-np2");
  EXPECT_EQ(gloo2.group, (std::vector<std::pair<std::string, std::string>>{{"model", "m"}}));

  // gloo, 1 worker: runs 0.50 and 0.52 s, 64 and 61 images/s.
  EXPECT_NEAR(gloo1.step_time_s.mean, 0.51, 1e-12);
  EXPECT_NEAR(gloo1.step_time_s.sd, std::sqrt(0.0002), 1e-12);
  EXPECT_NEAR(gloo1.total_throughput.mean, 62.5, 1e-12);
  EXPECT_NEAR(gloo1.speedup.value(), 1.0, 1e-12);

  // gloo, 2 workers: run means (0.60+0.64)/2 = 0.62 and (0.62+0.66)/2 = 0.64 s; per worker
  // (53+50)/2 = 51.5 and (52+48)/2 = 50; totals 103 and 100 — every rank's figure, not rank 0's × 2.
  EXPECT_NEAR(gloo2.step_time_s.mean, 0.63, 1e-12);
  EXPECT_NEAR(gloo2.step_time_s.sd, std::sqrt(0.0002), 1e-12);
  EXPECT_NEAR(gloo2.step_time_ranks_s.min, 0.60, 1e-12);
  EXPECT_NEAR(gloo2.step_time_ranks_s.max, 0.66, 1e-12);
  EXPECT_EQ(gloo2.step_time_ranks_s.n, 4);
  EXPECT_NEAR(gloo2.throughput_per_worker.mean, 50.75, 1e-12);
  EXPECT_NEAR(gloo2.throughput_per_worker.sd, std::sqrt(1.125), 1e-12);
  EXPECT_NEAR(gloo2.throughput_per_worker_ranks.min, 48, 1e-12);
  EXPECT_NEAR(gloo2.throughput_per_worker_ranks.max, 53, 1e-12);
  EXPECT_NEAR(gloo2.total_throughput.mean, 101.5, 1e-12);
  EXPECT_NEAR(gloo2.total_throughput.sd, std::sqrt(4.5), 1e-12);
  // Speedup 101.5 / 62.5 = 1.624, efficiency 1.624 / 2 = 0.812.
  EXPECT_NEAR(gloo2.speedup.value(), 1.624, 1e-12);
  EXPECT_NEAR(gloo2.efficiency.value(), 0.812, 1e-12);
  EXPECT_EQ(gloo2.speedup_basis, "throughput");
  EXPECT_EQ(gloo2.baseline_cell, "gloo-np1");
  EXPECT_EQ(gloo2.runs_ok, 2);

  // mpi, 1 worker: the failed run counts as failed, not as a figure.
  EXPECT_EQ(mpi1.runs_ok, 1);
  EXPECT_EQ(mpi1.runs_failed, 1);
  EXPECT_NEAR(mpi1.step_time_s.mean, 0.40, 1e-12);
  EXPECT_EQ(mpi1.step_time_s.sd, 0);

  // mpi, 2 workers, no throughput figure: speedup by step time, 2 × 0.40 / 0.50 = 1.6.
  EXPECT_FALSE(mpi2.has_throughput);
  EXPECT_NEAR(mpi2.speedup.value(), 1.6, 1e-12);
  EXPECT_NEAR(mpi2.efficiency.value(), 0.8, 1e-12);
  EXPECT_EQ(mpi2.speedup_basis, "step time");
}

TEST(ResultsTable, StepTimeScaleAndNoBaseline) {
  ResultsBuilder builder;
  builder.results().figures.step_time = "time_us";
  builder.results().figures.step_time_scale = 1e-6;
  ResultsBuilder::AddRun(builder.Cell("gloo", 2), 1, {{{"time_us", 3000}}, {{"time_us", 5000}}});
  std::vector<SpeedupRow> rows = BuildSpeedupTable(builder.results());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(rows[0].step_time_s.mean, 0.004, 1e-15);
  EXPECT_FALSE(rows[0].speedup);  // no 1-worker cell
}

// The path each rank's report names: one name when every rank says the same, each name once when
// ranks or runs differ; a failed run's reports and reports that say none do not count.
TEST(ResultsTable, AllreducePathsOfEveryRankAndRun) {
  ResultsBuilder builder;
  auto add_run = [](StoredCell& cell, int repeat, const std::vector<std::string>& paths, bool ok) {
    ResultsBuilder::AddRun(
        cell, repeat, std::vector<std::map<std::string, double>>(paths.size(), {{"step_time_s", 1}}), ok);
    for (size_t rank = 0; rank < paths.size(); ++rank) {
      cell.runs.back().ranks[rank].allreduce_path = paths[rank];
    }
  };
  StoredCell& same = builder.Cell("gloo", 2);
  add_run(same, 1, {"shm", "shm"}, true);
  add_run(same, 2, {"shm", "shm"}, true);
  StoredCell& mixed = builder.Cell("gloo", 4);
  add_run(mixed, 1, {"shm", "shm", "gloo", ""}, true);
  add_run(mixed, 2, {"shm+gloo", "shm+gloo", "shm+gloo", "shm+gloo"}, true);
  StoredCell& unsaid = builder.Cell("mpi", 2);
  add_run(unsaid, 1, {"mpi", "mpi"}, false);
  add_run(unsaid, 2, {"", ""}, true);
  std::vector<SpeedupRow> rows = BuildSpeedupTable(builder.results());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].allreduce_paths, std::vector<std::string>{"shm"});
  EXPECT_EQ(DescribeAllreducePaths(rows[0]), "shm");
  EXPECT_EQ(rows[1].allreduce_paths, (std::vector<std::string>{"shm", "gloo", "shm+gloo"}));
  EXPECT_EQ(DescribeAllreducePaths(rows[1]), "shm, gloo, shm+gloo");
  EXPECT_TRUE(rows[2].allreduce_paths.empty());
  EXPECT_EQ(DescribeAllreducePaths(rows[2]), "");
}

TEST(ResultsTable, SizesFromBenchReports) {
  ResultsBuilder builder;
  StoredCell& cell = builder.Cell("gloo", 2);
  ResultsBuilder::AddRun(cell, 1, {{{"step_time_s", 1}}, {{"step_time_s", 1}}});
  auto size = [](double bytes, double time_us, std::optional<double> busbw) {
    AllreduceSize entry;
    entry.bytes = bytes;
    entry.time_us = time_us;
    entry.busbw_gbps = busbw;
    return entry;
  };
  cell.runs[0].ranks[0].sizes = {size(1024, 10, 0.2), size(4096, 30, std::nullopt)};
  cell.runs[0].ranks[1].sizes = {size(1024, 14, 0.1)};
  std::vector<SizeRow> rows = BuildSizeTable(builder.results());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].bytes, 1024);
  EXPECT_DOUBLE_EQ(rows[0].time_us.mean, 12);
  EXPECT_DOUBLE_EQ(rows[0].busbw_gbps.mean, 0.15);
  EXPECT_EQ(rows[1].bytes, 4096);
  EXPECT_EQ(rows[1].busbw_gbps.n, 0);
  EXPECT_TRUE(BuildSizeTable(Fixture()).empty());
}

TEST(ResultsTable, ComparisonOfAnAxis) {
  ResultsBuilder builder;
  builder.results().axes.push_back({"fusion_threshold", {"0", "67108864"}});
  ResultsBuilder::AddRun(
      builder.Cell("gloo", 2, {{"fusion_threshold", "0"}}), 1,
      {{{"step_time_s", 0.8}, {"img_per_sec", 40}}, {{"step_time_s", 0.8}, {"img_per_sec", 40}}});
  ResultsBuilder::AddRun(
      builder.Cell("gloo", 2, {{"fusion_threshold", "67108864"}}), 1,
      {{{"step_time_s", 0.5}, {"img_per_sec", 64}}, {{"step_time_s", 0.5}, {"img_per_sec", 64}}});
  std::vector<SpeedupRow> rows = BuildSpeedupTable(builder.results());
  std::vector<ComparisonRow> comparison = BuildComparison(builder.results(), rows, "fusion_threshold");
  ASSERT_EQ(comparison.size(), 2u);
  EXPECT_EQ(comparison[0].group, "backend=gloo np=2 servers=1 model=m");
  EXPECT_EQ(comparison[0].value, "0");
  EXPECT_DOUBLE_EQ(comparison[1].relative_throughput.value(), 1.6);
  EXPECT_DOUBLE_EQ(comparison[1].relative_step_time.value(), 0.625);
  EXPECT_TRUE(BuildComparison(builder.results(), rows, "compression").empty());
}

}  // namespace
}  // namespace hvdrun::lab
