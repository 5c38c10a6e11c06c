// Named collectives through negotiation, on 1-4 ranks as threads over real TCP (Gloo).
#include "runtime/negotiation/negotiated_stream.h"

#include <gtest/gtest.h>

#include <latch>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

using std::chrono::milliseconds;

NegotiationOptions Negotiation(size_t fusion_threshold = size_t{128} << 20, size_t cache_capacity = 1024) {
  NegotiationOptions negotiation;
  negotiation.fusion_threshold_bytes = fusion_threshold;
  negotiation.cache_capacity = cache_capacity;
  return negotiation;
}

void RunNegotiatedRanks(int size, const NegotiationOptions& negotiation,
                        const std::function<void(Runtime&)>& body, milliseconds timeout = milliseconds(30000),
                        const std::shared_ptr<KeyValueStore>& store = NewInMemoryStore()) {
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(size));
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([rank, size, store, &negotiation, &body, timeout] {
      RuntimeOptions options = testing::TestOptions(rank, size, store, timeout);
      options.order = CollectiveOrder::kNegotiated;
      options.negotiation = negotiation;
      StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options);
      ASSERT_TRUE(runtime.ok()) << "rank " << rank << ": " << runtime.status().message();
      body(*runtime.value());
    });
  }
  for (std::thread& thread : threads) thread.join();
}

// One named tensor of the test: its values on `rank` and what every op gives over `size` ranks.
using Tensor = testing::NamedTensor;

// Values exact in every type (small integers, and their averages over 1-4 ranks in halves).
double Value(int rank, size_t i) { return static_cast<double>((rank + 1) * static_cast<int>(i % 7 + 1)); }

double Expected(const Tensor& tensor, int size, size_t i) {
  const double unit = static_cast<double>(i % 7 + 1);
  const double sum = unit * size * (size + 1) / 2;
  switch (tensor.op) {
    case ReduceOp::kSum:
      return sum;
    case ReduceOp::kAverage: {
      const double average = sum / size;
      const bool integer = tensor.type == DataType::kInt32 || tensor.type == DataType::kInt64;
      return integer ? std::trunc(average) : average;
    }
    case ReduceOp::kMin:
      return unit;
    case ReduceOp::kMax:
      return unit * size;
    case ReduceOp::kProduct: {
      double product = 1;
      for (int rank = 1; rank <= size; ++rank) product *= unit * rank;
      return product;
    }
  }
  return NAN;
}

std::vector<Tensor> EveryTypeAndOp() {
  std::vector<Tensor> tensors;
  const DataType types[] = {DataType::kFloat32,  DataType::kFloat64, DataType::kFloat16,
                            DataType::kBFloat16, DataType::kInt32,   DataType::kInt64};
  const ReduceOp ops[] = {ReduceOp::kSum, ReduceOp::kAverage, ReduceOp::kMin, ReduceOp::kMax};
  const size_t counts[] = {1, 3, 1000, 0, 17};
  size_t n = 0;
  for (DataType type : types) {
    for (ReduceOp op : ops) {
      for (size_t count : counts) {
        tensors.push_back(Tensor{"t" + std::to_string(n++) + "." + std::string(DataTypeName(type)) + "." +
                                     std::string(ReduceOpName(op)),
                                 type, op, count});
      }
    }
  }
  // Products where they are exact (up to 7^4 x 4! at 4 ranks), fused as sums are.
  for (DataType type : {DataType::kFloat32, DataType::kFloat64, DataType::kInt64}) {
    for (size_t count : {1, 3, 1000}) {
      tensors.push_back(Tensor{"t" + std::to_string(n++) + "." + std::string(DataTypeName(type)) + ".product",
                               type, ReduceOp::kProduct, count});
    }
  }
  return tensors;
}

