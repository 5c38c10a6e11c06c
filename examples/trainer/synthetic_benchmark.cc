#include "examples/trainer/synthetic_benchmark.h"

#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>

#include <chrono>

#include "examples/trainer/models/image_classifier.h"

namespace hvdrun::trainer {

StatusOr<TrainingResult> RunSyntheticBenchmark(const TrainerOptions& options, ImageClassifier& model,
                                               TrainingStep& step, c10::Device device, std::FILE* progress) {
  const ModelInfo& info = *options.model;
  at::Tensor images =
      at::randn({options.batch_size, info.input_channels, options.image_size, options.image_size},
                at::TensorOptions().device(device).dtype(at::kFloat));
  at::Tensor labels =
      at::randint(info.classes, {options.batch_size}, at::TensorOptions().device(device).dtype(at::kLong));
  model.train(/*on=*/true);
  TrainingResult result;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < options.warmup_steps + options.steps; ++i) {
    StatusOr<StepRecord> record = step.Run(images, labels);
    if (!record.ok()) return record.status();
    ++result.steps_run;
    const bool warmup = i < options.warmup_steps;
    if (!warmup) result.steps.push_back(record.value());
    if (progress != nullptr) {
      const StepRecord& r = record.value();
      std::fprintf(progress, "%s %d/%d: %.3f s, %.1f img/s (compute %.3f s, waiting for gradients %.3f s)\n",
                   warmup ? "warm-up step" : "step", warmup ? i + 1 : i + 1 - options.warmup_steps,
                   warmup ? options.warmup_steps : options.steps, r.step_s, r.img_per_sec(), r.compute_s,
                   r.comm_wait_s);
      std::fflush(progress);
    }
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace hvdrun::trainer
