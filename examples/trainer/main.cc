// hvdrun-trainer: data-parallel training on libtorch (docs/trainer.md). Under hvdrun every rank
// runs it; run directly, it is one process without the runtime.
//
// Exit codes: 0 success; 2 bad command line or input (unknown model, missing data set, sizes,
// --device cuda without CUDA); 1 a failure while running (the runtime, a collective, torch).
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <sched.h>
#include <torch/cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "examples/trainer/data_parallel_group.h"
#include "examples/trainer/dataset_training.h"
#include "examples/trainer/elastic_training.h"
#include "examples/trainer/mnist_dataset.h"
#include "examples/trainer/model_description.h"
#include "examples/trainer/model_state.h"
#include "examples/trainer/models/image_classifier.h"
#include "examples/trainer/synthetic_benchmark.h"
#include "examples/trainer/trainer_options.h"
#include "examples/trainer/trainer_report.h"
#include "examples/trainer/training_step.h"

namespace hvdrun::trainer {
namespace {

constexpr int kRunFailure = 1;

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "hvdrun-trainer: %s\n", message.c_str());
  return code;
}

// The cores this process may run on.
int AvailableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1U, std::thread::hardware_concurrency());
}

int Describe(const TrainerOptions& options) {
  std::shared_ptr<ImageClassifier> model = BuildModel(*options.model, options.image_size);
  ModelDescription description = DescribeModel(*options.model, *model, options.image_size);
  std::fputs(FormatModelDescription(description).c_str(), stdout);
  if (!options.json_path.empty()) {
    if (Status status = WriteJsonFile(options.json_path, ModelDescriptionToJson(description)); !status.ok()) {
      return Fail(kRunFailure, status.message());
    }
  }
  return 0;
}

// The data set, checked against the model; sets options.image_size to the data set's.
StatusOr<MnistDataset> LoadDataset(TrainerOptions& options) {
  StatusOr<MnistDataset> dataset =
      LoadMnistDataset(options.data_dir, options.train_limit, options.test_limit);
  if (!dataset.ok()) return dataset.status();
  const ModelInfo& model = *options.model;
  const std::string where = "--data-dir '" + options.data_dir + "': ";
  if (dataset->image_rows != dataset->image_columns) {
    return Status::Error(where + "images of " + std::to_string(dataset->image_rows) + "x" +
                         std::to_string(dataset->image_columns) + " pixels are not square");
  }
  if (dataset->image_rows < model.min_image_size) {
    return Status::Error(where + "images of " + std::to_string(dataset->image_rows) + "x" +
                         std::to_string(dataset->image_rows) + " pixels are too small for " + model.name +
                         " (at least " + std::to_string(model.min_image_size) + ")");
  }
  if (model.input_channels != 1) {
    return Status::Error(where + model.name + " takes " + std::to_string(model.input_channels) +
                         "-channel images; MNIST-format images have one (use --synthetic, or fmnist-cnn)");
  }
  if (dataset->max_label >= model.classes) {
    return Status::Error(where + "label " + std::to_string(dataset->max_label) + " is beyond the " +
                         std::to_string(model.classes) + " classes of " + model.name);
  }
  options.image_size = dataset->image_rows;
  return dataset;
}

void PrintHeader(const RunSettings& s) {
  std::printf(
      "hvdrun-trainer: %s, %s %lldx%lld images, batch %lld per rank, %d rank%s (%s), %d thread%s per rank, "
      "%s, lr %g\n",
      s.model.c_str(), s.synthetic ? "synthetic" : "data set",
      static_cast<long long>(s.image_size),                                        // NOLINT
      static_cast<long long>(s.image_size), static_cast<long long>(s.batch_size),  // NOLINT
      s.ranks, s.ranks == 1 ? "" : "s", s.backend.c_str(), s.threads, s.threads == 1 ? "" : "s",
      s.device.c_str(), s.lr);
  const CompressionOptions& c = s.compression;
  if (c.format == CompressionFormat::kFloat8E4M3 || c.format == CompressionFormat::kFloat8E5M2) {
    std::printf("gradients travel as %s (scaling %s, safe cast %s, float32 sums %s, error feedback %s)\n",
                std::string(CompressionFormatName(c.format)).c_str(), c.scaling ? "on" : "off",
                c.safe_cast ? "on" : "off", c.float32_sums ? "on" : "off", c.error_feedback ? "on" : "off");
  } else if (c.format != CompressionFormat::kNone) {
    std::printf("gradients travel as %s\n", std::string(CompressionFormatName(c.format)).c_str());
  }
  std::fflush(stdout);
}

