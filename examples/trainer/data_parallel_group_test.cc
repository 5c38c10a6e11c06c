#include "examples/trainer/data_parallel_group.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "runtime/test_job.h"

namespace hvdrun::trainer {
namespace {

TEST(DataParallelGroupTest, WithoutHvdrunItIsOneRankWithoutRuntime) {
  StatusOr<std::unique_ptr<DataParallelGroup>> group =
      DataParallelGroup::FromEnvironment([](const char*) -> const char* { return nullptr; });
  ASSERT_TRUE(group.ok()) << group.status().message();
  DataParallelGroup& g = *group.value();
  EXPECT_EQ(g.runtime(), nullptr);
  EXPECT_EQ(g.rank(), 0);
  EXPECT_EQ(g.size(), 1);
  EXPECT_EQ(g.local_size(), 1);
  EXPECT_EQ(g.backend_name(), "none");
  std::vector<double> values = {1.5, -2};
  EXPECT_TRUE(g.SumAcrossRanks(values).ok());
  EXPECT_EQ(values, (std::vector<double>{1.5, -2}));
  EXPECT_TRUE(g.SendReport("{}").ok());
}

TEST(DataParallelGroupTest, ARankStartedWithoutABackendIsToldWhatToDo) {
  std::map<std::string, std::string> env = {{"HVDRUN_RANK", "0"}, {"HVDRUN_SIZE", "2"}};
  StatusOr<std::unique_ptr<DataParallelGroup>> group =
      DataParallelGroup::FromEnvironment([&](const char* name) {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      });
  ASSERT_FALSE(group.ok());
  EXPECT_EQ(
      group.status().message(),
      "HVDRUN_BACKEND is not set: hvdrun started this rank without a backend; run hvdrun with --gloo (or "
      "--mpi, --nccl)");
}

TEST(DataParallelGroupTest, SumsAcrossThreeRanks) {
  hvdrun::testing::RunRanks(3, [](Runtime& runtime) {
    DataParallelGroup group(&runtime);
    EXPECT_EQ(group.size(), 3);
    EXPECT_EQ(group.backend_name(), "gloo");
    std::vector<double> values = {static_cast<double>(group.rank() + 1), 0.5};
    Status status = group.SumAcrossRanks(values);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(values, (std::vector<double>{6, 1.5}));
  });
}

}  // namespace
}  // namespace hvdrun::trainer