// Each rank submits every tensor asynchronously, in its own shuffled order, waits for all and
// checks each result exactly.
void ShuffledNamedAllreduces(Runtime& runtime, const std::vector<Tensor>& tensors, unsigned seed) {
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937 random(seed + static_cast<unsigned>(runtime.rank()) * 7919U);
  std::shuffle(order.begin(), order.end(), random);
  testing::NamedAllreduceCheck check;
  check.value = [&](size_t i) { return Value(runtime.rank(), i); };
  check.expected = [&](const Tensor& tensor, size_t i) { return Expected(tensor, runtime.size(), i); };
  testing::SubmitAndCheckNamedAllreduces(runtime, tensors, order, check, [&] {
    if (random() % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(random() % 3000));
  });
}

class NamedCollectivesTest : public ::testing::TestWithParam<int> {};

TEST_P(NamedCollectivesTest, ShuffledSubmissionsOfEveryTypeAndOpGiveExactResultsFused) {
  const std::vector<Tensor> tensors = EveryTypeAndOp();
  RunNegotiatedRanks(GetParam(), Negotiation(), [&](Runtime& runtime) {
    for (unsigned step = 0; step < 3; ++step) ShuffledNamedAllreduces(runtime, tensors, step);
    const NegotiationCounters counters = runtime.negotiation_counters();
    EXPECT_EQ(counters.tensors, 3 * tensors.size()) << "rank " << runtime.rank();
    EXPECT_LT(counters.responses, counters.tensors) << "tensors of one type and op were fused";
  });
}

TEST_P(NamedCollectivesTest, ShuffledSubmissionsGiveExactResultsWithFusionOff) {
  const std::vector<Tensor> tensors = EveryTypeAndOp();
  RunNegotiatedRanks(GetParam(), Negotiation(/*fusion_threshold=*/0), [&](Runtime& runtime) {
    ShuffledNamedAllreduces(runtime, tensors, 11);
    const NegotiationCounters counters = runtime.negotiation_counters();
    EXPECT_EQ(counters.responses, counters.tensors) << "one backend call per tensor";
    EXPECT_EQ(counters.copied_bytes + counters.in_place_bytes, 0U);
  });
}

std::string RanksName(const ::testing::TestParamInfo<int>& param) { return std::to_string(param.param); }

INSTANTIATE_TEST_SUITE_P(Ranks, NamedCollectivesTest, ::testing::Values(1, 2, 3, 4), RanksName);

TEST(NamedCollectives, RepeatedStepsAgreeThroughTheCacheAlone) {
  std::vector<Tensor> tensors;
  tensors.reserve(20);
  for (int i = 0; i < 20; ++i) {
    tensors.push_back(
        Tensor{"grad" + std::to_string(i), DataType::kFloat32, ReduceOp::kSum, static_cast<size_t>(10 + i)});
  }
  RunNegotiatedRanks(2, Negotiation(), [&](Runtime& runtime) {
    for (unsigned step = 0; step < 6; ++step) ShuffledNamedAllreduces(runtime, tensors, step);
    const NegotiationCounters counters = runtime.negotiation_counters();
    EXPECT_GT(counters.cache_only_cycles, 0U) << counters.cycles << " cycles";
    EXPECT_EQ(counters.cache_evictions, 0U);
  });
}

TEST(NamedCollectives, TensorsBackToBackInMemoryAreReducedWhereTheyLie) {
  // Eight slices of one array, each 16 floats, submitted in memory order (as gradients that are
  // views into one bucket): once the cache holds them they arrive in that order and are reduced
  // in place. Slices apart from each other go through the fusion buffer.
  for (bool contiguous : {true, false}) {
    RunNegotiatedRanks(2, Negotiation(), [&](Runtime& runtime) {
      const size_t slice = 16;
      const size_t stride = contiguous ? slice : slice + 4;
      std::vector<float> arena(8 * stride);
      for (int step = 0; step < 5; ++step) {
        std::fill(arena.begin(), arena.end(), static_cast<float>(runtime.rank() + 1));
        std::vector<CollectiveHandle> handles;
        for (size_t i = 0; i < 8; ++i) {
          float* data = arena.data() + i * stride;
          handles.push_back(runtime.AllreduceAsync("slice" + std::to_string(i), data, data, slice,
                                                   DataType::kFloat32, ReduceOp::kAverage));
        }
        for (CollectiveHandle& handle : handles) ASSERT_TRUE(handle.Wait().ok());
        for (size_t i = 0; i < 8; ++i) {
          for (size_t j = 0; j < slice; ++j) ASSERT_EQ(arena[i * stride + j], 1.5F) << i << "," << j;
          for (size_t j = slice; j < stride; ++j) {
            ASSERT_EQ(arena[i * stride + j], static_cast<float>(runtime.rank() + 1)) << "a gap was written";
          }
        }
      }
      const NegotiationCounters counters = runtime.negotiation_counters();
      if (contiguous) {
        EXPECT_GT(counters.in_place_bytes, 0U);
      } else {
        EXPECT_EQ(counters.in_place_bytes, 0U);
        EXPECT_GT(counters.copied_bytes, 0U);
      }
    });
  }
}

