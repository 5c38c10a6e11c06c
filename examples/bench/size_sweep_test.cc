#include "examples/bench/size_sweep.h"

#include <gtest/gtest.h>

namespace hvdrun {
namespace {

TEST(SizeSweep, ParsesBinarySuffixesLikeNcclTests) {
  EXPECT_EQ(ParseByteSize("8").value(), 8u);
  EXPECT_EQ(ParseByteSize("1K").value(), 1024u);
  EXPECT_EQ(ParseByteSize("256M").value(), 256u << 20);
  EXPECT_EQ(ParseByteSize("2g").value(), size_t{2} << 30);
  for (const char* bad : {"", "M", "1.5M", "12X", "-1", "1KB"}) {
    StatusOr<size_t> size = ParseByteSize(bad);
    ASSERT_FALSE(size.ok()) << bad;
    EXPECT_NE(size.status().message().find("is not a size"), std::string::npos) << size.status().message();
  }
  EXPECT_FALSE(ParseByteSize("100000000G").ok());
}

TEST(SizeSweep, MultipliesByTheFactorUpToTheLargestSize) {
  EXPECT_EQ(SweepSizes(8, 64, 2, 4).value(), (std::vector<size_t>{8, 16, 32, 64}));
  EXPECT_EQ(SweepSizes(1 << 20, 64 << 20, 4, 4).value(),
            (std::vector<size_t>{1 << 20, 4 << 20, 16 << 20, 64 << 20}));
  // Sizes round down to whole elements; the sweep does not pass the largest size.
  EXPECT_EQ(SweepSizes(6, 100, 3, 4).value(), (std::vector<size_t>{4, 16, 52}));
  EXPECT_EQ(SweepSizes(0, 0, 2, 4).value(), (std::vector<size_t>{0}));
  EXPECT_EQ(SweepSizes(8, 8, 2, 8).value(), (std::vector<size_t>{8}));
}

TEST(SizeSweep, RejectsImpossibleSweeps) {
  EXPECT_FALSE(SweepSizes(8, 4, 2, 4).ok());
  EXPECT_FALSE(SweepSizes(8, 64, 1, 4).ok());
}

TEST(SizeSweep, BandwidthsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(AlgorithmBandwidth(1'000'000'000, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(AllreduceBusBandwidth(2.0, 2), 2.0);
  EXPECT_DOUBLE_EQ(AllreduceBusBandwidth(2.0, 4), 3.0);
  EXPECT_DOUBLE_EQ(AllreduceBusBandwidth(2.0, 1), 0.0);
}

}  // namespace
}  // namespace hvdrun
