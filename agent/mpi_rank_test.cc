#include "agent/mpi_rank.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/environment_reader.h"

namespace hvdrun {
namespace {

using Variables = std::map<std::string, std::string>;

TEST(MpiRank, ReadsWhereMpirunPlacedTheProcess) {
  Variables variables = {{"OMPI_COMM_WORLD_RANK", "5"},
                         {"OMPI_COMM_WORLD_SIZE", "8"},
                         {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                         {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}};
  StatusOr<MpiPlacement> placement = ReadMpiPlacement(LookupIn(variables));
  ASSERT_TRUE(placement.ok()) << placement.status().message();
  EXPECT_EQ(placement.value().rank, 5);
  EXPECT_EQ(placement.value().size, 8);
  EXPECT_EQ(placement.value().local_rank, 1);
  EXPECT_EQ(placement.value().local_size, 4);
}

TEST(MpiRank, AMissingOrBadPlacementVariableIsNamed) {
  Variables variables = {{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}};
  StatusOr<MpiPlacement> placement = ReadMpiPlacement(LookupIn(variables));
  ASSERT_FALSE(placement.ok());
  EXPECT_NE(placement.status().message().find("OMPI_COMM_WORLD_LOCAL_SIZE is not set"), std::string::npos)
      << placement.status().message();

  variables = {{"OMPI_COMM_WORLD_RANK", "2"},
               {"OMPI_COMM_WORLD_SIZE", "2"},
               {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
               {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}};
  placement = ReadMpiPlacement(LookupIn(variables));
  ASSERT_FALSE(placement.ok());
  EXPECT_EQ(placement.status().message(), "OMPI_COMM_WORLD_RANK='2' is not a whole number from 0 to 1");

  variables["OMPI_COMM_WORLD_RANK"] = "x";
  EXPECT_FALSE(ReadMpiPlacement(LookupIn(variables)).ok());
}

TEST(MpiRank, APlacementThatMatchesTheLayoutGivesTheAssignment) {
  StatusOr<RankAssignment> assignment = CheckMpiPlacement("localhost:3", {2, 3, 2, 3});
  ASSERT_TRUE(assignment.ok()) << assignment.status().message();
  EXPECT_EQ(assignment.value().size(), 3);
  EXPECT_EQ(assignment.value().hosts().at(0).host, "localhost");

  assignment = CheckMpiPlacement("server1:2,server2:1", {2, 3, 0, 1});
  ASSERT_TRUE(assignment.ok()) << assignment.status().message();
  EXPECT_EQ(assignment.value().placement(2).host_index, 1);
}

TEST(MpiRank, APlacementOtherThanTheLayoutIsRefusedSayingBoth) {
  // mpirun runs two names of one machine as one node: ranks 0..2 are local ranks 0..2 of 3.
  StatusOr<RankAssignment> assignment = CheckMpiPlacement("localhost:2,127.0.0.1:1", {2, 3, 2, 3});
  ASSERT_FALSE(assignment.ok());
  EXPECT_EQ(
      assignment.status().message(),
      "mpirun placed it as local rank 2 of 3 on its node, but hvdrun's layout localhost:2,127.0.0.1:1 has "
      "it as local rank 0 of 1 on host 127.0.0.1 (check --mpi-args: mpirun must place ranks as -H and "
      "-map-by slot say)");

  assignment = CheckMpiPlacement("localhost:2", {0, 3, 0, 3});
  ASSERT_FALSE(assignment.ok());
  EXPECT_NE(assignment.status().message().find("mpirun started 3 processes, but hvdrun's layout localhost:2 "
                                               "has 2 ranks"),
            std::string::npos)
      << assignment.status().message();

  assignment = CheckMpiPlacement("localhost:x", {0, 1, 0, 1});
  ASSERT_FALSE(assignment.ok());
  EXPECT_EQ(assignment.status().message().rfind("HVDRUN_MPI_LAYOUT: ", 0), 0u)
      << assignment.status().message();
}

TEST(MpiRank, TheKillGraceEndsWellBeforeMpirunsSigkillAtMostAfterOneSecond) {
  using std::chrono::milliseconds;
  EXPECT_EQ(MpiSigkillTimeout(nullptr), milliseconds(1000));
  EXPECT_EQ(MpiSigkillTimeout("3"), milliseconds(3000));
  EXPECT_EQ(MpiSigkillTimeout("0"), milliseconds(0));
  EXPECT_EQ(MpiSigkillTimeout("soon"), milliseconds(1000));
  EXPECT_EQ(MpiSigkillTimeout(""), milliseconds(1000));
  EXPECT_EQ(MpiKillGrace(milliseconds(1000)), milliseconds(750));
  EXPECT_EQ(MpiKillGrace(milliseconds(3000)), milliseconds(1000));
  EXPECT_EQ(MpiKillGrace(milliseconds(0)), milliseconds(0));
}

}  // namespace
}  // namespace hvdrun
