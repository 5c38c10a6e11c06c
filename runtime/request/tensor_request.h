// TensorRequest: what one rank asks of the job for one named tensor; the unit that negotiation
// agrees on, the response cache remembers and fusion packs.
//
// Two ranks' requests for the same name must be equal (Matches) for the collective to run; a
// mismatch is an error that names the tensor and both descriptions.
#ifndef HVDRUN_RUNTIME_REQUEST_TENSOR_REQUEST_H_
#define HVDRUN_RUNTIME_REQUEST_TENSOR_REQUEST_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hvdrun/types.h"

namespace hvdrun {

enum class CollectiveKind : uint8_t {
  kAllreduce = 0,
  kBroadcast = 1,          // from `root`
  kAllgather = 2,          // `count` elements from each rank
  kBarrier = 3,            // no data
  kBaselineAllreduce = 4,  // the library's own in-place allreduce (Runtime::BaselineAllreduce)
  kAllgatherv = 5,         // `count` elements from each rank, counts that may differ (whole `row`s);
                           // the entry's recv is the caller's AllgatherResult
  kAlltoallv = 6,          // `splits[j]` elements to rank j (whole `row`s), `count` their sum, which may
                           // differ between ranks; the entry's recv is the caller's AlltoallResult
  kAlltoall = 7,           // `count` elements to each rank, into the caller's buffer of size * count
  kReducescatter = 8,      // `op` over ranks of `count` elements (whole `row`s), each rank receiving
                           // its part of the rows (ReducescatterCounts) into the caller's buffer
};

// The collective's name on the progress board and in messages: "allreduce", "broadcast", ...
inline const char* CollectiveOpName(CollectiveKind kind) {
  // By CollectiveKind's value.
  static constexpr const char* kNames[] = {"allreduce", "broadcast", "allgather", "barrier",      "allreduce",
                                           "allgather", "alltoall",  "alltoall",  "reducescatter"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(CollectiveKind::kReducescatter) + 1,
                "a name for every CollectiveKind");
  return kNames[static_cast<size_t>(kind)];
}

// The most dimensions a shape may have (they travel as one byte's count).
inline constexpr size_t kMaxShapeDimensions = 255;

struct TensorRequest {
  std::string name;
  CollectiveKind kind = CollectiveKind::kAllreduce;
  DataType type = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  uint64_t count = 0;  // elements
  int32_t root = 0;    // kBroadcast only
  // kAllreduce only: the format its values travel in (the job's, or the call's own).
  CompressionFormat compression = CompressionFormat::kNone;
  uint64_t row = 0;  // kAllgatherv and kReducescatter: elements per row, the same on every rank
  // kAllreduce and kReducescatter: Horovod's prescale and postscale factors. Each rank's values are
  // multiplied by `prescale` before the reduction and the result by `postscale` after it, on the fused
  // buffer (ScaleValues: runtime/request/scale_factors.h); the same on every rank for a name.
  double prescale = 1.0;
  double postscale = 1.0;
  // The caller's tensor shape (Runtime::SetCallerShape), compared across ranks as Horovod's
  // coordinator compares it (ShapeMatches). Empty: the caller gave none.
  std::vector<int64_t> shape;
  // kAllgatherv, once ready (the ReadinessTable fills it; never sent): every rank's count.
  // kReducescatter (filled at submission; never sent): the elements each rank receives.
  std::vector<uint64_t> counts;
  // kAlltoallv (this rank's; never sent: the collective exchanges them): elements for each rank.
  std::vector<uint64_t> splits;
  // This rank's sequence for it on its progress board (common/progress/rank_board.h); 0 when it
  // publishes none. Never sent.
  uint64_t progress_sequence = 0;

  size_t bytes() const { return static_cast<size_t>(count) * DataTypeSize(type); }
  // Same collective, element type, operation, count (but for kAllgatherv and kAlltoallv), root,
  // compression, row, scale factors and shape (the name is compared by the caller).
  bool Matches(const TensorRequest& other) const {
    const bool counts_may_differ = kind == CollectiveKind::kAllgatherv || kind == CollectiveKind::kAlltoallv;
    return kind == other.kind && type == other.type && op == other.op &&
           (count == other.count || counts_may_differ) && root == other.root &&
           compression == other.compression && row == other.row && prescale == other.prescale &&
           postscale == other.postscale && ShapeMatches(other);
  }
  // Every dimension agrees; for allgathers and alltoalls, whose first dimension may differ between
  // ranks, the number of dimensions and those after the first.
  bool ShapeMatches(const TensorRequest& other) const {
    const bool first_may_differ = kind == CollectiveKind::kAllgather || kind == CollectiveKind::kAllgatherv ||
                                  kind == CollectiveKind::kAlltoall || kind == CollectiveKind::kAlltoallv;
    if (!first_may_differ || shape.empty()) return shape == other.shape;
    return shape.size() == other.shape.size() &&
           std::equal(shape.begin() + 1, shape.end(), other.shape.begin() + 1);
  }
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_REQUEST_TENSOR_REQUEST_H_
