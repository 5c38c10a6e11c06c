#include "examples/trainer/models/layer_macs.h"

#include <torch/version.h>

#include <variant>

namespace hvdrun::trainer {
namespace {

int64_t WindowOutput1d(int64_t in, int64_t kernel, int64_t stride, int64_t padding) {
  int64_t span = in + 2 * padding - kernel;
  return span < 0 ? 0 : span / stride + 1;
}

}  // namespace

FeatureSize WindowOutput(FeatureSize in, int64_t kernel, int64_t stride, int64_t padding) {
  return {WindowOutput1d(in.height, kernel, stride, padding),
          WindowOutput1d(in.width, kernel, stride, padding)};
}

int64_t Conv2dMacs(const torch::nn::Conv2dImpl& conv, FeatureSize in, FeatureSize* out) {
  const auto& options = conv.options;
  const auto& kernel = *options.kernel_size();
  const auto& stride = *options.stride();
  // Explicit padding; the "valid" mode pads nothing ("same" is not used by hvdrun's models). The
  // options hold the three in a variant: c10::variant in libtorch 1.x and 2.0, std::variant from 2.1.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  const auto* padding = std::get_if<torch::ExpandingArray<2>>(&options.padding());
#else
  const auto* padding = c10::get_if<torch::ExpandingArray<2>>(&options.padding());
#endif
  const int64_t pad_h = padding != nullptr ? (**padding)[0] : 0;
  const int64_t pad_w = padding != nullptr ? (**padding)[1] : 0;
  out->height = WindowOutput1d(in.height, kernel[0], stride[0], pad_h);
  out->width = WindowOutput1d(in.width, kernel[1], stride[1], pad_w);
  int64_t per_output = options.in_channels() / options.groups() * kernel[0] * kernel[1];
  return out->height * out->width * options.out_channels() * per_output;
}

int64_t LinearMacs(const torch::nn::LinearImpl& linear) {
  return linear.options.in_features() * linear.options.out_features();
}

}  // namespace hvdrun::trainer