void PrintResult(const RunSettings& s, const TrainingResult& result) {
  if (s.synthetic) {
    const StepSummary mine = SummarizeSteps(result.steps);
    // As Horovod's benchmark: ± 1.96 standard deviations of this rank's steps.
    std::printf(
        "img/s per rank: %.1f +- %.1f (mean over %d rank%s; step %.3f s, waiting for gradients %.3f s)\n",
        result.group.img_per_sec_per_rank, 1.96 * mine.img_per_sec_stddev, s.ranks, s.ranks == 1 ? "" : "s",
        result.group.step_time_s, result.group.comm_wait_s);
    std::printf("img/s total on %d rank%s: %.1f\n", s.ranks, s.ranks == 1 ? "" : "s",
                result.group.img_per_sec_total);
  } else if (result.test_accuracy) {
    std::printf("test accuracy %.4f after %d epoch%s, %.1f s; img/s per rank %.1f, total %.1f\n",
                *result.test_accuracy, s.epochs, s.epochs == 1 ? "" : "s", result.wall_s,
                result.group.img_per_sec_per_rank, result.group.img_per_sec_total);
  }
  std::fflush(stdout);
}

// --compression and its safeguards over what hvdrun's flags gave the runtime.
void ApplyCompressionFlags(const TrainerOptions& options, RuntimeOptions& runtime_options) {
  CompressionOptions& compression = runtime_options.compression;
  if (options.compression) compression.format = *options.compression;
  if (options.fp8_scaling) compression.scaling = *options.fp8_scaling;
  if (options.fp8_safe_cast) compression.safe_cast = *options.fp8_safe_cast;
  if (options.fp8_float32_sums) compression.float32_sums = *options.fp8_float32_sums;
  if (options.error_feedback) compression.error_feedback = *options.error_feedback;
}

// The usage error of flags that do not fit the group this rank joined, or OK.
Status CheckGroupFits(const TrainerOptions& options, const DataParallelGroup& group,
                      const std::optional<MnistDataset>& dataset, bool device_buffers) {
  if (group.runtime() == nullptr && options.compression) {
    return Status::Error(
        "--compression: gradients are compressed on their way between ranks; run under hvdrun with "
        "--gloo or --mpi");
  }
  if (dataset && dataset->train.size() < group.size()) {
    return Status::Error("--train-limit: " + std::to_string(dataset->train.size()) +
                         " training examples cannot be shared among " + std::to_string(group.size()) +
                         " ranks");
  }
  if (device_buffers && !options.cuda) {
    return Status::Error("--device cpu: the nccl backend averages GPU memory; use --device cuda");
  }
  return Status::Ok();
}

// The device this rank trains on: the CPU, or with --device cuda the GPU of its local rank, which must
// be visible (a usage error otherwise).
StatusOr<c10::Device> PickDevice(const TrainerOptions& options, const DataParallelGroup& group) {
  if (!options.cuda) return c10::Device(c10::kCPU);
  if (static_cast<int64_t>(torch::cuda::device_count()) <= group.local_rank()) {
    return Status::Error("--device cuda: local rank " + std::to_string(group.local_rank()) + " needs GPU " +
                         std::to_string(group.local_rank()) + ", but " +
                         std::to_string(torch::cuda::device_count()) + " are visible");
  }
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(group.local_rank()));
}

// What this run is, as the header, the result lines and the reports show it.
RunSettings SettingsFor(const TrainerOptions& options, const DataParallelGroup& group,
                        const c10::Device& device, const std::optional<MnistDataset>& dataset) {
  RunSettings settings;
  settings.model = options.model->name;
  settings.synthetic = options.synthetic;
  settings.backend = group.backend_name();
  settings.ranks = group.size();
  settings.rank = group.rank();
  settings.local_rank = group.local_rank();
  settings.device = device.str();
  settings.threads =
      options.threads > 0 ? options.threads : std::max(1, AvailableCores() / group.local_size());
  settings.batch_size = options.batch_size;
  settings.image_size = options.image_size;
  settings.lr = options.lr * (options.scale_lr ? group.size() : 1);
  settings.lr_scaled = options.scale_lr;
  settings.momentum = options.momentum;
  settings.warmup_steps = options.warmup_steps;
  settings.steps = options.steps;
  settings.epochs = options.epochs;
  settings.data_dir = options.synthetic ? "" : options.data_dir;
  settings.train_examples_per_rank = dataset ? dataset->train.size() / group.size() : 0;
  settings.seed = options.seed;
  settings.elastic = options.elastic;
  settings.commit_every = options.elastic ? options.commit_every : 0;
  if (group.runtime() != nullptr) settings.compression = group.runtime()->compression();
  return settings;
}

