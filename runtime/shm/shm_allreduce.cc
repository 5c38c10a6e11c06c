#include "runtime/shm/shm_allreduce.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "runtime/reduction_kernels.h"

namespace hvdrun {

ShmAllreduce::ShmAllreduce(std::unique_ptr<ShmSegment> segment, int divisor, Backend* cross)
    : segment_(std::move(segment)), divisor_(divisor), cross_(cross) {}

size_t ShmAllreduce::SliceBegin(size_t count, size_t element, int slices, int slice) {
  const size_t unit = std::max<size_t>(1, 64 / element);
  const size_t units = (count + unit - 1) / unit;
  return std::min(count, units * static_cast<size_t>(slice) / static_cast<size_t>(slices) * unit);
}

Status ShmAllreduce::Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) {
  const size_t element = DataTypeSize(type);
  const size_t chunk = segment_->slot_bytes() / element;
  const auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);
  for (size_t done = 0; done < count; done += chunk) {
    const size_t at = done * element;
    Status status = ReduceChunk(in + at, out + at, std::min(chunk, count - done), type, op);
    if (!status.ok()) {
      segment_->Fail();
      return status;
    }
  }
  return Status::Ok();
}

Status ShmAllreduce::ReduceChunk(const std::byte* send, std::byte* recv, size_t count, DataType type,
                                 ReduceOp op) {
  ShmSegment& segment = *segment_;
  const int ranks = segment.local_size();
  const int me = segment.local_rank();
  const size_t element = DataTypeSize(type);
  const size_t begin = SliceBegin(count, element, ranks, me);
  const size_t end = SliceBegin(count, element, ranks, me + 1);
  std::byte* mine = segment.slot(set_, me);

  // 1. This rank's values for the others' slices.
  if (begin > 0) std::memcpy(mine, send, begin * element);
  if (end < count) std::memcpy(mine + end * element, send + end * element, (count - end) * element);
  if (Status arrived = segment.Barrier("allreduce"); !arrived.ok()) return arrived;

  // 2. This rank's slice, from every rank's values, in local rank order.
  const ReductionKernel kernel = ReductionKernelFor(type, op);
  const size_t block = std::max<size_t>(1, kBlockBytes / element);
  const auto source = [&](int local, size_t at) -> const std::byte* {
    return (local == me ? send : segment.slot(set_, local)) + at * element;
  };
  for (size_t at = begin; at < end; at += block) {
    const size_t n = std::min(block, end - at);
    std::byte* sum = mine + at * element;
    if (ranks == 1) {
      std::memcpy(sum, source(0, at), n * element);
    } else {
      kernel(sum, source(0, at), source(1, at), n);
    }
    for (int local = 2; local < ranks; ++local) kernel(sum, sum, source(local, at), n);
    if (op == ReduceOp::kAverage && cross_ == nullptr) DivideBy(type, sum, n, divisor_);
  }
  // The same local rank of every host has a slice of the same length: all of them call, or none.
  if (cross_ != nullptr && end > begin) {
    std::byte* slice = mine + begin * element;
    const ReduceOp cross_op = op == ReduceOp::kAverage ? ReduceOp::kSum : op;
    if (Status crossed = cross_->Allreduce(slice, slice, end - begin, type, cross_op); !crossed.ok()) {
      return crossed;
    }
    if (op == ReduceOp::kAverage) DivideBy(type, slice, end - begin, divisor_);
  }
  if (Status reduced = segment.Barrier("allreduce"); !reduced.ok()) return reduced;

  // 3. Every rank's reduced slice.
  for (int local = 0; local < ranks; ++local) {
    const size_t from = SliceBegin(count, element, ranks, local);
    const size_t to = SliceBegin(count, element, ranks, local + 1);
    if (to > from) {
      std::memcpy(recv + from * element, segment.slot(set_, local) + from * element, (to - from) * element);
    }
  }
  set_ ^= 1;
  return Status::Ok();
}

}  // namespace hvdrun
