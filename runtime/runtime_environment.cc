#include "runtime/runtime_environment.h"

#include <charconv>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include "common/env_names.h"
#include "common/rendezvous_client.h"
#include "hvdrun/types.h"

namespace hvdrun {
namespace {

class EnvironmentReader {
 public:
  explicit EnvironmentReader(const std::function<const char*(const char*)>& lookup) : lookup_(lookup) {}

  StatusOr<std::string> String(const char* name) const {
    const char* value = lookup_(name);
    if (value == nullptr) {
      return Status::Error(std::string(name) + " is not set: run this program under hvdrun");
    }
    if (*value == '\0') return Status::Error(std::string(name) + " is empty: run this program under hvdrun");
    return std::string(value);
  }

  // An integer in [min, max].
  StatusOr<int64_t> Integer(const char* name, int64_t min, int64_t max) const {
    StatusOr<std::string> text = String(name);
    if (!text.ok()) return text.status();
    int64_t value = 0;
    const char* end = text->data() + text->size();
    const auto [stop, error] = std::from_chars(text->data(), end, value);
    if (error != std::errc() || stop != end || value < min || value > max) {
      return Status::Error(std::string(name) + "='" + text.value() + "' is not an integer in " +
                           std::to_string(min) + ".." + std::to_string(max));
    }
    return value;
  }

 private:
  const std::function<const char*(const char*)>& lookup_;
};

// Reads an int variable into `out`; returns false and sets `status` on error.
bool ReadInt(const EnvironmentReader& env, const char* name, int64_t min, int64_t max, int& out,
             Status& status) {
  StatusOr<int64_t> value = env.Integer(name, min, max);
  if (!value.ok()) {
    status = value.status();
    return false;
  }
  out = static_cast<int>(value.value());
  return true;
}

}  // namespace

StatusOr<RuntimeEnvironment> ReadRuntimeEnvironment(const std::function<const char*(const char*)>& lookup) {
  const EnvironmentReader env(lookup);
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

  StatusOr<std::string> backend = env.String(env::kBackend);
  if (!backend.ok()) return backend.status();
  std::optional<BackendKind> kind = ParseBackend(backend.value());
  if (!kind) {
    return Status::Error(std::string(env::kBackend) + "='" + backend.value() +
                         "' is not a backend (gloo, mpi, nccl)");
  }
  options.backend = *kind;

  StatusOr<std::string> address = env.String(env::kRendezvousAddr);
  if (!address.ok()) return address.status();
  result.rendezvous_address = std::move(address).value();
  StatusOr<int64_t> port = env.Integer(env::kRendezvousPort, 1, 65535);
  if (!port.ok()) return port.status();
  result.rendezvous_port = static_cast<uint16_t>(port.value());

  const char* secret = lookup(env::kSecret);
  if (secret == nullptr || *secret == '\0') {
    return Status::Error(std::string(env::kSecret) + " is not set: run this program under hvdrun");
  }
  result.secret_hex = secret;

  StatusOr<std::string> host_address = env.String(env::kHostAddr);
  if (!host_address.ok()) return host_address.status();
  options.host_address = std::move(host_address).value();
  return result;
}

StatusOr<std::unique_ptr<Runtime>> Runtime::InitFromEnvironment() {
  StatusOr<RuntimeEnvironment> environment =
      ReadRuntimeEnvironment([](const char* name) { return std::getenv(name); });
  if (!environment.ok()) return environment.status();
  RuntimeEnvironment& settings = environment.value();
  auto client = RendezvousClient::Connect(settings.rendezvous_address, settings.rendezvous_port,
                                          settings.secret_hex, settings.options.timeout);
  if (!client.ok()) return client.status();
  settings.options.store = std::shared_ptr<KeyValueStore>(std::move(client).value());
  return Init(std::move(settings.options));
}

}  // namespace hvdrun