TEST(NamedCollectives, RanksWhoseTensorsLieDifferentlyInMemoryReduceTheSameLayout) {
  // Rank 0's slices lie back to back in one array, rank 1's apart. Slices of 5 floats (20 bytes, not
  // a multiple of the fusion alignment) are copied on both ranks, so that both reduce the plan's
  // padded layout; slices of 8 floats are reduced in place on rank 0 and copied on rank 1, which is
  // the same layout.
  for (size_t slice : {size_t{5}, size_t{8}}) {
    RunNegotiatedRanks(2, Negotiation(), [&](Runtime& runtime) {
      const size_t stride = runtime.rank() == 0 ? slice : slice + 3;
      std::vector<float> arena(6 * stride);
      for (int step = 0; step < 4; ++step) {
        for (size_t k = 0; k < arena.size(); ++k) {
          arena[k] = static_cast<float>((runtime.rank() + 1) * (k % 3 + 1));
        }
        std::vector<CollectiveHandle> handles;
        for (size_t i = 0; i < 6; ++i) {
          float* data = arena.data() + i * stride;
          handles.push_back(runtime.AllreduceAsync("piece" + std::to_string(i), data, data, slice,
                                                   DataType::kFloat32, ReduceOp::kSum));
        }
        for (CollectiveHandle& handle : handles) ASSERT_TRUE(handle.Wait().ok());
        // Element j of slice i holds (rank + 1) * unit on each rank, unit depending on its place in
        // that rank's array: the sum is rank 0's unit plus twice rank 1's.
        for (size_t i = 0; i < 6; ++i) {
          for (size_t j = 0; j < slice; ++j) {
            const auto unit0 = static_cast<float>((i * slice + j) % 3 + 1);
            const auto unit1 = static_cast<float>((i * (slice + 3) + j) % 3 + 1);
            ASSERT_EQ(arena[i * stride + j], unit0 + 2 * unit1)
                << "slice " << i << "[" << j << "], rank " << runtime.rank() << ", step " << step;
          }
        }
      }
      const NegotiationCounters counters = runtime.negotiation_counters();
      if (slice == 8 && runtime.rank() == 0) {
        EXPECT_GT(counters.in_place_bytes, 0U);
      } else {
        EXPECT_EQ(counters.in_place_bytes, 0U);
      }
    });
  }
}

