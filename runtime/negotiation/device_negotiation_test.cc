// The negotiated engine as NCCL runs it, on CPU: the ranks agree over one backend (the control
// channel, host memory) and reduce over another whose buffers live in a memory of its own (as
// NCCL's in device memory), with a ReadyMark for every submitted tensor. The data backend here is
// Gloo behind a memory that hands out its own regions and checks every buffer it is given.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <latch>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/backend_test_ranks.h"
#include "runtime/collective_state.h"
#include "runtime/compression/compressed_allreduce.h"
#include "runtime/negotiation/negotiated_stream.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

// A memory of its own: Allocate hands out regions it remembers; every copy, zeroing and collective
// must lie inside one of them (a host buffer, such as the negotiation's counters, is a test
// failure). Marks are counted, and each must have been waited for before its tensor is read.
class RegionMemory : public BackendMemory {
 public:
  struct Mark {
    std::atomic<bool> waited{false};
  };

  bool on_device() const override { return true; }
  StatusOr<Buffer> Allocate(size_t bytes) override {
    Buffer buffer(new std::byte[std::max<size_t>(bytes, 1)], std::default_delete<std::byte[]>());
    std::lock_guard<std::mutex> lock(mutex_);
    regions_.push_back({buffer.get(), bytes});
    ++allocations_;
    return buffer;
  }
  Status CopyAll(const std::vector<Copy>& copies) override {
    for (const Copy& copy : copies) {
      CheckInside("a copy's destination", copy.to, copy.bytes);
      CheckInside("a copy's source", copy.from, copy.bytes);
      std::memcpy(copy.to, copy.from, copy.bytes);
    }
    copy_batches_ += copies.empty() ? 0 : 1;
    return Status::Ok();
  }
  Status Zero(void* to, size_t bytes) override {
    CheckInside("a zeroed range", to, bytes);
    std::memset(to, 0, bytes);
    return Status::Ok();
  }
  Status Flush() override {
    ++flushes_;
    return Status::Ok();
  }
  StatusOr<ReadyMark> MarkReady(void* caller_stream) override {
    EXPECT_EQ(caller_stream, &stream_) << "the caller's stream (Runtime::SetCallerStream) is not passed on";
    ++marks_;
    return ReadyMark(std::make_shared<Mark>());
  }
  Status WaitFor(const ReadyMark& mark) override {
    if (mark != nullptr) static_cast<Mark*>(mark.get())->waited = true;
    return Status::Ok();
  }

  void CheckInside(const char* what, const void* pointer, size_t bytes) const {
    if (bytes == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    const auto* p = static_cast<const std::byte*>(pointer);
    const bool inside = std::any_of(regions_.begin(), regions_.end(), [&](const Region& region) {
      return p >= region.begin && p + bytes <= region.begin + region.bytes;
    });
    EXPECT_TRUE(inside) << what << " of " << bytes << " bytes is not this memory's";
  }

  int stream_ = 0;  // stands for the caller's stream: its address is passed
  std::atomic<int> marks_{0};
  std::atomic<int> allocations_{0};
  std::atomic<int> copy_batches_{0};
  std::atomic<int> flushes_{0};

 private:
  struct Region {
    const std::byte* begin;
    size_t bytes;
  };
  mutable std::mutex mutex_;
  std::vector<Region> regions_;
};

// Gloo's collectives on buffers that must be the memory's; counts what it runs.
class RegionBackend : public testing::ForwardingBackend {
 public:
  RegionBackend(Backend& inner, RegionMemory& memory) : ForwardingBackend(inner), memory_(memory) {}
  BackendMemory& memory() override { return memory_; }
  Status Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) override {
    memory_.CheckInside("an allreduce's send buffer", send, count * DataTypeSize(type));
    memory_.CheckInside("an allreduce's receive buffer", recv, count * DataTypeSize(type));
    ++allreduces_;
    return ForwardingBackend::Allreduce(send, recv, count, type, op);
  }
  Status Allgather(const void* send, void* recv, size_t count, DataType type) override {
    ADD_FAILURE() << "an allgather reached the data backend: negotiation must go over the control channel";
    return ForwardingBackend::Allgather(send, recv, count, type);
  }

  std::atomic<int> allreduces_{0};

 private:
  RegionMemory& memory_;
};

struct Tensor {
  std::string name;
  size_t count;
  BackendMemory::Buffer buffer;
};

