#include "runtime/forwarding_backend.h"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hvdrun/error_kind.h"
#include "runtime/elastic/recoverable_backend.h"

namespace hvdrun {
namespace {

// Records the calls that reach it; Barrier throws when asked to.
class RecordingBackend : public Backend {
 public:
  Status Allreduce(const void*, void*, size_t, DataType, ReduceOp) override { return Record("allreduce"); }
  Status Broadcast(void*, size_t, DataType, int) override { return Record("broadcast"); }
  Status Allgather(const void*, void*, size_t, DataType) override { return Record("allgather"); }
  Status Alltoall(const void*, void*, size_t, DataType) override { return Record("alltoall"); }
  Status Alltoallv(const void*, const std::vector<size_t>&, void*, const std::vector<size_t>&,
                   DataType) override {
    return Record("alltoallv");
  }
  Status Barrier() override {
    if (throw_in_barrier) throw std::runtime_error("connection reset");
    return Record("barrier");
  }
  Status BaselineAllreduce(void*, size_t, DataType, ReduceOp) override { return Record("baseline"); }
  bool RequestAbort() override { return true; }
  std::string Progress() override { return "waiting for rank 1"; }

  Status Record(const std::string& call) {
    calls.push_back(call);
    return fail ? Status::Error("peer gone") : Status::Ok();
  }

  std::vector<std::string> calls;
  bool fail = false;
  bool throw_in_barrier = false;
};

// Records what Forward sees.
class Counting final : public ForwardingBackend {
 public:
  explicit Counting(Backend& backend) : ForwardingBackend(backend) {}
  std::vector<std::pair<std::string, size_t>> seen;

 private:
  Status Forward(const ForwardedCall& call) override {
    seen.emplace_back(call.op(), call.bytes());
    return call.Run();
  }
};

TEST(ForwardingBackend, EveryDataCallPassesThroughForwardWithItsNameAndBytes) {
  RecordingBackend inner;
  Counting outer(inner);
  float data[8] = {};
  ASSERT_TRUE(outer.Allreduce(data, data, 4, DataType::kFloat32, ReduceOp::kSum).ok());
  ASSERT_TRUE(outer.Broadcast(data, 2, DataType::kFloat32, 0).ok());
  ASSERT_TRUE(outer.Allgather(data, data, 1, DataType::kFloat32).ok());
  ASSERT_TRUE(outer.Alltoall(data, data, 1, DataType::kFloat32).ok());
  ASSERT_TRUE(outer.Alltoallv(data, {1, 2}, data, {2, 1}, DataType::kFloat32).ok());
  ASSERT_TRUE(outer.Barrier().ok());
  ASSERT_TRUE(outer.BaselineAllreduce(data, 8, DataType::kFloat32, ReduceOp::kSum).ok());
  EXPECT_EQ(inner.calls, (std::vector<std::string>{"allreduce", "broadcast", "allgather", "alltoall",
                                                   "alltoallv", "barrier", "baseline"}));
  EXPECT_EQ(outer.seen, (std::vector<std::pair<std::string, size_t>>{{"allreduce", 16},
                                                                     {"broadcast", 8},
                                                                     {"allgather", 4},
                                                                     {"alltoall", 4},
                                                                     {"alltoall", 12},
                                                                     {"barrier", 0},
                                                                     {"baseline allreduce", 32}}));
  EXPECT_TRUE(outer.RequestAbort());
  EXPECT_EQ(outer.Progress(), "waiting for rank 1");
  EXPECT_EQ(&outer.memory(), &inner.memory());
}

// The wrapped backend's own reducescatter runs (MPI's and NCCL's; this one's is Backend's default,
// over its allreduce), seen by the wrapper as one reducescatter of every rank's parts.
TEST(ForwardingBackend, AReducescatterGoesToTheWrappedBackendsOwn) {
  RecordingBackend inner;
  Counting outer(inner);
  float send[4] = {1, 2, 3, 4};
  float recv[2] = {};
  ASSERT_TRUE(outer.Reducescatter(send, recv, {2, 2}, 0, DataType::kFloat32, ReduceOp::kSum).ok());
  EXPECT_EQ(inner.calls, (std::vector<std::string>{"allreduce"}));
  ASSERT_EQ(outer.seen.size(), 1U);
  EXPECT_EQ(outer.seen[0].first, "reducescatter");
  EXPECT_EQ(outer.seen[0].second, 4 * sizeof(float));
}

TEST(RecoverableBackend, FailuresReturnedOrThrownAreRecoverable) {
  auto owned = std::make_unique<RecordingBackend>();
  RecordingBackend* inner = owned.get();
  RecoverableBackend backend(std::move(owned));
  EXPECT_TRUE(backend.Barrier().ok());
  inner->fail = true;
  Status failed = backend.Broadcast(nullptr, 0, DataType::kFloat32, 0);
  EXPECT_EQ(KindOf(failed), ErrorKind::kRecoverable);
  EXPECT_NE(failed.message().find("peer gone"), std::string::npos) << failed.message();
  inner->throw_in_barrier = true;
  Status thrown = backend.Barrier();
  EXPECT_EQ(KindOf(thrown), ErrorKind::kRecoverable);
  EXPECT_NE(thrown.message().find("barrier failed: connection reset"), std::string::npos) << thrown.message();
}

}  // namespace
}  // namespace hvdrun
