#include "runtime/shm/shm_backend.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <latch>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/backend_conformance.h"
#include "runtime/backend_test_ranks.h"
#include "runtime/shm/shm_test_group.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

// The backend conformance cases through a ShmBackend in front of Gloo, ranks as threads: every
// type, op and count of the allreduce case goes through shared memory, the other collectives to
// Gloo.
class ShmConformanceTest : public ::testing::TestWithParam<testing::ConformanceParam> {};

TEST_P(ShmConformanceTest, Case) {
  const auto [which, size] = GetParam();
  const testing::ConformanceCase& conformance_case = testing::ConformanceCases()[which];
  std::shared_ptr<KeyValueStore> segments = NewInMemoryStore();
  testing::RunBackendRanks(BackendKind::kGloo, size, [&](Backend& gloo, const BackendContext& context) {
    StatusOr<std::unique_ptr<ShmSegment>> segment = ShmSegment::Open(
        *segments, testing::TestShmGroup(context.rank, context.size), ShmSegment::SlotBytesFor(context.size));
    ASSERT_TRUE(segment.ok()) << segment.status().message();
    // The Gloo backend stays RunBackendRanks'; this one only borrows it.
    ShmBackend shm(std::make_unique<testing::ForwardingBackend>(gloo), std::move(segment).value(),
                   context.size);
    testing::GtestConformanceReport report(context.rank);
    testing::ConformanceRank rank;
    rank.backend = &shm;
    rank.kind = BackendKind::kGloo;
    rank.rank = context.rank;
    rank.size = context.size;
    rank.report = &report;
    conformance_case.run(rank);
  });
}

INSTANTIATE_TEST_SUITE_P(Shm, ShmConformanceTest, testing::EveryConformanceCaseAndSize(),
                         testing::ConformanceParamName);

// The conformance cases through the hierarchical allreduce: 2 "hosts" of 2 local ranks each, every
// rank a thread; each host's ranks share a segment, and each local rank's slices cross to the other
// host over a Gloo backend of their own (WithSharedMemory, as the Runtime creates them).
class HierarchicalConformanceTest : public ::testing::TestWithParam<size_t> {};

constexpr int kHosts = 2;
constexpr int kLocal = 2;

// The options of `context`'s rank in a job of kHosts hosts of kLocal ranks, over Gloo.
RuntimeOptions TwoHostsOptions(const BackendContext& context) {
  RuntimeOptions options;
  options.backend = BackendKind::kGloo;
  options.rank = context.rank;
  options.size = context.size;
  options.local_rank = context.rank % kLocal;
  options.local_size = kLocal;
  options.cross_rank = context.rank / kLocal;
  options.cross_size = kHosts;
  options.timeout = std::chrono::seconds(30);
  return options;
}

TEST_P(HierarchicalConformanceTest, Case) {
  const testing::ConformanceCase& conformance_case = testing::ConformanceCases()[GetParam()];
  std::shared_ptr<KeyValueStore> shared = NewInMemoryStore();
  testing::RunBackendRanks(
      BackendKind::kGloo, kHosts * kLocal, [&](Backend& gloo, const BackendContext& context) {
        RuntimeOptions options = TwoHostsOptions(context);
        options.hierarchical_allreduce = true;
        ASSERT_FALSE(SharedMemoryServes(options));
        StatusOr<bool> hierarchical = AgreeOnHierarchical(options, *shared, "test/");
        ASSERT_TRUE(hierarchical.ok()) << hierarchical.status().message();
        ASSERT_TRUE(hierarchical.value());
        StatusOr<std::unique_ptr<ShmBackend>> backend = WithSharedMemory(
            std::make_unique<testing::ForwardingBackend>(gloo), options, *shared, "test/", true);
        ASSERT_TRUE(backend.ok()) << backend.status().message();
        testing::GtestConformanceReport report(context.rank);
        testing::ConformanceRank rank;
        rank.backend = backend.value().get();
        rank.kind = BackendKind::kGloo;
        rank.rank = context.rank;
        rank.size = context.size;
        rank.report = &report;
        conformance_case.run(rank);
      });
}

std::string CaseName(const ::testing::TestParamInfo<size_t>& param) {
  return testing::ConformanceCases()[param.param].name;
}

INSTANTIATE_TEST_SUITE_P(TwoHostsOfTwo, HierarchicalConformanceTest,
                         ::testing::Range(size_t{0}, testing::ConformanceCases().size()), CaseName);

// The job's backend, counting the allreduces that reach it.
class CountingBackend : public testing::ForwardingBackend {
 public:
  using testing::ForwardingBackend::ForwardingBackend;
  Status Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) override {
    ++allreduces;
    return testing::ForwardingBackend::Allreduce(send, recv, count, type, op);
  }
  int allreduces = 0;
};

