#include "examples/bench/replay_gradients.h"

#include <cmath>
#include <cstdint>
#include <utility>

namespace hvdrun {

ReplayGradients::ReplayGradients(std::vector<examples::GradientTensor> list) : tensors(std::move(list)) {
  std::vector<size_t> offsets;
  for (const examples::GradientTensor& tensor : tensors) {
    offsets.push_back(elements);
    elements += static_cast<size_t>(tensor.elements());
  }
  arena.resize(elements);
  for (size_t i = 0; i < tensors.size(); ++i) {
    buffers.push_back(
        View{arena.data() + offsets[i], static_cast<size_t>(tensors[i].elements()), offsets[i]});
  }
}

Status ReplayGradients::Place(bool on_device) {
  if (!on_device) return Status::Ok();
  StatusOr<std::unique_ptr<BenchBuffer>> allocated = BenchBuffer::Allocate(true, elements * sizeof(float));
  if (!allocated.ok()) return allocated.status();
  device = std::move(allocated).value();
  auto* base = static_cast<float*>(device->data());
  for (View& view : buffers) view.data = base + view.offset;
  return Upload();
}

void ReplayGradients::MakeInputs(int rank) {
  inputs.resize(elements);
  size_t index = 0;
  for (size_t t = 0; t < tensors.size(); ++t) {
    const float deviation = std::ldexp(1.0F, -6 - static_cast<int>((t * 5) % 14));
    for (size_t i = 0; i < buffers[t].size; ++i, ++index) {
      // SplitMix64 of (rank, index); its four 16-bit quarters summed are nearly normal (Irwin-Hall).
      uint64_t x =
          (index + 1) * 0x9E3779B97F4A7C15ULL ^ static_cast<uint64_t>(rank + 1) * 0xD1B54A32D192ED03ULL;
      x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
      x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
      x ^= x >> 31;
      const uint64_t quarters = (x & 0xFFFF) + ((x >> 16) & 0xFFFF) + ((x >> 32) & 0xFFFF) + (x >> 48);
      const float normal = (static_cast<float>(quarters) / 65535.0F - 2.0F) * 1.7320508F;
      inputs[index] = normal * deviation;
    }
  }
}

}  // namespace hvdrun
