#include "runtime/backends/nccl/nccl_unique_id.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "common/hex_text.h"
#include "runtime/backends/nccl/nccl_terms.h"

namespace hvdrun {

StatusOr<ncclUniqueId> ExchangeUniqueId(const BackendContext& context) {
  const std::string where = "nccl: rank " + std::to_string(context.rank) + ": ";
  StatusOr<int64_t> instance = context.store->Add("nccl/contexts/rank" + std::to_string(context.rank), 1);
  if (!instance.ok()) return Status::Error(where + "bootstrap: " + instance.status().message());
  const std::string key = "nccl/" + std::to_string(instance.value()) + "/unique_id";
  ncclUniqueId id{};
  if (context.rank == 0) {
    const ncclResult_t result = ncclGetUniqueId(&id);
    if (result != ncclSuccess) {
      return Status::Error(where + "ncclGetUniqueId failed: " + NcclErrorText(result, nullptr));
    }
    Status published = context.store->Set(key, HexEncode(std::string_view(id.internal, sizeof(id.internal))));
    if (!published.ok()) return Status::Error(where + "bootstrap: " + published.message());
    return id;
  }
  StatusOr<std::string> value = context.store->Get(key, context.timeout);
  if (!value.ok()) return Status::Error(where + "bootstrap: " + value.status().message());
  const std::optional<std::string> bytes = HexDecode(value.value());
  if (!bytes || bytes->size() != sizeof(id.internal)) {
    return Status::Error(where + "bootstrap: the value of key '" + key + "' is not a " +
                         std::to_string(sizeof(id.internal)) + "-byte NCCL unique id in hex");
  }
  std::copy(bytes->begin(), bytes->end(), id.internal);
  return id;
}

}  // namespace hvdrun
