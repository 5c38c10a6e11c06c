// The backend conformance cases (runtime/backend_conformance.h) over the Gloo backend, for world
// sizes 1..4, each rank a thread with its own GlooBackend over TCP on 127.0.0.1.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/backend_conformance.h"
#include "runtime/backend_test_ranks.h"

namespace hvdrun {
namespace {

class GlooConformanceTest : public ::testing::TestWithParam<testing::ConformanceParam> {};

TEST_P(GlooConformanceTest, Case) {
  const auto [which, size] = GetParam();
  testing::RunConformanceCaseOnThreads(BackendKind::kGloo, size, testing::ConformanceCases()[which]);
}

INSTANTIATE_TEST_SUITE_P(Gloo, GlooConformanceTest, testing::EveryConformanceCaseAndSize(),
                         testing::ConformanceParamName);

TEST(GlooConformance, BackendsOwnAlltoallvPadsOverAlltoall) {
  const testing::ConformanceCase* uneven = nullptr;
  for (const testing::ConformanceCase& conformance_case : testing::ConformanceCases()) {
    if (std::strcmp(conformance_case.name, "AlltoallvUnevenCounts") == 0) uneven = &conformance_case;
  }
  ASSERT_NE(uneven, nullptr);
  for (int size = 1; size <= 4; ++size) {
    testing::RunBackendRanks(BackendKind::kGloo, size, [&](Backend& backend, const BackendContext& context) {
      testing::ForwardingBackend padded(backend);
      testing::GtestConformanceReport report(context.rank);
      uneven->run(testing::ThreadConformanceRank(padded, BackendKind::kGloo, context, report));
    });
  }
}

}  // namespace
}  // namespace hvdrun
