#include "examples/trainer/gradient_reducer.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <string>
#include <utility>

#include "examples/trainer/tensor_data_type.h"

namespace hvdrun::trainer {
namespace {

// Gradients are averaged, so only floating-point parameters can be reduced.
DataType RuntimeType(const at::Tensor& tensor) {
  std::optional<DataType> type = TensorDataType(tensor);
  TORCH_CHECK(type && *type != DataType::kInt32 && *type != DataType::kInt64,
              "GradientReducer: parameters of type ", tensor.scalar_type(), " cannot be averaged");
  return *type;
}

// Whether `gradient` is `buffer`: the same elements of the same storage (the same tensor, or one
// that zero_grad or the caller made of it), so that the buffer holds what autograd accumulated.
bool IsBuffer(const at::Tensor& gradient, const at::Tensor& buffer) {
  return gradient.defined() && gradient.is_alias_of(buffer) &&
         gradient.storage_offset() == buffer.storage_offset() && gradient.sizes() == buffer.sizes() &&
         gradient.strides() == buffer.strides() && gradient.scalar_type() == buffer.scalar_type();
}

}  // namespace

GradientReducer::GradientReducer(Runtime* runtime, std::vector<at::Tensor> parameters, bool buffers_on_device)
    : runtime_(runtime), parameters_(std::move(parameters)), buffers_on_device_(buffers_on_device) {
  const size_t count = parameters_.size();
  if (runtime_ == nullptr) return;  // one process, nothing to reduce
  for (const at::Tensor& parameter : parameters_) {
    bytes_per_step_ += parameter.numel() * static_cast<int64_t>(parameter.element_size());
  }
  ready_.assign(count, false);
  started_.assign(count, false);
  handles_.resize(count);
  for (size_t k = 0; k < count; ++k) launch_order_.push_back(count - 1 - k);
  named_ = runtime_->order() == CollectiveOrder::kNegotiated;
  for (const at::Tensor& parameter : parameters_) RuntimeType(parameter);  // refuses what cannot be averaged
  buffers_.resize(count);
  for (const at::Tensor& parameter : parameters_) {
    reduced_counts_.push_back(static_cast<size_t>(parameter.numel()));
  }
  if (named_ && count > 0) arena_ = BuildArena(launch_order_);
  grad_is_buffer_.assign(count, false);
  for (size_t i = 0; i < count; ++i) {
    const at::Tensor& parameter = parameters_[i];
    if (!buffers_[i].defined()) {
      at::Device device = buffers_on_device_ ? parameter.device() : at::Device(at::kCPU);
      buffers_[i] = at::empty(parameter.sizes(), parameter.options().device(device).requires_grad(false));
    }
    grad_is_buffer_[i] = named_ && buffers_[i].device() == parameter.device();
    std::shared_ptr<torch::autograd::Node> accumulator = torch::autograd::impl::grad_accumulator(parameter);
    TORCH_CHECK(accumulator != nullptr, "GradientReducer: parameter ", i, " does not require gradients");
    hook_keys_.push_back(accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [this, i](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
          OnGradientReady(i);
          return outputs;
        })));
    accumulators_.push_back(std::move(accumulator));
  }
}

at::Tensor GradientReducer::BuildArena(const std::vector<size_t>& indices) {
  const at::Tensor& first = parameters_.front();  // its type is the arena's
  const auto element = static_cast<size_t>(first.element_size());
  const size_t unit = kFusionAlignment % element == 0 ? kFusionAlignment / element : 1;
  std::vector<int64_t> offsets(parameters_.size());
  int64_t end = 0;
  for (size_t index : indices) {
    if (parameters_[index].scalar_type() != first.scalar_type()) continue;  // a buffer of its own
    offsets[index] = end;
    const auto numel = static_cast<size_t>(parameters_[index].numel());
    reduced_counts_[index] = (numel + unit - 1) / unit * unit;
    end += static_cast<int64_t>(reduced_counts_[index]);
  }
  const at::Device device = buffers_on_device_ ? first.device() : at::Device(at::kCPU);
  at::Tensor arena = at::zeros({end}, first.options().device(device).requires_grad(false));
  for (size_t index : indices) {
    const at::Tensor& parameter = parameters_[index];
    if (parameter.scalar_type() != arena.scalar_type()) continue;
    // The arena's storage, not a view of the arena: a view as .grad() would refuse detach_().
    buffers_[index] = at::empty({0}, arena.options());
    buffers_[index].set_(arena.storage(), offsets[index], parameter.sizes());
  }
  return arena;
}

void GradientReducer::RelayoutArena() {
  // Only a complete first step tells the order; a parameter without a gradient keeps launch order.
  if (arrival_.size() != parameters_.size() || arrival_ == launch_order_) return;
  std::vector<at::Tensor> old_buffers = buffers_;
  at::Tensor old_arena = arena_;
  arena_ = BuildArena(arrival_);
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (!buffers_[i].is_alias_of(arena_)) continue;
    buffers_[i].copy_(old_buffers[i]);
    at::Tensor& gradient = parameters_[i].mutable_grad();
    if (grad_is_buffer_[i] && IsBuffer(gradient, old_buffers[i])) gradient = buffers_[i];
  }
}

