#include "lab/store/autotune_outcome.h"

#include <gtest/gtest.h>

#include <string>

namespace hvdrun::lab {
namespace {

constexpr const char* kHeader =
    "hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,cycle_time_ms,"
    "tensor_fusion_threshold,score,score_spread,chosen\n";

TEST(AutotuneOutcome, TheLastLineIsTheSettingKept) {
  const std::string log = std::string(kHeader) +
                          "0,0,0,1,1,128,758.4,21.3,0\n"
                          "0,0,0,1,5,4,701.2,18.8,0\n"
                          "0,0,0,1,25,16,812.3,9.1,0\n"
                          "0,0,0,1,25,16,812.3,0,1\n";
  StatusOr<AutotuneOutcome> outcome = AutotuneOutcomeFromCsv(log, "autotune.csv");
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_TRUE(outcome->kept);
  EXPECT_EQ(outcome->samples, 3);
  EXPECT_DOUBLE_EQ(outcome->fusion_threshold_mib, 16);
  EXPECT_DOUBLE_EQ(outcome->cycle_time_ms, 25);
  EXPECT_DOUBLE_EQ(outcome->score_bytes_per_us, 812.3);
  EXPECT_EQ(outcome->Describe(), "16 MiB, 25 ms (kept after 3 samples)");
}

// The yes/no switches the tuner kept off are named; one the job never ran on is not.
TEST(AutotuneOutcome, SwitchesKeptOffAreNamed) {
  const std::string log = std::string(kHeader) +
                          "1,0,0,1,1,128,758.4,21.3,0\n"
                          "0,0,0,1,1,128,801.2,18.8,0\n"
                          "0,0,0,1,1,128,812.3,9.1,0\n"
                          "0,0,0,0,1,128,812.3,9.1,0\n"
                          "0,0,0,0,1,128,812.3,0,1\n";
  StatusOr<AutotuneOutcome> outcome = AutotuneOutcomeFromCsv(log, "autotune.csv");
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_TRUE(outcome->hierarchical_allreduce_off);
  EXPECT_TRUE(outcome->response_cache_off);
  EXPECT_EQ(outcome->Describe(),
            "128 MiB, 1 ms, hierarchical allreduce off, response cache off (kept after 4 samples)");

  // A job that never ran hierarchically, its cache kept on.
  outcome = AutotuneOutcomeFromCsv(
      std::string(kHeader) + "0,0,0,1,1,128,1,1,0\n0,0,0,0,1,128,1,1,0\n" + "0,0,0,1,1,128,1,0,1\n",
      "autotune.csv");
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_FALSE(outcome->hierarchical_allreduce_off);
  EXPECT_FALSE(outcome->response_cache_off);
  EXPECT_EQ(outcome->Describe(), "128 MiB, 1 ms (kept after 2 samples)");
  // Without Horovod's switch columns, none is named.
  outcome = AutotuneOutcomeFromCsv("cycle_time_ms,tensor_fusion_threshold,score,chosen\n1,128,1,1\n", "f");
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_EQ(outcome->Describe(), "128 MiB, 1 ms (kept after 0 samples)");
}

TEST(AutotuneOutcome, ARunThatEndedWhileSearchingSaysHowFarItGot) {
  StatusOr<AutotuneOutcome> outcome = AutotuneOutcomeFromCsv(
      std::string(kHeader) + "0,0,0,1,1,128,758.4,21.3,0\n0,0,0,1,5,4,701.2,18.8,0\n", "a");
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_FALSE(outcome->kept);
  EXPECT_EQ(outcome->samples, 2);
  EXPECT_EQ(outcome->Describe(), "still searching when the run ended (2 samples scored; last 4 MiB, 5 ms)");
  outcome = AutotuneOutcomeFromCsv("", "a");
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->Describe(), "still searching when the run ended (no sample scored)");
}

TEST(AutotuneOutcome, ABadLogIsRefusedNamingFileAndLine) {
  EXPECT_EQ(
      AutotuneOutcomeFromCsv("a,b\n1,2\n", "run/autotune.csv").status().message(),
      "run/autotune.csv:1: not an autotune log: the header lacks cycle_time_ms, tensor_fusion_threshold, "
      "score or chosen");
  EXPECT_EQ(AutotuneOutcomeFromCsv(std::string(kHeader) + "0,0,0,1,1,128\n", "f").status().message(),
            "f:2: 6 fields; the header has 9");
  EXPECT_EQ(
      AutotuneOutcomeFromCsv(std::string(kHeader) + "0,0,0,1,1,nan,758.4,21.3,0\n", "f").status().message(),
      "f:2: 'nan' is not a number from 0 to 1e+15");
  EXPECT_EQ(AutotuneOutcomeFromCsv(std::string(kHeader) + "0,0,0,1,1,1,1,0,1\n0,0,0,1,1,1,1,0,0\n", "f")
                .status()
                .message(),
            "f:3: a line after the setting kept");
}

}  // namespace
}  // namespace hvdrun::lab
