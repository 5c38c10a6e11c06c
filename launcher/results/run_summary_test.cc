#include "launcher/results/run_summary.h"

#include <gtest/gtest.h>

namespace hvdrun {
namespace {

TEST(RunSummary, AggregatesEachFigureOverTheRanksThatReportIt) {
  RunSummary summary = SummarizeReports({
      {0, R"({"summary": {"busbw_gbps": 1.0, "time_us": 100}})"},
      {1, R"({"summary": {"busbw_gbps": 3.0, "time_us": 300, "extra": 5}})"},
      {2, R"({"results": []})"},
  });
  EXPECT_EQ(summary.ranks_reporting, 3);
  ASSERT_EQ(summary.figures.size(), 3u);
  EXPECT_EQ(summary.figures[0].name, "busbw_gbps");
  EXPECT_EQ(summary.figures[0].ranks, 2);
  EXPECT_DOUBLE_EQ(summary.figures[0].mean, 2.0);
  EXPECT_DOUBLE_EQ(summary.figures[0].min, 1.0);
  EXPECT_DOUBLE_EQ(summary.figures[0].max, 3.0);
  EXPECT_EQ(summary.figures[2].name, "extra");
  EXPECT_EQ(summary.figures[2].ranks, 1);
  EXPECT_TRUE(summary.problems.empty());
}

TEST(RunSummary, BadReportsAreNamedNotFatal) {
  RunSummary summary =
      SummarizeReports({{0, "not json"}, {1, R"({"summary": 3})"}, {2, R"({"summary": {"x": 1}})"}});
  EXPECT_EQ(summary.problems, (std::vector<std::string>{"rank 0: report is not a JSON object",
                                                        "rank 1: \"summary\" is not an object of figures"}));
  ASSERT_EQ(summary.figures.size(), 1u);
  EXPECT_DOUBLE_EQ(summary.figures[0].mean, 1.0);
}

TEST(RunSummary, TableAndJson) {
  RunSummary summary = SummarizeReports(
      {{0, R"({"summary": {"img_per_sec": 10}})"}, {1, R"({"summary": {"img_per_sec": 14}})"}});
  EXPECT_EQ(FormatRunSummary(summary),
            "hvdrun: 2 ranks reported\n"
            "  FIGURE                        RANKS           MEAN            MIN            MAX\n"
            "  img_per_sec                       2             12             10             14\n");
  nlohmann::json json = RunSummaryToJson(summary);
  EXPECT_EQ(json["figures"]["img_per_sec"]["by_rank"]["1"], 14.0);
  EXPECT_EQ(json["ranks_reporting"], 2);
  EXPECT_EQ(FormatRunSummary(SummarizeReports({})), "");
}

}  // namespace
}  // namespace hvdrun
