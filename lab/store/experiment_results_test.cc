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
  explicit OneRunResults(const std::vector<nlohmann::json>& reports) : OneRunResults(Texts(reports)) {}

  // The reports as files hold them (any bytes).
  explicit OneRunResults(const std::vector<std::string>& reports) {
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
          << reports[rank];
    }
    RunRecord record;
    record.ok = true;
    EXPECT_TRUE(store.CommitRun("cell", 1, record).ok());
  }

  std::string dir() const { return scratch_.path(); }

  // The ranks of the run, as LoadExperimentResults reads them; `problems` gets what it could not read.
  std::vector<RankReport> Ranks(std::vector<std::string>* problems = nullptr) const {
    StatusOr<ExperimentResults> results = LoadExperimentResults(dir());
    EXPECT_TRUE(results.ok()) << results.status().message();
    if (!results.ok() || results->cells.size() != 1 || results->cells[0].runs.size() != 1) return {};
    if (problems != nullptr) {
      *problems = results->problems;
    } else {
      EXPECT_TRUE(results->problems.empty()) << results->problems.front();
    }
    return results->cells[0].runs[0].ranks;
  }

  // The run as LoadExperimentResults reads it; `problems` gets what it could not read.
  StoredRun Run(std::vector<std::string>& problems) const {
    StatusOr<ExperimentResults> results = LoadExperimentResults(dir());
    EXPECT_TRUE(results.ok()) << results.status().message();
    if (!results.ok() || results->cells.size() != 1 || results->cells[0].runs.size() != 1) return {};
    problems = results->problems;
    return results->cells[0].runs[0];
  }

  // hvdrun/summary.json of the run.
  std::string SummaryFile() const { return dir() + "/cells/cell/repeat-1/hvdrun/summary.json"; }

  // hvdrun/ranks/rank-N.json of the run.
  std::string RankFile(int rank) const {
    return dir() + "/cells/cell/repeat-1/hvdrun/ranks/rank-" + std::to_string(rank) + ".json";
  }

 private:
  static std::vector<std::string> Texts(const std::vector<nlohmann::json>& reports) {
    std::vector<std::string> texts;
    texts.reserve(reports.size());
    for (const nlohmann::json& report : reports) texts.push_back(report.dump());
    return texts;
  }

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

// hvdrun's summary.json lists the job's rounds: each after the first is a re-formation of an elastic
// job. A summary without the list (an earlier hvdrun's), or no summary, records none; a list that is
// not one is named as a file that cannot be read.
TEST(ExperimentResults, ReadsTheRoundsOfHvdrunsSummary) {
  const nlohmann::json report = {{"summary", {{"step_time_s", 0.5}}}};
  OneRunResults results(std::vector<nlohmann::json>{report});
  std::vector<std::string> problems;
  EXPECT_EQ(results.Run(problems).rounds, 0);
  EXPECT_TRUE(problems.empty());
  const nlohmann::json round = {{"round", 0}, {"size", 1}, {"why", "start"}};
  std::ofstream(results.SummaryFile()) << nlohmann::json({{"status", "ok"}}).dump();
  EXPECT_EQ(results.Run(problems).rounds, 0);
  std::ofstream(results.SummaryFile()) << nlohmann::json({{"rounds", {round, round, round}}}).dump();
  EXPECT_EQ(results.Run(problems).rounds, 3);
  EXPECT_TRUE(problems.empty());
  std::ofstream(results.SummaryFile()) << nlohmann::json({{"rounds", 3}}).dump();
  StoredRun run = results.Run(problems);
  EXPECT_EQ(run.rounds, 0);
  EXPECT_EQ(problems, std::vector<std::string>{results.SummaryFile() + ": \"rounds\" is 3; expected a list"});
  EXPECT_EQ(run.ranks.size(), 1u);  // the rest of the run is read
}

// A rank's report nested 200,000 levels deep (about 400 KB) is refused as one file that cannot be
// read, naming the limit; walking it would overflow the stack. The other ranks are read.
TEST(ExperimentResults, ADeeplyNestedReportIsRefusedNamingTheLimit) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  OneRunResults results(
      std::vector<std::string>{R"({"summary": {"step_time_s": 0.5}})", "{\"summary\": " + deep + "}",
                               "{\"summary\": {\"step_time_s\": 0.5}, \"libhvdrun\": " + deep + "}"});
  std::vector<std::string> problems;
  std::vector<RankReport> ranks = results.Ranks(&problems);
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0].rank, 0);
  EXPECT_EQ(problems, (std::vector<std::string>{
                          results.RankFile(1) + ": nested deeper than 64 levels of objects and lists, the "
                                                "most hvdrun-lab reads",
                          results.RankFile(2) + ": nested deeper than 64 levels of objects and lists, the "
                                                "most hvdrun-lab reads"}));
}

