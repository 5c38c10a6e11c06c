// GradientReducer: averages a model's gradients over the ranks of a data-parallel group while
// backward still runs, as Horovod's DistributedOptimizer and PyTorch's DDP do.
//
// A hook on each parameter's gradient accumulator runs as soon as autograd has written the
// parameter's .grad() — added this pass's gradient into it in place, or, where .grad() was
// undefined, made that gradient .grad() — and starts an asynchronous average
// (Runtime::AllreduceAsync, a sum divided by the ranks) of .grad() in a buffer of the reducer.
// FinishStep() waits for every one and leaves the averages in .grad(), before the optimizer's step.
// Communication of the later layers' gradients so overlaps the computation of the earlier layers'.
//
// What is averaged is .grad() as backward leaves it, as in DDP and Horovod: clear the gradients
// before each backward, by zeroing them (libtorch 1.13's Optimizer::zero_grad, what TrainingStep
// does) or by making them undefined; otherwise this pass's gradient plus the last average is
// averaged. A parameter that got no gradient in a step is reduced at FinishStep, as its .grad() if
// it has one, else as zeros, so that the ranks stay in step.
//
// Named (a runtime in CollectiveOrder::kNegotiated, every backend): each gradient is
// submitted as "grad.<index>" the moment its hook fires, in whatever order autograd finishes them;
// libhvdrun agrees the order with the other ranks and fuses what is ready together. The buffers are
// then ranges of one array, each padded with zeros to a multiple of kFusionAlignment bytes and
// reduced with its padding, so a fused response of neighbouring gradients is reduced in place, with
// no copy through a fusion buffer: first in launch order, then, from the end of the first step on,
// in the order the hooks fired in it (as DDP rebuilds its buckets after its first iteration). That
// is the order libhvdrun learned the names in and packs them in, since every later step makes its
// gradients in the same order. The array lies where the buffers do: on the CPU, or on the
// parameters' device over NCCL. Where the parameter is there too, its buffer also *is* its .grad(),
// as with DDP's gradient_as_bucket_view: the first hook copies
// the gradient into the buffer and makes the buffer .grad(); from then on autograd accumulates into
// the buffer, the runtime averages it where it lies, and no gradient is copied in or out. A .grad()
// made undefined or replaced since costs that one copy again. The buffers share the array's storage
// but are not autograd views of it, so that zero_grad may detach_() them. Such a .grad() holds the
// average until the next backward adds into it: clone it to keep it longer.
//
// Other buffers — in call order, or of a CUDA model's parameters over Gloo or MPI — are the
// reducer's own: the hook copies .grad() into the buffer, FinishStep copies the average back.
//
// On a GPU nothing waits for the device: a buffer is submitted as soon as its gradient's kernels
// (or the copy into it) are queued on the current stream, and the runtime's backend waits for that
// point of the stream (Runtime::SetCallerStream) before it reads the buffer; FinishStep waits until
// the averages are queued and makes the stream wait for their end (CollectiveHandle::WaitOnStream),
// so that the optimizer's step is queued while the device still runs backward.
//
// Call order: every rank must start the same collectives in the same order, but
// hooks fire in whatever order autograd finishes gradients. The reducer therefore starts them in a
// fixed order — reverse registration order, the order backward mostly produces them — each as soon
// as it and every gradient before it in that order is ready, so an early gradient waits for at most
// a few others.
//
// Threading: the hooks run on autograd's thread for the device, FinishStep on the thread that
// called backward(), after backward() returned; the two never overlap. Not otherwise thread-safe.
// The reducer must outlive every backward pass through its parameters, and is neither copyable
// nor movable (the hooks point at it); its destructor removes the hooks. A parameter's .grad() may
// outlive the reducer.
#ifndef HVDRUN_EXAMPLES_TRAINER_GRADIENT_REDUCER_H_
#define HVDRUN_EXAMPLES_TRAINER_GRADIENT_REDUCER_H_

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "hvdrun/runtime.h"
#include "hvdrun/status.h"

namespace torch::autograd {
struct Node;
}  // namespace torch::autograd

