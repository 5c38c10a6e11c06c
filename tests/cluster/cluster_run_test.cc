#include "tests/cluster/cluster_run.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace hvdrun::cluster {
namespace {

TEST(ClusterRunTest, RunIdOfFindsTheRunOfANamespaceOrDirectoryName) {
  EXPECT_EQ(RunIdOf("hvdt12-3-server1"), "hvdt12-3");
  EXPECT_EQ(RunIdOf("hvdt12-3-switch"), "hvdt12-3");
  EXPECT_EQ(RunIdOf("hvdt12-3"), "hvdt12-3");
  EXPECT_EQ(RunIdOf("hvdt12-30-launcher"), "hvdt12-30");
}

TEST(ClusterRunTest, RunIdOfRejectsNamesOfOtherOwners) {
  for (const char* name : {"", "hvdt", "hvdt12", "hvdt12-", "hvdt-3", "hvdt12-3x", "hvdt12x-3", "xhvdt12-3",
                           "HVDT12-3", "netns1", "hvdt12--server1"}) {
    EXPECT_EQ(RunIdOf(name), "") << name;
  }
}

TEST(ClusterRunTest, RunOwnerIsThePidInTheId) {
  EXPECT_EQ(RunOwner("hvdt4242-7"), 4242);
  EXPECT_EQ(RunOwner("hvdt4242-7-server1"), -1) << "a namespace name is not a run id";
  EXPECT_EQ(RunOwner("hvdt99999999999-1"), -1);
}

TEST(ClusterRunTest, NewRunIdsBelongToThisProcessAndDiffer) {
  std::string first = NewRunId();
  std::string second = NewRunId();
  EXPECT_NE(first, second);
  EXPECT_EQ(RunOwner(first), ::getpid());
  EXPECT_EQ(RunOwner(second), ::getpid());
  EXPECT_EQ(RunIdOf(NetnsName(first, "server1")), first);
}

TEST(ClusterRunTest, TeardownRefusesWhatIsNotARunId) {
  Status status = TeardownRun("netns1");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "test cluster: 'netns1' is not a run id");
}

}  // namespace
}  // namespace hvdrun::cluster