GradientReducer::~GradientReducer() {
  for (size_t i = 0; i < hook_keys_.size(); ++i) accumulators_[i]->del_post_hook(hook_keys_[i]);
  // A step abandoned half-way (an exception in backward) may still have reductions writing into
  // the buffers.
  for (size_t i = 0; i < started_.size(); ++i) {
    if (started_[i]) (void)handles_[i].Wait();
  }
}

void GradientReducer::OnGradientReady(size_t index) {
  TORCH_CHECK(!ready_[index], "GradientReducer: parameter ", index,
              " got a second gradient before FinishStep (one backward pass per step)");
  at::NoGradGuard no_grad;
  LoadBuffer(index);
  ready_[index] = true;
  if (first_step_ && arena_.defined()) arrival_.push_back(index);
  if (named_) {
    StartReduction(index);
  } else {
    StartReadyReductions();
  }
}

void GradientReducer::LoadBuffer(size_t index) {
  at::Tensor& gradient = parameters_[index].mutable_grad();
  at::Tensor& buffer = buffers_[index];
  if (IsBuffer(gradient, buffer)) return;
  if (gradient.defined()) {
    buffer.copy_(gradient);
  } else {
    buffer.zero_();
  }
  if (grad_is_buffer_[index]) gradient = buffer;
}

void GradientReducer::StartReadyReductions() {
  while (next_launch_ < launch_order_.size() && ready_[launch_order_[next_launch_]]) {
    StartReduction(launch_order_[next_launch_]);
    ++next_launch_;
  }
}

void GradientReducer::StartReduction(size_t index) {
  at::Tensor& buffer = buffers_[index];
  // A device buffer is read once the stream that wrote it (this thread's current one, the default
  // stream) has reached this point: the runtime records an event there, and its own stream waits on
  // it; nothing here waits for the device.
  const size_t count = reduced_counts_[index];
  handles_[index] =
      named_ ? runtime_->AllreduceAsync("grad." + std::to_string(index), buffer.data_ptr(), buffer.data_ptr(),
                                        count, RuntimeType(buffer), ReduceOp::kAverage)
             : runtime_->AllreduceAsync(buffer.data_ptr(), buffer.data_ptr(), count, RuntimeType(buffer),
                                        ReduceOp::kAverage);
  started_[index] = true;
  if (!first_start_) first_start_ = std::chrono::steady_clock::now();
}

Status GradientReducer::FinishStep() {
  last_wait_ = std::chrono::duration<double>(0);
  last_overlap_ = first_start_ ? std::chrono::steady_clock::now() - *first_start_
                               : std::chrono::steady_clock::duration::zero();
  if (runtime_ == nullptr) return Status::Ok();
  started_during_backward_ = named_ ? static_cast<int>(std::count(started_.begin(), started_.end(), true))
                                    : static_cast<int>(next_launch_);
  {
    at::NoGradGuard no_grad;
    for (size_t position = next_launch_; position < launch_order_.size(); ++position) {
      const size_t index = launch_order_[position];
      if (named_ && !started_[index] && ready_[index]) StartReduction(index);
      if (!ready_[index]) {
        LoadBuffer(index);
        ready_[index] = true;
        if (named_) StartReduction(index);
      }
    }
  }
  if (!named_) StartReadyReductions();

  const auto wait_start = std::chrono::steady_clock::now();
  Status first_error;
  // Device buffers: the host waits until the averages are queued, the current (default) stream for
  // them to end, so that the optimizer's step is queued while the device still runs backward.
  for (size_t index : launch_order_) {
    Status status = buffers_on_device_ ? handles_[index].WaitOnStream(nullptr) : handles_[index].Wait();
    if (!status.ok() && first_error.ok()) first_error = status;
  }
  last_wait_ = std::chrono::steady_clock::now() - wait_start;
  ready_.assign(ready_.size(), false);
  started_.assign(started_.size(), false);
  first_start_.reset();
  next_launch_ = 0;
  if (!first_error.ok()) return first_error;

  at::NoGradGuard no_grad;
  if (first_step_ && arena_.defined()) RelayoutArena();
  first_step_ = false;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (grad_is_buffer_[i]) continue;  // averaged where it lies
    at::Tensor& gradient = parameters_[i].mutable_grad();
    if (gradient.defined()) {
      gradient.copy_(buffers_[i]);
    } else {
      gradient = buffers_[i].to(parameters_[i].device(), /*non_blocking=*/false, /*copy=*/true);
    }
  }
  return Status::Ok();
}

}  // namespace hvdrun::trainer
