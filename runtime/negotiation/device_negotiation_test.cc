// The negotiated engine as NCCL runs it, on CPU: the ranks agree over one backend (the control
// channel, host memory) and reduce over another whose buffers live in a memory of its own (as
// NCCL's in device memory), with a ReadyMark for every submitted tensor. The data backend here is
// Gloo behind a memory that hands out its own regions and checks every buffer it is given.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <random>
#include <semaphore>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hvdrun/runtime.h"
#include "runtime/backend_test_ranks.h"
#include "runtime/collective_state.h"
#include "runtime/compression/compressed_allreduce.h"
#include "runtime/negotiation/negotiated_stream.h"
#include "runtime/stream_points.h"
#include "runtime/test_job.h"

namespace hvdrun {
namespace {

// A memory of its own: Allocate hands out regions it remembers; every copy, zeroing and collective
// must lie inside one of them (a host buffer, such as the negotiation's counters, is a test
// failure). Marks are counted and made as device memory makes them (runtime/stream_points.h), and
// waited for as it waits: the latest mark of each stream among a response's members.
class RegionMemory : public BackendMemory {
 public:
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
    copied_in_ = copied_in_ || !copies.empty();
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
    Reached(/*in_collective=*/false);
    return Status::Ok();
  }
  StatusOr<ReadyMark> MarkReady(void* caller_stream) override {
    EXPECT_EQ(caller_stream, &stream_) << "the caller's stream (Runtime::SetCallerStream) is not passed on";
    ++marks_;
    return points_.Record(caller_stream,
                          [] { return StatusOr<std::shared_ptr<void>>(std::make_shared<int>(0)); });
  }
  Status WaitFor(const ReadyMark& mark) override { return WaitForAll({&mark}); }
  Status WaitForAll(const std::vector<const ReadyMark*>& marks) override {
    const std::vector<const StreamPoint*> latest = LatestPerStream(marks);
    for (const ReadyMark* mark : marks) {
      const StreamPoint* point = PointOf(*mark);
      const bool covered = std::any_of(latest.begin(), latest.end(), [point](const StreamPoint* waited) {
        return waited->stream == point->stream && waited->sequence >= point->sequence;
      });
      EXPECT_TRUE(covered) << "a member's mark is not covered by the points waited for";
    }
    ready_waits_ += static_cast<int>(latest.size());
    return Status::Ok();
  }
  void OnQueued(std::function<void(StreamWaiter)> queued) override { queued_ = std::move(queued); }

  // Where the backend would wait for its queued work (as NcclBackend::Finish): tells the armed
  // notice, whose waiter stands for the caller's stream waiting on this memory's work, all of which
  // has run here. A collective of a fused response whose copies out are still to come is not the
  // response's end: told there, its handles would let the caller read the fusion buffer's input.
  void Reached(bool in_collective) {
    const bool copies_out_follow = in_collective && copied_in_;
    if (!in_collective) copied_in_ = false;
    if (queued_ == nullptr) return;
    EXPECT_FALSE(copies_out_follow) << "handles were told their work was queued before the copies out";
    std::function<void(StreamWaiter)> queued = std::move(queued_);
    queued_ = nullptr;
    ++notices_;
    queued([stream = &stream_, &waits = stream_waits_](void* caller_stream) {
      EXPECT_EQ(caller_stream, stream) << "WaitOnStream's stream is not the one the waiter gets";
      ++waits;
      return Status::Ok();
    });
    if (hold_) hold_();
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
  std::atomic<int> ready_waits_{0};  // points of callers' streams the backend waited for
  std::atomic<int> allocations_{0};
  std::atomic<int> copy_batches_{0};
  std::atomic<int> flushes_{0};
  std::atomic<int> notices_{0};       // handles told their work is queued, a response at a time
  std::atomic<int> stream_waits_{0};  // waiters called by WaitOnStream
  std::function<void()> hold_;        // run after each notice, on the collective thread

 private:
  struct Region {
    const std::byte* begin;
    size_t bytes;
  };
  mutable std::mutex mutex_;
  std::vector<Region> regions_;
  StreamPoints points_;
  // The collective thread's alone:
  std::function<void(StreamWaiter)> queued_;
  bool copied_in_ = false;  // copies made since the last Flush: a fused response's copies in
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
    Status status = ForwardingBackend::Allreduce(send, recv, count, type, op);
    memory_.Reached(/*in_collective=*/true);
    return status;
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
        // Odd steps wait as a device caller does: the values are in place for the caller's stream.
        for (CollectiveHandle& handle : handles) {
          const Status status = step % 2 == 1 ? handle.WaitOnStream(&memory.stream_) : handle.Wait();
          ASSERT_TRUE(status.ok()) << "rank " << rank << ": " << status.message();
        }
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
      EXPECT_EQ(memory.ready_waits_, static_cast<int>(counters.responses))
          << "one wait for the caller's stream per response, not one per tensor";
      EXPECT_EQ(memory.notices_, static_cast<int>(counters.responses)) << "each response's end is told once";
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

// WaitOnStream returns once the response is queued, while the collective thread still waits for
// it (held here), having made the caller's stream wait; Wait returns after.
TEST(DeviceNegotiationTest, WaitOnStreamReturnsOnceTheWorkIsQueuedNotDone) {
  std::shared_ptr<KeyValueStore> store = NewInMemoryStore();
  RuntimeOptions options = testing::TestOptions(0, 1, store);
  options.order = CollectiveOrder::kNegotiated;
  const BackendContext context = testing::ThreadRankContext(0, 1, store.get());
  StatusOr<std::unique_ptr<Backend>> control = CreateBackend(BackendKind::kGloo, context);
  StatusOr<std::unique_ptr<Backend>> gloo = CreateBackend(BackendKind::kGloo, context);
  ASSERT_TRUE(control.ok() && gloo.ok());
  RegionMemory memory;
  std::binary_semaphore go_on(0);
  memory.hold_ = [&go_on] { go_on.acquire(); };
  RegionBackend data(*gloo.value(), memory);
  CompressedAllreduce compressed(0, 1, options.compression);
  NegotiatedStream stream(options, &compressed);
  Status ended;
  std::thread collective([&] { ended = stream.Run(*control.value(), data); });

  StatusOr<BackendMemory::Buffer> buffer = memory.Allocate(3 * sizeof(float));
  ASSERT_TRUE(buffer.ok());
  auto* values = reinterpret_cast<float*>(buffer.value().get());
  for (int round = 1; round <= 3; ++round) {
    values[0] = values[1] = values[2] = static_cast<float>(round);
    TensorRequest request;
    request.name = "grad.0";
    request.count = 3;
    StatusOr<BackendMemory::ReadyMark> mark = memory.MarkReady(&memory.stream_);
    ASSERT_TRUE(mark.ok());
    CollectiveHandle handle = stream.Submit(request, values, values, std::move(mark).value());
    const Status queued = handle.WaitOnStream(&memory.stream_);
    EXPECT_TRUE(queued.ok()) << queued.message();
    EXPECT_FALSE(handle.Ready()) << "round " << round << ": the collective thread is still held";
    EXPECT_EQ(memory.stream_waits_, round);
    go_on.release();
    EXPECT_TRUE(handle.Wait().ok());
    EXPECT_TRUE(handle.WaitOnStream(&memory.stream_).ok()) << "a completed handle waits for nothing";
    EXPECT_EQ(memory.stream_waits_, round);
    EXPECT_EQ(values[2], static_cast<float>(round));
  }
  stream.RequestStop();
  collective.join();
  EXPECT_TRUE(ended.ok()) << ended.message();
}

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
