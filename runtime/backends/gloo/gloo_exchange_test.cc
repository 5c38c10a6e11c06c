// GlooExchange on threads of one process over TCP on 127.0.0.1: the bits every rank computes, the
// size limit, and a peer that goes away. Allreduce over every type, op and group size is covered,
// through GlooBackend, by the backend conformance cases (gloo_conformance_test.cc).
#include "runtime/backends/gloo/gloo_exchange.h"

#include <gloo/common/error.h>
#include <gloo/transport/tcp/attr.h>
#include <gloo/transport/tcp/device.h>
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/backends/gloo/gloo_store.h"
#include "runtime/in_memory_store.h"

namespace hvdrun {
namespace {

using std::chrono::milliseconds;

// Runs body(exchange, rank) on `size` threads, each with its own exchange.
void OnRanks(int size, const std::function<void(GlooExchange&, int)>& body) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(size));
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      GlooStore gloo_store(store.get(), "exchange/", milliseconds(10'000));
      gloo::transport::tcp::attr attr;
      attr.hostname = "127.0.0.1";
      std::shared_ptr<gloo::transport::Device> device = gloo::transport::tcp::CreateDevice(attr);
      GlooExchange exchange(gloo_store, device, rank, size, milliseconds(10'000));
      body(exchange, rank);
    });
  }
  for (std::thread& thread : threads) thread.join();
}

// Rank r's element i: magnitudes far apart, so that the order of the sum shows in its rounding.
float Input(int rank, size_t i) {
  return static_cast<float>(rank % 2 == 0 ? 1e8 : 3.0) * (1.0F + static_cast<float>(i % 5) / 7.0F) *
         (rank == 2 ? -1.0F : 1.0F);
}

TEST(GlooExchangeTest, EveryRankGetsTheSumInRankOrderBitForBit) {
  constexpr int kSize = 3;
  constexpr size_t kCount = GlooExchange::kMaxBytes / sizeof(float);  // the largest it takes
  std::vector<float> expected(kCount);
  for (size_t i = 0; i < kCount; ++i) {
    float sum = Input(0, i);
    for (int rank = 1; rank < kSize; ++rank) sum += Input(rank, i);
    expected[i] = sum;
  }
  OnRanks(kSize, [&](GlooExchange& exchange, int rank) {
    std::vector<float> values(kCount);
    for (size_t i = 0; i < kCount; ++i) values[i] = Input(rank, i);
    for (int call = 0; call < 3; ++call) {  // the pairs carry one message after another
      std::vector<float> sums(kCount);
      exchange.Allreduce(values.data(), sums.data(), kCount, DataType::kFloat32, ReduceOp::kSum);
      size_t wrong = 0;
      for (size_t i = 0; i < kCount; ++i) {
        if (std::bit_cast<uint32_t>(sums[i]) != std::bit_cast<uint32_t>(expected[i])) ++wrong;
      }
      EXPECT_EQ(wrong, 0u) << "rank " << rank << ", call " << call;
    }
    // In place, and a max.
    exchange.Allreduce(values.data(), values.data(), kCount, DataType::kFloat32, ReduceOp::kMax);
    EXPECT_EQ(values[1], 1e8F * (1.0F + 1.0F / 7.0F)) << "rank " << rank;
  });
}

TEST(GlooExchangeTest, MoreThanItsLimitIsRefusedBeforeAnythingIsSent) {
  OnRanks(2, [](GlooExchange& exchange, int rank) {
    std::vector<int64_t> values(GlooExchange::kMaxBytes / sizeof(int64_t) + 1, rank);
    try {
      exchange.Allreduce(values.data(), values.data(), values.size(), DataType::kInt64, ReduceOp::kSum);
      ADD_FAILURE() << "rank " << rank << ": an allreduce over the limit returned";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), "the direct exchange takes at most 8192 bytes, not 8200");
    }
    // Nothing went out: the pairs still work.
    int64_t one = 1;
    exchange.Allreduce(&one, &one, 1, DataType::kInt64, ReduceOp::kSum);
    EXPECT_EQ(one, 2);
  });
}

TEST(GlooExchangeTest, APeerThatIsGoneIsAnErrorNotAWait) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  auto make = [&](int rank) {
    GlooStore gloo_store(store.get(), "exchange/", milliseconds(10'000));
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    std::shared_ptr<gloo::transport::Device> device = gloo::transport::tcp::CreateDevice(attr);
    return std::make_unique<GlooExchange>(gloo_store, device, rank, 2, milliseconds(10'000));
  };
  // The peer closes its pairs only once both ends are connected: closing while rank 0 still connects
  // would fail rank 0's connect instead of its allreduce. Neither thread lets an exception escape, so
  // that the peer is always joined.
  std::promise<void> connected;
  std::shared_future<void> both_connected = connected.get_future().share();
  std::string peer_failure;
  std::thread peer([&] {
    try {
      std::unique_ptr<GlooExchange> mine = make(1);
      both_connected.wait();
    } catch (const std::exception& e) {
      peer_failure = e.what();
    }
  });
  std::unique_ptr<GlooExchange> survivor;
  std::string failure;
  try {
    survivor = make(0);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  connected.set_value();
  peer.join();
  ASSERT_NE(survivor, nullptr) << "rank 0 did not connect: " << failure;
  ASSERT_EQ(peer_failure, "") << "rank 1 did not connect";
  const auto start = std::chrono::steady_clock::now();
  int64_t value = 1;
  try {
    survivor->Allreduce(&value, &value, 1, DataType::kInt64, ReduceOp::kSum);
    ADD_FAILURE() << "no exception";
  } catch (const gloo::IoException& e) {
    EXPECT_EQ(std::string(e.what()).rfind("with rank 1: ", 0), 0U) << e.what();  // the peer named
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5'000));
}

}  // namespace
}  // namespace hvdrun
