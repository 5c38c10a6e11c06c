// hvdrun-bench: the communication benchmark bundled with hvdrun. Under `hvdrun --gloo` (or --mpi,
// --nccl) every rank runs it; it sweeps message sizes like nccl-tests and, per size, times the
// runtime's allreduce (and with --baseline the backend library's own call), checks the result
// against the value every rank can compute, and prints time, algbw and busbw on rank 0. With the
// nccl backend the buffers are device memory, filled from and checked in host memory. With
// --replay MODEL it replays a training step's gradients instead (examples/bench/gradient_replay.h).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "examples/bench/bench_buffer.h"
#include "examples/bench/element_codec.h"
#include "examples/bench/gradient_replay.h"
#include "examples/bench/size_sweep.h"
#include "examples/shared/atomic_file.h"
#include "hvdrun/runtime.h"
#include "hvdrun/version.h"

namespace hvdrun {
namespace {

struct BenchOptions {
  std::string min_size = "8";
  std::string max_size = "64M";
  size_t factor = 2;
  int iters = 20;
  int warmup = 5;
  std::string dtype = "float32";
  std::string op = "sum";
  bool baseline = false;
  bool named = false;  // time the named, negotiated path (CollectiveOrder::kNegotiated) instead
  std::string json_path;
};

struct SizeResult {
  size_t bytes = 0;
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  double max_error = 0;
  double baseline_time_us = -1;  // negative: not measured
  double baseline_busbw_gbps = 0;
};

// The value rank `rank` contributes at element `index`: small integers, so that every op's
// expected result is known exactly on every rank without communication.
double Contribution(int rank, size_t index) {
  return static_cast<double>((rank + 1) * static_cast<int>(index % 7 + 1));
}

double Expected(ReduceOp op, DataType type, int ranks, size_t index) {
  double k = static_cast<double>(index % 7 + 1);
  double n = ranks;
  switch (op) {
    case ReduceOp::kSum:
      return k * n * (n + 1) / 2;
    case ReduceOp::kAverage: {
      double average = k * n * (n + 1) / 2 / n;
      bool integer = type == DataType::kInt32 || type == DataType::kInt64;
      return integer ? std::trunc(average) : average;
    }
    case ReduceOp::kMin:
      return k;
    case ReduceOp::kMax:
      return k * n;
    case ReduceOp::kProduct: {
      double product = 1;
      for (int rank = 1; rank <= ranks; ++rank) product *= k * rank;
      return product;
    }
  }
  return 0;
}

// Seconds per call of each of `collectives`, each called `iters` times after `warmup` untimed
// calls. With several, the timed calls are interleaved in rounds (a few calls of the first, then
// of the second, ...), so that a burst of load on a shared machine slows them alike and their
// ratio stays meaningful. Every timed stretch starts with all ranks together.
StatusOr<std::vector<double>> TimeInterleaved(Runtime& runtime, int warmup, int iters,
                                              const std::vector<std::function<Status()>>& collectives) {
  for (const auto& collective : collectives) {
    for (int i = 0; i < warmup; ++i) {
      if (Status status = collective(); !status.ok()) return status;
    }
  }
  constexpr int kRounds = 5;
  const int rounds = std::min(kRounds, iters);
  std::vector<double> seconds(collectives.size(), 0.0);
  for (int round = 0; round < rounds; ++round) {
    const int calls = iters / rounds + (round < iters % rounds ? 1 : 0);
    for (size_t c = 0; c < collectives.size(); ++c) {
      if (Status status = runtime.Barrier(); !status.ok()) return status;
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < calls; ++i) {
        if (Status status = collectives[c](); !status.ok()) return status;
      }
      seconds[c] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
  for (double& total : seconds) total /= iters;
  return seconds;
}

// Times `runtime`'s allreduce in place (as the baseline's raw call is, and as a training step's
// gradient buffers are) — named, the same name every call, when the runtime negotiates — and, with
// `time_baseline`, the library's own call interleaved with it; then checks one more call on fresh
// data against the expected values.
StatusOr<SizeResult> MeasureSize(Runtime& runtime, const BenchOptions& options, DataType type, ReduceOp op,
                                 size_t bytes, bool time_baseline) {
  size_t count = bytes / DataTypeSize(type);
  std::vector<double> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = Contribution(runtime.rank(), i);
  const std::vector<char> input = EncodeElements(type, values);
  const bool on_device = runtime.backend() == BackendKind::kNccl;
  StatusOr<std::unique_ptr<BenchBuffer>> buffer = BenchBuffer::Allocate(on_device, bytes);
  if (!buffer.ok()) return buffer.status();
  StatusOr<std::unique_ptr<BenchBuffer>> baseline_buffer = BenchBuffer::Allocate(on_device, bytes);
  if (!baseline_buffer.ok()) return baseline_buffer.status();
  if (Status status = buffer.value()->Upload(input.data()); !status.ok()) return status;
  if (Status status = baseline_buffer.value()->Upload(input.data()); !status.ok()) return status;
  void* data = buffer.value()->data();
  void* baseline_data = baseline_buffer.value()->data();

  const bool named = runtime.order() == CollectiveOrder::kNegotiated;
  auto allreduce = [&] {
    return named ? runtime.Allreduce("hvdrun-bench", data, data, count, type, op)
                 : runtime.Allreduce(data, data, count, type, op);
  };
  std::vector<std::function<Status()>> collectives = {allreduce};
  if (time_baseline) {
    collectives.emplace_back([&] { return runtime.BaselineAllreduce(baseline_data, count, type, op); });
  }
  StatusOr<std::vector<double>> seconds =
      TimeInterleaved(runtime, options.warmup, options.iters, collectives);
  if (!seconds.ok()) return seconds.status();

  SizeResult result;
  result.bytes = bytes;
  result.time_us = seconds.value()[0] * 1e6;
  result.algbw_gbps = AlgorithmBandwidth(bytes, seconds.value()[0]);
  result.busbw_gbps = AllreduceBusBandwidth(result.algbw_gbps, runtime.size());
  if (time_baseline) {
    result.baseline_time_us = seconds.value()[1] * 1e6;
    result.baseline_busbw_gbps =
        AllreduceBusBandwidth(AlgorithmBandwidth(bytes, seconds.value()[1]), runtime.size());
  }

  if (Status status = buffer.value()->Upload(input.data()); !status.ok()) return status;
  if (Status status = allreduce(); !status.ok()) return status;
  std::vector<char> output(bytes);
  if (Status status = buffer.value()->Download(output.data()); !status.ok()) return status;
  const std::vector<double> got = DecodeElements(type, output.data(), count);
  for (size_t i = 0; i < count; ++i) {
    result.max_error = std::max(result.max_error, std::abs(got[i] - Expected(op, type, runtime.size(), i)));
  }
  return result;
}

nlohmann::json ToJson(const SizeResult& r) {
  nlohmann::json entry = {{"bytes", r.bytes},
                          {"time_us", r.time_us},
                          {"algbw_gbps", r.algbw_gbps},
                          {"busbw_gbps", r.busbw_gbps},
                          {"max_error", r.max_error}};
  if (r.baseline_time_us >= 0) {
    entry["baseline_time_us"] = r.baseline_time_us;
    entry["baseline_busbw_gbps"] = r.baseline_busbw_gbps;
  }
  return entry;
}

void PrintRow(const SizeResult& r, bool baseline) {
  std::printf("%12zu %12.1f %10.3f %10.3f %10.2g", r.bytes, r.time_us, r.algbw_gbps, r.busbw_gbps,
              r.max_error);
  if (baseline) {
    double ratio = r.baseline_busbw_gbps > 0 ? r.busbw_gbps / r.baseline_busbw_gbps : 0;
    std::printf(" %12.1f %10.3f %8.2f", r.baseline_time_us, r.baseline_busbw_gbps, ratio);
  }
  std::printf("\n");
}

// What the size sweep runs: the element type, the operation and the message sizes, from the flags.
struct SweepPlan {
  DataType type = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  std::vector<size_t> sizes;
};

StatusOr<SweepPlan> PlanSweep(const BenchOptions& options) {
  SweepPlan plan;
  std::optional<DataType> type = ParseDataType(options.dtype);
  if (!type) return Status::Error("--dtype: unknown type '" + options.dtype + "'");
  plan.type = *type;
  std::optional<ReduceOp> op = ParseReduceOp(options.op);
  if (!op) return Status::Error("--op: unknown operation '" + options.op + "'");
  plan.op = *op;
  StatusOr<size_t> min_bytes = ParseByteSize("-b", options.min_size);
  if (!min_bytes.ok()) return min_bytes.status();
  StatusOr<size_t> max_bytes = ParseByteSize("-e", options.max_size);
  if (!max_bytes.ok()) return max_bytes.status();
  StatusOr<std::vector<size_t>> sizes =
      SweepSizes(min_bytes.value(), max_bytes.value(), options.factor, DataTypeSize(plan.type));
  if (!sizes.ok()) return sizes.status();
  plan.sizes = std::move(sizes).value();
  return plan;
}

// Rank 0's header: what is measured, and the table's column names.
void PrintHeader(const BenchOptions& options, const Runtime& rt, const Runtime& measured) {
  std::printf(
      "# hvdrun-bench: allreduce%s, backend %s, allreduce path %s, %d ranks, %s, %s, %d iterations after "
      "%d "
      "warm-up\n",
      options.named ? " (named, negotiated)" : "", std::string(BackendName(rt.backend())).c_str(),
      measured.allreduce_path().c_str(), rt.size(), options.dtype.c_str(), options.op.c_str(), options.iters,
      options.warmup);
  std::printf("%12s %12s %10s %10s %10s", "bytes", "time_us", "algbw", "busbw", "max_error");
  if (options.baseline) std::printf(" %12s %10s %8s", "raw_time_us", "raw_busbw", "ratio");
  std::printf("\n");
}

// The report of this rank: every size's `results`, and as the summary that hvdrun aggregates over
// ranks, the figures of the `largest` size.
nlohmann::json ReportDocument(const BenchOptions& options, const Runtime& rt, const Runtime& measured,
                              const nlohmann::json& results, const SizeResult& largest) {
  nlohmann::json summary = {{"bytes", largest.bytes},
                            {"time_us", largest.time_us},
                            {"busbw_gbps", largest.busbw_gbps},
                            {"max_error", largest.max_error}};
  if (options.baseline) {
    summary["baseline_time_us"] = largest.baseline_time_us;
    summary["baseline_busbw_gbps"] = largest.baseline_busbw_gbps;
  }
  return {{"backend", BackendName(rt.backend())},
          {"allreduce_path", measured.allreduce_path()},
          {"named", options.named},
          {"ranks", rt.size()},
          {"rank", rt.rank()},
          {"dtype", options.dtype},
          {"op", options.op},
          {"results", results},
          {"summary", summary}};
}

int Run(const BenchOptions& options) {
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "hvdrun-bench: %s\n", message.c_str());
    return 1;
  };
  StatusOr<SweepPlan> plan = PlanSweep(options);
  if (!plan.ok()) return fail(plan.status().message());
  const DataType type = plan->type;
  const ReduceOp op = plan->op;
  const std::vector<size_t>& sizes = plan->sizes;

  StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::InitFromEnvironment();
  if (!runtime.ok()) return fail(runtime.status().message());
  Runtime& rt = *runtime.value();
  if (rt.backend() == BackendKind::kNccl) {
    if (Status status = SelectRankDevice(rt); !status.ok()) {
      return fail("rank " + std::to_string(rt.rank()) + ": " + status.message());
    }
  }
  // With --named, the library's own call is timed first, alone: the negotiated Runtime's thread
  // calls the library all the time, and two threads may not call it at once (MPI_THREAD_SERIALIZED).
  std::vector<SizeResult> baselines;
  if (options.named && options.baseline) {
    for (size_t bytes : sizes) {
      StatusOr<SizeResult> result = MeasureSize(rt, options, type, op, bytes, /*time_baseline=*/true);
      if (!result.ok()) return fail("rank " + std::to_string(rt.rank()) + ": " + result.status().message());
      baselines.push_back(result.value());
    }
  }
  std::unique_ptr<Runtime> named;
  if (options.named) {
    StatusOr<std::unique_ptr<Runtime>> created =
        Runtime::InitFromEnvironment(nullptr, CollectiveOrder::kNegotiated);
    if (!created.ok()) return fail(created.status().message());
    named = std::move(created).value();
  }
  Runtime& measured = named != nullptr ? *named : rt;
  bool printer = rt.rank() == 0;
  if (printer) PrintHeader(options, rt, measured);
  nlohmann::json results = nlohmann::json::array();
  SizeResult largest;
  for (size_t i = 0; i < sizes.size(); ++i) {
    StatusOr<SizeResult> result =
        MeasureSize(measured, options, type, op, sizes[i], options.baseline && !options.named);
    if (!result.ok()) return fail("rank " + std::to_string(rt.rank()) + ": " + result.status().message());
    if (!baselines.empty()) {
      result.value().baseline_time_us = baselines[i].baseline_time_us;
      result.value().baseline_busbw_gbps = baselines[i].baseline_busbw_gbps;
    }
    if (printer) {
      PrintRow(result.value(), options.baseline);
      std::fflush(stdout);
    }
    results.push_back(ToJson(result.value()));
    largest = result.value();
  }
  nlohmann::json document = ReportDocument(options, rt, measured, results, largest);
  if (Status status = rt.SendReport(document.dump()); !status.ok()) return fail(status.message());
  if (printer && !options.json_path.empty()) {
    document.erase("rank");
    if (Status status = examples::WriteFileAtomically(options.json_path, document.dump(2) + "\n");
        !status.ok()) {
      return fail("--json: " + status.message());
    }
  }
  return 0;
}

// The flags that only --replay takes, as given.
struct ReplayFlags {
  std::string model;
  std::string fusion_thresholds;
  std::string cycle_times;
  std::string compression;
  int process_sets = 0;
};

void AddSweepFlags(CLI::App& app, BenchOptions& options) {
  app.add_option("-b,--min-bytes", options.min_size, "Smallest message size (K, M, G suffixes; default 8)");
  app.add_option("-e,--max-bytes", options.max_size, "Largest message size (default 64M)");
  app.add_option("-f,--step-factor", options.factor, "Multiply the size by this each step (default 2)");
  app.add_option("--iters", options.iters, "Timed iterations per size (default 20)")
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", options.warmup, "Untimed iterations before each size (default 5)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--dtype", options.dtype,
                 "float32, float64, float16, bfloat16, int32 or int64 (default float32)");
  app.add_option("--op", options.op, "sum, average, min, max or product (default sum)");
  app.add_flag("--baseline", options.baseline,
               "Also time the backend library's own allreduce, in the same run");
  app.add_option("--json", options.json_path, "Rank 0 writes the results to this JSON file");
  app.add_flag("--named", options.named,
               "Time libhvdrun's named, negotiated allreduce (one name, cached after the first call) "
               "instead of the call-order one; --baseline then times the library's own call first, alone");
}

