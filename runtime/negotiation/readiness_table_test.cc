#include "runtime/negotiation/readiness_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hvdrun {
namespace {

using Clock = ReadinessTable::Clock;

Announcement Announce(std::string name, uint64_t count = 4, DataType type = DataType::kFloat32) {
  Announcement a;
  a.request.name = std::move(name);
  a.request.count = count;
  a.request.type = type;
  return a;
}

Announcement Probe(std::string name) {
  Announcement a = Announce(std::move(name));
  a.kind = Announcement::Kind::kProbe;
  return a;
}

Announcement Join(uint64_t unnamed_calls = 0) {
  Announcement a;
  a.kind = Announcement::Kind::kJoin;
  a.request.count = unnamed_calls;
  return a;
}

std::vector<std::string> Names(const std::vector<TensorRequest>& requests) {
  std::vector<std::string> names;
  names.reserve(requests.size());
  for (const TensorRequest& request : requests) names.push_back(request.name);
  return names;
}

// The error of `outcome`'s one failure, which must be of `name`, with nothing ready; "" otherwise.
std::string OnlyFailure(const ReadinessTable::Outcome& outcome, const std::string& name) {
  EXPECT_TRUE(outcome.ready.empty());
  if (outcome.failed.size() != 1U) {
    ADD_FAILURE() << outcome.failed.size() << " failures, not 1";
    return "";
  }
  EXPECT_EQ(outcome.failed[0].name, name);
  return outcome.failed[0].error;
}

TEST(ReadinessTable, ANameIsReadyWhenEveryRankHasAnnouncedIt) {
  ReadinessTable table(3);
  const Clock::time_point now = Clock::now();
  auto outcome = table.Apply({{Announce("a"), Announce("b")}, {Announce("b")}, {}}, now);
  EXPECT_TRUE(outcome.ready.empty());
  EXPECT_EQ(table.pending(), 2U);
  outcome = table.Apply({{}, {Announce("a")}, {Announce("b")}}, now);
  EXPECT_EQ(Names(outcome.ready), std::vector<std::string>{"b"});
  outcome = table.Apply({{}, {}, {Announce("a")}}, now);
  EXPECT_EQ(Names(outcome.ready), std::vector<std::string>{"a"});
  EXPECT_EQ(table.pending(), 0U);
}

TEST(ReadinessTable, NamesReadyTogetherRunInTheOrderTheyWereFirstAnnounced) {
  // Rank 1 announces in the opposite order: the first announcement (rank 0's) decides.
  ReadinessTable table(2);
  const Clock::time_point now = Clock::now();
  table.Apply({{Announce("x"), Announce("y")}, {}}, now);
  table.Apply({{Announce("z")}, {}}, now);
  auto outcome = table.Apply({{}, {Announce("z"), Announce("y"), Announce("x")}}, now);
  EXPECT_EQ(Names(outcome.ready), (std::vector<std::string>{"x", "y", "z"}));
  // Within one cycle: rank order, then place in the rank's list.
  outcome = table.Apply({{Announce("q")}, {Announce("p"), Announce("q")}}, now);
  EXPECT_EQ(Names(outcome.ready), std::vector<std::string>{"q"});
  outcome = table.Apply({{Announce("p")}, {}}, now);
  EXPECT_EQ(Names(outcome.ready), std::vector<std::string>{"p"});
}

TEST(ReadinessTable, DifferentParametersFailTheNameWithBothDescriptions) {
  ReadinessTable table(2);
  const std::string error =
      "'w' was submitted as allreduce of float32 x 10 sum by rank 0 but as allreduce of float32 x 12 sum by "
      "rank 1";
  EXPECT_EQ(OnlyFailure(table.Apply({{Announce("w", 10)}, {Announce("w", 12)}}, Clock::now()), "w"), error);
  EXPECT_EQ(table.pending(), 0U);
  // Whoever announced first, the lower rank is named first.
  table.Apply({{}, {Announce("w", 12)}}, Clock::now());
  EXPECT_EQ(OnlyFailure(table.Apply({{Announce("w", 10)}, {}}, Clock::now()), "w"), error);
}

TEST(ReadinessTable, AMismatchNamesTheRankWhoseRequestWasCompared) {
  // Allgather rows differ per rank: rank 1 announces [2, 3] first, rank 0 then [1, 3] (it matches), rank 2
  // [3, 1, 3]. The odd shape was compared with rank 1's, so rank 1 is named with [2, 3], not rank 0.
  auto rows = [](uint64_t count, std::vector<int64_t> shape) {
    Announcement a = Announce("g", count);
    a.request.kind = CollectiveKind::kAllgatherv;
    a.request.row = 3;
    a.request.shape = std::move(shape);
    return a;
  };
  ReadinessTable table(3);
  table.Apply({{}, {rows(6, {2, 3})}, {}}, Clock::now());
  const std::string error =
      OnlyFailure(table.Apply({{rows(3, {1, 3})}, {}, {rows(9, {3, 1, 3})}}, Clock::now()), "g");
  EXPECT_NE(error.find("shape [2, 3] by rank 1 but as"), std::string::npos) << error;
  EXPECT_NE(error.find("shape [3, 1, 3] by rank 2"), std::string::npos) << error;
}

TEST(ReadinessTable, InvalidationsAreCollectedOnce) {
  ReadinessTable table(2);
  Announcement invalidate = Announce("v");
  invalidate.kind = Announcement::Kind::kInvalidate;
  auto outcome = table.Apply({{invalidate}, {invalidate}}, Clock::now());
  EXPECT_EQ(outcome.invalidated, std::vector<std::string>{"v"});
  EXPECT_TRUE(outcome.ready.empty());
}

TEST(ReadinessTable, StalledNamesNameTheRanksMissing) {
  ReadinessTable table(4);
  const Clock::time_point start = Clock::now();
  table.Apply({{Announce("slow")}, {}, {Announce("slow")}, {}}, start);
  EXPECT_TRUE(table.Stalled(start + std::chrono::seconds(59), std::chrono::seconds(60)).empty());
  auto stalled = table.Stalled(start + std::chrono::seconds(61), std::chrono::seconds(60));
  ASSERT_EQ(stalled.size(), 1U);
  EXPECT_EQ(stalled[0].name, "slow");
  EXPECT_EQ(stalled[0].submitted, (std::vector<int>{0, 2}));
  EXPECT_EQ(stalled[0].missing, (std::vector<int>{1, 3}));
  EXPECT_EQ(stalled[0].waited, std::chrono::seconds(61));
}

TEST(ReadinessTable, ProbesOfCachedNamesLastOneApply) {
  ReadinessTable table(3);
  const Clock::time_point now = Clock::now();
  table.Apply({{Probe("cached")}, {}, {Probe("cached")}}, now);
  auto stalled = table.Stalled(now, std::chrono::seconds(60));
  ASSERT_EQ(stalled.size(), 1U);
  EXPECT_EQ(stalled[0].missing, std::vector<int>{1});
  EXPECT_EQ(table.pending(), 0U) << "a probe is not a request";
  table.Apply({{}, {}, {}}, now);
  EXPECT_TRUE(table.Stalled(now, std::chrono::seconds(60)).empty());
}

TEST(ReadinessTable, AJoinedRankCountsAsHavingEveryAllreduceUntilAllHaveJoined) {
  ReadinessTable table(3);
  const Clock::time_point now = Clock::now();
  // "a" announced before rank 1 joins becomes ready when it does; "b" waits for rank 2 only.
  auto outcome = table.Apply({{Announce("a")}, {}, {Announce("a")}}, now);
  EXPECT_TRUE(outcome.ready.empty());
  outcome = table.Apply({{Announce("b")}, {Join(5)}, {}}, now);
  EXPECT_EQ(Names(outcome.ready), std::vector<std::string>{"a"});
  EXPECT_TRUE(table.joined(1));
  EXPECT_EQ(table.joined_count(), 1);
  EXPECT_FALSE(outcome.joined);
  // Rank 1 is not missing from "b": only rank 2 is.
  const auto stalled = table.Stalled(now, Clock::duration::zero());
  ASSERT_EQ(stalled.size(), 1U);
  EXPECT_EQ(stalled[0].submitted, std::vector<int>{0});
  EXPECT_EQ(stalled[0].missing, std::vector<int>{2});
  outcome = table.Apply({{}, {}, {Announce("b")}}, now);
  EXPECT_EQ(Names(outcome.ready), std::vector<std::string>{"b"});
  // Ranks 2 then 0 join; within one cycle the higher rank's announcement comes last.
  outcome = table.Apply({{}, {}, {Join(7)}}, now);
  EXPECT_FALSE(outcome.joined);
  outcome = table.Apply({{Join(6)}, {}, {}}, now);
  ASSERT_TRUE(outcome.joined);
  EXPECT_EQ(outcome.joined->last_rank, 0);
  EXPECT_EQ(outcome.joined->unnamed_calls, 7U);
  EXPECT_FALSE(table.joined(1));
  EXPECT_EQ(table.joined_count(), 0);
  // Afterwards every rank must announce again.
  outcome = table.Apply({{Announce("c")}, {Announce("c")}, {}}, now);
  EXPECT_TRUE(outcome.ready.empty());
}

TEST(ReadinessTable, RanksJoiningInOneCycleEndWithTheHighest) {
  ReadinessTable table(3);
  auto outcome = table.Apply({{Join()}, {}, {Join()}}, Clock::now());
  EXPECT_FALSE(outcome.joined);
  outcome = table.Apply({{}, {Join()}, {}}, Clock::now());
  ASSERT_TRUE(outcome.joined);
  EXPECT_EQ(outcome.joined->last_rank, 1);
  outcome = table.Apply({{Join()}, {Join()}, {Join()}}, Clock::now());
  ASSERT_TRUE(outcome.joined);
  EXPECT_EQ(outcome.joined->last_rank, 2);
}

TEST(ReadinessTable, OtherCollectivesFailWhileARankHasJoined) {
  ReadinessTable table(2);
  Announcement broadcast = Announce("(unnamed broadcast 3)", 4, DataType::kInt32);
  broadcast.request.kind = CollectiveKind::kBroadcast;
  broadcast.request.root = 1;
  EXPECT_EQ(
      OnlyFailure(table.Apply({{Join()}, {broadcast}}, Clock::now()), "(unnamed broadcast 3)"),
      "'(unnamed broadcast 3)': a broadcast of int32 x 4 from rank 1 cannot run while rank 0 has joined "
      "(Join): only allreduces run until every rank has joined, as in Horovod");
  EXPECT_EQ(table.pending(), 0U);
}

}  // namespace
}  // namespace hvdrun
