#include "lab/report/step_breakdown.h"

#include <gtest/gtest.h>

#include <cmath>

#include "lab/report/breakdown_section.h"

namespace hvdrun::lab {
namespace {

struct RankFigures {
  double compute, wait, overlapped, bytes;
};

// A cell of `backend` on np processes with one ok run per entry of `runs` (each a list of ranks).
StoredCell Cell(const std::string& backend, int np, int threads,
                const std::vector<std::vector<RankFigures>>& runs) {
  StoredCell stored;
  stored.cell.id = backend + "-" + std::to_string(np);
  stored.cell.backend = backend;
  stored.cell.num_proc = np;
  stored.cell.procs_per_server = np;
  stored.cell.values = {{"backend", backend}, {"np", std::to_string(np)}, {"servers", "1"}};
  int repeat = 0;
  for (const std::vector<RankFigures>& ranks : runs) {
    StoredRun run;
    run.repeat = ++repeat;
    run.record.ok = true;
    for (size_t rank = 0; rank < ranks.size(); ++rank) {
      RankReport report;
      report.rank = static_cast<int>(rank);
      report.threads = threads;
      const RankFigures& f = ranks[rank];
      report.figures = {{"step_time_s", f.compute + f.wait},
                        {kComputeTimeFigure, f.compute},
                        {kCommWaitFigure, f.wait},
                        {kCommOverlappedFigure, f.overlapped},
                        {kBytesPerStepFigure, f.bytes}};
      run.ranks.push_back(report);
    }
    stored.runs.push_back(run);
  }
  return stored;
}

ExperimentResults Results(std::vector<StoredCell> cells) {
  ExperimentResults results;
  results.axes = {{"backend", {"gloo", "mpi"}}, {"np", {"1", "2", "4"}}, {"servers", {"1"}}};
  results.cells = std::move(cells);
  return results;
}

std::vector<BreakdownRow> Breakdown(const ExperimentResults& results) {
  return BuildStepBreakdown(results, BuildSpeedupTable(results));
}

TEST(StepBreakdown, MeansOverRanksThenRunsAndBusBandwidth) {
  // gloo 4, two runs. Run 1: compute (0.5+0.7)/2... per rank below; bytes 2e8 each.
  ExperimentResults results = Results({
      Cell("gloo", 1, 2, {{{1.0, 0, 0, 0}}}),
      Cell("gloo", 4, 1,
           {{{1.2, 0.3, 0.1, 2e8}, {1.4, 0.1, 0.1, 2e8}, {1.2, 0.3, 0.1, 2e8}, {1.4, 0.1, 0.1, 2e8}},
            {{1.3, 0.2, 0.3, 2e8}, {1.3, 0.2, 0.3, 2e8}, {1.3, 0.2, 0.3, 2e8}, {1.3, 0.2, 0.3, 2e8}}}),
  });
  std::vector<BreakdownRow> rows = Breakdown(results);
  ASSERT_EQ(rows.size(), 2u);
  const BreakdownRow& four = rows[1];
  // Run 1: compute 1.3, wait 0.2, in flight 0.1: communication 0.3 s for 2e8 bytes, algbw 0.6667 GB/s.
  // Run 2: compute 1.3, wait 0.2, in flight 0.3: 0.5 s, algbw 0.4 GB/s. busbw = algbw × 2·3/4.
  EXPECT_NEAR(four.compute_s.mean, 1.3, 1e-12);
  EXPECT_NEAR(four.comm_wait_s.mean, 0.2, 1e-12);
  EXPECT_NEAR(four.comm_overlapped_s.mean, 0.2, 1e-12);
  EXPECT_NEAR(four.comm_overlapped_s.sd, std::sqrt(0.02), 1e-12);
  EXPECT_NEAR(four.bytes_per_step.mean, 2e8, 1e-3);
  ASSERT_TRUE(four.algbw_gbps.has_value());
  EXPECT_NEAR(four.algbw_gbps->mean, (2.0 / 3 + 0.4) / 2, 1e-12);
  EXPECT_NEAR(four.busbw_gbps->mean, (2.0 / 3 + 0.4) / 2 * 1.5, 1e-12);
  EXPECT_EQ(four.row.threads, 1);
  // One process: nothing communicated, no bandwidth.
  EXPECT_FALSE(rows[0].busbw_gbps.has_value());
  EXPECT_EQ(rows[0].row.threads, 2);

  // 4 processes lose 1 − 1.0/1.5 of the step rate: 0.2 s waiting, 0.3 s slower compute.
  EXPECT_EQ(
      ExplainLargestLoss(rows),
      "Largest loss of efficiency: Gloo on 4 processes (1 server, 1 thread each), 67% of one process's "
      "step rate (1.5 s a step against 1 s). 0.2 s of each 1.5 s step waits on Gloo after backward (13%), "
      "and communication was in flight during 0.2 s of backward; the compute itself takes 1.3 s, 30% "
      "slower than on one process, which computes with 2 threads against 1 thread here. The larger part "
      "of the 0.5 s lost a step is slower compute (0.3 s). Gloo moved 200 MB a step at 0.8 GB/s bus "
      "bandwidth.");
}

TEST(StepBreakdown, NamesTheBackendThatLosesMost) {
  ExperimentResults results = Results({
      Cell("gloo", 1, 1, {{{1.0, 0, 0, 0}}}),
      Cell("gloo", 2, 1, {{{1.0, 0.1, 0.2, 1e8}, {1.0, 0.1, 0.2, 1e8}}}),
      Cell("mpi", 1, 1, {{{1.0, 0, 0, 0}}}),
      Cell("mpi", 2, 1, {{{1.05, 0.5, 0.2, 1e8}, {1.05, 0.5, 0.2, 1e8}}}),
  });
  const std::string text = ExplainLargestLoss(Breakdown(results));
  EXPECT_EQ(text.rfind("Largest loss of efficiency: MPI on 2 processes (1 server, 1 thread each), 65% ", 0),
            0u)
      << text;
  EXPECT_NE(text.find("The larger part of the 0.55 s lost a step is the wait on communication (0.5 s)."),
            std::string::npos)
      << text;
}

TEST(StepBreakdown, SaysWhyThereIsNothingToCompare) {
  EXPECT_EQ(ExplainLargestLoss(Breakdown(Results({Cell("gloo", 1, 1, {{{1.0, 0, 0, 0}}})}))),
            "Every cell here runs one process: nothing is communicated, and a step is compute alone.");
  EXPECT_EQ(
      ExplainLargestLoss(Breakdown(Results({Cell("mpi", 2, 1, {{{0.8, 0.2, 0, 1e8}, {0.8, 0.2, 0, 1e8}}})}))),
      "No one-process cell of the same backend to compare with. The longest wait on communication: MPI "
      "on 2 processes (1 server, 1 thread each), 0.2 s of each 1 s step (20%).");
}

TEST(StepBreakdown, CellsWithoutTheFiguresAreLeftOut) {
  ExperimentResults results = Results({Cell("gloo", 1, 1, {{{1.0, 0, 0, 0}}})});
  results.cells[0].runs[0].ranks[0].figures.erase(kCommWaitFigure);
  EXPECT_TRUE(Breakdown(results).empty());
  EXPECT_TRUE(BuildBreakdownTables({}).empty());
}

TEST(StepBreakdown, ChartStacksComputeInFlightAndWait) {
  ExperimentResults results = Results({
      Cell("gloo", 1, 1, {{{1.0, 0, 0, 0}}}),
      Cell("gloo", 2, 1, {{{1.0, 0.1, 0.25, 1e8}, {1.0, 0.1, 0.25, 1e8}}}),
  });
  std::vector<BreakdownTable> tables = BuildBreakdownTables(Breakdown(results));
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].chart_file, "breakdown.svg");
  ASSERT_EQ(tables[0].chart.bars.size(), 2u);
  EXPECT_EQ(tables[0].chart.bars[1].label, "gloo 1×2");
  EXPECT_NEAR(tables[0].chart.bars[1].values[0], 0.75, 1e-12);
  EXPECT_NEAR(tables[0].chart.bars[1].values[1], 0.25, 1e-12);
  EXPECT_NEAR(tables[0].chart.bars[1].values[2], 0.1, 1e-12);
  const std::string svg = RenderSvg(tables[0].chart);
  EXPECT_NE(svg.find("gloo 1×2: waiting on communication 0.1"), std::string::npos) << svg;
}

}  // namespace
}  // namespace hvdrun::lab