TEST(NamedCollectives, NamedBroadcastsStartedInAnyOrderGetTheirRootsValues) {
  // Six broadcasts, each from its own root, started in a different order on every rank, with named
  // allreduces between them; twice, the second time through the cache.
  constexpr int kSize = 3;
  constexpr size_t kBroadcasts = 6;
  RunNegotiatedRanks(kSize, Negotiation(), [&](Runtime& runtime) {
    for (unsigned step = 0; step < 2; ++step) {
      std::vector<size_t> order(kBroadcasts);
      for (size_t i = 0; i < kBroadcasts; ++i) order[i] = i;
      std::mt19937 random(step * 31U + static_cast<unsigned>(runtime.rank()));
      std::shuffle(order.begin(), order.end(), random);
      std::vector<std::vector<int64_t>> buffers(kBroadcasts);
      std::vector<CollectiveHandle> handles(kBroadcasts);
      std::vector<float> sums(kBroadcasts);
      std::vector<CollectiveHandle> sum_handles(kBroadcasts);
      for (size_t i : order) {
        const int root = static_cast<int>(i % kSize);
        buffers[i].assign(i + 1, int64_t{100} * runtime.rank() + static_cast<int64_t>(i));
        handles[i] = runtime.BroadcastAsync("b" + std::to_string(i), buffers[i].data(), buffers[i].size(),
                                            DataType::kInt64, root);
        sums[i] = 1;
        sum_handles[i] = runtime.AllreduceAsync("s" + std::to_string(i), &sums[i], &sums[i], 1,
                                                DataType::kFloat32, ReduceOp::kSum);
      }
      for (size_t i = 0; i < kBroadcasts; ++i) {
        ASSERT_TRUE(handles[i].Wait().ok()) << handles[i].Wait().message();
        ASSERT_TRUE(sum_handles[i].Wait().ok()) << sum_handles[i].Wait().message();
        const int root = static_cast<int>(i % kSize);
        EXPECT_EQ(buffers[i], std::vector<int64_t>(i + 1, int64_t{100} * root + static_cast<int64_t>(i)))
            << "b" << i << " on rank " << runtime.rank();
        EXPECT_EQ(sums[i], static_cast<float>(kSize));
      }
    }
    // A name given different roots fails on every rank, and the runtime goes on.
    int64_t value = runtime.rank();
    Status status = runtime.Broadcast("r", &value, 1, DataType::kInt64, runtime.rank() == 0 ? 0 : 1);
    EXPECT_NE(
        status.message().find("'r' was submitted as broadcast of int64 x 1 from rank 0 by rank 0 but as "
                              "broadcast of int64 x 1 from rank 1 by rank "),
        std::string::npos)
        << status.message();
    EXPECT_TRUE(runtime.Broadcast("r", &value, 1, DataType::kInt64, 2).ok());
    EXPECT_EQ(value, 2);
    // Read after later cycles: a cycle's counters are updated after its collectives complete.
    EXPECT_GT(runtime.negotiation_counters().cache_only_cycles, 0U)
        << "the second step went through the cache";
  });
}

TEST(NamedCollectives, NamedAllgathersAndAlltoallsOfEqualBlocksFillTheCallersBuffers) {
  // Per step, four allgathers and four alltoalls of equal blocks (the forms whose results are the
  // caller's buffers, as device memory over NCCL needs), submitted in a different order on every rank;
  // three steps, the later ones through the cache; at 1 to 4 ranks.
  constexpr size_t kEach = 4;
  for (int size = 1; size <= 4; ++size) {
    RunNegotiatedRanks(size, Negotiation(), [&](Runtime& runtime) {
      const auto ranks = static_cast<size_t>(size);
      const auto rank = static_cast<int64_t>(runtime.rank());
      for (unsigned step = 0; step < 3; ++step) {
        std::vector<size_t> order(2 * kEach);
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::mt19937 random(step * 17U + static_cast<unsigned>(rank));
        std::shuffle(order.begin(), order.end(), random);
        std::vector<std::vector<int64_t>> sends(order.size());
        std::vector<std::vector<int64_t>> recvs(order.size());
        std::vector<CollectiveHandle> handles(order.size());
        for (size_t i : order) {
          const size_t count = i % kEach + 1;  // elements a block
          recvs[i].assign(ranks * count, -1);
          if (i < kEach) {  // allgather: rank r gives count values 1000 r + i
            sends[i].assign(count, 1000 * rank + static_cast<int64_t>(i));
            handles[i] = runtime.AllgatherAsync("g" + std::to_string(i), sends[i].data(), recvs[i].data(),
                                                count, DataType::kInt64);
          } else {  // alltoall: rank r's block j holds 100 r + j
            for (size_t j = 0; j < ranks; ++j) {
              sends[i].insert(sends[i].end(), count, 100 * rank + static_cast<int64_t>(j));
            }
            handles[i] = runtime.AlltoallAsync("a" + std::to_string(i), sends[i].data(), recvs[i].data(),
                                               count, DataType::kInt64);
          }
        }
        for (size_t i = 0; i < order.size(); ++i) {
          ASSERT_TRUE(handles[i].Wait().ok()) << handles[i].Wait().message();
          const size_t count = i % kEach + 1;
          std::vector<int64_t> expected;
          for (size_t k = 0; k < ranks; ++k) {
            const int64_t from = static_cast<int64_t>(k);
            expected.insert(expected.end(), count,
                            i < kEach ? 1000 * from + static_cast<int64_t>(i) : 100 * from + rank);
          }
          EXPECT_EQ(recvs[i], expected) << (i < kEach ? "allgather " : "alltoall ") << i << " on rank "
                                        << rank << " of " << size << ", step " << step;
        }
      }
      if (size > 1) {
        EXPECT_GT(runtime.negotiation_counters().cache_only_cycles, 0U)
            << "later steps went through the cache";
      }
      // One buffer for both ends of an alltoall is refused at once.
      std::vector<int64_t> both(ranks);
      EXPECT_NE(runtime.AlltoallAsync("same", both.data(), both.data(), 1, DataType::kInt64)
                    .Wait()
                    .message()
                    .find("must not overlap"),
                std::string::npos);
    });
  }
}

