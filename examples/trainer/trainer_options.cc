#include "examples/trainer/trainer_options.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <sstream>
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

// Every flag's value as typed, before it is checked; the switches and paths that need no check go
// straight into TrainerOptions.
struct TrainerFlags {
  std::string model, batch_size, image_size, steps, warmup_steps, epochs, train_limit, test_limit;
  std::string lr, momentum, threads, seed, compression, commit_every;
  std::string device = "cpu";
  bool no_lr_scaling = false;
  bool synthetic = false;
  std::string safeguards[4];  // in kSafeguards' order
};

// fp8's safeguards: on unless switched off (or as hvdrun's flags set them).
const struct {
  const char* flag;
  std::optional<bool> TrainerOptions::*setting;
  const char* help;
} kSafeguards[] = {
    {"--fp8-scaling", &TrainerOptions::fp8_scaling,
     "fp8: scale blocks of gradients by a shared power of two (on|off)"},
    {"--fp8-safe-cast", &TrainerOptions::fp8_safe_cast,
     "fp8: saturate, and keep subnormals; off: overflow to NaN, flush to zero (on|off)"},
    {"--fp8-float32-sums", &TrainerOptions::fp8_float32_sums,
     "fp8: sum every rank's gradients in float32 (on|off)"},
    {"--error-feedback", &TrainerOptions::error_feedback,
     "fp8: add what encoding lost to the next step's gradients (on|off)"},
};

// Whether a flag was given on the command line.
using Given = std::function<bool(const char*)>;

void DeclareTrainerFlags(CLI::App& app, TrainerFlags& flags, TrainerOptions& options) {
  std::string models_help;
  for (const ModelInfo& info : AllModels()) models_help += "\n  " + info.name + ": " + info.description;
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
  app.add_option("--model", flags.model, "Model to train: " + ModelNames());
  app.add_flag("--describe", options.describe,
               "Print the model's parameter tensors (name, shape), their count and total, and its "
               "multiply-accumulates and FLOPs per image; train nothing");
  app.add_flag(
      "--synthetic", flags.synthetic,
      "Train on random images and labels and time the steps (always so for models without a data set)");
  app.add_option("--batch-size", flags.batch_size,
                 "Images per rank per step (default: 32 synthetic, 64 on a data set)");
  app.add_option("--image-size", flags.image_size,
                 "Side of the square images, synthetic runs (default: the model's, 224 or 28)");
  app.add_option("--steps", flags.steps, "Synthetic: timed steps (default 20)");
  app.add_option("--warmup-steps", flags.warmup_steps, "Synthetic: untimed steps before them (default 5)");
  app.add_option("--epochs", flags.epochs,
                 "Data set: passes over each rank's shard of the training set (default " +
                     std::to_string(kDatasetEpochs) + ")");
  app.add_option(
      "--data-dir", options.data_dir,
      std::string("Data set: directory of an MNIST-format set, IDX files, .gz or plain (default ") +
          kFashionMnistDir + ", Debian's dataset-fashion-mnist)");
  app.add_option("--train-limit", flags.train_limit, "Data set: use only the first N training examples");
  app.add_option("--test-limit", flags.test_limit, "Data set: use only the first N test examples");
  app.add_option("--lr", flags.lr,
                 "Learning rate for one rank (default: 0.01 synthetic, " + Format(kDatasetLr) +
                     " on a data set, annealed along a cosine); multiplied by the number of ranks unless "
                     "--no-lr-scaling");
  app.add_flag("--no-lr-scaling", flags.no_lr_scaling, "Keep the learning rate whatever the number of ranks");
  app.add_option("--momentum", flags.momentum, "SGD momentum (default 0.9)");
  app.add_option(
      "--threads", flags.threads,
      "Threads per rank for torch's operators (default: this host's cores divided by the ranks on it)");
  app.add_option("--device", flags.device,
                 "cpu, or cuda: the GPU numbered by the rank's local rank (needs a CUDA libtorch)");
  app.add_option("--seed", flags.seed, "Seed of the random initialization and data order (default 42)");
  app.add_option("--compression", flags.compression,
                 "Gradients travel as none, fp16, bf16, fp8 (E4M3; also fp8-e4m3) or fp8-e5m2 (default: "
                 "hvdrun's --compression, else none)");
  for (size_t i = 0; i < std::size(kSafeguards); ++i) {
    app.add_option(kSafeguards[i].flag, flags.safeguards[i], kSafeguards[i].help);
  }
  app.add_flag("--elastic", options.elastic,
               "Data set, CPU: in an elastic job (hvdrun --min-np) train on through lost and added ranks, "
               "from the last commit; each sample of an epoch is trained once (docs/elastic.md)");
  app.add_option("--commit-every", flags.commit_every,
                 "--elastic: commit the training state in memory every N steps (default 10)");
  app.add_option("--json", options.json_path,
                 "Rank 0 writes the run's figures to this JSON file (or, with --describe, the description)");
}