void AddReplayFlags(CLI::App& app, ReplayFlags& flags) {
  app.add_option(
      "--replay", flags.model,
      "Instead of the size sweep, replay a training step's gradients (resnet18, resnet50 or vgg16), "
      "tensor by tensor through the named, fused path; --iters steps are timed");
  app.add_option(
      "--fusion-threshold-mb", flags.fusion_thresholds,
      "With --replay: fusion thresholds to compare, in MiB (\"0,64,128\"; 0 is fusion off; default "
      "hvdrun's setting)");
  app.add_option(
      "--cycle-time-ms", flags.cycle_times,
      "With --replay: negotiation cycle times to compare, in ms (\"1,5\"; default hvdrun's setting)");
  app.add_option("--compression", flags.compression,
                 "With --replay: compression formats to compare in the same run, interleaved step by step "
                 "(\"none,fp16,bf16,fp8\"; also fp8-e4m3, fp8-e5m2): each one's step time and ratio to none, "
                 "bytes sent and accuracy against the exact float32 sums (default: the job's format, "
                 "hvdrun --compression)");
  app.add_option("--process-sets", flags.process_sets,
                 "With --replay: register this many process sets on every rank before the steps and leave "
                 "them unused (the first: every rank; set k > 1: every rank but rank k - 2; at most the "
                 "ranks + 1), to see what their presence costs (default 0)")
      ->check(CLI::Range(0, 64));
}