// Numbers the report reads are held to what a report can show: out of range, the file is refused
// with the member named, never shown as inf, nan or a wrapped whole number.
TEST(ExperimentResults, FiguresOutOfRangeAreNamed) {
  OneRunResults results(std::vector<nlohmann::json>{
      {{"summary", {{"step_time_s", 0.5}, {"note", "text is the program's own"}}}, {"threads", 2}},
      {{"summary", {{"step_time_s", 1e300}}}},
      {{"summary", {{"step_time_s", 0.5}}}, {"threads", 1e300}},
      {{"summary", {{"step_time_s", 0.5}}}, {"threads", 0}},
      {{"summary", {{"step_time_s", 0.5}}}, {"results", {{{"bytes", 1e16}, {"time_us", 1}}}}},
      {{"summary", {{"step_time_s", 0.5}}},
       {"libhvdrun", {{"responses", {{"bins", {{{"seconds", -2e15}}}}}}}}},
  });
  std::vector<std::string> problems;
  std::vector<RankReport> ranks = results.Ranks(&problems);
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0].threads, 2);
  EXPECT_EQ(
      problems,
      (std::vector<std::string>{
          results.RankFile(1) +
              ": \"summary\".\"step_time_s\" is 1e+300; expected a number from -1e+15 to 1e+15",
          results.RankFile(2) + ": \"threads\" is 1e+300; expected a number from -1e+15 to 1e+15",
          results.RankFile(3) + ": \"threads\" is 0; expected a whole number from 1 to 4096",
          results.RankFile(4) + ": \"results\"[0].\"bytes\" is 1e+16; expected a number from -1e+15 to 1e+15",
          results.RankFile(5) + ": \"libhvdrun\".\"responses\".\"bins\"[0].\"seconds\" is -2e+15; expected a "
                                "number from -1e+15 to 1e+15"}));
}

// experiment.json must hold what `run` writes: a count out of `run`'s range is an error naming the
// file and the member, at once (1,000,000 repeats would list a million runs not made yet).
TEST(ExperimentResults, ExperimentValuesOutOfRangeAreNamed) {
  struct Case {
    const char* change;
    const char* error;
  };
  const Case cases[] = {
      {R"({"repeats": 1000000})", "\"repeats\" is 1000000; expected a whole number from 1 to 1000"},
      {R"({"repeats": 2147483647})", "\"repeats\" is 2147483647; expected a whole number from 1 to 1000"},
      {R"({"repeats": 1e9})", "\"repeats\" is 1000000000.0; expected a whole number from 1 to 1000"},
      {R"({"repeats": "3"})", "\"repeats\" is '3'; expected a whole number from 1 to 1000"},
      {R"({"figures": {"step_time_scale": 0}})",
       "\"figures\".\"step_time_scale\" is 0; expected a number above 0 and at most 1e+09"},
      {R"({"cells": [{"id": "c", "np": 0}]})",
       "\"cells\"[0].\"np\" is 0; expected a whole number from 1 to 1048576"},
      {R"({"cells": [{"id": "c", "servers": 1e300}]})",
       "\"cells\"[0].\"servers\" is 1e+300; expected a whole number from 1 to 1048576"},
      {R"({"cells": [7]})", "\"cells\"[0] is 7; expected an object"},
      {R"({"excluded": -1})", "\"excluded\" is -1; expected a whole number from 0 to 100000"},
  };
  for (const Case& c : cases) {
    e2e::ScratchDir dir;
    nlohmann::json experiment = {{"name", "e"}, {"repeats", 1}, {"cells", nlohmann::json::array()}};
    experiment.update(nlohmann::json::parse(c.change));
    std::ofstream(dir.path() + "/experiment.json") << experiment.dump();
    StatusOr<ExperimentResults> results = LoadExperimentResults(dir.path());
    ASSERT_FALSE(results.ok()) << c.change;
    EXPECT_EQ(results.status().message(), dir.path() + "/experiment.json: " + c.error) << c.change;
  }
}

TEST(ExperimentResults, ExperimentThatIsNotJsonSaysWhere) {
  e2e::ScratchDir dir;
  dir.WriteFile("experiment.json", "{\"name\": \"e\",\n \"repeats\": tru}\n");
  StatusOr<ExperimentResults> results = LoadExperimentResults(dir.path());
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.status().message(),
            dir.path() + "/experiment.json:2:16: not valid JSON: unexpected '\"repeats\": tru}'");
  dir.WriteFile("experiment.json", "{\"name\": \"e\"");
  results = LoadExperimentResults(dir.path());
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.status().message(),
            dir.path() + "/experiment.json:1:13: not valid JSON: the text ends inside a value");
}

}  // namespace
}  // namespace hvdrun::lab
