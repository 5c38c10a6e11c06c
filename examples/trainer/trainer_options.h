// TrainerOptions: what hvdrun-trainer was asked to do, from its command line (docs/trainer.md).
//
// Two kinds of run: synthetic (random images and labels of --image-size, --warmup-steps untimed
// steps then --steps timed ones, like Horovod's pytorch_synthetic_benchmark.py), and training on an
// MNIST-format data set (--epochs over --data-dir, test accuracy after each epoch). Models without
// a data set (resnet18, resnet50, vgg16) always run synthetic; fmnist-cnn trains on its data set
// unless --synthetic. A flag that does not apply to the run's kind is a usage error, not ignored.
#ifndef HVDRUN_EXAMPLES_TRAINER_TRAINER_OPTIONS_H_
#define HVDRUN_EXAMPLES_TRAINER_TRAINER_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "examples/trainer/models/model_catalog.h"
#include "hvdrun/runtime.h"

namespace hvdrun::trainer {

// Exit code of a usage error or bad input: the same as hvdrun's (docs/errors.md).
inline constexpr int kUsageExitCode = 2;

struct TrainerOptions {
  const ModelInfo* model = nullptr;  // never null after a successful parse
  bool synthetic = true;
  int64_t batch_size = 0;  // per rank
  int64_t image_size = 0;  // the side of a square image; for a data set, the data set's (0 until known)
  // Synthetic runs.
  int steps = 20;
  int warmup_steps = 5;
  // Data set runs.
  int epochs = 0;
  std::string data_dir;
  int64_t train_limit = 0;  // keep the first N training examples; 0: all
  int64_t test_limit = 0;
  // Stochastic gradient descent with momentum. The learning rate is per rank's batch; with
  // scale_lr it is multiplied by the number of ranks (the global batch grows with them).
  double lr = 0;
  double momentum = 0.9;
  bool scale_lr = true;
  // Parallelism within a rank; 0: the host's cores divided by the ranks on it (HVDRUN_LOCAL_SIZE).
  int threads = 0;
  bool cuda = false;  // --device cuda: the GPU numbered by the rank's local rank
  uint64_t seed = 42;
  // --compression and fp8's safeguards, over what hvdrun's --compression gave the ranks (libhvdrun's
  // CompressionOptions); unset: hvdrun's.
  std::optional<CompressionFormat> compression;
  std::optional<bool> fp8_scaling;
  std::optional<bool> fp8_safe_cast;
  std::optional<bool> fp8_float32_sums;
  std::optional<bool> error_feedback;
  // --elastic (data set runs on the CPU): train through ranks lost or added in an elastic job
  // (hvdrun --min-np), committing the state in memory every commit_every steps (docs/elastic.md).
  bool elastic = false;
  int commit_every = 10;
  bool describe = false;
  std::string json_path;  // rank 0 writes the run's figures here; empty: nowhere
};

// The outcome of parsing: run with `options`, or exit with `exit_code` after printing `help` on
// stdout (--help: 0) or `error` on stderr (a usage error: kUsageExitCode; one line, naming the flag).
struct ParsedTrainerCommandLine {
  std::optional<TrainerOptions> options;
  int exit_code = 0;
  std::string help;
  std::string error;
};

ParsedTrainerCommandLine ParseTrainerCommandLine(int argc, const char* const* argv);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_TRAINER_OPTIONS_H_
