#include "examples/bench/size_sweep.h"

#include <gtest/gtest.h>

namespace hvdrun {
namespace {

TEST(SizeSweep, ParsesBinarySuffixesLikeNcclTests) {
  EXPECT_EQ(ParseByteSize("-b", "8").value(), 8u);
  EXPECT_EQ(ParseByteSize("-b", "1K").value(), 1024u);
  EXPECT_EQ(ParseByteSize("-b", "256M").value(), 256u << 20);
  EXPECT_EQ(ParseByteSize("-b", "2g").value(), size_t{2} << 30);
  EXPECT_EQ(ParseByteSize("-b", "1024G").value(), size_t{1} << 40);
  for (const char* bad : {"", "M", "1.5M", "12X", "-1", "+1", "1KB", " 1K"}) {
    StatusOr<size_t> size = ParseByteSize("-b", bad);
    ASSERT_FALSE(size.ok()) << bad;
    EXPECT_EQ(size.status().message(),
              "-b: '" + std::string(bad) + "' is not a size (expected a number with an optional K, M or G)");
  }
  for (const char* large : {"1025G", "100000000G", "99999999999999999999"}) {
    EXPECT_EQ(ParseByteSize("-e", large).status().message(), "-e: '" + std::string(large) + "' is too large");
  }
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
