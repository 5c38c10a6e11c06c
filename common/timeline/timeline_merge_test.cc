#include "common/timeline/timeline_merge.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/timeline/timeline_format.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun {
namespace {

using nlohmann::json;

// One line per event, as a rank's timeline has them.
std::string RankFile(int pid, int responses, int64_t zero_unix_us) {
  std::string text = "[\n";
  text += R"({"name":"process_name","ph":"M","pid":)" + std::to_string(pid) + R"(,"args":{"name":"rank )" +
          std::to_string(pid) + "\"}},\n";
  text += R"({"name":"hvdrun_timeline_clock","ph":"M","pid":)" + std::to_string(pid) +
          R"(,"args":{"zero_unix_us":)" + std::to_string(zero_unix_us) + "}}";
  for (int i = 0; i < responses; ++i) {
    text += ",\n" + std::string(R"({"name":"ALLREDUCE","ph":"X","pid":)") + std::to_string(pid) +
            R"(,"tid":1,"ts":)" + std::to_string(10 * i) +
            R"(,"dur":5,"args":{"bytes":4,"tensors":1,"names":["a{b}\"c["]}})";
  }
  return text + "\n]\n";
}

class TimelineMergeTest : public ::testing::Test {
 protected:
  // The merged trace of `files`; a merge error or invalid JSON fails the test.
  json Merge(const std::vector<std::string>& files) {
    StatusOr<TimelineMergeSummary> merged = MergeTimelines(files, out_);
    EXPECT_TRUE(merged.ok()) << merged.status().message();
    if (merged.ok()) summary_ = merged.value();
    json trace = json::parse(e2e::ReadFileBytes(out_), nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(trace.is_array()) << e2e::ReadFileBytes(out_);
    return trace.is_array() ? trace : json::array();
  }

  static std::map<int, int> ResponsesByPid(const json& trace) {
    std::map<int, int> responses;
    for (const json& event : trace) {
      if (event["name"] == "ALLREDUCE") ++responses[event["pid"].get<int>()];
    }
    return responses;
  }

  static std::vector<json> EventsNamed(const json& trace, const std::string& name) {
    std::vector<json> found;
    for (const json& event : trace) {
      if (event["name"] == name) found.push_back(event);
    }
    return found;
  }

  e2e::ScratchDir scratch_;
  const std::string out_ = scratch_.path() + "/timeline.json";
  TimelineMergeSummary summary_;
};

TEST_F(TimelineMergeTest, EveryRankBecomesOneProcessWithItsEventsAndMetadata) {
  // Rank 1's file says pid 7: the merged file says 1, the rank it was given as.
  const json trace = Merge({scratch_.WriteFile("r0.json", RankFile(0, 2, 1000)),
                            scratch_.WriteFile("r1.json", RankFile(7, 3, 1250)),
                            scratch_.WriteFile("r2.json", RankFile(2, 1, 900))});
  EXPECT_EQ(ResponsesByPid(trace), (std::map<int, int>{{0, 2}, {1, 3}, {2, 1}}));
  EXPECT_EQ(EventsNamed(trace, "process_name").size(), 3U);
  EXPECT_EQ(EventsNamed(trace, timeline_format::kClockMetadata).size(), 3U);
  EXPECT_EQ(EventsNamed(trace, timeline_format::kTruncated).size(), 0U);
  EXPECT_EQ(EventsNamed(trace, "ALLREDUCE")[0]["args"]["names"][0], "a{b}\"c[");
  ASSERT_EQ(summary_.ranks.size(), 3U);
  EXPECT_TRUE(summary_.ranks[1].complete);
  EXPECT_EQ(summary_.ranks[1].events, 5U);
  EXPECT_EQ(summary_.ranks[1].zero_unix_micros, 1250);
  EXPECT_EQ(summary_.zero_spread_micros, 350);
}

TEST_F(TimelineMergeTest, FileCutInsideAnEventKeepsItsWholeEventsWithANote) {
  const std::string whole = RankFile(1, 4, 0);
  const size_t last_event = whole.rfind("{\"name\":\"ALLREDUCE\"");
  const std::string cut = whole.substr(0, last_event + 30);  // the fourth response half written
  const json trace =
      Merge({scratch_.WriteFile("r0.json", RankFile(0, 1, 0)), scratch_.WriteFile("r1.json", cut)});
  EXPECT_EQ(ResponsesByPid(trace), (std::map<int, int>{{0, 1}, {1, 3}}));
  const std::vector<json> notes = EventsNamed(trace, timeline_format::kTruncated);
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_EQ(notes[0]["pid"], 1);
  EXPECT_EQ(notes[0]["ts"], 20) << "at the last event kept";
  EXPECT_EQ(notes[0]["args"]["events_kept"], 5);
  EXPECT_FALSE(summary_.ranks[1].complete);
  EXPECT_EQ(summary_.ranks[1].note, "timeline '" + scratch_.path() +
                                        "/r1.json' ends inside an event at byte " +
                                        std::to_string(last_event));
  EXPECT_EQ(notes[0]["args"]["note"], summary_.ranks[1].note);
}

TEST_F(TimelineMergeTest, FileWithoutItsClosingBracketKeepsEveryEvent) {
  std::string open = RankFile(0, 3, 0);
  open.resize(open.rfind(']'));
  const json trace = Merge({scratch_.WriteFile("r0.json", open + ",\n")});
  EXPECT_EQ(ResponsesByPid(trace), (std::map<int, int>{{0, 3}}));
  EXPECT_FALSE(summary_.ranks[0].complete);
  EXPECT_EQ(summary_.ranks[0].note,
            "timeline '" + scratch_.path() + "/r0.json' ends before its closing bracket");
}

TEST_F(TimelineMergeTest, MissingEmptyAndForeignFilesStillShowTheirRanks) {
  const std::string missing = scratch_.path() + "/none.json";
  const json trace = Merge({scratch_.WriteFile("r0.json", RankFile(0, 1, 0)), missing,
                            scratch_.WriteFile("r2.json", ""), scratch_.WriteFile("r3.json", "{\"a\":1}")});
  EXPECT_EQ(summary_.ranks[1].note, "cannot read timeline '" + missing + "': No such file or directory");
  EXPECT_EQ(summary_.ranks[2].note, "timeline '" + scratch_.path() + "/r2.json' is empty");
  EXPECT_EQ(summary_.ranks[3].note,
            "timeline '" + scratch_.path() + "/r3.json' is not a Chrome-trace JSON array");
  std::map<int, std::string> names;
  for (const json& event : EventsNamed(trace, "process_name")) names[event["pid"]] = event["args"]["name"];
  EXPECT_EQ(names, (std::map<int, std::string>{{0, "rank 0"}, {1, "rank 1"}, {2, "rank 2"}, {3, "rank 3"}}));
  EXPECT_EQ(EventsNamed(trace, timeline_format::kTruncated).size(), 3U);
}

TEST_F(TimelineMergeTest, CorruptEventEndsTheRankThere) {
  std::string text = RankFile(0, 3, 0);
  const size_t second = text.find("{\"name\":\"ALLREDUCE\"", text.find("ALLREDUCE") + 1);
  text.replace(second, 8, "{\"name\"+");
  const json trace = Merge({scratch_.WriteFile("r0.json", text)});
  EXPECT_EQ(ResponsesByPid(trace), (std::map<int, int>{{0, 1}}));
  EXPECT_NE(summary_.ranks[0].note.find("holds an event that is not valid JSON"), std::string::npos)
      << summary_.ranks[0].note;
}

TEST_F(TimelineMergeTest, LargeFilesStreamAcrossReadPieces) {
  // ~3 MiB: events (with braces and escaped quotes in their strings) straddle the 1 MiB pieces.
  const json trace = Merge({scratch_.WriteFile("r0.json", RankFile(0, 20000, 0))});
  EXPECT_EQ(ResponsesByPid(trace), (std::map<int, int>{{0, 20000}}));
  EXPECT_TRUE(summary_.ranks[0].complete) << summary_.ranks[0].note;
  EXPECT_GT(std::filesystem::file_size(out_), size_t{2} << 20);
}

TEST_F(TimelineMergeTest, NoRanksGiveAnEmptyTrace) { EXPECT_EQ(Merge({}), json::array()); }

TEST_F(TimelineMergeTest, UnwritableOutputNamesThePath) {
  const std::string out = scratch_.path() + "/no-such-dir/timeline.json";
  StatusOr<TimelineMergeSummary> merged =
      MergeTimelines({scratch_.WriteFile("r0.json", RankFile(0, 1, 0))}, out);
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().message(), "cannot write '" + out + "': No such file or directory");
}

}  // namespace
}  // namespace hvdrun
