#include "lab/report/compression_table.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lab/report/report_writer.h"

namespace hvdrun::lab {
namespace {

// A cell of `np` processes with `compression`, one ok run whose ranks report `wall_s` and
// `accuracy`.
StoredCell Cell(int np, const std::string& compression, double wall_s, double accuracy) {
  StoredCell stored;
  stored.cell.id = "gloo-" + std::to_string(np) + "-" + compression;
  stored.cell.backend = "gloo";
  stored.cell.num_proc = np;
  stored.cell.procs_per_server = np;
  stored.cell.values = {{"backend", "gloo"},
                        {"np", std::to_string(np)},
                        {"servers", "1"},
                        {"model", "fmnist-cnn"},
                        {"compression", compression}};
  StoredRun run;
  run.repeat = 1;
  run.record.ok = true;
  for (int rank = 0; rank < np; ++rank) {
    RankReport report;
    report.rank = rank;
    report.figures = {{"step_time_s", wall_s / 1000}, {"wall_s", wall_s}, {"test_accuracy", accuracy}};
    run.ranks.push_back(report);
  }
  stored.runs.push_back(std::move(run));
  return stored;
}

// The lab's table: one process, then each setting in the axis's order on 2 and 4 processes; the
// accuracy against the uncompressed cell of as many processes, the speedup against one process.
TEST(CompressionTable, OneProcessFirstThenEachSettingByProcesses) {
  ExperimentResults results;
  results.repeats = 1;
  results.axes = {{"backend", {"gloo"}},
                  {"np", {"1", "2", "4"}},
                  {"servers", {"1"}},
                  {"model", {"fmnist-cnn"}},
                  {"compression", {"none", "fp16", "fp8-naive"}}};
  // Stored out of order: the table orders them.
  results.cells = {Cell(4, "fp8-naive", 150, 0.10), Cell(2, "fp16", 200, 0.895), Cell(4, "none", 125, 0.90),
                   Cell(2, "none", 210, 0.90),      Cell(1, "none", 400, 0.91),  Cell(4, "fp16", 120, 0.88)};
  std::vector<CompressionRow> rows = BuildCompressionTable(results, BuildSpeedupTable(results));
  ASSERT_EQ(rows.size(), 6U);
  const std::vector<std::pair<std::string, int>> order = {{"one process", 1},  {"uncompressed", 2},
                                                          {"uncompressed", 4}, {"fp16", 2},
                                                          {"fp16", 4},         {"naive fp8", 4}};
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(rows[i].setting, order[i].first) << i;
    EXPECT_EQ(rows[i].row.workers, order[i].second) << i;
    EXPECT_EQ(rows[i].group, "backend=gloo servers=1 model=fmnist-cnn") << i;
  }
  EXPECT_DOUBLE_EQ(rows[0].training_speedup.value(), 1.0);
  EXPECT_DOUBLE_EQ(rows[2].training_speedup.value(), 400.0 / 125);
  EXPECT_DOUBLE_EQ(rows[3].training_speedup.value(), 2.0);
  EXPECT_NEAR(rows[3].accuracy_change_points.value(), -0.5, 1e-9);
  EXPECT_NEAR(rows[4].accuracy_change_points.value(), -2.0, 1e-9);
  EXPECT_NEAR(rows[5].accuracy_change_points.value(), -80.0, 1e-9);
  EXPECT_NEAR(rows[0].accuracy_change_points.value(), 0.0, 1e-9);

  ReportTables tables;
  tables.speedup = BuildSpeedupTable(results);
  tables.compression = rows;
  const std::string markdown = RenderMarkdown(results, tables);
  EXPECT_NE(markdown.find("## Gradient compression"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| naive fp8 | 4 | 150 | 0.1 | -80 | 2.67× | 1 |"), std::string::npos) << markdown;
  EXPECT_EQ(RenderCsvFiles(results, tables).count("compression.csv"), 1U);
}

TEST(CompressionTable, NoTableWithoutACompressionAxisOfTwoValues) {
  ExperimentResults results;
  results.axes = {{"backend", {"gloo"}}, {"np", {"2"}}, {"servers", {"1"}}, {"compression", {"fp8"}}};
  results.cells = {Cell(2, "fp8", 100, 0.9)};
  EXPECT_TRUE(BuildCompressionTable(results, BuildSpeedupTable(results)).empty());
}

}  // namespace
}  // namespace hvdrun::lab
