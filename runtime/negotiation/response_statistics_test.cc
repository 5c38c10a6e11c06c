#include "runtime/negotiation/response_statistics.h"

#include <gtest/gtest.h>

#include <vector>

namespace hvdrun {
namespace {

using std::chrono::milliseconds;

TEST(ResponseStatistics, BinsAreTheLabsDecimalOnes) {
  ResponseStatistics statistics;
  for (uint64_t bytes : {uint64_t{0}, uint64_t{1000}, uint64_t{1001}, uint64_t{1000000}, uint64_t{1000001},
                         uint64_t{10000000}, uint64_t{10000001}, uint64_t{20000000}, uint64_t{102228128}}) {
    statistics.Record(bytes, 1, milliseconds(1));
  }
  std::vector<std::pair<uint64_t, uint64_t>> bounds;
  std::vector<uint64_t> counts;
  for (const ResponseStatistics::Bin& bin : statistics.Bins()) {
    bounds.emplace_back(bin.lower_bytes, bin.upper_bytes);
    counts.push_back(bin.responses);
  }
  EXPECT_EQ(
      bounds,
      (std::vector<std::pair<uint64_t, uint64_t>>{
          {0, 1000}, {1000, 1000000}, {1000000, 10000000}, {10000000, 20000000}, {100000000, 110000000}}));
  EXPECT_EQ(counts, (std::vector<uint64_t>{2, 2, 2, 2, 1}));
}

TEST(ResponseStatistics, SumsAreExact) {
  ResponseStatistics statistics;
  statistics.Record(4000, 3, milliseconds(2));
  statistics.Record(6000, 1, milliseconds(5));
  statistics.Record(50, 1, milliseconds(1));
  EXPECT_EQ(statistics.responses(), 3U);
  EXPECT_EQ(statistics.bytes(), 10050U);
  const nlohmann::json json = statistics.ToJson();
  EXPECT_EQ(json["responses"], 3);
  EXPECT_EQ(json["tensors"], 5);
  EXPECT_EQ(json["bytes"], 10050);
  EXPECT_DOUBLE_EQ(json["seconds"].get<double>(), 0.008);
  ASSERT_EQ(json["bins"].size(), 2U);
  EXPECT_EQ(json["bins"][1]["bytes"], 10000);
  EXPECT_EQ(json["bins"][1]["tensors"], 4);
  EXPECT_DOUBLE_EQ(json["bins"][1]["seconds"].get<double>(), 0.007);
}

}  // namespace
}  // namespace hvdrun