// The replay that the flags ask for, or the usage error of a flag that does not fit it.
StatusOr<ReplayOptions> ReplayOptionsFrom(const BenchOptions& options, const ReplayFlags& flags) {
  ReplayOptions replay_options;
  replay_options.model = flags.model;
  std::optional<ReduceOp> op = ParseReduceOp(options.op);
  if (!op || (*op != ReduceOp::kSum && *op != ReduceOp::kAverage) || options.dtype != "float32") {
    return Status::Error("--replay: gradients are float32, reduced with --op sum or average");
  }
  replay_options.op = *op;
  replay_options.steps = options.iters;
  replay_options.warmup = options.warmup;
  replay_options.baseline = options.baseline;
  replay_options.json_path = options.json_path;
  replay_options.process_sets = flags.process_sets;
  for (auto [flag, text, list, max] :
       {std::make_tuple("--fusion-threshold-mb", &flags.fusion_thresholds,
                        &replay_options.fusion_threshold_mb, 1024.0),
        std::make_tuple("--cycle-time-ms", &flags.cycle_times, &replay_options.cycle_time_ms, 1000.0)}) {
    if (text->empty()) continue;
    StatusOr<std::vector<double>> values = ParseNumberList(flag, *text, max);
    if (!values.ok()) return values.status();
    *list = std::move(values).value();
  }
  if (!flags.compression.empty()) {
    StatusOr<std::vector<CompressionFormat>> formats =
        ParseCompressionList("--compression", flags.compression);
    if (!formats.ok()) return formats.status();
    replay_options.compression = std::move(formats).value();
  }
  return replay_options;
}

}  // namespace
}  // namespace hvdrun