// On each of `size` ranks: a control Gloo and a data Gloo behind RegionMemory, a NegotiatedStream
// over the two, and `tensors` float32 sums submitted in a shuffled order from the memory's regions,
// `steps` times; checks every result and what went where.
void RunDeviceLikeRanks(int size, size_t tensors, int steps) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(size));
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([rank, size, tensors, steps, store] {
      RuntimeOptions options = testing::TestOptions(rank, size, store);
      options.order = CollectiveOrder::kNegotiated;
      const BackendContext context = testing::ThreadRankContext(rank, size, store.get());
      StatusOr<std::unique_ptr<Backend>> control = CreateBackend(BackendKind::kGloo, context);
      StatusOr<std::unique_ptr<Backend>> gloo = CreateBackend(BackendKind::kGloo, context);
      ASSERT_TRUE(control.ok() && gloo.ok()) << "rank " << rank;
      RegionMemory memory;
      RegionBackend data(*gloo.value(), memory);
      CompressedAllreduce compressed(rank, size, options.compression);
      NegotiatedStream stream(options, &compressed);
      Status ended;
      std::thread collective([&] { ended = stream.Run(*control.value(), data); });

      std::vector<Tensor> mine;
      for (size_t t = 0; t < tensors; ++t) {
        const size_t count = 1 + (t * 37) % 301;  // odd sizes: the fusion buffer's gaps are zeroed
        StatusOr<BackendMemory::Buffer> buffer = memory.Allocate(count * sizeof(float));
        ASSERT_TRUE(buffer.ok());
        mine.push_back({"grad." + std::to_string(t), count, std::move(buffer).value()});
      }
      std::mt19937 random(static_cast<unsigned>(rank) * 7919U + 1);
      for (int step = 0; step < steps; ++step) {
        std::vector<size_t> order(tensors);
        for (size_t t = 0; t < tensors; ++t) order[t] = t;
        std::shuffle(order.begin(), order.end(), random);
        std::vector<CollectiveHandle> handles;
        for (size_t t : order) {
          auto* values = reinterpret_cast<float*>(mine[t].buffer.get());
          for (size_t i = 0; i < mine[t].count; ++i) values[i] = static_cast<float>((rank + 1) * (i % 5 + t));
          TensorRequest request;
          request.name = mine[t].name;
          request.count = mine[t].count;
          StatusOr<BackendMemory::ReadyMark> mark = memory.MarkReady(&memory.stream_);
          ASSERT_TRUE(mark.ok());
          handles.push_back(stream.Submit(request, values, values, std::move(mark).value()));
        }
        for (CollectiveHandle& handle : handles) ASSERT_TRUE(handle.Wait().ok()) << "rank " << rank;
        const auto ranks = static_cast<float>(size * (size + 1)) / 2.0F;
        for (size_t t = 0; t < tensors; ++t) {
          const auto* values = reinterpret_cast<const float*>(mine[t].buffer.get());
          for (size_t i = 0; i < mine[t].count; ++i) {
            ASSERT_EQ(values[i], ranks * static_cast<float>(i % 5 + t)) << mine[t].name << "[" << i << "]";
          }
        }
      }
      stream.RequestStop();
      collective.join();
      // Every collective completed above; a rank whose stop request comes after another's stop has
      // reached the ballot ends with that as its status (as a closing Runtime's does), not a failure.
      EXPECT_TRUE(ended.ok() || ended.message().find("another rank's runtime stopped") != std::string::npos)
          << ended.message();
      const NegotiationCounters counters = stream.counters();
      EXPECT_EQ(counters.tensors, tensors * static_cast<size_t>(steps));
      EXPECT_LT(counters.responses, counters.tensors) << "nothing was fused";
      EXPECT_EQ(data.allreduces_, static_cast<int>(counters.responses)) << "one data allreduce per response";
      EXPECT_EQ(memory.marks_, static_cast<int>(tensors) * steps);
      if (counters.copied_bytes > 0) {
        EXPECT_GT(memory.allocations_, static_cast<int>(tensors)) << "the fusion buffer is the memory's";
        EXPECT_GT(memory.copy_batches_, 0);
        EXPECT_GT(memory.flushes_, 0) << "copies out are waited for before the handles complete";
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

TEST(DeviceNegotiationTest, TwoRanksAgreeOverTheControlChannelAndReduceInTheDataMemory) {
  RunDeviceLikeRanks(2, 40, 3);
}

TEST(DeviceNegotiationTest, ThreeRanks) { RunDeviceLikeRanks(3, 25, 2); }

TEST(DeviceNegotiationTest, OneRank) { RunDeviceLikeRanks(1, 10, 2); }

// Through the Runtime: a backend whose memory is on a device gets a control channel of its own, so
// NCCL is no longer refused negotiation; without a GPU its creation fails with NCCL's own message.
TEST(DeviceNegotiationTest, NcclIsNegotiatedOrSaysWhyItCannotStart) {
  RuntimeOptions options = testing::TestOptions(0, 1, NewInMemoryStore());
  options.backend = BackendKind::kNccl;
  options.order = CollectiveOrder::kNegotiated;
  StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options);
  if (runtime.ok()) GTEST_SKIP() << "a GPU is here: scripts/gpu-check.sh runs the device cases";
  const std::string& message = runtime.status().message();
  EXPECT_EQ(message.find("negotiation"), std::string::npos) << message;
  EXPECT_NE(message.find("nccl"), std::string::npos) << message;
}

}  // namespace
}  // namespace hvdrun
