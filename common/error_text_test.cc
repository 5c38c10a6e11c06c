#include "common/error_text.h"

#include <gtest/gtest.h>

namespace hvdrun {
namespace {

using std::chrono::milliseconds;

TEST(ErrorText, DurationsUnderASecondAreInMilliseconds) {
  EXPECT_EQ(DurationText(milliseconds(0)), "0 ms");
  EXPECT_EQ(DurationText(milliseconds(250)), "250 ms");
  EXPECT_EQ(DurationText(milliseconds(999)), "999 ms");
}

TEST(ErrorText, LongerDurationsAreInSecondsWithTheDecimalsNeeded) {
  EXPECT_EQ(DurationText(milliseconds(1000)), "1 s");
  EXPECT_EQ(DurationText(milliseconds(60000)), "60 s");
  EXPECT_EQ(DurationText(milliseconds(1500)), "1.5 s");
  EXPECT_EQ(DurationText(milliseconds(1050)), "1.05 s");
  EXPECT_EQ(DurationText(milliseconds(30001)), "30.001 s");
}

TEST(ErrorText, RankListsSayRankOrRanksAndCutAtTheMostShown) {
  EXPECT_EQ(RankListText({3}), "rank 3");
  EXPECT_EQ(RankListText({0, 1, 2}), "ranks 0, 1, 2");
  EXPECT_EQ(RankListText({4, 5, 6, 7}, 2), "ranks 4, 5 and 2 more");
  EXPECT_EQ(RankListText({4, 5}, 2), "ranks 4, 5");
}

TEST(ErrorText, PrintableTextReplacesControlBytesAndCutsLongText) {
  EXPECT_EQ(PrintableText("gloo/3"), "gloo/3");
  EXPECT_EQ(PrintableText(std::string("a\0b\n\x7f\xff", 6)), "a?b???");
  EXPECT_EQ(PrintableText(std::string(80, 'x')), std::string(80, 'x'));
  EXPECT_EQ(PrintableText(std::string(81, 'x')), std::string(80, 'x') + "...");
}

TEST(ErrorText, OneLineTextReplacesControlCharactersAndKeepsTheRest) {
  EXPECT_EQ(OneLineText("key\r: value\n\x1b[2J"), "key?: value??[2J");
  EXPECT_EQ(OneLineText(std::string(200, 'x')), std::string(200, 'x'));
  EXPECT_EQ(OneLineText("mod\xc3\xa8le \xc2\x9b"
                        "1m \x7f"),
            "mod\xc3\xa8le ?1m ?");
}

}  // namespace
}  // namespace hvdrun
