// Counting the multiply-accumulates of convolution and fully connected layers from the layers'
// own options, so that a model's count follows its definition instead of repeating it.
#ifndef HVDRUN_EXAMPLES_TRAINER_MODELS_LAYER_MACS_H_
#define HVDRUN_EXAMPLES_TRAINER_MODELS_LAYER_MACS_H_

#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>

namespace hvdrun::trainer {

// Height and width of a feature map.
struct FeatureSize {
  int64_t height = 0;
  int64_t width = 0;
};

// The output size of a sliding window (convolution or pooling) over `in`: floor((in + 2·padding −
// kernel) / stride) + 1 per dimension, dilation 1. A window larger than the padded input gives 0.
FeatureSize WindowOutput(FeatureSize in, int64_t kernel, int64_t stride, int64_t padding);

// Multiply-accumulates of `conv` over an input of size `in`; stores the output size in `*out`.
// Per output element: in_channels / groups × kernel height × kernel width.
int64_t Conv2dMacs(const torch::nn::Conv2dImpl& conv, FeatureSize in, FeatureSize* out);

// Multiply-accumulates of `linear` for one input vector: in_features × out_features.
int64_t LinearMacs(const torch::nn::LinearImpl& linear);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_MODELS_LAYER_MACS_H_
