#include "launcher/elastic/round_planner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hvdrun {
namespace {

// "id@host:rank/size local/local_size cross/cross_size" for each place, and the removed ones.
std::string Describe(const RoundPlan& plan) {
  std::string text;
  for (const WorkerPlace& p : plan.places) {
    text += p.worker_id + (p.is_new ? "+" : "") + "@" + p.host + ":" + std::to_string(p.rank) + "/" +
            std::to_string(p.size) + " " + std::to_string(p.local_rank) + "/" + std::to_string(p.local_size) +
            " " + std::to_string(p.cross_rank) + "/" + std::to_string(p.cross_size) + "; ";
  }
  for (const std::string& id : plan.removed) text += "-" + id + " ";
  return text;
}

NewWorkerId Counter() {
  auto spawned = std::make_shared<int>(10);
  return [spawned](const std::string& host, int local) {
    return host + "/" + std::to_string(local) + "/" + std::to_string((*spawned)++);
  };
}

TEST(RoundPlanner, SurvivorsKeepTheirOrderOnTheirHostsFirst) {
  // Round 0 was a0 a1 b0 b1 c0 c1; b is lost, c discovered first now.
  std::vector<LiveWorker> live = {{"a0", "a"}, {"a1", "a"}, {"c0", "c"}, {"c1", "c"}};
  RoundPlan plan = PlanRound(live, {{"c", 2}, {"a", 2}}, 0, nullptr);
  EXPECT_EQ(Describe(plan), "a0@a:0/4 0/2 0/2; a1@a:1/4 1/2 0/2; c0@c:2/4 0/2 1/2; c1@c:3/4 1/2 1/2; ");
}

TEST(RoundPlanner, WorkersOnLostHostsOrBeyondTheSlotsAreRemoved) {
  std::vector<LiveWorker> live = {{"a0", "a"}, {"a1", "a"}, {"b0", "b"}};
  RoundPlan plan = PlanRound(live, {{"a", 1}}, 0, nullptr);
  EXPECT_EQ(Describe(plan), "a0@a:0/1 0/1 0/1; -a1 -b0 ");
}

TEST(RoundPlanner, NewWorkersFillFreeSlotsUpToMaxNp) {
  std::vector<LiveWorker> live = {{"b0", "b"}, {"a0", "a"}};
  RoundPlan plan = PlanRound(live, {{"a", 2}, {"b", 1}, {"d", 3}}, 5, Counter());
  EXPECT_EQ(Describe(plan),
            "b0@b:0/5 0/1 0/3; a0@a:1/5 0/2 1/3; a/1/10+@a:2/5 1/2 0/2; d/0/11+@d:3/5 0/2 2/3; "
            "d/1/12+@d:4/5 1/2 1/2; ");
}

TEST(RoundPlanner, MaxNpAlsoBoundsTheSurvivors) {
  std::vector<LiveWorker> live = {{"a0", "a"}, {"a1", "a"}, {"a2", "a"}};
  RoundPlan plan = PlanRound(live, {{"a", 3}}, 2, Counter());
  EXPECT_EQ(Describe(plan), "a0@a:0/2 0/2 0/1; a1@a:1/2 1/2 0/1; -a2 ");
}

TEST(RoundPlanner, NothingUsableLeavesAnEmptyRound) {
  RoundPlan plan = PlanRound({{"a0", "a"}}, {}, 0, Counter());
  EXPECT_EQ(Describe(plan), "-a0 ");
}

TEST(RoundPlanner, ThePlaceValueIsTheContractsSevenFields) {
  WorkerPlace place{"a/0/0", "host-a", false, 3, 4, 1, 2, 1, 2};
  EXPECT_EQ(PlaceValue(place), "3 4 1 2 1 2 host-a");
}

}  // namespace
}  // namespace hvdrun