// Completes a run's `result` with what the step and the model know, and the group's figures (a
// collective: every rank calls it).
Status CompleteResult(const TrainingStep& step, ImageClassifier& model, DataParallelGroup& group,
                      TrainingResult& result) {
  result.bytes_reduced_per_step = step.bytes_reduced_per_step();
  result.bytes_reduced = result.bytes_reduced_per_step * result.steps_run;
  result.overlapped_reductions = step.overlapped_reductions();
  if (group.runtime() != nullptr) result.compression = group.runtime()->compression_counters();
  result.parameter_tensors = static_cast<int>(model.parameters().size());
  result.parameter_checksum = ParameterChecksum(model);
  return ComputeGroupFigures(group, result);
}

// Rank 0's --json file, then every rank's report to the collector; the exit code.
int WriteReports(const TrainerOptions& options, const RunSettings& settings, const TrainingResult& result,
                 DataParallelGroup& group, const std::string& rank_prefix) {
  // The --json file first: it does not depend on the collector being reachable.
  if (group.rank() == 0 && !options.json_path.empty()) {
    if (Status status = WriteJsonFile(options.json_path, RunDocument(settings, result)); !status.ok()) {
      return Fail(kRunFailure, status.message());
    }
  }
  if (Status status = group.SendReport(RankReport(settings, result).dump()); !status.ok()) {
    return Fail(kRunFailure, rank_prefix + "sending the report: " + status.message());
  }
  return 0;
}

// The end of an elastic rank that could not go on: a worker that hvdrun left out of the job's new
// round exits 0 after its line; any other error is a failure.
int EndElastic(const std::string& rank_prefix, const Status& status) {
  if (KindOf(status) == ErrorKind::kRemoved) {
    std::fprintf(stderr, "hvdrun-trainer: %s%s\n", rank_prefix.c_str(), status.message().c_str());
    return 0;
  }
  return Fail(kRunFailure, rank_prefix + status.message());
}

// --elastic: training through the rounds of an elastic job (elastic_training.h), on the CPU.
int TrainElastic(const TrainerOptions& options, const MnistDataset& dataset) {
  at::manual_seed(options.seed);  // rank 0's parameters replace every rank's as the first round begins
  std::shared_ptr<ImageClassifier> model = BuildModel(*options.model, options.image_size);
  ElasticTraining training(options, *model, dataset, [&options]() {
    return DataParallelGroup::FromEnvironment(std::getenv, [&options](RuntimeOptions& runtime_options) {
      ApplyCompressionFlags(options, runtime_options);
    });
  });
  if (Status joined = training.Join(); !joined.ok()) return EndElastic("", joined);
  const c10::Device cpu(c10::kCPU);
  if (Status fits = CheckGroupFits(options, training.group(), dataset, false); !fits.ok()) {
    return Fail(kUsageExitCode, fits.message());
  }
  RunSettings settings = SettingsFor(options, training.group(), cpu, dataset);
  at::set_num_threads(settings.threads);
  if (training.group().rank() == 0) PrintHeader(settings);
  StatusOr<TrainingResult> run = training.Run(stdout);
  if (!run.ok()) return EndElastic("", run.status());
  DataParallelGroup& group = training.group();
  const std::string rank_prefix = "rank " + std::to_string(group.rank()) + ": ";
  settings = SettingsFor(options, group, cpu, dataset);  // the last round's
  TrainingResult& result = run.value();
  if (Status status = CompleteResult(training.step(), *model, group, result); !status.ok()) {
    return Fail(kRunFailure, rank_prefix + status.message());
  }
  if (group.rank() == 0) {
    std::printf("%lld training examples in %zu round%s\n",
                static_cast<long long>(result.samples_trained),  // NOLINT(google-runtime-int)
                result.rounds.size(), result.rounds.size() == 1 ? "" : "s");
    PrintResult(settings, result);
  }
  return WriteReports(options, settings, result, group, rank_prefix);
}

