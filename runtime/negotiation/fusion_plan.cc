#include "runtime/negotiation/fusion_plan.h"

#include <algorithm>

namespace hvdrun {
namespace {

size_t Padded(size_t bytes) { return (bytes + kFusionAlignment - 1) / kFusionAlignment * kFusionAlignment; }

bool Fusable(const TensorRequest& request) {
  return request.kind == CollectiveKind::kAllreduce || request.kind == CollectiveKind::kReducescatter;
}

bool FuseTogether(const TensorRequest& a, const TensorRequest& b) {
  return Fusable(a) && Fusable(b) && a.kind == b.kind && a.type == b.type && a.op == b.op &&
         a.compression == b.compression && a.prescale == b.prescale && a.postscale == b.postscale;
}

}  // namespace

std::vector<FusedResponse> PlanFusion(const std::vector<TensorRequest>& ready, size_t threshold_bytes) {
  std::vector<FusedResponse> responses;
  std::vector<bool> planned(ready.size(), false);
  for (size_t first = 0; first < ready.size(); ++first) {
    if (planned[first]) continue;
    planned[first] = true;
    FusedResponse response;
    response.members.push_back(first);
    response.offsets.push_back(0);
    response.bytes = Padded(ready[first].bytes());
    if (Fusable(ready[first])) {
      size_t skipped = 0;
      for (size_t next = first + 1; next < ready.size(); ++next) {
        if (planned[next]) continue;
        const size_t size = Padded(ready[next].bytes());
        if (FuseTogether(ready[first], ready[next]) && response.bytes + size <= threshold_bytes) {
          planned[next] = true;
          response.members.push_back(next);
          response.offsets.push_back(response.bytes);
          response.bytes += size;
          continue;
        }
        skipped += size;
        if (response.bytes + skipped > threshold_bytes) break;
      }
    }
    responses.push_back(std::move(response));
  }
  return responses;
}

size_t EffectiveFusionThreshold(size_t threshold_bytes, int local_size) {
  if (threshold_bytes == 0) return 0;
  const size_t unit = static_cast<size_t>(std::max(local_size, 1)) * 8 * 64;
  return (threshold_bytes + unit - 1) / unit * unit;
}

}  // namespace hvdrun
