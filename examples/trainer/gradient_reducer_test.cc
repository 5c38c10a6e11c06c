#include "examples/trainer/gradient_reducer.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/full.h>
#include <ATen/ops/linspace.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/tanh.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <mutex>
#include <string>
#include <vector>

#include "runtime/test_job.h"

namespace hvdrun::trainer {
namespace {

// A tiny model, the same on every rank: loss = Σ (tanh(x · W1ᵀ + b1) · W2ᵀ)², plus, only when
// asked for, Σ extra · Σx; "extra" is registered first (so last in the reducer's launch order).
struct TinyModel {
  TinyModel() {
    w1 = at::linspace(-1, 1, 12).reshape({4, 3}).set_requires_grad(true);
    b1 = at::linspace(0, 0.3, 4).set_requires_grad(true);
    w2 = at::linspace(0.5, -0.5, 8).reshape({2, 4}).set_requires_grad(true);
    extra = at::ones({5}).set_requires_grad(true);
  }
  std::vector<at::Tensor> parameters() const { return {extra, w1, b1, w2}; }
  at::Tensor Loss(const at::Tensor& x, bool use_extra = false) const {
    at::Tensor loss = at::tanh(x.matmul(w1.t()) + b1).matmul(w2.t()).pow(2).sum();
    return use_extra ? loss + (extra * x.sum()).sum() : loss;
  }

  at::Tensor w1, b1, w2, extra;
};

// Rank r's input: different on every rank, so their gradients differ.
at::Tensor Input(int rank, int step) { return at::full({2, 3}, 0.25 * (rank + 1) + 0.1 * step); }

// The gradients rank `rank` computes alone, without any reducer, in parameters() order; zeros for
// a parameter that gets none.
std::vector<at::Tensor> LocalGradients(int rank, int step, bool use_extra = false) {
  TinyModel model;
  model.Loss(Input(rank, step), use_extra).backward();
  std::vector<at::Tensor> gradients;
  for (const at::Tensor& p : model.parameters()) {
    gradients.push_back(p.grad().defined() ? p.grad() : at::zeros_like(p));
  }
  return gradients;
}

// The average of two ranks' gradients, as the runtime computes it: the sum, then divided by 2.
std::vector<at::Tensor> AverageOfTwoRanks(int step, bool rank0_uses_extra = false,
                                          bool rank1_uses_extra = false) {
  std::vector<at::Tensor> a = LocalGradients(0, step, rank0_uses_extra);
  std::vector<at::Tensor> b = LocalGradients(1, step, rank1_uses_extra);
  std::vector<at::Tensor> average;
  for (size_t i = 0; i < a.size(); ++i) average.push_back((a[i] + b[i]) / 2);
  return average;
}

const char* const kParameterNames[] = {"extra", "w1", "b1", "w2"};

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
          std::vector<at::Tensor> expected = AverageOfTwoRanks(step);
          for (size_t i = 1; i < expected.size(); ++i) {
            const at::Tensor& got = model.parameters()[i].grad();
            EXPECT_TRUE(at::allclose(got, expected[i], 1e-6, 1e-7))
                << "rank " << runtime.rank() << " step " << step << " parameter " << kParameterNames[i]
                << "\n"
                << got << "\nexpected\n"
                << expected[i];
          }
          // "extra" got no gradient from backward: it is reduced as zeros.
          ASSERT_TRUE(model.extra.grad().defined());
          EXPECT_TRUE(model.extra.grad().equal(at::zeros({5})));
        }
        std::lock_guard<std::mutex> lock(mutex);
        overlapped.push_back(reducer.started_during_backward());
      },
      GetParam());
  // Launch order is w2, b1, w1, extra: backward produces the first three, and their averages start
  // from the hooks, before FinishStep; "extra" gets no gradient and starts in FinishStep.
  EXPECT_EQ(overlapped, (std::vector<int>{3, 3}));
}

// How gradients are cleared before a backward pass: by the optimizer's zero_grad (libtorch 1.13's
// zeroes each .grad() in place, after detach_()), or by making them undefined (set_to_none).
enum class Clearing { kZeroGrad, kSetUndefined };

// Which ranks' loss uses "extra" in a step: both, rank 0 only, neither, rank 1 only.
bool UsesExtra(int rank, int step) {
  switch (step % 4) {
    case 0:
      return true;
    case 1:
      return rank == 0;
    case 2:
      return false;
    default:
      return rank == 1;
  }
}

TEST_P(GradientReducerTest, ExactAverageEveryStepWhicheverWayGradientsAreCleared) {
  constexpr int kSteps = 5;
  for (Clearing clearing : {Clearing::kZeroGrad, Clearing::kSetUndefined}) {
    SCOPED_TRACE(clearing == Clearing::kZeroGrad ? "zero_grad" : "set to undefined");
    hvdrun::testing::RunRanks(
        2,
        [&](Runtime& runtime) {
          TinyModel model;
          GradientReducer reducer(&runtime, model.parameters(), /*buffers_on_device=*/false);
          torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(0.1));
          for (int step = 0; step < kSteps; ++step) {
            if (clearing == Clearing::kZeroGrad) {
              optimizer.zero_grad();
            } else {
              for (const at::Tensor& p : model.parameters()) p.mutable_grad().reset();
            }
            model.Loss(Input(runtime.rank(), step), UsesExtra(runtime.rank(), step)).backward();
            Status status = reducer.FinishStep();
            ASSERT_TRUE(status.ok()) << status.message();
            // Nothing left over from the last step: neither its average, nor its gradient of
            // "extra" on a rank that now has none.
            std::vector<at::Tensor> expected =
                AverageOfTwoRanks(step, UsesExtra(0, step), UsesExtra(1, step));
            for (size_t i = 0; i < expected.size(); ++i) {
              const at::Tensor& got = model.parameters()[i].grad();
              ASSERT_TRUE(got.defined()) << kParameterNames[i];
              EXPECT_TRUE(got.equal(expected[i])) << "rank " << runtime.rank() << " step " << step
                                                  << " parameter " << kParameterNames[i] << "\n"
                                                  << got << "\nexpected\n"
                                                  << expected[i];
            }
          }
        },
        GetParam());
  }
}

