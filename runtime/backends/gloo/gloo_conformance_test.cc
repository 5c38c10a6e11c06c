// The backend conformance cases (runtime/backend_conformance.h) over the Gloo backend, for world
// sizes 1..4, each rank a thread with its own GlooBackend over TCP on 127.0.0.1.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

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

}  // namespace
}  // namespace hvdrun