TEST(NamedCollectives, UnnamedAsynchronousBroadcastsRunInCallOrderToo) {
  for (CollectiveOrder order : {CollectiveOrder::kCallOrder, CollectiveOrder::kNegotiated}) {
    testing::RunRanks(
        2,
        [](Runtime& runtime) {
          std::vector<int32_t> a(3, runtime.rank());
          std::vector<int32_t> b(5, runtime.rank() + 10);
          CollectiveHandle first = runtime.BroadcastAsync(a.data(), a.size(), DataType::kInt32, 1);
          CollectiveHandle second = runtime.BroadcastAsync(b.data(), b.size(), DataType::kInt32, 0);
          ASSERT_TRUE(second.Wait().ok());
          ASSERT_TRUE(first.Wait().ok());
          EXPECT_EQ(a, std::vector<int32_t>(3, 1));
          EXPECT_EQ(b, std::vector<int32_t>(5, 10));
          Status named = runtime.Broadcast("x", a.data(), a.size(), DataType::kInt32, 0);
          if (runtime.order() == CollectiveOrder::kCallOrder) {
            EXPECT_NE(named.message().find("named collectives need a Runtime initialized with"),
                      std::string::npos);
          } else {
            EXPECT_TRUE(named.ok()) << named.message();
          }
          EXPECT_NE(runtime.BroadcastAsync(a.data(), a.size(), DataType::kInt32, 2)
                        .Wait()
                        .message()
                        .find("root 2 is out of range for size 2"),
                    std::string::npos);
        },
        order);
  }
}

