// ReplayGradients: the gradient tensors that hvdrun-bench --replay reduces (gradient_replay.h), as views into
// one array, back to back in backward order with no gap: a fused response of consecutive tensors is then
// reduced where it lies, with no copy, as a trainer's gradient buckets would be. The array is `arena`, in
// host memory, or for a backend that reduces device memory (nccl, Place) a copy of it on the device, which
// Upload and Download keep in step with `arena`; the views point into the array the collectives take. Not
// thread-safe: one thread uses it.
#ifndef HVDRUN_EXAMPLES_BENCH_REPLAY_GRADIENTS_H_
#define HVDRUN_EXAMPLES_BENCH_REPLAY_GRADIENTS_H_

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "examples/bench/bench_buffer.h"
#include "examples/shared/model_gradients.h"
#include "hvdrun/status.h"

namespace hvdrun {

struct ReplayGradients {
  struct View {
    float* data;
    size_t size;
    size_t offset;  // elements from the array's start
  };

  explicit ReplayGradients(std::vector<examples::GradientTensor> list);
  // Puts the array on the device (the calling thread's current one) when `on_device`.
  Status Place(bool on_device);
  Status Upload() { return device != nullptr ? device->Upload(arena.data()) : Status::Ok(); }
  Status Download() { return device != nullptr ? device->Download(arena.data()) : Status::Ok(); }
  // The host copy of view `i`'s elements (after Download, for a device array).
  const float* Host(size_t i) const { return arena.data() + buffers[i].offset; }
  Status Fill(float value) {
    std::fill(arena.begin(), arena.end(), value);
    return Upload();
  }

  // `inputs` = this rank's gradient-like values (with --compression): each tensor's approximately
  // normal, with a standard deviation from 2^-6 down to 2^-19 as the tensors go (the layers of a
  // network have gradients of very different sizes), different on every rank, the same every run.
  void MakeInputs(int rank);
  Status RestoreInputs() {
    std::copy(inputs.begin(), inputs.end(), arena.begin());
    return Upload();
  }

  std::vector<examples::GradientTensor> tensors;
  std::vector<float> arena;
  std::vector<float> inputs;
  std::vector<View> buffers;
  size_t elements = 0;
  std::unique_ptr<BenchBuffer> device;  // null: the views point into arena
};

}  // namespace hvdrun

#endif  // HVDRUN_EXAMPLES_BENCH_REPLAY_GRADIENTS_H_
