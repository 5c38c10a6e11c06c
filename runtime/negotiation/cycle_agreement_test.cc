#include "runtime/negotiation/cycle_agreement.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hvdrun {
namespace {

std::vector<TensorRequest> Requests(const std::vector<std::string>& names) {
  std::vector<TensorRequest> requests;
  for (const std::string& name : names) {
    TensorRequest request;
    request.name = name;
    request.count = 4;
    requests.push_back(request);
  }
  return requests;
}

// The response cache's bits are the order cached responses run in. Switched off and on again (the
// autotuner's cache phase) while the step's responses run in the middle of a step's order ("c",
// then "a", "b"), the cache keeps the bits it was filled with at the start, so a step's fused
// responses stay in the order they were at first.
TEST(CycleAgreement, TheCacheKeepsItsOrderWhileItIsOffAndOnAgain) {
  CycleAgreement agreement(0, 2, 8);
  agreement.Learn(Requests({"a", "b", "c"}));
  agreement.SetCacheEnabled(false);
  agreement.Learn(Requests({"c", "a", "b"}));
  agreement.SetCacheEnabled(true);
  agreement.Learn(Requests({"c", "a", "b"}));
  const std::vector<std::string> names = {"a", "b", "c"};
  for (uint32_t bit = 0; bit < names.size(); ++bit) {
    uint32_t found = 99;
    EXPECT_EQ(agreement.cache().Find(Requests({names[bit]})[0], &found), ResponseCache::Lookup::kHit);
    EXPECT_EQ(found, bit) << names[bit];
  }
}

// What runs while the cache is off is still learnt, as every rank learns it: a name first run then
// is cached when the cache serves again.
TEST(CycleAgreement, TheCacheLearnsWhileItIsOff) {
  CycleAgreement agreement(1, 2, 8);
  agreement.SetCacheEnabled(false);
  agreement.Learn(Requests({"x"}));
  agreement.SetCacheEnabled(true);
  uint32_t bit = 99;
  EXPECT_EQ(agreement.cache().Find(Requests({"x"})[0], &bit), ResponseCache::Lookup::kHit);
  EXPECT_EQ(bit, 0U);
}

}  // namespace
}  // namespace hvdrun
