#include "common/placement/rank_assignment.h"

#include <gtest/gtest.h>

namespace hvdrun {
namespace {

// rank, host_index, local_rank, local_size, cross_rank, cross_size
using Row = std::tuple<int, int, int, int, int, int>;

std::vector<Row> Rows(const RankAssignment& assignment) {
  std::vector<Row> rows;
  for (const RankPlacement& p : assignment.ranks()) {
    rows.emplace_back(p.rank, p.host_index, p.local_rank, p.local_size, p.cross_rank, p.cross_size);
  }
  return rows;
}

TEST(RankAssignment, HostMajorLikeHorovodrun) {
  StatusOr<RankAssignment> assignment = RankAssignment::Assign({{"server1", 4}, {"server2", 4}}, 8);
  ASSERT_TRUE(assignment.ok());
  EXPECT_EQ(Rows(assignment.value()), (std::vector<Row>{{0, 0, 0, 4, 0, 2},
                                                        {1, 0, 1, 4, 0, 2},
                                                        {2, 0, 2, 4, 0, 2},
                                                        {3, 0, 3, 4, 0, 2},
                                                        {4, 1, 0, 4, 1, 2},
                                                        {5, 1, 1, 4, 1, 2},
                                                        {6, 1, 2, 4, 1, 2},
                                                        {7, 1, 3, 4, 1, 2}}));
  ASSERT_EQ(assignment->hosts().size(), 2u);
  EXPECT_EQ(assignment->hosts()[1].host, "server2");
  EXPECT_EQ(assignment->hosts()[1].ranks, (std::vector<int>{4, 5, 6, 7}));
}

TEST(RankAssignment, FewerRanksThanSlotsFillHostsInOrder) {
  StatusOr<RankAssignment> assignment = RankAssignment::Assign({{"a", 4}, {"b", 4}, {"c", 4}}, 6);
  ASSERT_TRUE(assignment.ok());
  ASSERT_EQ(assignment->hosts().size(), 2u);  // c gets no rank and is not part of the job
  EXPECT_EQ(assignment->hosts()[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(assignment->hosts()[1].ranks, (std::vector<int>{4, 5}));
  // Local ranks 0 and 1 exist on both hosts, 2 and 3 only on the first (Horovod's cross groups).
  EXPECT_EQ(Rows(assignment.value()), (std::vector<Row>{{0, 0, 0, 4, 0, 2},
                                                        {1, 0, 1, 4, 0, 2},
                                                        {2, 0, 2, 4, 0, 1},
                                                        {3, 0, 3, 4, 0, 1},
                                                        {4, 1, 0, 2, 1, 2},
                                                        {5, 1, 1, 2, 1, 2}}));
}

TEST(RankAssignment, UnevenSlots) {
  StatusOr<RankAssignment> assignment = RankAssignment::Assign({{"a", 1}, {"b", 3}}, 4);
  ASSERT_TRUE(assignment.ok());
  EXPECT_EQ(
      Rows(assignment.value()),
      (std::vector<Row>{{0, 0, 0, 1, 0, 2}, {1, 1, 0, 3, 1, 2}, {2, 1, 1, 3, 0, 1}, {3, 1, 2, 3, 0, 1}}));
}

TEST(RankAssignment, TooManyRanksNamesBothNumbers) {
  StatusOr<RankAssignment> assignment = RankAssignment::Assign({{"a", 2}, {"b", 2}}, 5);
  ASSERT_FALSE(assignment.ok());
  EXPECT_EQ(assignment.status().message(),
            "-np 5 is more than the 4 slots of the hosts given; add hosts or slots, or lower -np");
}

TEST(RankAssignment, ZeroRanksIsAnError) {
  StatusOr<RankAssignment> assignment = RankAssignment::Assign({{"a", 2}}, 0);
  ASSERT_FALSE(assignment.ok());
  EXPECT_EQ(assignment.status().message(), "-np: the number of processes must be at least 1, got 0");
}

}  // namespace
}  // namespace hvdrun
