#include "runtime/autotune/autotune_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace hvdrun {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(AutotuneLog, HorovodsColumnsFirstThenTheSpreadAndTheChoice) {
  const std::string path = ::testing::TempDir() + "/autotune_log_" + std::to_string(::getpid()) + ".csv";
  AutotuneLog log(path);
  AutotuneLog::Row row;
  row.hierarchical_allreduce = true;
  row.cache_enabled = true;
  row.cycle_time_ms = 2.5;
  row.fusion_threshold_mib = 16;
  row.score_bytes_per_us = 812.25;
  row.spread_bytes_per_us = 12.5;
  ASSERT_TRUE(log.Add(row).ok());
  EXPECT_EQ(ReadAll(path),
            "hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,cycle_time_ms,"
            "tensor_fusion_threshold,score,score_spread,chosen\n"
            "1,0,0,1,2.5,16,812.25,12.5,0\n");
  row.chosen = true;
  row.hierarchical_allreduce = false;
  ASSERT_TRUE(log.Add(row).ok());
  EXPECT_EQ(ReadAll(path), log.text());
  EXPECT_NE(log.text().find("\n0,0,0,1,2.5,16,812.25,12.5,1\n"), std::string::npos) << log.text();
  ::unlink(path.c_str());
}

TEST(AutotuneLog, AFileThatCannotBeWrittenIsAnErrorNamingIt) {
  AutotuneLog log("/nonexistent-dir/autotune.csv");
  const Status status = log.Add({});
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("/nonexistent-dir/autotune.csv"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace hvdrun
