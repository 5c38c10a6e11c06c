// A model's state across the ranks of a data-parallel group: rank 0's initial parameters and
// buffers given to every rank, and a checksum that shows whether the ranks' parameters are equal.
#ifndef HVDRUN_EXAMPLES_TRAINER_MODEL_STATE_H_
#define HVDRUN_EXAMPLES_TRAINER_MODEL_STATE_H_

#include <string>

#include "examples/trainer/data_parallel_group.h"
#include "hvdrun/status.h"

namespace hvdrun::trainer {

class ImageClassifier;

// Replaces every parameter and buffer of `model` (BatchNorm statistics included) by rank 0's, in
// registration order: one Runtime::Broadcast per tensor. Every rank calls it; nothing to do in a
// group of one. With a backend that reduces device memory (nccl) tensors are broadcast on
// their device; otherwise through host memory.
Status BroadcastModelState(ImageClassifier& model, DataParallelGroup& group);

// FNV-1a (64 bits) over the bytes of every parameter, in registration order, as 16 hex digits:
// equal on ranks whose parameters are bit-for-bit equal.
std::string ParameterChecksum(ImageClassifier& model);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_MODEL_STATE_H_