int Train(TrainerOptions options) {
  if (options.cuda && !torch::cuda::is_available()) {
    return Fail(kUsageExitCode,
                "--device cuda: this libtorch has no CUDA support, or no GPU is visible (build hvdrun with "
                "-DTorch_DIR=<a CUDA libtorch>/share/cmake/Torch, or use --device cpu)");
  }
  std::optional<MnistDataset> dataset;
  if (!options.synthetic) {
    StatusOr<MnistDataset> loaded = LoadDataset(options);
    if (!loaded.ok()) return Fail(kUsageExitCode, loaded.status().message());
    dataset = std::move(loaded).value();
  }
  if (options.elastic) return TrainElastic(options, *dataset);
  StatusOr<std::unique_ptr<DataParallelGroup>> joined = DataParallelGroup::FromEnvironment(
      std::getenv,
      [&options](RuntimeOptions& runtime_options) { ApplyCompressionFlags(options, runtime_options); });
  if (!joined.ok()) return Fail(kRunFailure, joined.status().message());
  DataParallelGroup& group = *joined.value();
  const std::string rank_prefix = "rank " + std::to_string(group.rank()) + ": ";
  const bool device_buffers = group.runtime() != nullptr && group.runtime()->backend() == BackendKind::kNccl;
  if (Status fits = CheckGroupFits(options, group, dataset, device_buffers); !fits.ok()) {
    return Fail(kUsageExitCode, fits.message());
  }
  StatusOr<c10::Device> device = PickDevice(options, group);
  if (!device.ok()) return Fail(kUsageExitCode, rank_prefix + device.status().message());
  if (device->is_cuda() && device_buffers) group.StageThroughGpu(group.local_rank());
  const RunSettings settings = SettingsFor(options, group, *device, dataset);
  at::set_num_threads(settings.threads);

  // Each rank draws its own initial parameters; rank 0's then replace them everywhere.
  at::manual_seed(options.seed + static_cast<uint64_t>(group.rank()));
  std::shared_ptr<ImageClassifier> model = BuildModel(*options.model, options.image_size);
  model->MoveTo(*device);
  if (Status status = BroadcastModelState(*model, group); !status.ok()) {
    return Fail(kRunFailure, rank_prefix + status.message());
  }
  TrainingStep step(*model, group, {settings.lr, settings.momentum}, device_buffers);
  std::FILE* progress = group.rank() == 0 ? stdout : nullptr;
  if (progress != nullptr) PrintHeader(settings);

  StatusOr<TrainingResult> run =
      options.synthetic
          ? RunSyntheticBenchmark(options, *model, step, *device, progress)
          : RunDatasetTraining(options, group, *model, step, settings.lr, *dataset, *device, progress);
  if (!run.ok()) return Fail(kRunFailure, rank_prefix + run.status().message());
  TrainingResult& result = run.value();
  if (Status status = CompleteResult(step, *model, group, result); !status.ok()) {
    return Fail(kRunFailure, rank_prefix + status.message());
  }
  if (progress != nullptr) PrintResult(settings, result);
  return WriteReports(options, settings, result, group, rank_prefix);
}

int Main(int argc, char** argv) {
  ParsedTrainerCommandLine parsed = ParseTrainerCommandLine(argc, argv);
  if (!parsed.options) {
    if (!parsed.help.empty()) std::fputs(parsed.help.c_str(), stdout);
    if (!parsed.error.empty()) Fail(parsed.exit_code, parsed.error);
    return parsed.exit_code;
  }
  if (parsed.options->describe) return Describe(*parsed.options);
  return Train(*parsed.options);
}

// The first line of a message: torch's errors may carry more.
std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace
}  // namespace hvdrun::trainer

int main(int argc, char** argv) {
  try {
    return hvdrun::trainer::Main(argc, argv);
  } catch (const c10::Error& error) {
    return hvdrun::trainer::Fail(1, "torch: " + hvdrun::trainer::FirstLine(error.what_without_backtrace()));
  } catch (const std::exception& error) {
    return hvdrun::trainer::Fail(1, hvdrun::trainer::FirstLine(error.what()));
  }
}