TEST(NamedCollectives, TheReportsResponseStatisticsAddUpToTheBytesReduced) {
  const std::vector<Tensor> tensors = EveryTypeAndOp();
  uint64_t bytes_per_step = 0;
  for (const Tensor& tensor : tensors) bytes_per_step += tensor.count * DataTypeSize(tensor.type);
  auto store = NewInMemoryStore();
  std::vector<NegotiationCounters> counters(2);
  RunNegotiatedRanks(
      2, Negotiation(/*fusion_threshold=*/4096),
      [&](Runtime& runtime) {
        for (unsigned step = 0; step < 3; ++step) ShuffledNamedAllreduces(runtime, tensors, step);
        counters[static_cast<size_t>(runtime.rank())] = runtime.negotiation_counters();
        ASSERT_TRUE(runtime.SendReport(R"({"summary": {"steps": 3}})").ok());
      },
      milliseconds(30000), store);
  for (int rank = 0; rank < 2; ++rank) {
    StatusOr<std::string> sent = store->Get("report/" + std::to_string(rank), milliseconds(1000));
    ASSERT_TRUE(sent.ok()) << sent.status().message();
    const nlohmann::json report = nlohmann::json::parse(sent.value());
    EXPECT_EQ(report["summary"]["steps"], 3);
    const nlohmann::json& responses = report["libhvdrun"]["responses"];
    EXPECT_EQ(responses["bytes"], 3 * bytes_per_step);
    EXPECT_EQ(responses["tensors"], 3 * tensors.size());
    EXPECT_EQ(responses["responses"], counters[static_cast<size_t>(rank)].responses);
    uint64_t binned = 0;
    for (const nlohmann::json& bin : responses["bins"]) binned += bin["bytes"].get<uint64_t>();
    EXPECT_EQ(binned, 3 * bytes_per_step);
    EXPECT_EQ(report["libhvdrun"]["negotiation"]["fusion_threshold_bytes"], 4096);
  }
}

TEST(NamedCollectives, MoreNamesThanTheCacheHoldsStillAgree) {
  std::vector<Tensor> tensors;
  tensors.reserve(40);
  for (int i = 0; i < 40; ++i) {
    tensors.push_back(
        Tensor{"p" + std::to_string(i), DataType::kInt32, ReduceOp::kMax, static_cast<size_t>(1 + i % 5)});
  }
  RunNegotiatedRanks(3, Negotiation(size_t{128} << 20, /*cache_capacity=*/8), [&](Runtime& runtime) {
    for (unsigned step = 0; step < 4; ++step) ShuffledNamedAllreduces(runtime, tensors, step);
    EXPECT_GT(runtime.negotiation_counters().cache_evictions, 0U);
  });
}

TEST(NamedCollectives, WithTheCacheOffEveryCycleGathers) {
  std::vector<Tensor> tensors;
  tensors.reserve(10);
  for (int i = 0; i < 10; ++i) {
    tensors.push_back(Tensor{"g" + std::to_string(i), DataType::kFloat64, ReduceOp::kAverage, 5});
  }
  RunNegotiatedRanks(2, Negotiation(size_t{128} << 20, /*cache_capacity=*/0), [&](Runtime& runtime) {
    for (unsigned step = 0; step < 3; ++step) ShuffledNamedAllreduces(runtime, tensors, step);
    EXPECT_EQ(runtime.negotiation_counters().cache_only_cycles, 0U);
  });
}

TEST(NamedCollectives, ANameWhoseShapeChangesIsNegotiatedAfresh) {
  RunNegotiatedRanks(2, Negotiation(), [&](Runtime& runtime) {
    for (size_t count : {4, 4, 6, 6, 2}) {
      std::vector<float> values(count, static_cast<float>(runtime.rank() + 1));
      Status status = runtime.Allreduce("resized", values.data(), values.data(), count, DataType::kFloat32,
                                        ReduceOp::kSum);
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_EQ(values, std::vector<float>(count, 3.0F));
    }
  });
}

TEST(NamedCollectives, DifferentParametersOnTwoRanksFailThatCollectiveOnly) {
  RunNegotiatedRanks(2, Negotiation(), [&](Runtime& runtime) {
    std::vector<float> values(8, 1.0F);
    const size_t count = runtime.rank() == 0 ? 4 : 5;
    Status status =
        runtime.Allreduce("w", values.data(), values.data(), count, DataType::kFloat32, ReduceOp::kSum);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(
        status.message(),
        "'w' was submitted as allreduce of float32 x 4 sum by rank 0 but as allreduce of float32 x 5 sum by "
        "rank 1");
    status = runtime.Allreduce("after", values.data(), values.data(), 8, DataType::kFloat32, ReduceOp::kSum);
    EXPECT_TRUE(status.ok()) << status.message();
  });
}

