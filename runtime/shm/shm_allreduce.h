// ShmAllreduce: an allreduce among the local ranks of one host through their ShmSegment, with no
// socket and no backend call.
//
// The buffer goes through the segment in chunks of one slot. For each chunk, every local rank
//   1. copies the chunk into its slot, all but its own slice (the chunk cut into local_size slices,
//      each a multiple of 64 bytes but the last), and arrives at a barrier;
//   2. reduces its own slice from every rank's slot (its own values from its send buffer), with
//      libhvdrun's reduction kernels (runtime/reduction_kernels.h), in blocks that stay in cache,
//      into its own slot; an average is divided there; then arrives at a barrier;
//   3. copies every rank's reduced slice into its recv buffer.
// With a `cross` backend (the hierarchical allreduce: one rank of the same local rank on every host),
// step 2 ends with an allreduce of the rank's slice of its host's sum with the other hosts' over
// that backend, before the average's division and the barrier; every host then holds the job's sum.
// That is a reduce-scatter and an allgather through memory: each rank reads and writes about five
// times the chunk, and the sum of a slice is computed once, in local rank order, so every rank gets
// the same bits. The segment's two sets of slots alternate between chunks (and calls), so that
// step 1 of the next chunk needs no barrier of its own: reaching it twice later requires every rank
// to have arrived at the barrier that follows its step 3.
//
// Every local rank must call Allreduce with the same count, type and op, in the same order (it is
// a collective). send == recv is in place; otherwise they must not overlap. Errors come from the
// segment's barrier (a dead, failed or late rank, named); after one the segment is unusable.
// Not thread-safe: one collective thread per rank.
#ifndef HVDRUN_RUNTIME_SHM_SHM_ALLREDUCE_H_
#define HVDRUN_RUNTIME_SHM_SHM_ALLREDUCE_H_

#include <cstddef>
#include <memory>

#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "runtime/backend.h"
#include "runtime/shm/shm_segment.h"

namespace hvdrun {

class ShmAllreduce {
 public:
  // Elements reduced per block: 16 KiB of float32 per source stays in the L1/L2 cache while every
  // local rank's block is added into it.
  static constexpr size_t kBlockBytes = size_t{16} << 10;

  // `divisor`: what an average divides the sum by (the job's size). `cross`, when given, is the
  // hierarchical allreduce's backend among the hosts (not owned; it outlives this).
  ShmAllreduce(std::unique_ptr<ShmSegment> segment, int divisor, Backend* cross = nullptr);

  Status Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op);
  ShmSegment& segment() { return *segment_; }

  // Where slice `slice` of a chunk of `count` elements of `element` bytes begins, in elements: the
  // chunk cut into `slices` nearly equal parts, each starting on a 64-byte boundary of the chunk.
  static size_t SliceBegin(size_t count, size_t element, int slices, int slice);

 private:
  Status ReduceChunk(const std::byte* send, std::byte* recv, size_t count, DataType type, ReduceOp op);

  std::unique_ptr<ShmSegment> segment_;
  const int divisor_;
  Backend* const cross_;
  int set_ = 0;  // the set of slots the next chunk uses
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_SHM_SHM_ALLREDUCE_H_