// The model and the kind of run, and the flags that only the other kind of run takes.
Status ResolveModelAndRun(const TrainerFlags& flags, const Given& given, TrainerOptions& options) {
  if (flags.model.empty()) return Status::Error("--model: give the model to train (" + ModelNames() + ")");
  options.model = FindModel(flags.model);
  if (options.model == nullptr) {
    return Status::Error("--model: unknown model '" + flags.model + "' (known: " + ModelNames() + ")");
  }
  options.synthetic = flags.synthetic || !options.model->trains_on_dataset;
  options.scale_lr = !flags.no_lr_scaling;
  if (flags.device == "cuda") {
    options.cuda = true;
  } else if (flags.device != "cpu") {
    return Status::Error("--device: unknown device '" + flags.device + "' (cpu or cuda)");
  }
  if (options.describe) return Status::Ok();
  const std::vector<const char*> synthetic_only = {"--steps", "--warmup-steps"};
  const std::vector<const char*> dataset_only = {"--epochs", "--data-dir", "--train-limit", "--test-limit"};
  for (const char* flag : options.synthetic ? dataset_only : synthetic_only) {
    if (!given(flag)) continue;
    return Status::Error(
        std::string(flag) + ": " +
        (options.synthetic
             ? "only for training on a data set (fmnist-cnn without --synthetic); "
               "this run is synthetic"
             : "only for synthetic runs (--synthetic); this run trains on " + options.data_dir));
  }
  if (!options.synthetic && given("--image-size")) {
    return Status::Error(
        "--image-size: only for synthetic runs; on a data set the images are the data set's");
  }
  return Status::Ok();
}

// `*target` from `flag`'s whole number in [min, max], where given.
template <typename T>
Status ResolveWholeNumber(const Given& given, const char* flag, const std::string& text, int64_t min,
                          int64_t max, T* target) {
  if (!given(flag)) return Status::Ok();
  StatusOr<int64_t> value = examples::ParseWholeNumberFlag(flag, text, min, max);
  if (!value.ok()) return value.status();
  *target = static_cast<T>(value.value());
  return Status::Ok();
}

// Images, batch, steps, epochs and the data set's limits, with the kind of run's defaults.
Status ResolveWorkload(const TrainerFlags& flags, const Given& given, TrainerOptions& options) {
  const ModelInfo& model = *options.model;
  options.image_size = options.synthetic || options.describe ? model.default_image_size : 0;
  if (Status s =
          ResolveWholeNumber(given, "--image-size", flags.image_size, 1, kMaxImageSize, &options.image_size);
      !s.ok()) {
    return s;
  }
  if (given("--image-size") && options.image_size < model.min_image_size) {
    return Status::Error("--image-size: " + flags.image_size + " is too small for " + model.name +
                         " (at least " + std::to_string(model.min_image_size) + ")");
  }
  options.batch_size = options.synthetic ? kSyntheticBatchSize : kDatasetBatchSize;
  options.epochs = kDatasetEpochs;
  for (Status s :
       {ResolveWholeNumber(given, "--batch-size", flags.batch_size, 1, kMaxBatchSize, &options.batch_size),
        ResolveWholeNumber(given, "--steps", flags.steps, 1, kMaxSteps, &options.steps),
        ResolveWholeNumber(given, "--warmup-steps", flags.warmup_steps, 0, kMaxSteps, &options.warmup_steps),
        ResolveWholeNumber(given, "--epochs", flags.epochs, 1, kMaxSteps, &options.epochs),
        ResolveWholeNumber(given, "--train-limit", flags.train_limit, 1, int64_t{1} << 40,
                           &options.train_limit),
        ResolveWholeNumber(given, "--test-limit", flags.test_limit, 1, int64_t{1} << 40,
                           &options.test_limit)}) {
    if (!s.ok()) return s;
  }
  if (options.data_dir.empty()) return Status::Error("--data-dir: empty directory name");
  return Status::Ok();
}

