// The NCCL backend's choice of averaging call, which needs no device.
#include "runtime/backends/nccl/nccl_average.h"

#include <gtest/gtest.h>

#include <string>

namespace hvdrun {
namespace {

TEST(NcclAverageTest, OneRankMakesNoCallWhateverTheVersion) {
  // 2.8.3 (the old encoding), 2.19.3 (the first with the one-rank kernel), 2.28.9 (the last with
  // its partition bug), 2.29.7 (fixed): one rank never reaches NCCL.
  for (int version : {2803, 21903, 22809, 22907}) {
    EXPECT_EQ(ChooseNcclAverage(version, 1), NcclAverage::kNoCall) << version;
  }
}

TEST(NcclAverageTest, SeveralRanksUseNcclAvgFrom2Point10) {
  EXPECT_EQ(ChooseNcclAverage(21000, 2), NcclAverage::kAvg);
  EXPECT_EQ(ChooseNcclAverage(22809, 4), NcclAverage::kAvg);
  EXPECT_EQ(ChooseNcclAverage(30000, 2), NcclAverage::kAvg);
}

TEST(NcclAverageTest, SeveralRanksBefore2Point10SumThenDivide) {
  EXPECT_EQ(ChooseNcclAverage(2803, 2), NcclAverage::kSumThenDivide);  // the lab's Horovod NCCL
  EXPECT_EQ(ChooseNcclAverage(20913, 8), NcclAverage::kSumThenDivide);
}

TEST(NcclAverageTest, VersionTextReadsBothEncodings) {
  char text[16];
  EXPECT_EQ(std::string(NcclVersionText(2803, text)), "2.8.3");
  EXPECT_EQ(std::string(NcclVersionText(22809, text)), "2.28.9");
  EXPECT_EQ(std::string(NcclVersionText(21000, text)), "2.10.0");
}

}  // namespace
}  // namespace hvdrun
