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

struct SettingResult {
  double threshold_mb = 0;
  double cycle_ms = 0;
  double step_ms = 0;  // median
  double responses_per_step = 0;
  double cache_only_cycle_share = 0;
  double copied_share = 0;  // of the bytes of fused responses: copied through the fusion buffer
};

// The gradient tensors as views into one array, back to back in backward order with no gap: a fused
// response of consecutive tensors is then reduced where it lies, with no copy, as a trainer's
// gradient buckets would be.
struct Gradients {
  struct View {
    float* data;
    size_t size;
  };

  explicit Gradients(std::vector<examples::GradientTensor> list) : tensors(std::move(list)) {
    std::vector<size_t> offsets;
    for (const examples::GradientTensor& tensor : tensors) {
      offsets.push_back(elements);
      elements += static_cast<size_t>(tensor.elements());
    }
    arena.resize(elements);
    for (size_t i = 0; i < tensors.size(); ++i) {
      buffers.push_back(View{arena.data() + offsets[i], static_cast<size_t>(tensors[i].elements())});
    }
  }
  void Fill(float value) { std::fill(arena.begin(), arena.end(), value); }

  std::vector<examples::GradientTensor> tensors;
  std::vector<float> arena;
  std::vector<View> buffers;
  size_t elements = 0;
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

// Milliseconds of each of `steps` timed calls of `step`, after `warmup` untimed ones; every call
// starts with all ranks together.
StatusOr<std::vector<double>> TimeSteps(Runtime& runtime, int warmup, int steps,
                                        const std::function<Status()>& step) {
  std::vector<double> times;
  times.reserve(static_cast<size_t>(steps));
  for (int i = 0; i < warmup + steps; ++i) {
    if (Status status = runtime.Barrier(); !status.ok()) return status;
    const Clock::time_point start = Clock::now();
    if (Status status = step(); !status.ok()) return status;
    if (i >= warmup) times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return times;
}

// One step through the named path: every tensor submitted in backward order, then all waited for.
Status NamedStep(Runtime& runtime, ReduceOp op, Gradients& gradients) {
  std::vector<CollectiveHandle> handles;
  handles.reserve(gradients.tensors.size());
  for (size_t i = 0; i < gradients.tensors.size(); ++i) {
    const Gradients::View& buffer = gradients.buffers[i];
    handles.push_back(runtime.AllreduceAsync(gradients.tensors[i].name, buffer.data, buffer.data, buffer.size,
                                             DataType::kFloat32, op));
  }
  Status first;
  for (CollectiveHandle& handle : handles) {
    Status status = handle.Wait();
    if (first.ok()) first = status;
  }
  return first;
}

StatusOr<SettingResult> MeasureSetting(const ReplayOptions& options, const Setting& setting,
                                       Gradients& gradients) {
  StatusOr<std::unique_ptr<Runtime>> created =
      Runtime::InitFromEnvironment(LookupFor(setting), CollectiveOrder::kNegotiated);
  if (!created.ok()) return created.status();
  Runtime& runtime = *created.value();
  gradients.Fill(static_cast<float>(runtime.rank() + 1));
  StatusOr<std::vector<double>> times = TimeSteps(runtime, options.warmup, options.steps,
                                                  [&] { return NamedStep(runtime, options.op, gradients); });
  if (!times.ok()) return times.status();

  // Every element of every tensor sums (or averages) rank + 1 over the ranks.
  gradients.Fill(static_cast<float>(runtime.rank() + 1));
  if (Status status = NamedStep(runtime, options.op, gradients); !status.ok()) return status;
  const float sum = static_cast<float>(runtime.size()) * static_cast<float>(runtime.size() + 1) / 2;
  const float expected = options.op == ReduceOp::kAverage ? sum / static_cast<float>(runtime.size()) : sum;
  for (size_t i = 0; i < gradients.tensors.size(); ++i) {
    const Gradients::View& buffer = gradients.buffers[i];
    for (const float* value = buffer.data; value != buffer.data + buffer.size; ++value) {
      if (*value != expected) {
        return Status::Error("'" + gradients.tensors[i].name + "' came to " + std::to_string(*value) +
                             ", not " + std::to_string(expected));
      }
    }
  }

  SettingResult result;
  result.threshold_mb = ThresholdMb(setting);
  result.cycle_ms = CycleMs(setting);
  result.step_ms = Median(times.value());
  // Every step (warm-up, timed and checked) makes the same responses; the barriers make none.
  const NegotiationCounters after = runtime.negotiation_counters();
  const double all_steps = options.warmup + options.steps + 1.0;
  result.responses_per_step = static_cast<double>(after.responses) / all_steps;
  const uint64_t fused = after.copied_bytes + after.in_place_bytes;
  result.copied_share = fused > 0 ? static_cast<double>(after.copied_bytes) / static_cast<double>(fused) : 0;
  result.cache_only_cycle_share =
      after.cycles > 0 ? static_cast<double>(after.cache_only_cycles) / static_cast<double>(after.cycles) : 0;
  return result;
}

struct BaselineResult {
  double whole_ms = 0;       // one allreduce of every gradient element
  double one_by_one_ms = 0;  // each tensor in its own call
};

StatusOr<BaselineResult> MeasureBaseline(Runtime& runtime, const ReplayOptions& options,
                                         Gradients& gradients) {
  std::vector<float> whole(gradients.elements, 1.0F);
  gradients.Fill(1.0F);
  StatusOr<std::vector<double>> whole_times = TimeSteps(runtime, options.warmup, options.steps, [&] {
    return runtime.BaselineAllreduce(whole.data(), whole.size(), DataType::kFloat32, ReduceOp::kSum);
  });
  if (!whole_times.ok()) return whole_times.status();
  StatusOr<std::vector<double>> one_by_one_times = TimeSteps(runtime, options.warmup, options.steps, [&] {
    for (const Gradients::View& buffer : gradients.buffers) {
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
  Gradients gradients(std::move(*tensors));
  const double megabytes = static_cast<double>(gradients.elements) * sizeof(float) / 1e6;

  // This call-order Runtime lives for the whole run: it times the baseline and sends the report,
  // and it keeps the MPI library initialized while the settings' Runtimes come and go.
  StatusOr<std::unique_ptr<Runtime>> reporter = Runtime::InitFromEnvironment();
  if (!reporter.ok()) return fail(reporter.status().message());
  Runtime& runtime = *reporter.value();
  std::optional<BaselineResult> baseline;
  if (options.baseline) {
    StatusOr<BaselineResult> measured = MeasureBaseline(runtime, options, gradients);
    if (!measured.ok()) return fail(measured.status().message());
    baseline = measured.value();
  }
  std::vector<SettingResult> results;
  for (const Setting& setting : Settings(options)) {
    StatusOr<SettingResult> measured = MeasureSetting(options, setting, gradients);
    if (!measured.ok()) return fail(measured.status().message());
    results.push_back(measured.value());
  }

  const double best_raw = baseline ? std::min(baseline->whole_ms, baseline->one_by_one_ms) : 0;
  nlohmann::json settings = nlohmann::json::array();
  for (const SettingResult& r : results) {
    nlohmann::json entry = {{"fusion_threshold_mb", r.threshold_mb},
                            {"cycle_time_ms", r.cycle_ms},
                            {"step_ms", r.step_ms},
                            {"responses_per_step", r.responses_per_step},
                            {"cache_only_cycle_share", r.cache_only_cycle_share},
                            {"copied_share", r.copied_share}};
    if (baseline) entry["vs_best_raw"] = r.step_ms / best_raw;
    settings.push_back(entry);
  }
  nlohmann::json summary = {{"step_ms", results.front().step_ms}};
  nlohmann::json document = {{"replay", options.model},
                             {"op", ReduceOpName(options.op)},
                             {"backend", BackendName(runtime.backend())},
                             {"ranks", runtime.size()},
                             {"rank", runtime.rank()},
                             {"tensors", gradients.tensors.size()},
                             {"bytes", gradients.elements * sizeof(float)},
                             {"steps", options.steps},
                             {"warmup", options.warmup},
                             {"settings", settings}};
  if (baseline) {
    document["baseline"] = {{"whole_ms", baseline->whole_ms}, {"one_by_one_ms", baseline->one_by_one_ms}};
    summary["baseline_whole_ms"] = baseline->whole_ms;
    summary["baseline_one_by_one_ms"] = baseline->one_by_one_ms;
  }
  document["summary"] = summary;
  if (Status status = runtime.SendReport(document.dump()); !status.ok()) return fail(status.message());
  if (runtime.rank() != 0) return 0;

  std::printf(
      "# hvdrun-bench --replay %s: %zu tensors, %.2f MB of float32 gradients, %s, backend %s, %d ranks, "
      "median of %d steps after %d warm-up\n",
      options.model.c_str(), gradients.tensors.size(), megabytes,
      std::string(ReduceOpName(options.op)).c_str(), std::string(BackendName(runtime.backend())).c_str(),
      runtime.size(), options.steps, options.warmup);
  std::printf("%12s %10s %10s %12s %12s %8s%s\n", "fusion_mb", "cycle_ms", "step_ms", "responses",
              "cache_only", "copied", baseline ? "  vs_best_raw" : "");
  for (const SettingResult& r : results) {
    std::printf("%12.1f %10.2f %10.2f %12.1f %11.0f%% %7.0f%%", r.threshold_mb, r.cycle_ms, r.step_ms,
                r.responses_per_step, 100 * r.cache_only_cycle_share, 100 * r.copied_share);
    if (baseline) std::printf(" %12.2f", r.step_ms / best_raw);
    std::printf("\n");
  }
  if (baseline) {
    std::printf("# raw library allreduce: whole gradient in one call %.2f ms, tensor by tensor %.2f ms\n",
                baseline->whole_ms, baseline->one_by_one_ms);
  }
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