// Switched off (what the autotuner tries), a hierarchical ShmBackend's allreduces are the job's
// backend's flat ones over every rank; switched on again, they go through shared memory and the
// cross-host backend. The averages are the same either way.
TEST(ShmBackendTest, TheHierarchicalAllreduceSwitchesToTheFlatRingAndBack) {
  std::shared_ptr<KeyValueStore> shared = NewInMemoryStore();
  testing::RunBackendRanks(
      BackendKind::kGloo, kHosts * kLocal, [&](Backend& gloo, const BackendContext& context) {
        const RuntimeOptions options = TwoHostsOptions(context);
        auto counting = std::make_unique<CountingBackend>(gloo);
        CountingBackend* job = counting.get();
        StatusOr<std::unique_ptr<ShmBackend>> backend =
            WithSharedMemory(std::move(counting), options, *shared, "test/", true);
        ASSERT_TRUE(backend.ok()) << backend.status().message();
        const float average = static_cast<float>(kHosts * kLocal + 1) / 2;  // of rank + 1
        for (bool hierarchical : {true, false, true}) {
          backend.value()->set_hierarchical(hierarchical);
          const int before = job->allreduces;
          std::vector<float> values(1000, static_cast<float>(context.rank + 1));
          Status status = backend.value()->Allreduce(values.data(), values.data(), values.size(),
                                                     DataType::kFloat32, ReduceOp::kAverage);
          ASSERT_TRUE(status.ok()) << status.message();
          EXPECT_EQ(values.front(), average) << "hierarchical " << hierarchical;
          EXPECT_EQ(values.back(), average) << "hierarchical " << hierarchical;
          EXPECT_EQ(job->allreduces - before, hierarchical ? 0 : 1) << "hierarchical " << hierarchical;
        }
      });
}

TEST(SharedMemoryServesTest, HierarchicalIsAskedOverGlooWithSharedMemoryOnSeveralHosts) {
  RuntimeOptions options;
  options.backend = BackendKind::kGloo;
  options.size = 4;
  options.local_size = 2;
  options.cross_size = 2;
  options.hierarchical_allreduce = true;
  EXPECT_TRUE(HierarchicalAsked(options));
  options.backend = BackendKind::kMpi;
  EXPECT_FALSE(HierarchicalAsked(options));
  options.backend = BackendKind::kGloo;
  options.shared_memory = false;
  EXPECT_FALSE(HierarchicalAsked(options));
  options.shared_memory = true;
  options.local_size = 4;  // one host
  options.cross_size = 1;
  EXPECT_FALSE(HierarchicalAsked(options));
}

// Hosts of 1, 2 and 3 ranks: the middle host's local_size times the host count is the job's size,
// but the ranks agree that the hosts differ, every one of them. Each rank's cross_size is Horovod's,
// as hvdrun gives it: the hosts that have its local rank (3, 2, 1 for local ranks 0, 1, 2).
TEST(SharedMemoryServesTest, RanksAgreeThatUnevenHostsReduceFlat) {
  const std::vector<int> host_of = {0, 1, 1, 2, 2, 2};
  const std::vector<int> ranks_on = {1, 2, 3};
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  std::vector<std::thread> threads;
  threads.reserve(6);
  for (int rank = 0; rank < 6; ++rank) {
    threads.emplace_back([&, rank] {
      RuntimeOptions options;
      options.backend = BackendKind::kGloo;
      options.rank = rank;
      options.size = 6;
      options.cross_rank = host_of[static_cast<size_t>(rank)];
      options.local_size = ranks_on[static_cast<size_t>(options.cross_rank)];
      options.local_rank = rank - (options.cross_rank * (options.cross_rank + 1)) / 2;
      options.cross_size = 3 - options.local_rank;
      options.hierarchical_allreduce = true;
      options.timeout = std::chrono::seconds(5);
      StatusOr<bool> hierarchical = AgreeOnHierarchical(options, *store, "test/");
      ASSERT_TRUE(hierarchical.ok()) << hierarchical.status().message();
      EXPECT_FALSE(hierarchical.value()) << "rank " << rank;
    });
  }
  for (std::thread& thread : threads) thread.join();
}

TEST(SharedMemoryServesTest, OnlyHostMemoryJobsOfSeveralRanksOnOneHost) {
  RuntimeOptions options;
  options.backend = BackendKind::kGloo;
  options.size = options.local_size = 2;
  EXPECT_TRUE(SharedMemoryServes(options));
  options.backend = BackendKind::kMpi;
  EXPECT_TRUE(SharedMemoryServes(options));
  options.backend = BackendKind::kNccl;
  EXPECT_FALSE(SharedMemoryServes(options));
  options.backend = BackendKind::kGloo;
  options.shared_memory = false;
  EXPECT_FALSE(SharedMemoryServes(options));
  options.shared_memory = true;
  options.size = options.local_size = 1;
  EXPECT_FALSE(SharedMemoryServes(options));
  options.size = 4;
  options.local_size = 2;
  EXPECT_FALSE(SharedMemoryServes(options));
}

