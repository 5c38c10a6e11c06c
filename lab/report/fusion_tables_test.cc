#include "lab/report/fusion_tables.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lab/report/report_writer.h"

namespace hvdrun::lab {
namespace {

// A stored cell with `values`, whose runs are added by AddRun.
StoredCell Cell(const std::string& id, const std::string& backend,
                const std::vector<std::pair<std::string, std::string>>& extra) {
  StoredCell stored;
  stored.cell.id = id;
  stored.cell.backend = backend;
  stored.cell.num_proc = 2;
  stored.cell.procs_per_server = 2;
  stored.cell.values = {{"backend", backend}, {"np", "2"}, {"servers", "1"}};
  stored.cell.values.insert(stored.cell.values.end(), extra.begin(), extra.end());
  return stored;
}

RankReport Rank(int rank, std::map<std::string, double> figures, std::vector<ResponseBin> bins) {
  RankReport report;
  report.rank = rank;
  report.figures = std::move(figures);
  report.responses = std::move(bins);
  return report;
}

void AddRun(StoredCell& cell, int repeat, std::vector<RankReport> ranks, bool ok = true) {
  StoredRun run;
  run.repeat = repeat;
  run.record.ok = ok;
  run.ranks = std::move(ranks);
  cell.runs.push_back(std::move(run));
}

constexpr double kKB = 1e3;
constexpr double kMB = 1e6;

// A cell of two ok runs of two ranks, and a failed run that must not count.
//   run 1, rank 0: (0,1KB]: 100 responses, 20 000 B, 0.05 s; (1MB,10MB]: 10 responses, 40 MB, 0.8 s
//   run 1, rank 1: (0,1KB]: 100 responses, 20 000 B, 0.15 s; (1MB,10MB]: 10 responses, 40 MB, 1.2 s
//   run 2, rank 0: (0,1KB]: 100 responses, 20 000 B, 0.10 s; (1MB,10MB]: 10 responses, 40 MB, 1.0 s;
//                  (20MB,30MB]: 2 responses, 50 MB, 0.5 s
//   run 2, rank 1: the same as its rank 0
// Mean over ranks, then over runs:
//   (0,1KB]:     count 100, bytes 20 000, seconds ((0.05+0.15)/2 + 0.10)/2 = 0.1
//   (1MB,10MB]:  count 10, bytes 40 MB, seconds ((0.8+1.2)/2 + 1.0)/2 = 1.0
//   (20MB,30MB]: count (0 + 2)/2 = 1, bytes (0 + 50 MB)/2 = 25 MB, seconds (0 + 0.5)/2 = 0.25
// Total seconds 1.35. Columns:
//   (0,1KB]:     mean size 20 000/100 = 200 B = 0.0002 MB; rate 20 000×8/0.1 = 1.6 Mbps;
//                mean time 0.1/100 = 1 ms; share 0.1/1.35
//   (1MB,10MB]:  mean size 4 MB; rate 40e6×8/1.0 = 320 Mbps; mean time 100 ms; share 1/1.35
//   (20MB,30MB]: mean size 25 MB; rate 25e6×8/0.25 = 800 Mbps; mean time 250 ms; share 0.25/1.35
ExperimentResults ResponseFixture() {
  ExperimentResults results;
  results.repeats = 2;
  results.axes = {{"backend", {"gloo"}}, {"np", {"2"}}, {"servers", {"1"}}, {"fusion", {"on"}}};
  StoredCell cell = Cell("gloo-on", "gloo", {{"fusion", "on"}});
  const ResponseBin small{0, kKB, 100, 100, 20000, 0.05};
  const ResponseBin mid{kMB, 10 * kMB, 10, 40, 40 * kMB, 0.8};
  AddRun(cell, 1,
         {Rank(0, {{"step_time_s", 1}}, {small, mid}),
          Rank(1, {{"step_time_s", 1}},
               {{0, kKB, 100, 100, 20000, 0.15}, {kMB, 10 * kMB, 10, 40, 40 * kMB, 1.2}})});
  const std::vector<ResponseBin> run2 = {{0, kKB, 100, 100, 20000, 0.10},
                                         {kMB, 10 * kMB, 10, 40, 40 * kMB, 1.0},
                                         {20 * kMB, 30 * kMB, 2, 2, 50 * kMB, 0.5}};
  AddRun(cell, 2, {Rank(0, {{"step_time_s", 1}}, run2), Rank(1, {{"step_time_s", 1}}, run2)});
  AddRun(cell, 3, {Rank(0, {{"step_time_s", 9}}, {{0, kKB, 999, 999, 99999, 9}})}, /*ok=*/false);
  results.cells.push_back(cell);
  // A cell whose ranks report no response statistics (a call-order runtime) gets no table.
  StoredCell plain = Cell("gloo-off", "gloo", {{"fusion", "off"}});
  AddRun(plain, 1, {Rank(0, {{"step_time_s", 1}}, {})});
  results.cells.push_back(plain);
  return results;
}

TEST(ResponseSizeTable, FiguresMatchTheHandComputedValuesOfTheFixture) {
  std::vector<ResponseSizeTable> tables = BuildResponseSizeTables(ResponseFixture());
  ASSERT_EQ(tables.size(), 1U);
  const ResponseSizeTable& table = tables[0];
  EXPECT_EQ(table.cell_id, "gloo-on");
  EXPECT_EQ(table.cell, "backend=gloo np=2 servers=1 fusion=on");
  EXPECT_EQ(table.runs, 2);
  ASSERT_EQ(table.rows.size(), 3U);

  struct ExpectedRow {
    std::string bin;
    double count, mean_size_mb, rate_mbps, total_time_s, mean_time_ms, share_of_time;
  };
  const std::vector<ExpectedRow> expected = {{"(0, 1 KB]", 100, 0.0002, 1.6, 0.1, 1, 0.1 / 1.35},
                                             {"(1 MB, 10 MB]", 10, 4, 320, 1.0, 100, 1.0 / 1.35},
                                             {"(20 MB, 30 MB]", 1, 25, 800, 0.25, 250, 0.25 / 1.35}};
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].bin);
    const ResponseSizeRow& row = table.rows[i];
    EXPECT_EQ(row.bin, expected[i].bin);
    EXPECT_DOUBLE_EQ(row.count, expected[i].count);
    EXPECT_DOUBLE_EQ(row.mean_size_mb, expected[i].mean_size_mb);
    EXPECT_DOUBLE_EQ(row.rate_mbps, expected[i].rate_mbps);
    EXPECT_DOUBLE_EQ(row.total_time_s, expected[i].total_time_s);
    EXPECT_DOUBLE_EQ(row.mean_time_ms, expected[i].mean_time_ms);
    EXPECT_DOUBLE_EQ(row.share_of_time, expected[i].share_of_time);
  }

  double shares = 0;
  for (const ResponseSizeRow& row : table.rows) shares += row.share_of_time;
  EXPECT_DOUBLE_EQ(shares, 1);
}