int main(int argc, char** argv) {
  try {
    hvdrun::BenchOptions options;
    hvdrun::ReplayFlags replay;
    CLI::App app("hvdrun-bench: allreduce bandwidth over message sizes, run under hvdrun", "hvdrun-bench");
    app.set_version_flag("--version", "hvdrun-bench " HVDRUN_VERSION);
    hvdrun::AddSweepFlags(app, options);
    hvdrun::AddReplayFlags(app, replay);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
      if (error.get_exit_code() == 0) return app.exit(error);
      std::fprintf(stderr, "hvdrun-bench: %s\n", error.what());
      return 2;
    }
    if (replay.model.empty()) {
      if (!replay.fusion_thresholds.empty() || !replay.cycle_times.empty() || !replay.compression.empty() ||
          replay.process_sets != 0) {
        std::fprintf(stderr,
                     "hvdrun-bench: --fusion-threshold-mb, --cycle-time-ms, --compression and --process-sets "
                     "need --replay\n");
        return 2;
      }
      return hvdrun::Run(options);
    }
    hvdrun::StatusOr<hvdrun::ReplayOptions> replay_options = hvdrun::ReplayOptionsFrom(options, replay);
    if (!replay_options.ok()) {
      std::fprintf(stderr, "hvdrun-bench: %s\n", replay_options.status().message().c_str());
      return 2;
    }
    return hvdrun::RunReplay(replay_options.value());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "hvdrun-bench: %s\n", error.what());
    return 1;
  }
}