TEST(NamedCollectives, ANameMissingOnOneRankGetsAStallWarningNamingIt) {
  // Rank 2 submits 1.5 s late; warnings come every 0.5 s. The first may still find rank 1 missing
  // too on a loaded machine; a later one names rank 2 alone.
  for (bool cached : {false, true}) {
    std::mutex mutex;
    std::vector<std::string> warnings;
    NegotiationOptions negotiation = Negotiation();
    negotiation.stall_warning = milliseconds(500);
    negotiation.warn = [&](const std::string& line) {
      std::lock_guard<std::mutex> lock(mutex);
      warnings.push_back(line);
    };
    RunNegotiatedRanks(3, negotiation, [&](Runtime& runtime) {
      float value = 1;
      if (cached) {
        ASSERT_TRUE(runtime.Allreduce("late", &value, &value, 1, DataType::kFloat32, ReduceOp::kSum).ok());
      }
      if (runtime.rank() == 2) std::this_thread::sleep_for(milliseconds(1500));
      Status status = runtime.Allreduce("late", &value, &value, 1, DataType::kFloat32, ReduceOp::kSum);
      EXPECT_TRUE(status.ok()) << status.message();
    });
    std::lock_guard<std::mutex> lock(mutex);
    const std::string expected =
        "stall: 'late' was submitted by ranks 0, 1 and waits for rank 2; no stall shutdown time is set "
        "(HOROVOD_STALL_SHUTDOWN_TIME_SECONDS), so it waits";
    EXPECT_NE(std::find(warnings.begin(), warnings.end(), expected), warnings.end())
        << (cached ? "cached" : "uncached") << ": " << warnings.size() << " warnings"
        << (warnings.empty() ? "" : ", the first: " + warnings.front());
  }
}

TEST(NamedCollectives, WithTheStallCheckOffNoWarningComes) {
  std::atomic<int> warnings{0};
  NegotiationOptions negotiation = Negotiation();
  negotiation.stall_warning = milliseconds(200);
  negotiation.stall_shutdown = milliseconds(300);  // off with the check, as in Horovod
  negotiation.stall_check = false;
  negotiation.warn = [&](const std::string&) { ++warnings; };
  RunNegotiatedRanks(2, negotiation, [&](Runtime& runtime) {
    float value = 1;
    if (runtime.rank() == 1) std::this_thread::sleep_for(milliseconds(800));
    Status status = runtime.Allreduce("late", &value, &value, 1, DataType::kFloat32, ReduceOp::kSum);
    EXPECT_TRUE(status.ok()) << status.message();
  });
  EXPECT_EQ(warnings, 0);
}

TEST(NamedCollectives, ANameNeverSubmittedEverywhereFailsAtTheStallShutdownOnEveryRank) {
  std::atomic<int> failed{0};
  NegotiationOptions negotiation = Negotiation();
  negotiation.stall_warning = milliseconds(500);
  negotiation.stall_shutdown = milliseconds(1000);
  negotiation.warn = [](const std::string&) {};
  RunNegotiatedRanks(2, negotiation, [&](Runtime& runtime) {
    float value = 1;
    if (runtime.rank() == 0) {
      Status status = runtime.Allreduce("orphan", &value, &value, 1, DataType::kFloat32, ReduceOp::kSum);
      ASSERT_FALSE(status.ok());
      EXPECT_EQ(status.message(),
                "stall: 'orphan' was not submitted by every rank within the stall shutdown time (1 s, "
                "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS); the collective fails");
      ++failed;
    } else {
      std::this_thread::sleep_for(milliseconds(1500));
      Status status = runtime.Allreduce("next", &value, &value, 1, DataType::kFloat32, ReduceOp::kSum);
      ASSERT_FALSE(status.ok());
      EXPECT_EQ(
          status.message(),
          "another rank's runtime stopped (closed, timed out or failed) while this rank had collectives "
          "pending");
      ++failed;
    }
  });
  EXPECT_EQ(failed, 2);
}

