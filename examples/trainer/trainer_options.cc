#include "examples/trainer/trainer_options.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <sstream>
#include <tuple>
#include <vector>

#include "examples/shared/whole_number_flag.h"
#include "examples/trainer/mnist_dataset.h"
#include "hvdrun/version.h"

namespace hvdrun::trainer {
namespace {

// Synthetic runs: Horovod's pytorch_synthetic_benchmark.py uses batch 32 and SGD with lr 0.01.
constexpr int64_t kSyntheticBatchSize = 32;
constexpr double kSyntheticLr = 0.01;
// Data set runs: measured on 2 cores to reach 90% test accuracy on Fashion-MNIST with fmnist-cnn,
// at 1 and at 2 ranks alike (docs/trainer.md has the figures).
constexpr int64_t kDatasetBatchSize = 64;
constexpr int kDatasetEpochs = 4;
constexpr double kDatasetLr = 0.02;

constexpr int64_t kMaxBatchSize = int64_t{1} << 20;
constexpr int64_t kMaxImageSize = 8192;
constexpr int kMaxSteps = 1 << 30;
constexpr int kMaxThreads = 4096;

std::string Format(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

StatusOr<double> ParseReal(const std::string& flag, const std::string& text, double min, double max,
                           bool min_inclusive) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) {
    return Status::Error(flag + ": '" + text + "' is not a number");
  }
  if (value < min || (value == min && !min_inclusive) || value >= max) {
    return Status::Error(flag + ": " + text + " is out of range (" +
                         (min_inclusive ? "at least " : "above ") + Format(min) + ", below " + Format(max) +
                         ")");
  }
  return value;
}

}  // namespace

