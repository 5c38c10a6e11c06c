// TestJob: runs a function on N ranks, each a thread with its own Runtime over real TCP on
// 127.0.0.1, all bootstrapping through one in-memory store (the Gloo way of testing collectives).
// For tests only.
#ifndef HVDRUN_RUNTIME_TEST_JOB_H_
#define HVDRUN_RUNTIME_TEST_JOB_H_

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/in_memory_store.h"

namespace hvdrun::testing {

inline RuntimeOptions TestOptions(int rank, int size, std::shared_ptr<KeyValueStore> store,
                                  std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  RuntimeOptions options;
  options.backend = BackendKind::kGloo;
  options.rank = rank;
  options.size = size;
  options.local_rank = rank;
  options.local_size = size;
  options.store = std::move(store);
  options.host_address = "127.0.0.1";
  options.timeout = timeout;
  return options;
}

// Initializes `size` Runtimes on as many threads and calls body(runtime) on each; returns when all
// have returned. An Init failure is a test failure. `configure`, when given, changes each rank's
// options before Init.
inline void RunRanks(int size, const std::function<void(Runtime&)>& body,
                     CollectiveOrder order = CollectiveOrder::kCallOrder,
                     const std::function<void(RuntimeOptions&)>& configure = nullptr) {
  auto store = NewInMemoryStore();
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(size));
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([rank, size, store, &body, order, &configure] {
      RuntimeOptions options = TestOptions(rank, size, store);
      options.order = order;
      if (configure) configure(options);
      StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options);
      ASSERT_TRUE(runtime.ok()) << "rank " << rank << ": " << runtime.status().message();
      body(*runtime.value());
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace hvdrun::testing

#endif  // HVDRUN_RUNTIME_TEST_JOB_H_
