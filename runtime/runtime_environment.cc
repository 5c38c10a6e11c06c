#include "runtime/runtime_environment.h"

#include <cstdlib>
#include <optional>
#include <utility>

#include "common/env_names.h"
#include "common/environment_reader.h"
#include "common/rendezvous_client.h"
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

}  // namespace

StatusOr<RuntimeEnvironment> ReadRuntimeEnvironment(const std::function<const char*(const char*)>& lookup) {
  const EnvironmentReader env(lookup, "run this program under hvdrun");
  RuntimeEnvironment result;
  RuntimeOptions& options = result.options;
  if (lookup(env::kRank) != nullptr && lookup(env::kBackend) == nullptr) {
    return Status::Error(
        std::string(env::kBackend) +
        " is not set: hvdrun started this rank without a backend; run hvdrun with --gloo (or "
        "--mpi, --nccl)");
  }
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

  StatusOr<std::string> backend = env.Required(env::kBackend);
  if (!backend.ok()) return backend.status();
  std::optional<BackendKind> kind = ParseBackend(backend.value());
  if (!kind) {
    return Status::Error(std::string(env::kBackend) + "='" + backend.value() +
                         "' is not a backend (gloo, mpi, nccl)");
  }
  options.backend = *kind;

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
  return result;
}

bool Runtime::LaunchedByHvdrun(const EnvironmentLookup& lookup) {
  return (lookup ? lookup(env::kRank) : std::getenv(env::kRank)) != nullptr;
}

StatusOr<std::unique_ptr<Runtime>> Runtime::InitFromEnvironment(const EnvironmentLookup& lookup) {
  StatusOr<RuntimeEnvironment> environment =
      ReadRuntimeEnvironment(lookup ? lookup : [](const char* name) { return std::getenv(name); });
  if (!environment.ok()) return environment.status();
  RuntimeEnvironment& settings = environment.value();
  auto client = RendezvousClient::Connect(settings.rendezvous_address, settings.rendezvous_port,
                                          settings.secret_hex, settings.options.timeout);
  if (!client.ok()) return client.status();
  settings.options.store = std::shared_ptr<KeyValueStore>(std::move(client).value());
  return Init(std::move(settings.options));
}

}  // namespace hvdrun
