#include "examples/bench/gradient_replay.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "examples/bench/bench_buffer.h"
#include "examples/bench/reduction_error.h"
#include "examples/bench/replay_gradients.h"
#include "examples/bench/replay_report.h"
#include "examples/shared/atomic_file.h"
#include "examples/shared/model_gradients.h"
#include "hvdrun/runtime.h"

namespace hvdrun {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kFusionThresholdVariable = "HOROVOD_FUSION_THRESHOLD";
constexpr const char* kCycleTimeVariable = "HOROVOD_CYCLE_TIME";
constexpr double kBytesPerMib = 1024.0 * 1024.0;

// One point of the sweep; an unset value is hvdrun's (the environment's).
struct Setting {
  std::optional<double> threshold_mb;
  std::optional<double> cycle_ms;
};

// The value a setting has for this run: the sweep's, else the environment's, else libhvdrun's default.
double ThresholdMb(const Setting& setting) {
  if (setting.threshold_mb) return *setting.threshold_mb;
  const char* text = std::getenv(kFusionThresholdVariable);
  return text != nullptr ? std::strtod(text, nullptr) / kBytesPerMib
                         : static_cast<double>(NegotiationOptions{}.fusion_threshold_bytes) / kBytesPerMib;
}

double CycleMs(const Setting& setting) {
  if (setting.cycle_ms) return *setting.cycle_ms;
  const char* text = std::getenv(kCycleTimeVariable);
  return text != nullptr ? std::strtod(text, nullptr)
                         : static_cast<double>(NegotiationOptions{}.cycle_time.count()) / 1000.0;
}

// The environment, with the setting's values in place of Horovod's variables.
Runtime::EnvironmentLookup LookupFor(const Setting& setting) {
  auto overrides = std::make_shared<std::map<std::string, std::string>>();
  if (setting.threshold_mb) {
    (*overrides)[kFusionThresholdVariable] =
        std::to_string(std::llround(*setting.threshold_mb * kBytesPerMib));
  }
  if (setting.cycle_ms) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.3f", *setting.cycle_ms);
    (*overrides)[kCycleTimeVariable] = text;
  }
  return [overrides](const char* name) -> const char* {
    auto found = overrides->find(name);
    return found != overrides->end() ? found->second.c_str() : std::getenv(name);
  };
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Milliseconds of each of `steps` timed calls of each of `step`s, after `warmup` untimed ones; every call
// starts with all ranks together, after `prepare` (untimed) for the same index. The calls are
// interleaved, one of each per step, the order turning by one each step, so that drift in the
// machine's load reaches them alike.
StatusOr<std::vector<std::vector<double>>> TimeStepsInterleaved(
    Runtime& runtime, int warmup, int steps, const std::function<Status(size_t)>& prepare,
    const std::vector<std::function<Status()>>& step) {
  std::vector<std::vector<double>> times(step.size());
  for (int i = 0; i < warmup + steps; ++i) {
    for (size_t k = 0; k < step.size(); ++k) {
      const size_t s = (static_cast<size_t>(i) + k) % step.size();
      if (prepare) {
        if (Status status = prepare(s); !status.ok()) return status;
      }
      if (Status status = runtime.Barrier(); !status.ok()) return status;
      const Clock::time_point start = Clock::now();
      if (Status status = step[s](); !status.ok()) return status;
      if (i >= warmup) {
        times[s].push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
      }
    }
  }
  return times;
}

StatusOr<std::vector<double>> TimeSteps(Runtime& runtime, int warmup, int steps,
                                        const std::function<Status()>& step) {
  StatusOr<std::vector<std::vector<double>>> times =
      TimeStepsInterleaved(runtime, warmup, steps, nullptr, {step});
  if (!times.ok()) return times.status();
  return std::move(times).value().front();
}

// The names a step submits its tensors under: theirs, after `prefix` ("fp16/", "check/fp16/").
std::vector<std::string> TensorNames(const ReplayGradients& gradients, const std::string& prefix) {
  std::vector<std::string> names;
  names.reserve(gradients.tensors.size());
  for (const examples::GradientTensor& tensor : gradients.tensors) names.push_back(prefix + tensor.name);
  return names;
}

// One step through the named path: every tensor submitted in backward order, in `format` (std::nullopt:
// the job's), then all waited for.
Status NamedStep(Runtime& runtime, ReduceOp op, ReplayGradients& gradients,
                 const std::vector<std::string>& names, std::optional<CompressionFormat> format) {
  std::vector<CollectiveHandle> handles;
  handles.reserve(gradients.tensors.size());
  for (size_t i = 0; i < gradients.tensors.size(); ++i) {
    const ReplayGradients::View& buffer = gradients.buffers[i];
    handles.push_back(format ? runtime.AllreduceAsync(names[i], buffer.data, buffer.data, buffer.size,
                                                      DataType::kFloat32, op, *format)
                             : runtime.AllreduceAsync(names[i], buffer.data, buffer.data, buffer.size,
                                                      DataType::kFloat32, op));
  }
  Status first;
  for (CollectiveHandle& handle : handles) {
    Status status = handle.Wait();
    if (first.ok()) first = status;
  }
  return first;
}

// After a step on every rank's `rank + 1` in every element: each element sums (or averages) them.
// Small integers and their halves, which every format carries exactly.
Status CheckExactStep(Runtime& runtime, ReduceOp op, ReplayGradients& gradients,
                      const std::vector<std::string>& names, std::optional<CompressionFormat> format) {
  if (Status status = gradients.Fill(static_cast<float>(runtime.rank() + 1)); !status.ok()) return status;
  if (Status status = NamedStep(runtime, op, gradients, names, format); !status.ok()) return status;
  if (Status status = gradients.Download(); !status.ok()) return status;
  const float sum = static_cast<float>(runtime.size()) * static_cast<float>(runtime.size() + 1) / 2;
  const float expected = op == ReduceOp::kAverage ? sum / static_cast<float>(runtime.size()) : sum;
  for (size_t i = 0; i < gradients.tensors.size(); ++i) {
    const float* values = gradients.Host(i);
    for (const float* value = values; value != values + gradients.buffers[i].size; ++value) {
      if (*value != expected) {
        return Status::Error("'" + names[i] + "' came to " + std::to_string(*value) + ", not " +
                             std::to_string(expected));
      }
    }
  }
  return Status::Ok();
}

// With --compression: each format's results for the gradient-like inputs, against the exact float32
// sums of the same inputs (an uncompressed allreduce). Every name is fresh, and is first used for the
// exact check, whose values every format carries without loss: so no error feedback from the timed
// steps reaches the compared step.
Status MeasureAccuracy(Runtime& runtime, ReduceOp op, ReplayGradients& gradients,
                       std::vector<FormatResult>& formats) {
  const std::vector<std::string> exact_names = TensorNames(gradients, "check/none/");
  if (Status status = CheckExactStep(runtime, op, gradients, exact_names, CompressionFormat::kNone);
      !status.ok()) {
    return status;
  }
  if (Status status = gradients.RestoreInputs(); !status.ok()) return status;
  if (Status status = NamedStep(runtime, op, gradients, exact_names, CompressionFormat::kNone);
      !status.ok()) {
    return status;
  }
  if (Status status = gradients.Download(); !status.ok()) return status;
  const std::vector<float> exact = gradients.arena;
  for (FormatResult& result : formats) {
    const std::vector<std::string> names =
        TensorNames(gradients, "check/" + FormatName(runtime, result.format) + "/");
    if (Status status = CheckExactStep(runtime, op, gradients, names, result.format); !status.ok()) {
      return status;
    }
    if (Status status = gradients.RestoreInputs(); !status.ok()) return status;
    if (Status status = NamedStep(runtime, op, gradients, names, result.format); !status.ok()) return status;
    if (Status status = gradients.Download(); !status.ok()) return status;
    ReductionError error;
    for (size_t i = 0; i < gradients.tensors.size(); ++i) {
      const ReplayGradients::View& buffer = gradients.buffers[i];
      error.AddTensor(gradients.tensors[i].name, gradients.Host(i), exact.data() + buffer.offset,
                      buffer.size);
    }
    result.accuracy = error;
  }
  return Status::Ok();
}

StatusOr<SettingResult> MeasureSetting(const ReplayOptions& options, const Setting& setting,
                                       ReplayGradients& gradients) {
  StatusOr<std::unique_ptr<Runtime>> created =
      Runtime::InitFromEnvironment(LookupFor(setting), CollectiveOrder::kNegotiated);
  if (!created.ok()) return created.status();
  Runtime& runtime = *created.value();
  for (int set = 1; set <= options.process_sets; ++set) {
    std::vector<int> ranks;
    for (int rank = 0; rank < runtime.size(); ++rank) {
      if (set == 1 || rank != set - 2) ranks.push_back(rank);
    }
    if (StatusOr<int> added = runtime.AddProcessSet(ranks); !added.ok()) return added.status();
  }
  const bool compare = !options.compression.empty();
  std::vector<FormatResult> formats;
  if (compare) {
    for (CompressionFormat format : options.compression) {
      formats.emplace_back();
      formats.back().format = format;
    }
  } else {
    formats.emplace_back();
  }
  std::vector<std::vector<std::string>> names;
  std::vector<std::function<Status()>> steps;
  std::vector<CompressionCounters> sent(formats.size());
  for (size_t f = 0; f < formats.size(); ++f) {
    names.push_back(TensorNames(gradients, compare ? FormatName(runtime, formats[f].format) + "/" : ""));
    steps.emplace_back([&, f] {
      const CompressionCounters before = runtime.compression_counters();
      Status status = NamedStep(runtime, options.op, gradients, names[f], formats[f].format);
      const CompressionCounters after = runtime.compression_counters();
      sent[f].wire_bytes += after.wire_bytes - before.wire_bytes;
      sent[f].float32_wire_bytes += after.float32_wire_bytes - before.float32_wire_bytes;
      return status;
    });
  }
  // Without --compression the step reduces the same buffers again and again, as before; with it each
  // step starts from the gradient-like inputs, as a training step's gradients are new each time.
  std::function<Status(size_t)> prepare;
  if (compare) {
    prepare = [&](size_t) { return gradients.RestoreInputs(); };
  } else if (Status status = gradients.Fill(static_cast<float>(runtime.rank() + 1)); !status.ok()) {
    return status;
  }
  const NegotiationCounters before = runtime.negotiation_counters();
  StatusOr<std::vector<std::vector<double>>> times =
      TimeStepsInterleaved(runtime, options.warmup, options.steps, prepare, steps);
  if (!times.ok()) return times.status();
  const NegotiationCounters after = runtime.negotiation_counters();

  for (size_t f = 0; f < formats.size(); ++f) {
    formats[f].step_ms = Median(times.value()[f]);
    if (sent[f].float32_wire_bytes > 0) {
      formats[f].wire_ratio =
          static_cast<double>(sent[f].wire_bytes) / static_cast<double>(sent[f].float32_wire_bytes);
    }
    if (!compare) {
      if (Status status = CheckExactStep(runtime, options.op, gradients, names[f], formats[f].format);
          !status.ok()) {
        return status;
      }
    }
  }
  if (compare) {
    if (Status status = MeasureAccuracy(runtime, options.op, gradients, formats); !status.ok()) return status;
  }

  SettingResult result;
  result.threshold_mb = ThresholdMb(setting);
  result.cycle_ms = CycleMs(setting);
  result.formats = std::move(formats);
  // Every timed step (warm-up included) makes the same responses; the barriers make none.
  const double all_steps = static_cast<double>(result.formats.size()) * (options.warmup + options.steps);
  result.responses_per_step = static_cast<double>(after.responses - before.responses) / all_steps;
  const uint64_t copied = after.copied_bytes - before.copied_bytes;
  const uint64_t fused = copied + after.in_place_bytes - before.in_place_bytes;
  result.copied_share = fused > 0 ? static_cast<double>(copied) / static_cast<double>(fused) : 0;
  const uint64_t cycles = after.cycles - before.cycles;
  result.cache_only_cycle_share =
      cycles > 0 ? static_cast<double>(after.cache_only_cycles - before.cache_only_cycles) /
                       static_cast<double>(cycles)
                 : 0;
  return result;
}

StatusOr<BaselineResult> MeasureBaseline(Runtime& runtime, const ReplayOptions& options,
                                         ReplayGradients& gradients) {
  if (Status status = gradients.Fill(1.0F); !status.ok()) return status;
  StatusOr<std::unique_ptr<BenchBuffer>> whole =
      BenchBuffer::Allocate(gradients.device != nullptr, gradients.elements * sizeof(float));
  if (!whole.ok()) return whole.status();
  if (Status status = whole.value()->Upload(gradients.arena.data()); !status.ok()) return status;
  StatusOr<std::vector<double>> whole_times = TimeSteps(runtime, options.warmup, options.steps, [&] {
    return runtime.BaselineAllreduce(whole.value()->data(), gradients.elements, DataType::kFloat32,
                                     ReduceOp::kSum);
  });
  if (!whole_times.ok()) return whole_times.status();
  StatusOr<std::vector<double>> one_by_one_times = TimeSteps(runtime, options.warmup, options.steps, [&] {
    for (const ReplayGradients::View& buffer : gradients.buffers) {
      Status status = runtime.BaselineAllreduce(buffer.data, buffer.size, DataType::kFloat32, ReduceOp::kSum);
      if (!status.ok()) return status;
    }
    return Status::Ok();
  });
  if (!one_by_one_times.ok()) return one_by_one_times.status();
  return BaselineResult{Median(whole_times.value()), Median(one_by_one_times.value())};
}

std::vector<Setting> Settings(const ReplayOptions& options) {
  std::vector<std::optional<double>> thresholds(options.fusion_threshold_mb.begin(),
                                                options.fusion_threshold_mb.end());
  std::vector<std::optional<double>> cycles(options.cycle_time_ms.begin(), options.cycle_time_ms.end());
  if (thresholds.empty()) thresholds.emplace_back();
  if (cycles.empty()) cycles.emplace_back();
  std::vector<Setting> settings;
  for (const std::optional<double>& threshold : thresholds) {
    for (const std::optional<double>& cycle : cycles) settings.push_back(Setting{threshold, cycle});
  }
  return settings;
}

}  // namespace

