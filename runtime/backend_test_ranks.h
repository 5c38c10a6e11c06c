// RunBackendRanks: the threads harness of the backend conformance cases (runtime/backend_conformance.h)
// for the backends whose ranks can be threads of one process (Gloo, NCCL), and the report that turns
// their checks into gtest failures. For tests only.
#ifndef HVDRUN_RUNTIME_BACKEND_TEST_RANKS_H_
#define HVDRUN_RUNTIME_BACKEND_TEST_RANKS_H_

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "common/latch.h"
#include "runtime/backend.h"
#include "runtime/backend_conformance.h"
#include "runtime/in_memory_store.h"

namespace hvdrun::testing {

// Every failed check and failed collective is an ADD_FAILURE naming the rank (gtest's assertions
// are thread-safe).
class GtestConformanceReport : public ConformanceReport {
 public:
  explicit GtestConformanceReport(int rank) : rank_(rank) {}
  void Check(bool ok, const std::string& what) override {
    if (!ok) ADD_FAILURE() << "rank " << rank_ << ": " << what;
  }
  void CollectiveFailed(const std::string& call, const Status& status) override {
    ADD_FAILURE() << "rank " << rank_ << ": " << call << " failed: " << status.message();
  }

 private:
  int rank_;
};

// The context of rank `rank` of `size` ranks on one host (local_rank = rank) bootstrapping through
// `store`, with host address 127.0.0.1 and a 30 s timeout.
inline BackendContext ThreadRankContext(int rank, int size, KeyValueStore* store) {
  BackendContext context;
  context.rank = rank;
  context.size = size;
  context.local_rank = rank;
  context.local_size = size;
  context.store = store;
  context.host_address = "127.0.0.1";
  context.timeout = std::chrono::seconds(30);
  return context;
}

// Creates a backend of `kind` for each of `size` ranks (local_rank = rank), each on a thread of its
// own, all bootstrapping through one in-memory store (NewInMemoryStore) with host address 127.0.0.1, and
// calls body(backend, context) on each; returns when all have returned. Each backend is destroyed on its own
// thread once every rank's body has returned, so that none goes while a peer still needs it.
// `before_create(rank)`, when given, runs first on each rank's thread (NCCL selects the rank's
// device there). A Create failure is a test failure.
inline void RunBackendRanks(BackendKind kind, int size,
                            const std::function<void(Backend& backend, const BackendContext& context)>& body,
                            const std::function<void(int rank)>& before_create = nullptr) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  Latch bodies_done(size);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(size));
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([rank, size, kind, store, &bodies_done, &body, &before_create] {
      if (before_create) before_create(rank);
      const BackendContext context = ThreadRankContext(rank, size, store.get());
      StatusOr<std::unique_ptr<Backend>> backend = CreateBackend(kind, context);
      if (!backend.ok()) {
        ADD_FAILURE() << "rank " << rank << ": " << backend.status().message();
        bodies_done.CountDown();
        return;
      }
      body(*backend.value(), context);
      bodies_done.ArriveAndWait();
    });
  }
  for (std::thread& thread : threads) thread.join();
}

// What a conformance case runs as on `context`'s rank: `backend` (of `kind`) with host buffers, the
// sum-then-divide average and every count, its checks reported to `report`. Neither is owned.
inline ConformanceRank ThreadConformanceRank(Backend& backend, BackendKind kind,
                                             const BackendContext& context, ConformanceReport& report) {
  ConformanceRank rank;
  rank.backend = &backend;
  rank.kind = kind;
  rank.rank = context.rank;
  rank.size = context.size;
  rank.report = &report;
  return rank;
}

// Runs `conformance_case` on `size` ranks as threads; `configure` fills in what the backend needs
// beyond host buffers and the sum-then-divide average (NCCL: device buffers, ncclAvg's rounding).
inline void RunConformanceCaseOnThreads(BackendKind kind, int size, const ConformanceCase& conformance_case,
                                        const std::function<void(ConformanceRank& rank)>& configure = nullptr,
                                        const std::function<void(int rank)>& before_create = nullptr) {
  RunBackendRanks(
      kind, size,
      [&](Backend& backend, const BackendContext& context) {
        GtestConformanceReport report(context.rank);
        ConformanceRank rank = ThreadConformanceRank(backend, kind, context, report);
        if (configure) configure(rank);
        conformance_case.run(rank);
      },
      before_create);
}

// A threads harness's test parameters: every conformance case x world sizes 1..4, named
// "<case>_size<N>".
using ConformanceParam = std::tuple<size_t, int>;

inline auto EveryConformanceCaseAndSize() {
  return ::testing::Combine(::testing::Range(size_t{0}, ConformanceCases().size()),
                            ::testing::Values(1, 2, 3, 4));
}

inline std::string ConformanceParamName(const ::testing::TestParamInfo<ConformanceParam>& info) {
  return std::string(ConformanceCases()[std::get<0>(info.param)].name) + "_size" +
         std::to_string(std::get<1>(info.param));
}

// Forwards every collective to a backend it does not own, except Alltoallv, which stays Backend's
// own (blocks padded to the largest count, over Alltoall): a backend to wrap around another without
// owning it, and what a backend without an alltoall of uneven blocks inherits.
class ForwardingBackend : public Backend {
 public:
  explicit ForwardingBackend(Backend& inner) : inner_(inner) {}
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
  Status Reducescatter(const void* send, void* recv, const std::vector<size_t>& counts, int rank,
                       DataType type, ReduceOp op) override {
    return inner_.Reducescatter(send, recv, counts, rank, type, op);
  }
  Status Barrier() override { return inner_.Barrier(); }
  Status BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) override {
    return inner_.BaselineAllreduce(buffer, count, type, op);
  }

 private:
  Backend& inner_;
};

}  // namespace hvdrun::testing

#endif  // HVDRUN_RUNTIME_BACKEND_TEST_RANKS_H_