// Through a whole Runtime: negotiated and fused allreduces over shared memory, which the runtime,
// its report and its timeline name; with shared_memory off, over Gloo.
TEST(ShmRuntimeTest, NegotiatedFusedAllreducesGoThroughSharedMemory) {
  for (bool shared_memory : {true, false}) {
    const std::string dir = ::testing::TempDir() + "/shm_runtime_" + std::to_string(shared_memory);
    std::shared_ptr<KeyValueStore> store = NewInMemoryStore();  // where the reports stay
    testing::RunRanks(
        3,
        [&](Runtime& runtime) {
          EXPECT_EQ(runtime.allreduce_path(), shared_memory ? "shm" : "gloo");
          ASSERT_TRUE(runtime.SendReport(R"({"summary": {}})").ok());
          constexpr int kTensors = 5;
          std::vector<std::vector<float>> tensors(kTensors);
          std::vector<CollectiveHandle> handles;
          for (int t = 0; t < kTensors; ++t) {
            tensors[t].assign(size_t{1000} + 77 * static_cast<size_t>(t),
                              static_cast<float>(runtime.rank() + t));
            handles.push_back(runtime.AllreduceAsync("grad" + std::to_string(t), tensors[t].data(),
                                                     tensors[t].data(), tensors[t].size(), DataType::kFloat32,
                                                     ReduceOp::kSum));
          }
          for (int t = 0; t < kTensors; ++t) {
            ASSERT_TRUE(handles[t].Wait().ok());
            for (float value : tensors[t]) ASSERT_EQ(value, static_cast<float>(0 + 1 + 2 + 3 * t));
          }
          // fp8's values travel by Gloo's alltoall and allgather: the timeline names Gloo for it.
          std::vector<float> small(2048, 1.0F);
          ASSERT_TRUE(runtime
                          .Allreduce("fp8", small.data(), small.data(), small.size(), DataType::kFloat32,
                                     ReduceOp::kSum, CompressionFormat::kFloat8E4M3)
                          .ok());
        },
        CollectiveOrder::kNegotiated,
        [&](RuntimeOptions& options) {
          options.store = store;
          options.shared_memory = shared_memory;
          options.timeline.path = dir + "/rank-" + std::to_string(options.rank) + ".json";
        });
    StatusOr<std::string> report = store->Get("report/0", std::chrono::seconds(1));
    ASSERT_TRUE(report.ok()) << report.status().message();
    EXPECT_EQ(nlohmann::json::parse(report.value())["libhvdrun"]["allreduce_path"],
              shared_memory ? "shm" : "gloo");
    std::ifstream file(dir + "/rank-0.json");
    std::stringstream timeline;
    timeline << file.rdbuf();
    EXPECT_NE(timeline.str().find("GLOO_ALLREDUCE"), std::string::npos);
    EXPECT_EQ(timeline.str().find("SHM_ALLREDUCE") != std::string::npos, shared_memory);
  }
}

// The job's backend, counting what it is told by Abandon.
class AbandonedBackend : public testing::ForwardingBackend {
 public:
  using testing::ForwardingBackend::ForwardingBackend;
  void Abandon() override { ++abandoned; }
  int abandoned = 0;
};

// A local rank that does not arrive within the stall shutdown time fails the others' allreduce, and
// they abandon the job's backend (whose MPI end would otherwise wait for that rank forever); the
// rank that stayed away abandons nothing.
TEST(ShmBackendTest, AnAllreduceARankMissesAbandonsTheJobsBackend) {
  std::shared_ptr<KeyValueStore> segments = NewInMemoryStore();
  std::latch failed(1);
  testing::RunBackendRanks(BackendKind::kGloo, 2, [&](Backend& gloo, const BackendContext& context) {
    ShmGroup group = testing::TestShmGroup(context.rank, context.size);
    group.barrier_limit = std::chrono::milliseconds(300);
    StatusOr<std::unique_ptr<ShmSegment>> segment =
        ShmSegment::Open(*segments, group, ShmSegment::SlotBytesFor(context.size));
    ASSERT_TRUE(segment.ok()) << segment.status().message();
    auto abandoned = std::make_unique<AbandonedBackend>(gloo);
    AbandonedBackend* job = abandoned.get();
    ShmBackend shm(std::move(abandoned), std::move(segment).value(), context.size);
    std::vector<float> values(16, 1.0F);
    if (context.rank == 1) {
      failed.wait();  // rank 1 stays away until rank 0 has given up on it
      EXPECT_EQ(job->abandoned, 0);
      return;
    }
    Status status =
        shm.Allreduce(values.data(), values.data(), values.size(), DataType::kFloat32, ReduceOp::kSum);
    failed.count_down();
    EXPECT_NE(status.message().find("did not arrive within the stall shutdown time"), std::string::npos)
        << status.message();
    EXPECT_EQ(job->abandoned, 1);
  });
}

}  // namespace
}  // namespace hvdrun
