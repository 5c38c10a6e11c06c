#include "examples/bench/replay_report.h"

#include <algorithm>
#include <cstdio>

namespace hvdrun {
namespace {

// The faster raw baseline, the denominator of vs_best_raw; 0 without one.
double BestRawMs(const std::optional<BaselineResult>& baseline) {
  return baseline ? std::min(baseline->whole_ms, baseline->one_by_one_ms) : 0;
}

// The step of `none` in the same setting, the ratios' denominator; 0 when --compression lacks it.
double NoneStepMs(const SettingResult& result) {
  for (const FormatResult& f : result.formats) {
    if (f.format == CompressionFormat::kNone) return f.step_ms;
  }
  return 0.0;
}

// The report's "settings": one entry per setting and compression format.
nlohmann::json SettingsJson(Runtime& runtime, const std::vector<SettingResult>& results,
                            const std::optional<BaselineResult>& baseline) {
  const double best_raw = BestRawMs(baseline);
  nlohmann::json settings = nlohmann::json::array();
  for (const SettingResult& r : results) {
    const double none_ms = NoneStepMs(r);
    for (const FormatResult& f : r.formats) {
      nlohmann::json entry = {{"fusion_threshold_mb", r.threshold_mb},
                              {"cycle_time_ms", r.cycle_ms},
                              {"compression", FormatName(runtime, f.format)},
                              {"step_ms", f.step_ms},
                              {"wire_ratio", f.wire_ratio},
                              {"responses_per_step", r.responses_per_step},
                              {"cache_only_cycle_share", r.cache_only_cycle_share},
                              {"copied_share", r.copied_share}};
      if (none_ms > 0) entry["vs_none"] = f.step_ms / none_ms;
      if (f.accuracy) {
        entry["rel_error"] = f.accuracy->relative_error();
        entry["worst_tensor_rel_error"] = f.accuracy->worst_tensor_error();
        entry["worst_tensor"] = f.accuracy->worst_tensor();
        entry["nonfinite"] = f.accuracy->nonfinite();
      }
      if (baseline) entry["vs_best_raw"] = f.step_ms / best_raw;
      settings.push_back(entry);
    }
  }
  return settings;
}

// Rank 0's table with --compression: each format of each setting, its step time and accuracy.
void PrintCompressionTable(Runtime& runtime, const std::vector<SettingResult>& results,
                           const std::optional<BaselineResult>& baseline) {
  const double best_raw = BestRawMs(baseline);
  const CompressionOptions& safeguards = runtime.compression();
  auto on_off = [](bool on) { return on ? "on" : "off"; };
  std::printf(
      "# formats interleaved step by step; rel_error = |reduced - exact| / |exact| of one step's "
      "gradient-like values (fp8: scaling %s, safe cast %s, float32 sums %s, error feedback %s)\n",
      on_off(safeguards.scaling), on_off(safeguards.safe_cast), on_off(safeguards.float32_sums),
      on_off(safeguards.error_feedback));
  std::printf("%10s %9s %-12s %10s %8s %6s %10s %10s  %s%s\n", "fusion_mb", "cycle_ms", "compression",
              "step_ms", "vs_none", "wire", "rel_error", "worst_rel", "worst tensor",
              baseline ? "  vs_best_raw" : "");
  for (const SettingResult& r : results) {
    for (const FormatResult& f : r.formats) {
      std::printf("%10.1f %9.2f %-12s %10.2f ", r.threshold_mb, r.cycle_ms,
                  FormatName(runtime, f.format).c_str(), f.step_ms);
      if (NoneStepMs(r) > 0) {
        std::printf("%8.2f", f.step_ms / NoneStepMs(r));
      } else {
        std::printf("%8s", "-");
      }
      const bool exact = f.accuracy->worst_tensor_error() == 0;
      std::printf(" %6.3f %10.2e %10.2e  %s", f.wire_ratio, f.accuracy->relative_error(),
                  f.accuracy->worst_tensor_error(), exact ? "-" : f.accuracy->worst_tensor().c_str());
      if (f.accuracy->nonfinite() > 0) {
        std::printf(" (%llu not finite)", static_cast<unsigned long long>(f.accuracy->nonfinite()));
      }
      if (baseline) std::printf("  %.2f", f.step_ms / best_raw);
      std::printf("\n");
    }
  }
}

// Rank 0's table without --compression: each setting's step time and what negotiation did.
void PrintSettingsTable(const std::vector<SettingResult>& results,
                        const std::optional<BaselineResult>& baseline) {
  const double best_raw = BestRawMs(baseline);
  std::printf("%12s %10s %10s %12s %12s %8s%s\n", "fusion_mb", "cycle_ms", "step_ms", "responses",
              "cache_only", "copied", baseline ? "  vs_best_raw" : "");
  for (const SettingResult& r : results) {
    const double step_ms = r.formats.front().step_ms;
    std::printf("%12.1f %10.2f %10.2f %12.1f %11.0f%% %7.0f%%", r.threshold_mb, r.cycle_ms, step_ms,
                r.responses_per_step, 100 * r.cache_only_cycle_share, 100 * r.copied_share);
    if (baseline) std::printf(" %12.2f", step_ms / best_raw);
    std::printf("\n");
  }
}

}  // namespace

nlohmann::json ReplayDocument(const ReplayOptions& options, Runtime& runtime,
                              const ReplayGradients& gradients, const std::vector<SettingResult>& results,
                              const std::optional<BaselineResult>& baseline) {
  nlohmann::json summary = {{"step_ms", results.front().formats.front().step_ms}};
  nlohmann::json document = {{"replay", options.model},
                             {"op", ReduceOpName(options.op)},
                             {"backend", BackendName(runtime.backend())},
                             {"allreduce_path", runtime.allreduce_path()},
                             {"ranks", runtime.size()},
                             {"rank", runtime.rank()},
                             {"tensors", gradients.tensors.size()},
                             {"bytes", gradients.elements * sizeof(float)},
                             {"steps", options.steps},
                             {"warmup", options.warmup},
                             {"settings", SettingsJson(runtime, results, baseline)}};
  if (!options.compression.empty()) {
    const CompressionOptions& safeguards = runtime.compression();
    document["fp8_safeguards"] = {{"scaling", safeguards.scaling},
                                  {"safe_cast", safeguards.safe_cast},
                                  {"float32_sums", safeguards.float32_sums},
                                  {"error_feedback", safeguards.error_feedback}};
  }
  if (baseline) {
    document["baseline"] = {{"whole_ms", baseline->whole_ms}, {"one_by_one_ms", baseline->one_by_one_ms}};
    summary["baseline_whole_ms"] = baseline->whole_ms;
    summary["baseline_one_by_one_ms"] = baseline->one_by_one_ms;
  }
  document["summary"] = summary;
  return document;
}

std::string FormatName(const Runtime& runtime, std::optional<CompressionFormat> format) {
  return std::string(CompressionFormatName(format.value_or(runtime.compression().format)));
}

void PrintReplayTables(const ReplayOptions& options, Runtime& runtime, const ReplayGradients& gradients,
                       const std::vector<SettingResult>& results,
                       const std::optional<BaselineResult>& baseline) {
  const double megabytes = static_cast<double>(gradients.elements) * sizeof(float) / 1e6;
  std::printf(
      "# hvdrun-bench --replay %s: %zu tensors, %.2f MB of float32 gradients, %s, backend %s, allreduce path "
      "%s, %d ranks, median of %d steps after %d warm-up\n",
      options.model.c_str(), gradients.tensors.size(), megabytes,
      std::string(ReduceOpName(options.op)).c_str(), std::string(BackendName(runtime.backend())).c_str(),
      runtime.allreduce_path().c_str(), runtime.size(), options.steps, options.warmup);
  if (!options.compression.empty()) {
    PrintCompressionTable(runtime, results, baseline);
  } else {
    PrintSettingsTable(results, baseline);
  }
  if (baseline) {
    std::printf("# raw library allreduce: whole gradient in one call %.2f ms, tensor by tensor %.2f ms\n",
                baseline->whole_ms, baseline->one_by_one_ms);
  }
}

}  // namespace hvdrun
