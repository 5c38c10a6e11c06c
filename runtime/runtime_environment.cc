#include "runtime/runtime_environment.h"

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "common/env_names.h"
#include "common/environment_reader.h"
#include "common/horovod_variables.h"
#include "hvdrun/types.h"

namespace hvdrun {
namespace {

// Reads an int variable into `out`; returns false and sets `status` on error.
bool ReadInt(const EnvironmentReader& env, const char* name, int64_t min, int64_t max, int& out,
             Status& status) {
  StatusOr<int64_t> value = env.RequiredWholeNumber(name, min, max);
  if (!value.ok()) {
    status = value.status();
    return false;
  }
  out = static_cast<int>(value.value());
  return true;
}

StatusOr<BackendKind> ReadBackend(const EnvironmentReader& env) {
  if (env.Find(env::kRank) != nullptr && env.Find(env::kBackend) == nullptr) {
    return Status::Error(
        std::string(env::kBackend) +
        " is not set: hvdrun started this rank without a backend; run hvdrun with --gloo (or "
        "--mpi, --nccl)");
  }
  StatusOr<std::string> backend = env.Required(env::kBackend);
  if (!backend.ok()) return backend.status();
  std::optional<BackendKind> kind = ParseBackend(backend.value());
  if (!kind) {
    return Status::Error(std::string(env::kBackend) + "='" + backend.value() +
                         "' is not a backend (gloo, mpi, nccl)");
  }
  return *kind;
}

// Horovod's tuning variables, where set, over NegotiationOptions' defaults.
Status ReadNegotiation(const EnvironmentReader& env, NegotiationOptions& negotiation) {
  constexpr int64_t kMaxBytes = int64_t{1} << 40;
  if (env.Find(env::kHorovodFusionThreshold) != nullptr) {
    StatusOr<int64_t> bytes = env.RequiredWholeNumber(env::kHorovodFusionThreshold, 0, kMaxBytes);
    if (!bytes.ok()) return bytes.status();
    negotiation.fusion_threshold_bytes = static_cast<size_t>(bytes.value());
  }
  if (const char* text = env.Find(env::kHorovodCycleTime); text != nullptr) {
    const std::optional<double> ms = ParseCycleTime(text);
    if (!ms) {
      return Status::Error(std::string(env::kHorovodCycleTime) + "='" + text + "' is not " + kCycleTimeForm);
    }
    negotiation.cycle_time = std::chrono::microseconds(std::llround(*ms * 1000));
  }
  if (env.Find(env::kHorovodCacheCapacity) != nullptr) {
    StatusOr<int64_t> capacity = env.RequiredWholeNumber(env::kHorovodCacheCapacity, 0, int64_t{1} << 20);
    if (!capacity.ok()) return capacity.status();
    negotiation.cache_capacity = static_cast<size_t>(capacity.value());
  }
  if (env.Find(env::kHorovodStallCheckTime) != nullptr) {
    StatusOr<int64_t> seconds = env.RequiredWholeNumber(env::kHorovodStallCheckTime, 1, 86400);
    if (!seconds.ok()) return seconds.status();
    negotiation.stall_warning = std::chrono::seconds(seconds.value());
  }
  return Status::Ok();
}

// "1" or "0" (also "true"/"false", as Horovod's boolean variables), or unset: `fallback`.
StatusOr<bool> ReadFlag(const EnvironmentReader& env, const char* name, bool fallback) {
  const char* text = env.Find(name);
  if (text == nullptr) return fallback;
  const std::string value = text;
  if (value == "1" || value == "true") return true;
  if (value == "0" || value == "false") return false;
  return Status::Error(std::string(name) + "='" + value + "' is not 1 or 0");
}

// HVDRUN_COMPRESSION and fp8's safeguards, where set, over CompressionOptions' defaults.
Status ReadCompression(const EnvironmentReader& env, CompressionOptions& compression) {
  if (const char* text = env.Find(env::kCompression); text != nullptr) {
    std::optional<CompressionFormat> format = ParseCompressionFormat(text);
    if (!format) {
      return Status::Error(std::string(env::kCompression) + "='" + text +
                           "' is not a compression (none, fp16, bf16, fp8, fp8-e4m3, fp8-e5m2)");
    }
    compression.format = *format;
  }
  for (const auto& [name, setting] : {std::pair<const char*, bool*>{env::kFp8Scaling, &compression.scaling},
                                      {env::kFp8SafeCast, &compression.safe_cast},
                                      {env::kFp8Float32Sums, &compression.float32_sums},
                                      {env::kErrorFeedback, &compression.error_feedback}}) {
    StatusOr<bool> value = ReadFlag(env, name, *setting);
    if (!value.ok()) return value.status();
    *setting = value.value();
  }
  return Status::Ok();
}

// The timeline's file: in hvdrun's HVDRUN_TIMELINE directory for every rank, sent to hvdrun at the
// end; else Horovod's HOROVOD_TIMELINE for rank 0 alone, as Horovod writes it.
Status ReadTimeline(const EnvironmentReader& env, int rank, TimelineSettings& timeline) {
  if (const char* dir = env.Find(env::kTimeline); dir != nullptr && *dir != '\0') {
    timeline.path = std::string(dir) + "/rank-" + std::to_string(rank) + ".json";
    timeline.send_to_launcher = true;
  } else if (const char* horovod = env.Find(env::kHorovodTimeline); horovod != nullptr && rank == 0) {
    timeline.path = horovod;
  }
  if (timeline.path.empty()) return Status::Ok();
  if (const char* host = env.Find(env::kHostname); host != nullptr) timeline.host = host;
  StatusOr<bool> mark = ReadFlag(env, env::kHorovodTimelineMarkCycles, false);
  if (!mark.ok()) return mark.status();
  timeline.mark_cycles = mark.value();
  return Status::Ok();
}

// Horovod's autotuning variables (AutotuneOptions), read when HOROVOD_AUTOTUNE=1. A fusion threshold
// or cycle time set in the environment is the user's explicit value, which the tuner leaves fixed.
Status ReadAutotune(const EnvironmentReader& env, AutotuneOptions& autotune) {
  StatusOr<bool> enabled = ReadFlag(env, env::kHorovodAutotune, false);
  if (!enabled.ok() || !enabled.value()) return enabled.status();
  autotune.enabled = true;
  if (const char* log = env.Find(env::kHorovodAutotuneLog); log != nullptr) autotune.log_file = log;
  for (const auto& [name, range, value] :
       {std::tuple<const char*, WholeRange, int*>{env::kHorovodAutotuneWarmupSamples, kAutotuneWarmupRange,
                                                  &autotune.warmup_samples},
        {env::kHorovodAutotuneStepsPerSample, kAutotuneSamplesRange, &autotune.steps_per_sample},
        {env::kHorovodAutotuneBayesOptMaxSamples, kAutotuneSamplesRange, &autotune.max_samples}}) {
    if (env.Find(name) == nullptr) continue;
    StatusOr<int64_t> number = env.RequiredWholeNumber(name, range.min, range.max);
    if (!number.ok()) return number.status();
    *value = static_cast<int>(number.value());
  }
  if (const char* text = env.Find(env::kHorovodAutotuneGaussianProcessNoise); text != nullptr) {
    const std::optional<double> noise = ParseAutotuneNoise(text);
    if (!noise) {
      return Status::Error(std::string(env::kHorovodAutotuneGaussianProcessNoise) + "='" + text +
                           "' is not " + kAutotuneNoiseForm);
    }
    autotune.gaussian_process_noise = *noise;
  }
  autotune.fusion_threshold_fixed = env.Find(env::kHorovodFusionThreshold) != nullptr;
  autotune.cycle_time_fixed = env.Find(env::kHorovodCycleTime) != nullptr;
  autotune.cache_capacity_fixed = env.Find(env::kHorovodCacheCapacity) != nullptr;
  autotune.hierarchical_allreduce_fixed = env.Find(env::kHorovodHierarchicalAllreduce) != nullptr;
  return Status::Ok();
}

// An elastic job's variables (ElasticOptions), where HVDRUN_ELASTIC=1.
Status ReadElastic(const EnvironmentReader& env, ElasticOptions& elastic) {
  StatusOr<bool> enabled = ReadFlag(env, env::kElastic, false);
  if (!enabled.ok() || !enabled.value()) return enabled.status();
  elastic.enabled = true;
  StatusOr<std::string> worker_id = env.Required(env::kWorkerId);
  if (!worker_id.ok()) return worker_id.status();
  elastic.worker_id = std::move(worker_id).value();
  StatusOr<int64_t> round = env.RequiredWholeNumber(env::kRound, 0, INT32_MAX);
  if (!round.ok()) return round.status();
  elastic.round = static_cast<int>(round.value());
  if (env.Find(env::kElasticTimeoutSeconds) != nullptr) {
    StatusOr<int64_t> seconds = env.RequiredWholeNumber(env::kElasticTimeoutSeconds, 1, int64_t{30} * 86400);
    if (!seconds.ok()) return seconds.status();
    elastic.assignment_timeout = std::chrono::seconds(seconds.value());
  }
  return Status::Ok();
}

}  // namespace

StatusOr<RuntimeEnvironment> ReadRuntimeEnvironment(const EnvironmentLookup& lookup) {
  const EnvironmentReader env(lookup, "run this program under hvdrun");
  RuntimeEnvironment result;
  RuntimeOptions& options = result.options;
  constexpr int64_t kMaxRanks = 1 << 24;
  Status status;
  if (!ReadInt(env, env::kRank, 0, kMaxRanks, options.rank, status) ||
      !ReadInt(env, env::kSize, 1, kMaxRanks, options.size, status) ||
      !ReadInt(env, env::kLocalRank, 0, kMaxRanks, options.local_rank, status) ||
      !ReadInt(env, env::kLocalSize, 1, kMaxRanks, options.local_size, status) ||
      !ReadInt(env, env::kCrossRank, 0, kMaxRanks, options.cross_rank, status) ||
      !ReadInt(env, env::kCrossSize, 1, kMaxRanks, options.cross_size, status)) {
    return status;
  }
  if (options.rank >= options.size) {
    return Status::Error(std::string(env::kRank) + "=" + std::to_string(options.rank) + " is not below " +
                         env::kSize + "=" + std::to_string(options.size));
  }

  StatusOr<BackendKind> backend = ReadBackend(env);
  if (!backend.ok()) return backend.status();
  options.backend = backend.value();

  StatusOr<std::string> address = env.Required(env::kRendezvousAddr);
  if (!address.ok()) return address.status();
  result.rendezvous_address = std::move(address).value();
  StatusOr<int64_t> port = env.RequiredWholeNumber(env::kRendezvousPort, 1, 65535);
  if (!port.ok()) return port.status();
  result.rendezvous_port = static_cast<uint16_t>(port.value());

  StatusOr<std::string> secret = env.Required(env::kSecret);
  if (!secret.ok()) return secret.status();
  result.secret_hex = std::move(secret).value();

  StatusOr<std::string> host_address = env.Required(env::kHostAddr);
  if (!host_address.ok()) return host_address.status();
  options.host_address = std::move(host_address).value();
  status = ReadNegotiation(env, options.negotiation);
  if (status.ok()) status = ReadTimeline(env, options.rank, options.timeline);
  if (status.ok()) status = ReadCompression(env, options.compression);
  if (status.ok()) {
    StatusOr<bool> shared_memory = ReadFlag(env, env::kSharedMemory, options.shared_memory);
    if (shared_memory.ok()) options.shared_memory = shared_memory.value();
    status = shared_memory.status();
  }
  if (status.ok()) {
    StatusOr<bool> hierarchical =
        ReadFlag(env, env::kHorovodHierarchicalAllreduce, options.hierarchical_allreduce);
    if (hierarchical.ok()) options.hierarchical_allreduce = hierarchical.value();
    status = hierarchical.status();
  }
  if (status.ok()) status = ReadElastic(env, options.elastic);
  if (status.ok()) status = ReadAutotune(env, options.autotune);
  if (!status.ok()) return status;
  StatusOr<HorovodSettings> horovod = ReadHorovodSettings(env, options);
  if (!horovod.ok()) return horovod.status();
  result.horovod = std::move(horovod).value();
  return result;
}

StatusOr<BackendKind> ReadBackendFromEnvironment(const std::function<const char*(const char*)>& lookup) {
  return ReadBackend(EnvironmentReader(lookup, "run this program under hvdrun"));
}

bool LaunchedByHvdrun(const std::function<const char*(const char*)>& lookup) {
  return lookup(env::kRank) != nullptr;
}

}  // namespace hvdrun