TEST(ResponseSizeTable, BinLabelsAreDecimal) {
  EXPECT_EQ(ResponseBinLabel(0, 1000), "(0, 1 KB]");
  EXPECT_EQ(ResponseBinLabel(1000, 1e6), "(1 KB, 1 MB]");
  EXPECT_EQ(ResponseBinLabel(1e8, 1.1e8), "(100 MB, 110 MB]");
  EXPECT_EQ(ResponseBinLabel(1e9, 1.01e9), "(1 GB, 1.01 GB]");
}

// The lab's own table: ResNet-50 141.0 s with fusion off against 119.8 s with it on, 1.18×.
//   off: runs of 141.5 and 140.5 s (each the mean of its two ranks: 141 and 142; 140 and 141),
//        step time 0.70 s
//   on:  runs of 119.8 s (ranks 119.6 and 120.0), step time 0.56 s
//   horovod-0.20: 125.0 s, step time 0.60 s
// Ratios to off: training 141.0/119.8 and 141.0/125.0; step 0.70/0.56 = 1.25 and 0.70/0.60.
TEST(FusionTable, TrainingAndStepTimeAgainstTheFirstSetting) {
  ExperimentResults results;
  results.repeats = 2;
  results.axes = {{"backend", {"gloo"}},
                  {"np", {"2"}},
                  {"servers", {"1"}},
                  {"model", {"resnet50"}},
                  {"fusion", {"off", "on", "horovod-0.20"}}};
  auto cell = [](const std::string& fusion) {
    return Cell("gloo-" + fusion, "gloo", {{"model", "resnet50"}, {"fusion", fusion}});
  };
  // Listed out of the axis's order: the table follows the axis.
  StoredCell on = cell("on");
  AddRun(on, 1,
         {Rank(0, {{"step_time_s", 0.56}, {"wall_s", 119.6}}, {}),
          Rank(1, {{"step_time_s", 0.56}, {"wall_s", 120.0}}, {})});
  StoredCell off = cell("off");
  AddRun(off, 1,
         {Rank(0, {{"step_time_s", 0.70}, {"wall_s", 141}}, {}),
          Rank(1, {{"step_time_s", 0.70}, {"wall_s", 142}}, {})});
  AddRun(off, 2,
         {Rank(0, {{"step_time_s", 0.70}, {"wall_s", 140}}, {}),
          Rank(1, {{"step_time_s", 0.70}, {"wall_s", 141}}, {})});
  StoredCell horovod = cell("horovod-0.20");
  AddRun(horovod, 1,
         {Rank(0, {{"step_time_s", 0.60}, {"wall_s", 125}}, {}),
          Rank(1, {{"step_time_s", 0.60}, {"wall_s", 125}}, {})});
  results.cells = {on, off, horovod};

  std::vector<FusionRow> rows = BuildFusionTable(results, BuildSpeedupTable(results));
  ASSERT_EQ(rows.size(), 3U);
  EXPECT_EQ(rows[0].value, "off");
  EXPECT_EQ(rows[1].value, "on");
  EXPECT_EQ(rows[2].value, "horovod-0.20");
  EXPECT_EQ(rows[0].group, "backend=gloo np=2 servers=1 model=resnet50");
  EXPECT_DOUBLE_EQ(rows[0].row.training_time_s.mean, 141.0);
  EXPECT_DOUBLE_EQ(rows[1].row.training_time_s.mean, 119.8);
  EXPECT_DOUBLE_EQ(rows[0].training_ratio.value(), 1.0);
  EXPECT_DOUBLE_EQ(rows[1].training_ratio.value(), 141.0 / 119.8);
  EXPECT_NEAR(rows[1].training_ratio.value(), 1.18, 0.005);
  EXPECT_DOUBLE_EQ(rows[2].training_ratio.value(), 141.0 / 125.0);
  EXPECT_DOUBLE_EQ(rows[1].step_time_ratio.value(), 0.70 / 0.56);
  EXPECT_DOUBLE_EQ(rows[2].step_time_ratio.value(), 0.70 / 0.60);

  // The report shows both sections, the ratio as the lab writes it.
  ReportTables tables;
  tables.speedup = BuildSpeedupTable(results);
  tables.fusion = rows;
  const std::string markdown = RenderMarkdown(results, tables);
  EXPECT_NE(markdown.find("## Tensor fusion on and off"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| on | 128 MiB, 1 ms | 120 | 0.56 | 1.18× | 1.25× |"), std::string::npos)
      << markdown;
  EXPECT_EQ(rows[0].setting, "0 MiB, 1 ms");
  EXPECT_EQ(rows[2].setting, "64 MiB, 5 ms");
}

// An autotune cell beside a fixed one: its setting is what the tuner kept in each ok run (from the
// run's autotune.csv), distinct outcomes joined; a failed run's does not count.
TEST(FusionTable, AnAutotuneRowNamesWhatTheTunerKeptInEachRun) {
  ExperimentResults results;
  results.repeats = 3;
  results.axes = {{"backend", {"gloo"}}, {"np", {"2"}}, {"servers", {"1"}}, {"fusion", {"on", "autotune"}}};
  StoredCell on = Cell("gloo-on", "gloo", {{"fusion", "on"}});
  AddRun(on, 1, {Rank(0, {{"step_time_s", 0.5}}, {}), Rank(1, {{"step_time_s", 0.5}}, {})});
  StoredCell tuned = Cell("gloo-autotune", "gloo", {{"fusion", "autotune"}});
  AutotuneOutcome kept;
  kept.samples = 20;
  kept.kept = true;
  kept.fusion_threshold_mib = 16;
  kept.cycle_time_ms = 2.5;
  AutotuneOutcome searching;
  searching.samples = 4;
  searching.fusion_threshold_mib = 32;
  searching.cycle_time_ms = 50;
  const AutotuneOutcome outcomes[] = {kept, kept, searching};
  for (int repeat = 1; repeat <= 3; ++repeat) {
    AddRun(tuned, repeat, {Rank(0, {{"step_time_s", 0.4}}, {}), Rank(1, {{"step_time_s", 0.4}}, {})},
           repeat < 3);
    tuned.runs.back().autotune = outcomes[repeat - 1];
  }
  results.cells = {on, tuned};
  std::vector<FusionRow> rows = BuildFusionTable(results, BuildSpeedupTable(results));
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[1].value, "autotune");
  EXPECT_EQ(rows[1].setting, "16 MiB, 2.5 ms (kept after 20 samples)");
  EXPECT_DOUBLE_EQ(rows[1].step_time_ratio.value(), 0.5 / 0.4);

  tuned.runs.back().record.ok = true;
  results.cells = {on, tuned};
  rows = BuildFusionTable(results, BuildSpeedupTable(results));
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[1].setting,
            "16 MiB, 2.5 ms (kept after 20 samples); still searching when the run ended (4 samples scored; "
            "last 32 MiB, 50 ms)");
  tuned.runs.clear();
  AddRun(tuned, 1, {Rank(0, {{"step_time_s", 0.4}}, {}), Rank(1, {{"step_time_s", 0.4}}, {})});
  results.cells = {on, tuned};
  rows = BuildFusionTable(results, BuildSpeedupTable(results));
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[1].setting, "—") << "no log: nothing to name";
}

TEST(FusionTable, NoTableWithoutAFusionAxisOfTwoValues) {
  ExperimentResults results = ResponseFixture();
  results.axes.back().values = {"on"};
  EXPECT_TRUE(BuildFusionTable(results, BuildSpeedupTable(results)).empty());
}

}  // namespace
}  // namespace hvdrun::lab