StatusOr<std::vector<double>> ParseNumberList(std::string_view flag, std::string_view text, double max) {
  std::vector<double> values;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item(text.substr(start, comma - start));
    char* end = nullptr;
    const double value = item.empty() ? NAN : std::strtod(item.c_str(), &end);
    if (item.empty() || end == nullptr || *end != '\0' || !(value >= 0 && value <= max)) {
      char bound[32];
      std::snprintf(bound, sizeof(bound), "%g", max);
      return Status::Error(std::string(flag) + ": '" + item + "' is not a number from 0 to " + bound);
    }
    values.push_back(value);
    start = comma + 1;
  }
  return values;
}

StatusOr<std::vector<CompressionFormat>> ParseCompressionList(std::string_view flag, std::string_view text) {
  std::vector<CompressionFormat> formats;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    std::optional<CompressionFormat> format = ParseCompressionFormat(item);
    if (!format) {
      return Status::Error(std::string(flag) + ": '" + std::string(item) +
                           "' is not a compression format (none, fp16, bf16, fp8, fp8-e4m3, fp8-e5m2)");
    }
    if (std::find(formats.begin(), formats.end(), *format) != formats.end()) {
      return Status::Error(std::string(flag) + ": '" + std::string(item) + "' is " +
                           std::string(CompressionFormatName(*format)) + ", listed twice");
    }
    formats.push_back(*format);
    start = comma + 1;
  }
  return formats;
}

