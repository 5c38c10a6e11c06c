// CompressedAllreduce: a float32 sum or average over every rank that sends its values in a smaller
// wire format (runtime/wire_format.h), on any Backend.
//
// fp16 and bf16 reduce as Horovod's Compression.fp16 does: each rank encodes its values (divided
// first by the number of ranks for an average, so that the sum cannot overflow where the values
// could not), the backend sums the 16-bit values, and each rank decodes the sum. Half of float32's
// bytes. The safeguards below are fp8's; the 16-bit formats use none of them.
//
// fp8 has three safeguards, on by default, each of which can be switched off to show what it
// guards against (the naive fp8 allreduce, with all three off, leaves a small model at chance):
//   - scaling: values are encoded in blocks of kBlockElements, each multiplied by a power of two
//     that every rank shares (from a MAX allreduce of the blocks' absolute maxima) and that brings
//     the block's largest value near the format's largest, so that small gradients do not vanish
//     below fp8's smallest subnormal (2^-9 for E4M3). Off: the values are encoded as they are.
//   - float32 sums: an alltoall hands each rank its 1/N of every rank's encoded values; it sums
//     them in float32, encodes its chunk of the sum again (with block scales of its own, sent with
//     it), and an allgather gives every rank every chunk. No value is summed in fp8, and each rank
//     sends a quarter of the bytes a float32 ring allreduce sends. Off: every rank's encoded values
//     are gathered and summed in rank order, rounded to fp8 after each addition, as a ring that sums
//     in fp8 would (with scaling, its headroom is the number of ranks, so that the sum cannot
//     saturate).
//   - error feedback: what encoding lost is kept and added the next time: by each rank, per tensor
//     (its values minus their decoded codes, added to the same tensor's next values), and by each
//     chunk's owner, per layout of tensors (its chunk of the sum minus what it sent). Rounding
//     errors then do not accumulate over steps (EF-SGD). Off: they are lost.
// Every rank ends with the same values, bit for bit.
//
// Bytes: wire_bytes() counts what this rank sent, as the collectives' usual algorithms send it
// (ring allreduce 2(N-1)/N of the buffer, alltoall and allgather (N-1)/N of the whole), and
// float32_bytes() what a float32 ring allreduce of the same values would have sent.
//
// Not thread-safe: one collective thread uses it. Every rank must call Reduce with the same
// settings, sizes and layout, in the same order (it is a collective on the backend).
#ifndef HVDRUN_RUNTIME_COMPRESSED_ALLREDUCE_H_
#define HVDRUN_RUNTIME_COMPRESSED_ALLREDUCE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "runtime/backend.h"
#include "runtime/wire_format.h"

namespace hvdrun {

struct CompressionSettings {
  WireFormat format = WireFormat::kFloat8E4M3;
  // fp8's safeguards (above); ignored by fp16 and bf16.
  bool scaling = true;
  bool float32_sums = true;
  bool error_feedback = true;
};

// One tensor of the buffer Reduce is given: its name (what error feedback keys on) and its place.
struct TensorSpan {
  std::string name;
  size_t offset = 0;  // elements
  size_t count = 0;
};

class CompressedAllreduce {
 public:
  // Elements per scale: one float32 scale per block costs 4 / kBlockElements of fp8's bytes.
  static constexpr size_t kBlockElements = 1024;

  CompressedAllreduce(int rank, int size) : rank_(rank), size_(size) {}

  // values[0, count) becomes the sum (kSum) or average (kAverage) over every rank, through
  // `settings.format`. `tensors` cover [0, count) in order; an empty list is one tensor named "".
  // Other ops are refused, as are non-float32 types (the caller reduces those uncompressed).
  Status Reduce(Backend& backend, float* values, size_t count, ReduceOp op,
                const CompressionSettings& settings, const std::vector<TensorSpan>& tensors = {});

  uint64_t wire_bytes() const { return wire_bytes_; }
  uint64_t float32_bytes() const { return float32_bytes_; }

 private:
  Status ReduceSixteenBits(Backend& backend, float* values, size_t count, ReduceOp op, WireFormat format);
  Status ReduceFloat8(Backend& backend, float* values, size_t count, ReduceOp op,
                      const CompressionSettings& settings, const std::vector<TensorSpan>& tensors);
  // The blocks' shared scales for work_[0, padded): a MAX allreduce of their absolute maxima.
  Status AgreeOnScales(Backend& backend, size_t padded, WireFormat format, float headroom);
  Status SumInFloat32(Backend& backend, size_t padded, ReduceOp op, const CompressionSettings& settings,
                      const std::string& layout);
  Status SumInFloat8(Backend& backend, size_t padded, ReduceOp op, WireFormat format);
  // Error feedback of each rank's values: the tensors' kept errors added to work_, and what encoding
  // work_ into codes_ lost kept.
  void AddKeptErrors(const std::vector<TensorSpan>& spans);
  void KeepLostErrors(const std::vector<TensorSpan>& spans, WireFormat format);
  // A ring allreduce's, an alltoall's or an allgather's bytes sent by this rank for `bytes` in all.
  uint64_t RingAllreduceBytes(size_t bytes) const;
  uint64_t ExchangeBytes(size_t bytes) const;

  const int rank_;
  const int size_;
  uint64_t wire_bytes_ = 0;
  uint64_t float32_bytes_ = 0;
  // The current call's elements per block (kBlockElements, or fewer for a small buffer).
  size_t block_ = kBlockElements;
  // Scratch, kept between calls: the values with their kept errors (and, at the end, the result),
  // their codes and the blocks' scales, what the exchanges bring, this rank's chunk of the sum and
  // the segment it sends of it, and decoded codes for error feedback.
  std::vector<float> work_;
  std::vector<uint8_t> codes_;
  std::vector<float> scales_;
  std::vector<uint8_t> received_;
  std::vector<float> chunk_sum_;
  std::vector<uint8_t> segment_;
  std::vector<float> decoded_;
  // Error feedback: each tensor's, by name, and each layout's owned chunk of the sum.
  std::map<std::string, std::vector<float>> tensor_errors_;
  std::map<std::string, std::vector<float>> chunk_errors_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_COMPRESSED_ALLREDUCE_H_
