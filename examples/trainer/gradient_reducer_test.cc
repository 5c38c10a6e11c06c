#include "examples/trainer/gradient_reducer.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/full.h>
#include <ATen/ops/linspace.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/tanh.h>
#include <ATen/ops/zeros.h>
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "runtime/test_job.h"

namespace hvdrun::trainer {
namespace {

// A tiny model, the same on every rank: loss = Σ (tanh(x · W1ᵀ + b1) · W2ᵀ)², and a parameter that
// the loss does not use, registered first (so last in the reducer's launch order).
struct TinyModel {
  TinyModel() {
    w1 = at::linspace(-1, 1, 12).reshape({4, 3}).set_requires_grad(true);
    b1 = at::linspace(0, 0.3, 4).set_requires_grad(true);
    w2 = at::linspace(0.5, -0.5, 8).reshape({2, 4}).set_requires_grad(true);
    unused = at::ones({5}).set_requires_grad(true);
  }
  std::vector<at::Tensor> parameters() const { return {unused, w1, b1, w2}; }
  at::Tensor Loss(const at::Tensor& x) const {
    return at::tanh(x.matmul(w1.t()) + b1).matmul(w2.t()).pow(2).sum();
  }

  at::Tensor w1, b1, w2, unused;
};

// Rank r's input: different on every rank, so their gradients differ.
at::Tensor Input(int rank, int step) { return at::full({2, 3}, 0.25 * (rank + 1) + 0.1 * step); }

// The gradients rank `rank` computes alone, without any reducer.
std::vector<at::Tensor> LocalGradients(int rank, int step) {
  TinyModel model;
  model.Loss(Input(rank, step)).backward();
  return {model.w1.grad(), model.b1.grad(), model.w2.grad()};
}

class GradientReducerTest : public ::testing::TestWithParam<CollectiveOrder> {};

TEST_P(GradientReducerTest, AveragesTwoRanksGradientsStartedDuringBackward) {
  constexpr int kRanks = 2;
  constexpr int kSteps = 3;
  std::mutex mutex;
  std::vector<int> overlapped;
  hvdrun::testing::RunRanks(
      kRanks,
      [&](Runtime& runtime) {
        TinyModel model;
        GradientReducer reducer(&runtime, model.parameters(), /*buffers_on_device=*/false);
        EXPECT_EQ(reducer.bytes_per_step(), (12 + 4 + 8 + 5) * 4);
        for (int step = 0; step < kSteps; ++step) {
          for (const at::Tensor& p : model.parameters()) {
            if (p.grad().defined()) p.mutable_grad().zero_();
          }
          model.Loss(Input(runtime.rank(), step)).backward();
          Status status = reducer.FinishStep();
          ASSERT_TRUE(status.ok()) << status.message();
          std::vector<at::Tensor> a = LocalGradients(0, step);
          std::vector<at::Tensor> b = LocalGradients(1, step);
          for (size_t i = 0; i < a.size(); ++i) {
            at::Tensor expected = (a[i] + b[i]) / 2;
            const at::Tensor& got = model.parameters()[i + 1].grad();
            EXPECT_TRUE(at::allclose(got, expected, 1e-6, 1e-7))
                << "rank " << runtime.rank() << " step " << step << " parameter " << i << "\n"
                << got << "\nexpected\n"
                << expected;
          }
          // The unused parameter got no gradient from backward: it is reduced as zeros.
          ASSERT_TRUE(model.unused.grad().defined());
          EXPECT_TRUE(model.unused.grad().equal(at::zeros({5})));
        }
        std::lock_guard<std::mutex> lock(mutex);
        overlapped.push_back(reducer.started_during_backward());
      },
      GetParam());
  // Launch order is w2, b1, w1, unused: backward produces the first three, and their averages start
  // from the hooks, before FinishStep; "unused" gets no gradient and starts in FinishStep.
  EXPECT_EQ(overlapped, (std::vector<int>{3, 3}));
}

std::string OrderName(const ::testing::TestParamInfo<CollectiveOrder>& param) {
  return param.param == CollectiveOrder::kCallOrder ? "CallOrder" : "Named";
}

INSTANTIATE_TEST_SUITE_P(Orders, GradientReducerTest,
                         ::testing::Values(CollectiveOrder::kCallOrder, CollectiveOrder::kNegotiated),
                         OrderName);

TEST(GradientReducerAloneTest, WithoutRuntimeGradientsStayAsTheyAre) {
  TinyModel model;
  GradientReducer reducer(nullptr, model.parameters(), /*buffers_on_device=*/false);
  model.Loss(Input(0, 0)).backward();
  at::Tensor before = model.w1.grad().clone();
  Status status = reducer.FinishStep();
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(model.w1.grad().equal(before));
  EXPECT_EQ(reducer.last_wait().count(), 0);
}

}  // namespace
}  // namespace hvdrun::trainer