// As DDP and Horovod do: what backward accumulated into .grad() is averaged, here this step's
// gradient added to the last step's average.
TEST_P(GradientReducerTest, AveragesWhatBackwardAccumulatedWhenGradientsAreNotCleared) {
  hvdrun::testing::RunRanks(
      2,
      [&](Runtime& runtime) {
        TinyModel model;
        GradientReducer reducer(&runtime, model.parameters(), /*buffers_on_device=*/false);
        for (int step = 0; step < 2; ++step) {
          model.Loss(Input(runtime.rank(), step)).backward();
          Status status = reducer.FinishStep();
          ASSERT_TRUE(status.ok()) << status.message();
        }
        std::vector<at::Tensor> first = AverageOfTwoRanks(0);
        std::vector<at::Tensor> second = AverageOfTwoRanks(1);
        for (size_t i = 1; i < first.size(); ++i) {
          at::Tensor expected = first[i] + second[i];
          const at::Tensor& got = model.parameters()[i].grad();
          EXPECT_TRUE(at::allclose(got, expected, 1e-6, 1e-7))
              << "rank " << runtime.rank() << " parameter " << kParameterNames[i] << "\n"
              << got << "\nexpected\n"
              << expected;
        }
      },
      GetParam());
}

// Named, on the CPU: each .grad() is the parameter's range of the one array that libhvdrun reduces
// in place (gradient_as_bucket_view), the same memory every step, with nothing copied out of it.
TEST(GradientReducerNamedTest, EachGradientIsItsRangeOfTheReducedArray) {
  hvdrun::testing::RunRanks(
      2,
      [&](Runtime& runtime) {
        TinyModel model;
        std::vector<at::Tensor> parameters = model.parameters();
        std::vector<const void*> addresses;
        uint64_t copied_after_first_step = 0;
        {
          GradientReducer reducer(&runtime, parameters, /*buffers_on_device=*/false);
          torch::optim::SGD optimizer(parameters, torch::optim::SGDOptions(0.1));
          for (int step = 0; step < 3; ++step) {
            optimizer.zero_grad();
            model.Loss(Input(runtime.rank(), step), /*use_extra=*/true).backward();
            Status status = reducer.FinishStep();
            ASSERT_TRUE(status.ok()) << status.message();
            for (size_t i = 0; i < parameters.size(); ++i) {
              const at::Tensor& gradient = parameters[i].grad();
              // One storage for all of them, and not an autograd view (zero_grad's detach_() refuses those).
              EXPECT_TRUE(gradient.is_alias_of(parameters[0].grad())) << kParameterNames[i];
              EXPECT_FALSE(gradient.is_view()) << kParameterNames[i];
              EXPECT_TRUE(gradient.is_contiguous()) << kParameterNames[i];
              if (step == 0) {
                addresses.push_back(gradient.data_ptr());
              } else {
                EXPECT_EQ(gradient.data_ptr(), addresses[i]) << kParameterNames[i] << " step " << step;
              }
            }
            // From the end of the first step, the array is in the order the hooks fired, which is
            // the order libhvdrun packs them in (here not launch order: extra's comes before w1's):
            // every later fused response is reduced where it lies, none is copied.
            const NegotiationCounters counters = runtime.negotiation_counters();
            if (step == 0) copied_after_first_step = counters.copied_bytes;
            if (step > 0) {
              EXPECT_EQ(counters.copied_bytes, copied_after_first_step) << "step " << step;
              EXPECT_GT(counters.in_place_bytes, 0U) << "step " << step;
            }
            std::vector<at::Tensor> expected = AverageOfTwoRanks(step, true, true);
            for (size_t i = 0; i < expected.size(); ++i) {
              EXPECT_TRUE(parameters[i].grad().equal(expected[i])) << kParameterNames[i] << " step " << step;
            }
          }
          // The optimizer steps on the averages where they lie.
          at::Tensor before = model.w2.detach().clone();
          optimizer.step();
          EXPECT_TRUE(at::allclose(model.w2.detach(), before - 0.1 * AverageOfTwoRanks(2, true, true)[3]));
        }
        // The gradients keep the array, and the last averages, after the reducer has gone.
        EXPECT_EQ(model.w2.grad().data_ptr(), addresses[3]);
        EXPECT_TRUE(model.w2.grad().equal(AverageOfTwoRanks(2, true, true)[3]));
      },
      CollectiveOrder::kNegotiated);
}

// In call order the buffers stay the reducer's own, and the averages are copied into .grad().
TEST(GradientReducerCallOrderTest, GradientsAreNotTheReducersBuffers) {
  hvdrun::testing::RunRanks(
      2,
      [&](Runtime& runtime) {
        TinyModel model;
        GradientReducer reducer(&runtime, model.parameters(), /*buffers_on_device=*/false);
        model.Loss(Input(runtime.rank(), 0), /*use_extra=*/true).backward();
        Status status = reducer.FinishStep();
        ASSERT_TRUE(status.ok()) << status.message();
        EXPECT_FALSE(model.w1.grad().is_alias_of(model.w2.grad()));
      },
      CollectiveOrder::kCallOrder);
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
