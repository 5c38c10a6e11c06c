#include "lab/store/experiment_results.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/e2e/scratch_dir.h"

namespace hvdrun::lab {
namespace {

namespace fs = std::filesystem;

// A results directory with one cell of `reports.size()` ranks and one ok run, rank N's report being
// reports[N], as hvdrun wrote it (hvdrun/ranks/rank-N.json).
class OneRunResults {
 public:
  explicit OneRunResults(const std::vector<nlohmann::json>& reports) {
    using nlohmann::json;
    const json values =
        json::array({json::array({"backend", "gloo"}), json::array({"np", std::to_string(reports.size())}),
                     json::array({"servers", "1"})});
    const json cell = {{"id", "cell"}, {"backend", "gloo"}, {"np", reports.size()}, {"values", values}};
    const json experiment = {{"name", "paths"}, {"repeats", 1}, {"cells", json::array({cell})}};
    std::ofstream(dir() + "/experiment.json") << experiment.dump();
    RunStore store(dir());
    StatusOr<std::string> partial = store.BeginRun("cell", 1);
    EXPECT_TRUE(partial.ok()) << partial.status().message();
    fs::create_directories(partial.value() + "/hvdrun/ranks");
    for (size_t rank = 0; rank < reports.size(); ++rank) {
      std::ofstream(partial.value() + "/hvdrun/ranks/rank-" + std::to_string(rank) + ".json")
          << reports[rank].dump();
    }
    RunRecord record;
    record.ok = true;
    EXPECT_TRUE(store.CommitRun("cell", 1, record).ok());
  }

  std::string dir() const { return scratch_.path(); }

  // The ranks of the run, as LoadExperimentResults reads them.
  std::vector<RankReport> Ranks() const {
    StatusOr<ExperimentResults> results = LoadExperimentResults(dir());
    EXPECT_TRUE(results.ok()) << results.status().message();
    if (!results.ok() || results->cells.size() != 1 || results->cells[0].runs.size() != 1) return {};
    EXPECT_TRUE(results->problems.empty()) << results->problems.front();
    return results->cells[0].runs[0].ranks;
  }

 private:
  e2e::ScratchDir scratch_;
};

// hvdrun-bench names the path of the Runtime it measured at the top of its report; libhvdrun names
// the sending Runtime's under "libhvdrun" when it negotiates or compresses. Reports written before
// either (or by a call-order Runtime) say nothing and still load.
TEST(ExperimentResults, ReadsTheAllreducePathOfEachRank) {
  const nlohmann::json summary = {{"step_time_s", 0.5}};
  OneRunResults results({
      {{"summary", summary}, {"allreduce_path", "shm"}, {"libhvdrun", {{"allreduce_path", "gloo"}}}},
      {{"summary", summary},
       {"libhvdrun", {{"allreduce_path", "shm+gloo"}, {"negotiation", {{"cycles", 3}}}}}},
      {{"summary", summary}},
      {{"summary", summary}, {"allreduce_path", 7}, {"libhvdrun", "not an object"}},
  });
  std::vector<RankReport> ranks = results.Ranks();
  ASSERT_EQ(ranks.size(), 4u);
  EXPECT_EQ(ranks[0].allreduce_path, "shm");
  EXPECT_EQ(ranks[1].allreduce_path, "shm+gloo");
  EXPECT_EQ(ranks[2].allreduce_path, "");
  EXPECT_EQ(ranks[3].allreduce_path, "");
  for (const RankReport& rank : ranks) EXPECT_EQ(rank.figures.at("step_time_s"), 0.5) << rank.rank;
}

}  // namespace
}  // namespace hvdrun::lab
