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

// Every collective of `inner` but Alltoallv, which stays Backend's own: blocks padded to the largest
// count, over Alltoall (what a backend without an alltoall of uneven blocks inherits).
class PaddedAlltoallv : public Backend {
 public:
  explicit PaddedAlltoallv(Backend& inner) : inner_(inner) {}
  Status Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) override {
    return inner_.Allreduce(send, recv, count, type, op);
  }
  Status Broadcast(void* buffer, size_t count, DataType type, int root) override {
    return inner_.Broadcast(buffer, count, type, root);
  }
  Status Allgather(const void* send, void* recv, size_t count, DataType type) override {
    return inner_.Allgather(send, recv, count, type);
  }
  Status Alltoall(const void* send, void* recv, size_t count, DataType type) override {
    return inner_.Alltoall(send, recv, count, type);
  }
  Status Barrier() override { return inner_.Barrier(); }
  Status BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) override {
    return inner_.BaselineAllreduce(buffer, count, type, op);
  }

 private:
  Backend& inner_;
};

TEST(GlooConformance, BackendsOwnAlltoallvPadsOverAlltoall) {
  const testing::ConformanceCase* uneven = nullptr;
  for (const testing::ConformanceCase& conformance_case : testing::ConformanceCases()) {
    if (std::strcmp(conformance_case.name, "AlltoallvUnevenCounts") == 0) uneven = &conformance_case;
  }
  ASSERT_NE(uneven, nullptr);
  for (int size = 1; size <= 4; ++size) {
    testing::RunBackendRanks(BackendKind::kGloo, size, [&](Backend& backend, const BackendContext& context) {
      PaddedAlltoallv padded(backend);
      testing::GtestConformanceReport report(context.rank);
      testing::ConformanceRank rank;
      rank.backend = &padded;
      rank.kind = BackendKind::kGloo;
      rank.rank = context.rank;
      rank.size = context.size;
      rank.report = &report;
      uneven->run(rank);
    });
  }
}

}  // namespace
}  // namespace hvdrun
