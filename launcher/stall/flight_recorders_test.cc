#include "launcher/stall/flight_recorders.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/e2e/scratch_dir.h"

namespace hvdrun {
namespace {

std::vector<protocol::FlightRecord> Records(uint64_t first, std::vector<std::string> names) {
  std::vector<protocol::FlightRecord> records;
  for (std::string& name : names) {
    protocol::FlightRecord record;
    record.sequence = first++;
    record.name = std::move(name);
    record.op = "allreduce";
    record.bytes = 4 << 20;
    record.phase = protocol::CollectivePhase::kDone;
    records.push_back(record);
  }
  return records;
}

TEST(FlightRecorders, TheFirstSequenceWhereTheRanksDifferIsNamed) {
  RankRecords records = {{0, Records(10, {"a", "b", "c"})}, {1, Records(11, {"b", "x"})}};
  EXPECT_EQ(DescribeDivergence(records), "the ranks diverge at collective #12: rank 0 'c', rank 1 'x'");
  records[1] = Records(11, {"b"});
  EXPECT_EQ(
      DescribeDivergence(records),
      "the ranks diverge at collective #12: rank 0 'c', rank 1 has not submitted it (its last is #11 'b')");
  records[1] = Records(9, {"z", "a", "b", "c"});
  EXPECT_EQ(DescribeDivergence(records), "the ranks' last collectives agree (up to #12)");
  EXPECT_EQ(DescribeDivergence({{0, Records(1, {"a"})}}), "");
}

TEST(FlightRecorders, LastCollectivesAndTheirFiles) {
  std::vector<protocol::FlightRecord> records = Records(811, {"grad.conv1", "grad.conv2"});
  records.back().phase = protocol::CollectivePhase::kInBackend;
  EXPECT_EQ(FormatLastCollectives(records, 1), "    #812 allreduce 'grad.conv2' 4 MiB: in backend\n");
  e2e::ScratchDir scratch;
  ASSERT_TRUE(WriteRecorderFiles(scratch.path(), {{1, records}}).ok());
  std::ifstream file(scratch.path() + "/ranks/rank-1.recorder.json");
  nlohmann::json json = nlohmann::json::parse(file);
  EXPECT_EQ(json["rank"], 1);
  EXPECT_EQ(json["collectives"].size(), 2u);
  EXPECT_EQ(json["collectives"][1]["phase"], "in backend");
  EXPECT_EQ(json["collectives"][1]["sequence"], 812);
}

}  // namespace
}  // namespace hvdrun