int RunReplay(const ReplayOptions& options) {
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "hvdrun-bench: %s\n", message.c_str());
    return 1;
  };
  std::optional<std::vector<examples::GradientTensor>> tensors = examples::ModelGradients(options.model);
  if (!tensors) {
    std::string known;
    for (const std::string& model : examples::ReplayModels()) known += (known.empty() ? "" : ", ") + model;
    return fail("--replay: unknown model '" + options.model + "' (" + known + ")");
  }
  ReplayGradients gradients(std::move(*tensors));

  // This call-order Runtime lives for the whole run: it times the baseline and sends the report,
  // and it keeps the MPI library initialized while the settings' Runtimes come and go.
  StatusOr<std::unique_ptr<Runtime>> reporter = Runtime::InitFromEnvironment();
  if (!reporter.ok()) return fail(reporter.status().message());
  Runtime& runtime = *reporter.value();
  if (runtime.backend() == BackendKind::kNccl) {
    Status placed = SelectRankDevice(runtime);
    if (placed.ok()) placed = gradients.Place(true);
    if (!placed.ok()) return fail(placed.message());
  }
  const bool compare = !options.compression.empty();
  if (compare) gradients.MakeInputs(runtime.rank());
  std::optional<BaselineResult> baseline;
  if (options.baseline) {
    StatusOr<BaselineResult> measured = MeasureBaseline(runtime, options, gradients);
    if (!measured.ok()) return fail(measured.status().message());
    baseline = measured.value();
  }
  std::vector<SettingResult> results;
  for (const Setting& setting : Settings(options)) {
    StatusOr<SettingResult> measured = MeasureSetting(options, setting, gradients);
    if (!measured.ok()) {
      return fail("rank " + std::to_string(runtime.rank()) + ": " + measured.status().message());
    }
    results.push_back(measured.value());
  }

  nlohmann::json document = ReplayDocument(options, runtime, gradients, results, baseline);
  if (Status status = runtime.SendReport(document.dump()); !status.ok()) return fail(status.message());
  if (runtime.rank() != 0) return 0;

  PrintReplayTables(options, runtime, gradients, results, baseline);
  if (!options.json_path.empty()) {
    document.erase("rank");
    if (Status status = examples::WriteFileAtomically(options.json_path, document.dump(2) + "\n");
        !status.ok()) {
      return fail("--json: " + status.message());
    }
  }
  return 0;
}

}  // namespace hvdrun