namespace hvdrun::trainer {

class GradientReducer {
 public:
  // `parameters`: float32 tensors that require gradients, in registration order. `runtime` must
  // outlive the reducer; null means a group of one: nothing is reduced, FinishStep returns at once.
  // Buffers are on the CPU, or on the parameters' device when `buffers_on_device` (a backend such
  // as NCCL that reduces device memory).
  GradientReducer(Runtime* runtime, std::vector<at::Tensor> parameters, bool buffers_on_device);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Starts the reductions that did not start during backward, waits for all of them, and leaves
  // each parameter's average over the ranks in its .grad(). The first failure is returned (the
  // runtime is then broken, hvdrun/runtime.h, and the gradients hold no meaningful values). Call
  // once per backward pass.
  Status FinishStep();

  // Bytes of gradients one step reduces (float32 elements × 4); 0 without a runtime.
  int64_t bytes_per_step() const { return bytes_per_step_; }
  // Time FinishStep spent waiting for collectives in the last step: communication that did not
  // overlap with computation.
  std::chrono::duration<double> last_wait() const { return last_wait_; }
  // In the last step, the time from the first reduction's start to FinishStep's call: communication
  // in flight while backward still computed. 0 when no reduction started during backward. An upper
  // bound on the overlap: the backend may have been idle between responses.
  std::chrono::duration<double> last_overlap() const { return last_overlap_; }
  // Number of parameters whose reduction had started before FinishStep was called in the last
  // step: how many overlapped with backward.
  int started_during_backward() const { return started_during_backward_; }

 private:
  // The hook, after autograd has written parameter `index`'s .grad(): loads its buffer and starts
  // what is now startable.
  void OnGradientReady(size_t index);
  // Puts parameter `index`'s .grad() (zeros where it is undefined) into its buffer, and makes the
  // buffer .grad() where it is to be; nothing to copy where .grad() is the buffer already.
  void LoadBuffer(size_t index);
  // Starts, in launch order, every reduction whose gradient and predecessors are ready.
  void StartReadyReductions();
  void StartReduction(size_t index);
  // Lays `arena_` out again in `arrival_` order (FinishStep, after the first step's averages), moving
  // each buffer's values and each .grad() that is its buffer.
  void RelayoutArena();
  // One array of zeros for every parameter in `indices` order (those of the arena's type), each
  // padded to a multiple of kFusionAlignment bytes, back to back, as libhvdrun needs them to reduce
  // a fused response in place; sets their buffers_ to its ranges and reduced_counts_ to the padded
  // element counts (the padding stays zero: its average is zero).
  at::Tensor BuildArena(const std::vector<size_t>& indices);

  Runtime* runtime_;
  std::vector<at::Tensor> parameters_;
  std::vector<at::Tensor> buffers_;     // one per parameter, contiguous, the reduction's in and out
  std::vector<size_t> reduced_counts_;  // per parameter: the elements reduced from its buffer's start
  std::vector<bool> grad_is_buffer_;    // per parameter: its buffer is made its .grad()
  at::Tensor arena_;                    // named: the array the buffers are ranges of (where they lie)
  std::vector<size_t> arrival_;         // the first step's hooks, in the order they fired
  bool first_step_ = true;
  // Per parameter, its gradient accumulator and the key of the hook on it. Held: a parameter refers
  // to its accumulator weakly, and autograd would replace one that nothing holds by one without hook.
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
  std::vector<uintptr_t> hook_keys_;
  std::vector<size_t> launch_order_;  // parameter indices in the order reductions start
  std::vector<bool> ready_;           // per parameter: its buffer holds this step's gradient
  std::vector<bool> started_;         // per parameter: handles_[i] is this step's reduction
  std::vector<CollectiveHandle> handles_;
  size_t next_launch_ = 0;  // position in launch_order_ of the next reduction to start
  bool buffers_on_device_ = false;
  bool named_ = false;  // submitted by name as they become ready (CollectiveOrder::kNegotiated)
  int64_t bytes_per_step_ = 0;
  std::chrono::duration<double> last_wait_{0};
  std::chrono::duration<double> last_overlap_{0};
  std::optional<std::chrono::steady_clock::time_point> first_start_;  // this step's first reduction
  int started_during_backward_ = 0;
};

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_GRADIENT_REDUCER_H_