ParsedTrainerCommandLine ParseTrainerCommandLine(int argc, const char* const* argv) {
  ParsedTrainerCommandLine result;
  TrainerOptions options;
  std::string model_name;
  std::string batch_text;
  std::string image_text;
  std::string steps_text;
  std::string warmup_text;
  std::string epochs_text;
  std::string train_limit_text;
  std::string test_limit_text;
  std::string lr_text;
  std::string momentum_text;
  std::string threads_text;
  std::string seed_text;
  std::string compression_text;
  std::string device = "cpu";
  bool no_lr_scaling = false;
  bool synthetic = false;
  options.data_dir = kFashionMnistDir;

  std::string models_help;
  for (const ModelInfo& info : AllModels()) models_help += "\n  " + info.name + ": " + info.description;
  CLI::App app(
      "hvdrun-trainer: data-parallel training on libtorch, one process per rank, gradients averaged "
      "through libhvdrun.",
      "hvdrun-trainer");
  app.set_version_flag("--version", "hvdrun-trainer " HVDRUN_VERSION);
  app.footer(
      "Models:" + models_help +
      "\n\nExamples:\n"
      "  hvdrun -np 2 --gloo hvdrun-trainer --model resnet50 --batch-size 32 --image-size 224 --steps 20\n"
      "  hvdrun -np 4 --gloo hvdrun-trainer --model fmnist-cnn --epochs 3 --json run.json\n"
      "  hvdrun-trainer --model vgg16 --describe\n"
      "Under hvdrun (HVDRUN_* in the environment) every rank trains on its own shard of the data and\n"
      "averages gradients with the others. Run without hvdrun, it is a single process without the\n"
      "runtime: one rank, nothing to average (for --describe and quick checks).");
  app.add_option("--model", model_name, "Model to train: " + ModelNames());
  app.add_flag("--describe", options.describe,
               "Print the model's parameter tensors (name, shape), their count and total, and its "
               "multiply-accumulates and FLOPs per image; train nothing");
  app.add_flag(
      "--synthetic", synthetic,
      "Train on random images and labels and time the steps (always so for models without a data set)");
  app.add_option("--batch-size", batch_text,
                 "Images per rank per step (default: 32 synthetic, 64 on a data set)");
  app.add_option("--image-size", image_text,
                 "Side of the square images, synthetic runs (default: the model's, 224 or 28)");
  app.add_option("--steps", steps_text, "Synthetic: timed steps (default 20)");
  app.add_option("--warmup-steps", warmup_text, "Synthetic: untimed steps before them (default 5)");
  app.add_option("--epochs", epochs_text,
                 "Data set: passes over each rank's shard of the training set (default " +
                     std::to_string(kDatasetEpochs) + ")");
  app.add_option(
      "--data-dir", options.data_dir,
      std::string("Data set: directory of an MNIST-format set, IDX files, .gz or plain (default ") +
          kFashionMnistDir + ", Debian's dataset-fashion-mnist)");
  app.add_option("--train-limit", train_limit_text, "Data set: use only the first N training examples");
  app.add_option("--test-limit", test_limit_text, "Data set: use only the first N test examples");
  app.add_option("--lr", lr_text,
                 "Learning rate for one rank (default: 0.01 synthetic, " + Format(kDatasetLr) +
                     " on a data set, annealed along a cosine); multiplied by the number of ranks unless "
                     "--no-lr-scaling");
  app.add_flag("--no-lr-scaling", no_lr_scaling, "Keep the learning rate whatever the number of ranks");
  app.add_option("--momentum", momentum_text, "SGD momentum (default 0.9)");
  app.add_option(
      "--threads", threads_text,
      "Threads per rank for torch's operators (default: this host's cores divided by the ranks on it)");
  app.add_option("--device", device,
                 "cpu, or cuda: the GPU numbered by the rank's local rank (needs a CUDA libtorch)");
  app.add_option("--seed", seed_text, "Seed of the random initialization and data order (default 42)");
  app.add_option("--compression", compression_text,
                 "Gradients travel as none, fp16, bf16, fp8 (E4M3; also fp8-e4m3) or fp8-e5m2 (default: "
                 "hvdrun's --compression, else none)");
  // fp8's safeguards: on unless switched off (or as hvdrun's flags set them).
  const struct {
    const char* flag;
    std::optional<bool>* setting;
    const char* help;
  } safeguards[] = {
      {"--fp8-scaling", &options.fp8_scaling,
       "fp8: scale blocks of gradients by a shared power of two (on|off)"},
      {"--fp8-safe-cast", &options.fp8_safe_cast,
       "fp8: saturate, and keep subnormals; off: overflow to NaN, flush to zero (on|off)"},
      {"--fp8-float32-sums", &options.fp8_float32_sums,
       "fp8: sum every rank's gradients in float32 (on|off)"},
      {"--error-feedback", &options.error_feedback,
       "fp8: add what encoding lost to the next step's gradients (on|off)"},
  };
  std::string safeguard_texts[std::size(safeguards)];
  for (size_t i = 0; i < std::size(safeguards); ++i) {
    app.add_option(safeguards[i].flag, safeguard_texts[i], safeguards[i].help);
  }
  app.add_option("--json", options.json_path,
                 "Rank 0 writes the run's figures to this JSON file (or, with --describe, the description)");

  auto usage_error = [&](const std::string& message) {
    result.exit_code = kUsageExitCode;
    result.error = message;
    return result;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& success) {
    std::ostringstream out;
    std::ostringstream err;
    result.exit_code = app.exit(success, out, err);
    result.help = out.str();
    return result;
  } catch (const CLI::ParseError& error) {
    return usage_error(std::string(error.what()) + " (see hvdrun-trainer --help)");
  }

  if (model_name.empty()) return usage_error("--model: give the model to train (" + ModelNames() + ")");
  options.model = FindModel(model_name);
  if (options.model == nullptr) {
    return usage_error("--model: unknown model '" + model_name + "' (known: " + ModelNames() + ")");
  }
  const ModelInfo& model = *options.model;
  options.synthetic = synthetic || !model.trains_on_dataset;
  options.scale_lr = !no_lr_scaling;

  if (device == "cuda") {
    options.cuda = true;
  } else if (device != "cpu") {
    return usage_error("--device: unknown device '" + device + "' (cpu or cuda)");
  }
  // Flags of the other kind of run.
  const std::vector<const char*> synthetic_only = {"--steps", "--warmup-steps"};
  const std::vector<const char*> dataset_only = {"--epochs", "--data-dir", "--train-limit", "--test-limit"};
  if (!options.describe) {
    for (const char* flag : options.synthetic ? dataset_only : synthetic_only) {
      if (app.count(flag) == 0) continue;
      return usage_error(
          std::string(flag) + ": " +
          (options.synthetic
               ? "only for training on a data set (fmnist-cnn without --synthetic); "
                 "this run is synthetic"
               : "only for synthetic runs (--synthetic); this run trains on " + options.data_dir));
    }
    if (!options.synthetic && app.count("--image-size") > 0) {
      return usage_error(
          "--image-size: only for synthetic runs; on a data set the images are the data set's");
    }
  }

  options.image_size = options.synthetic || options.describe ? model.default_image_size : 0;
  if (app.count("--image-size") > 0) {
    StatusOr<int64_t> size = examples::ParseWholeNumberFlag("--image-size", image_text, 1, kMaxImageSize);
    if (!size.ok()) return usage_error(size.status().message());
    if (size.value() < model.min_image_size) {
      return usage_error("--image-size: " + image_text + " is too small for " + model.name + " (at least " +
                         std::to_string(model.min_image_size) + ")");
    }
    options.image_size = size.value();
  }
  options.batch_size = options.synthetic ? kSyntheticBatchSize : kDatasetBatchSize;
  if (app.count("--batch-size") > 0) {
    StatusOr<int64_t> batch = examples::ParseWholeNumberFlag("--batch-size", batch_text, 1, kMaxBatchSize);
    if (!batch.ok()) return usage_error(batch.status().message());
    options.batch_size = batch.value();
  }
  if (app.count("--steps") > 0) {
    StatusOr<int64_t> steps = examples::ParseWholeNumberFlag("--steps", steps_text, 1, kMaxSteps);
    if (!steps.ok()) return usage_error(steps.status().message());
    options.steps = static_cast<int>(steps.value());
  }
  if (app.count("--warmup-steps") > 0) {
    StatusOr<int64_t> warmup = examples::ParseWholeNumberFlag("--warmup-steps", warmup_text, 0, kMaxSteps);
    if (!warmup.ok()) return usage_error(warmup.status().message());
    options.warmup_steps = static_cast<int>(warmup.value());
  }
  options.epochs = kDatasetEpochs;
  if (app.count("--epochs") > 0) {
    StatusOr<int64_t> epochs = examples::ParseWholeNumberFlag("--epochs", epochs_text, 1, kMaxSteps);
    if (!epochs.ok()) return usage_error(epochs.status().message());
    options.epochs = static_cast<int>(epochs.value());
  }
  for (auto [flag, text, limit] : {std::tuple("--train-limit", &train_limit_text, &options.train_limit),
                                   std::tuple("--test-limit", &test_limit_text, &options.test_limit)}) {
    if (app.count(flag) == 0) continue;
    StatusOr<int64_t> value = examples::ParseWholeNumberFlag(flag, *text, 1, int64_t{1} << 40);
    if (!value.ok()) return usage_error(value.status().message());
    *limit = value.value();
  }
  if (options.data_dir.empty()) return usage_error("--data-dir: empty directory name");
  options.lr = options.synthetic ? kSyntheticLr : kDatasetLr;
  if (app.count("--lr") > 0) {
    StatusOr<double> lr = ParseReal("--lr", lr_text, 0, 1e6, /*min_inclusive=*/false);
    if (!lr.ok()) return usage_error(lr.status().message());
    options.lr = lr.value();
  }
  if (app.count("--momentum") > 0) {
    StatusOr<double> momentum = ParseReal("--momentum", momentum_text, 0, 1, /*min_inclusive=*/true);
    if (!momentum.ok()) return usage_error(momentum.status().message());
    options.momentum = momentum.value();
  }
  if (app.count("--threads") > 0) {
    StatusOr<int64_t> threads = examples::ParseWholeNumberFlag("--threads", threads_text, 1, kMaxThreads);
    if (!threads.ok()) return usage_error(threads.status().message());
    options.threads = static_cast<int>(threads.value());
  }
  if (app.count("--seed") > 0) {
    StatusOr<int64_t> seed = examples::ParseWholeNumberFlag("--seed", seed_text, 0, int64_t{1} << 62);
    if (!seed.ok()) return usage_error(seed.status().message());
    options.seed = static_cast<uint64_t>(seed.value());
  }
  if (app.count("--compression") > 0) {
    options.compression = ParseCompressionFormat(compression_text);
    if (!options.compression) {
      return usage_error("--compression: '" + compression_text +
                         "' is not a compression (none, fp16, bf16, fp8, fp8-e4m3, fp8-e5m2)");
    }
  }
  for (size_t i = 0; i < std::size(safeguards); ++i) {
    if (app.count(safeguards[i].flag) == 0) continue;
    if (safeguard_texts[i] != "on" && safeguard_texts[i] != "off") {
      return usage_error(std::string(safeguards[i].flag) + ": '" + safeguard_texts[i] + "' is not on or off");
    }
    *safeguards[i].setting = safeguard_texts[i] == "on";
  }
  if (app.count("--json") > 0 && options.json_path.empty()) return usage_error("--json: empty file name");
  result.options = options;
  return result;
}

}  // namespace hvdrun::trainer
