// TestJob: runs a function on N ranks, each a thread with its own Runtime over real TCP on
// 127.0.0.1, all bootstrapping through one in-memory store (the Gloo way of testing collectives);
// and the named allreduces those ranks submit and check. For tests only.
#ifndef HVDRUN_RUNTIME_TEST_JOB_H_
#define HVDRUN_RUNTIME_TEST_JOB_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/element_conversion.h"
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

// One named allreduce of a test.
struct NamedTensor {
  std::string name;
  DataType type;
  ReduceOp op;
  size_t count;
  CompressionFormat compression = CompressionFormat::kNone;
};

// What each rank puts into a named allreduce and what it must get back.
struct NamedAllreduceCheck {
  std::function<double(size_t i)> value;                         // this rank's element i
  std::function<double(const NamedTensor&, size_t i)> expected;  // every rank's element i of the result
  double float32_relative_tolerance = 0;                         // other types, and 0: exact
  std::string where;                                             // in each failure: " at step 2"
};

// Submits an in-place AllreduceAsync of each tensor, in `order` (indices into `tensors`), calling
// `after_submit` after each when given; then waits for each and checks every element of its result.
// Returns at the first failure, a fatal one (::testing::Test::HasFatalFailure()).
inline void SubmitAndCheckNamedAllreduces(Runtime& runtime, const std::vector<NamedTensor>& tensors,
                                          const std::vector<size_t>& order, const NamedAllreduceCheck& check,
                                          const std::function<void()>& after_submit = nullptr) {
  std::vector<std::vector<std::byte>> buffers(tensors.size());
  std::vector<CollectiveHandle> handles(tensors.size());
  for (size_t index : order) {
    const NamedTensor& tensor = tensors[index];
    std::vector<double> values(tensor.count);
    for (size_t i = 0; i < tensor.count; ++i) values[i] = check.value(i);
    buffers[index].resize(std::max<size_t>(1, tensor.count * DataTypeSize(tensor.type)));
    ConvertFromDouble(tensor.type, values.data(), buffers[index].data(), tensor.count);
    handles[index] = runtime.AllreduceAsync(tensor.name, buffers[index].data(), buffers[index].data(),
                                            tensor.count, tensor.type, tensor.op, tensor.compression);
    if (after_submit) after_submit();
  }
  for (size_t index = 0; index < tensors.size(); ++index) {
    const NamedTensor& tensor = tensors[index];
    Status status = handles[index].Wait();
    ASSERT_TRUE(status.ok()) << tensor.name << check.where << " on rank " << runtime.rank() << ": "
                             << status.message();
    std::vector<double> result(tensor.count);
    ConvertToDouble(tensor.type, buffers[index].data(), result.data(), tensor.count);
    for (size_t i = 0; i < tensor.count; ++i) {
      const double expected = check.expected(tensor, i);
      const double tolerance =
          tensor.type == DataType::kFloat32 ? check.float32_relative_tolerance * std::fabs(expected) : 0.0;
      ASSERT_NEAR(result[i], expected, tolerance)
          << tensor.name << "[" << i << "]" << check.where << " on rank " << runtime.rank() << " of "
          << runtime.size();
    }
  }
}

}  // namespace hvdrun::testing

#endif  // HVDRUN_RUNTIME_TEST_JOB_H_