// The learning rate, momentum, threads and seed.
Status ResolveTraining(const TrainerFlags& flags, const Given& given, TrainerOptions& options) {
  options.lr = options.synthetic ? kSyntheticLr : kDatasetLr;
  if (given("--lr")) {
    StatusOr<double> lr = ParseReal("--lr", flags.lr, 0, 1e6, /*min_inclusive=*/false);
    if (!lr.ok()) return lr.status();
    options.lr = lr.value();
  }
  if (given("--momentum")) {
    StatusOr<double> momentum = ParseReal("--momentum", flags.momentum, 0, 1, /*min_inclusive=*/true);
    if (!momentum.ok()) return momentum.status();
    options.momentum = momentum.value();
  }
  if (Status s = ResolveWholeNumber(given, "--threads", flags.threads, 1, kMaxThreads, &options.threads);
      !s.ok()) {
    return s;
  }
  return ResolveWholeNumber(given, "--seed", flags.seed, 0, int64_t{1} << 62, &options.seed);
}

// --compression and fp8's safeguards, where given.
Status ResolveCompression(const TrainerFlags& flags, const Given& given, TrainerOptions& options) {
  if (given("--compression")) {
    options.compression = ParseCompressionFormat(flags.compression);
    if (!options.compression) {
      return Status::Error("--compression: '" + flags.compression +
                           "' is not a compression (none, fp16, bf16, fp8, fp8-e4m3, fp8-e5m2)");
    }
  }
  for (size_t i = 0; i < std::size(kSafeguards); ++i) {
    if (!given(kSafeguards[i].flag)) continue;
    const std::string& text = flags.safeguards[i];
    if (text != "on" && text != "off") {
      return Status::Error(std::string(kSafeguards[i].flag) + ": '" + text + "' is not on or off");
    }
    options.*kSafeguards[i].setting = text == "on";
  }
  return Status::Ok();
}

// --elastic and --commit-every: data set runs on the CPU only.
Status ResolveElastic(const TrainerFlags& flags, const Given& given, TrainerOptions& options) {
  if (!options.elastic) {
    if (given("--commit-every")) return Status::Error("--commit-every: only with --elastic");
    return Status::Ok();
  }
  if (options.describe) return Status::Error("--elastic: trains a model; --describe trains none");
  if (options.synthetic) {
    return Status::Error(
        "--elastic: only for training on a data set (fmnist-cnn without --synthetic); this run is synthetic");
  }
  if (options.cuda) return Status::Error("--elastic: trains on the CPU; use --device cpu");
  return ResolveWholeNumber(given, "--commit-every", flags.commit_every, 1, kMaxSteps, &options.commit_every);
}

}  // namespace

ParsedTrainerCommandLine ParseTrainerCommandLine(int argc, const char* const* argv) {
  ParsedTrainerCommandLine result;
  auto usage_error = [&](const std::string& message) {
    result.exit_code = kUsageExitCode;
    result.error = message;
    return result;
  };
  TrainerOptions options;
  options.data_dir = kFashionMnistDir;
  TrainerFlags flags;
  CLI::App app(
      "hvdrun-trainer: data-parallel training on libtorch, one process per rank, gradients averaged "
      "through libhvdrun.",
      "hvdrun-trainer");
  DeclareTrainerFlags(app, flags, options);
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
  const Given given = [&app](const char* flag) { return app.count(flag) > 0; };
  for (auto resolve :
       {ResolveModelAndRun, ResolveWorkload, ResolveTraining, ResolveCompression, ResolveElastic}) {
    if (Status status = resolve(flags, given, options); !status.ok()) return usage_error(status.message());
  }
  if (given("--json") && options.json_path.empty()) return usage_error("--json: empty file name");
  result.options = options;
  return result;
}

}  // namespace hvdrun::trainer