TEST(NamedCollectives, UnnamedCallsAreNamedByTheirPlaceInTheSequence) {
  RunNegotiatedRanks(3, Negotiation(), [&](Runtime& runtime) {
    std::vector<int32_t> values(5, runtime.rank());
    ASSERT_TRUE(runtime.Allreduce(values.data(), values.data(), 5, DataType::kInt32, ReduceOp::kSum).ok());
    EXPECT_EQ(values, std::vector<int32_t>(5, 3));
    int64_t root_value = runtime.rank() == 2 ? 42 : 0;
    ASSERT_TRUE(runtime.Broadcast(&root_value, 1, DataType::kInt64, 2).ok());
    EXPECT_EQ(root_value, 42);
    int32_t mine = runtime.rank() * 10;
    std::vector<int32_t> all(3);
    ASSERT_TRUE(runtime.Allgather(&mine, all.data(), 1, DataType::kInt32).ok());
    EXPECT_EQ(all, (std::vector<int32_t>{0, 10, 20}));
    ASSERT_TRUE(runtime.Barrier().ok());
    std::vector<float> async(4, 1.0F);
    CollectiveHandle a =
        runtime.AllreduceAsync(async.data(), async.data(), 2, DataType::kFloat32, ReduceOp::kSum);
    CollectiveHandle b =
        runtime.AllreduceAsync(async.data() + 2, async.data() + 2, 2, DataType::kFloat32, ReduceOp::kMax);
    ASSERT_TRUE(a.Wait().ok());
    ASSERT_TRUE(b.Wait().ok());
    EXPECT_EQ(async, (std::vector<float>{3, 3, 1, 1}));
    double baseline = 1.5;
    ASSERT_TRUE(runtime.BaselineAllreduce(&baseline, 1, DataType::kFloat64, ReduceOp::kSum).ok());
    EXPECT_EQ(baseline, 4.5);
  });
}

TEST(NamedCollectives, ANameStillPendingOnThisRankIsRefused) {
  // Rank 1 submits only once rank 0 has checked, so that the collective cannot complete between
  // rank 0's two calls (on a loaded machine it otherwise may, and the second call is then a new one).
  std::latch checked_on_rank_0(1);
  RunNegotiatedRanks(2, Negotiation(), [&](Runtime& runtime) {
    float first = 1;
    float second = 1;
    if (runtime.rank() == 1) checked_on_rank_0.wait();
    CollectiveHandle handle =
        runtime.AllreduceAsync("dup", &first, &first, 1, DataType::kFloat32, ReduceOp::kSum);
    if (runtime.rank() == 0) {
      Status refused = runtime.Allreduce("dup", &second, &second, 1, DataType::kFloat32, ReduceOp::kSum);
      EXPECT_FALSE(refused.ok());
      EXPECT_EQ(refused.message(),
                "'dup' is already pending on this rank: a name may be reused only once its collective has "
                "completed");
      checked_on_rank_0.count_down();
    }
    ASSERT_TRUE(handle.Wait().ok());
    EXPECT_EQ(first, 2.0F);
  });
}

TEST(NamedCollectives, NamedCallsNeedNegotiation) {
  testing::RunRanks(1, [](Runtime& runtime) {
    float value = 1;
    Status status = runtime.Allreduce("x", &value, &value, 1, DataType::kFloat32, ReduceOp::kSum);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(
        status.message(),
        "Allreduce('x'): named collectives need a Runtime initialized with CollectiveOrder::kNegotiated "
        "(RuntimeOptions::order, on every rank)");
  });
}

TEST(NamedCollectives, ARankThatClosesFailsWhatTheOthersStillWaitFor) {
  RunNegotiatedRanks(2, Negotiation(), [&](Runtime& runtime) {
    float value = 1;
    if (runtime.rank() == 1) {
      Status status = runtime.Allreduce("only-rank-1", &value, &value, 1, DataType::kFloat32, ReduceOp::kSum);
      ASSERT_FALSE(status.ok());
      EXPECT_EQ(status.message(),
                "another rank's runtime stopped (closed, timed out or failed) while this rank had "
                "collectives pending");
    }
  });
}

}  // namespace
}  // namespace hvdrun
