// CompressedAllreduce: a rank's allreduces under the job's CompressionOptions (hvdrun/runtime.h):
// float32 sums and averages send their values in a smaller wire format (runtime/compression/wire_format.h),
// on any Backend; everything else goes to the backend's own allreduce as it is. Each call names its format
// (the job's, or the call's own); the safeguards are the job's.
//
// fp16 and bf16 reduce as Horovod's Compression.fp16 does: each rank encodes its values (divided
// first by the number of ranks for an average, so that the sum cannot overflow where the values
// could not), the backend sums the 16-bit values, and each rank decodes the sum. Half of float32's
// bytes. The safeguards below are fp8's; the 16-bit formats use none of them.
//
// fp8 has four safeguards, on by default, each of which can be switched off to show what it
// guards against (the naive fp8 allreduce, with all four off, leaves a small model at chance):
//   - scaling: values are encoded in blocks of kBlockElements, each multiplied by a power of two
//     that every rank shares (from a MAX allreduce of the blocks' absolute maxima) and that brings
//     the block's largest value near the format's largest, so that small gradients do not vanish
//     below fp8's smallest subnormal (2^-9 for E4M3). Off: the values are encoded as they are.
//   - a safe cast: saturating, with subnormals (runtime/compression/wire_format.h). Off: the naive
//     cast, which flushes values below the smallest normal (2^-6 for E4M3) to zero and makes
//     those beyond the largest NaN (E4M3) or infinity (E5M2).
//   - float32 sums: an alltoall hands each rank its 1/N of every rank's encoded values; it sums
//     them in float32, encodes its chunk of the sum again (with block scales of its own, sent with
//     it), and an allgather gives every rank every chunk. No value is summed in fp8, and each rank
//     sends a quarter of the bytes a float32 ring allreduce sends. The buffer goes through these
//     steps in pieces (each rank's chunk cut into runs of `piece_elements`), pipelined
//     (runtime/compression/piece_pipeline.h): a worker thread loads, encodes, sums and decodes pieces while
//     the calling thread has others on the wire, with the same results, bit for bit, as in one piece (every
//     step is per block; a block's scale is the largest of its ranks' maxima, which come with the previous
//     piece's alltoall). Off: every rank's encoded values are gathered and summed in rank order, rounded to
//     fp8 after each addition, as a ring that sums in fp8 would; an average is divided before encoding, as
//     the 16-bit formats' (with scaling, its headroom is the number of ranks, so that the sum
//     cannot saturate).
//   - error feedback: what encoding lost is kept and added the next time: by each rank, per tensor
//     (its values minus their decoded codes, added to the same tensor's next values), and by each
//     chunk's owner, per layout of tensors (its chunk of the sum minus what it sent). Rounding
//     errors then do not accumulate over steps (EF-SGD). Off: they are lost. Only named tensors
//     have a next time: an unnamed one (an empty name) is compressed without feedback.
// With float32 sums, an average divides the float32 sum. Every rank ends with the same values, bit for bit.
//
// Bytes (counters()): what this rank sent for compressed allreduces, as the collectives' usual
// algorithms send it (ring allreduce 2(N-1)/N of the buffer, alltoall and allgather (N-1)/N of the
// whole), beside what a float32 ring allreduce of the same values would have sent.
//
// Allreduce is used by one collective thread at a time; counters() may be read from any thread.
// Every rank must call Allreduce with the same options, sizes and layout, in the same order (it is
// a collective on the backend).
#ifndef HVDRUN_RUNTIME_COMPRESSION_COMPRESSED_ALLREDUCE_H_
#define HVDRUN_RUNTIME_COMPRESSION_COMPRESSED_ALLREDUCE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hvdrun/counters.h"
#include "hvdrun/options.h"
#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "runtime/backend.h"
#include "runtime/compression/wire_format.h"

namespace hvdrun {

// One tensor of the buffer Allreduce is given: its name (what error feedback keys on) and its place.
struct TensorSpan {
  std::string name;
  size_t offset = 0;  // elements
  size_t count = 0;
};

class CompressedAllreduce {
 public:
  // Elements per scale: one float32 scale per block costs 4 / kBlockElements of fp8's bytes.
  static constexpr size_t kBlockElements = 1024;

  // Elements of each rank's chunk per piece of the pipelined fp8 allreduce (rounded to whole
  // blocks): 256 KiB of codes per rank per piece, about 2 ms on a 1 Gbit/s link, and the pieces
  // staged at once a few MiB. Measured on two servers over a 1 Gbit/s link (docs/benchmarks.md):
  // pieces of 1 and 4 Mi elements kept the link less busy, and pieces of 64 Ki elements made each
  // collective's fixed cost (a few milliseconds there) longer than its transfer.
  static constexpr size_t kPieceElements = size_t{1} << 18;

  // `piece_elements` other than the default is for tests, which cut small buffers into many pieces.
  CompressedAllreduce(int rank, int size, const CompressionOptions& options,
                      size_t piece_elements = kPieceElements);

  // Whether an allreduce of `type` with `op` in `format` is compressed: a format is set, and it is
  // a float32 sum or average.
  static bool Compresses(DataType type, ReduceOp op, CompressionFormat format);
  // recv[0, count) = the allreduce over every rank of send[0, count): compressed in `format` when
  // Compresses(type, op, format), else the backend's own. send == recv is in place. `tensors` name
  // the tensors packed in the buffer, in order of their offsets and not overlapping, for error
  // feedback; an empty list is one unnamed tensor.
  Status Allreduce(Backend& backend, const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                   CompressionFormat format, const std::vector<TensorSpan>& tensors = {});
  CompressionCounters counters() const;

 private:
  Status ReduceSixteenBits(Backend& backend, float* values, size_t count, ReduceOp op);
  Status ReduceFloat8(Backend& backend, float* values, size_t count, ReduceOp op,
                      const std::vector<TensorSpan>& tensors);
  // The blocks' shared scales for work_[0, padded): a MAX allreduce of their absolute maxima.
  Status AgreeOnScales(Backend& backend, size_t padded, float headroom);
  // One call's float32-sum reduction in pieces: the stages below, in PiecePipeline's order.
  struct KeptSpan {
    size_t offset = 0;  // elements
    size_t count = 0;
    float* kept = nullptr;  // the tensor's kept errors, count of them
  };
  struct PiecePlan {
    float* values = nullptr;
    size_t count = 0;
    ReduceOp op = ReduceOp::kSum;
    size_t chunk_blocks = 0;  // blocks per rank's chunk
    size_t piece_blocks = 0;  // blocks per rank per piece (the last piece may have fewer)
    size_t pieces = 0;
    std::vector<KeptSpan> kept_spans;  // the named tensors' kept errors, in order; none without feedback
    float* chunk_kept = nullptr;       // the owner's kept errors for its chunk of this layout, or null
  };
  // Ends with every rank's sum decoded into values[0, count).
  Status ReduceInPieces(Backend& backend, float* values, size_t count, ReduceOp op,
                        const std::vector<TensorSpan>& spans);
  // Piece 0's values loaded and its scales agreed by a MAX allreduce, then the stages of each piece:
  // encode it, keeping what is lost, and load the next piece with its kept errors and its blocks'
  // absolute maxima (worker); the alltoall of its codes, with every rank's maxima of the next piece,
  // which become the next piece's scales (caller); the owner's float32 sum, encoded again (worker);
  // the allgather (caller); decode every owner's piece into values (worker).
  void LoadPiece(const PiecePlan& plan, size_t piece);
  Status AgreeOnFirstScales(Backend& backend, const PiecePlan& plan);
  void EncodePiece(const PiecePlan& plan, size_t piece);
  // Bytes per rank in piece `piece`'s alltoall: its codes, then the next piece's maxima, if scaled.
  size_t ExchangeStride(const PiecePlan& plan, size_t piece) const;
  Status ExchangePiece(Backend& backend, const PiecePlan& plan, size_t piece);
  void SumPiece(const PiecePlan& plan, size_t piece);
  Status GatherPiece(Backend& backend, const PiecePlan& plan, size_t piece);
  void DecodePiece(const PiecePlan& plan, size_t piece);
  // out[0, block_) = values[at, at + block_) with the kept errors of plan's spans added, zeros past
  // plan.count.
  void LoadBlock(const PiecePlan& plan, size_t at, float* out) const;
  // codes[0, block_) = the encoding of in[0, block_) (values[at, ...) loaded) with `scale`; what a
  // named tensor's elements lost replaces their kept errors.
  void EncodeBlock(const PiecePlan& plan, size_t at, const float* in, float scale, uint8_t* codes) const;
  Status SumInFloat8(Backend& backend, size_t padded, float* values, size_t count);
  // Decodes the block of codes whose first element is `at` into values[at, count): padding is dropped.
  void DecodeBlockInto(const uint8_t* codes, size_t at, float inverse_scale, float* values, size_t count);
  // work_[0, padded) = values * prescale, with each named tensor's kept error added (error feedback),
  // zeros past count.
  void LoadWork(const float* values, size_t count, size_t padded, float prescale,
                const std::vector<TensorSpan>& spans);
  // Error feedback: what encoding work_ into codes_ lost (lost_, written by the encoding) kept.
  void KeepLostErrors(const std::vector<TensorSpan>& spans);
  // A ring allreduce's, an alltoall's or an allgather's bytes sent by this rank for `bytes` in all.
  uint64_t RingAllreduceBytes(size_t bytes) const;
  uint64_t ExchangeBytes(size_t bytes) const;

  const int rank_;
  const int size_;
  const CompressionOptions options_;
  const size_t piece_elements_;
  const Fp8Cast cast_;                        // options_.safe_cast's
  WireFormat format_ = WireFormat::kFloat16;  // the current call's
  std::atomic<uint64_t> compressed_bytes_{0};
  std::atomic<uint64_t> wire_bytes_{0};
  std::atomic<uint64_t> float32_wire_bytes_{0};
  // The current call's elements per block (kBlockElements, or fewer for a small buffer).
  size_t block_ = kBlockElements;
  // Scratch, kept between calls. Summed in fp8: the values with their kept errors (padded to whole
  // chunks), their codes, what the allgather brings, what encoding lost (error feedback). Both: the
  // blocks' scales (summed in float32: piece by piece, each piece's ranks' blocks in rank order) and
  // a block's decoded tail. Summed in float32: a block of the owner's sum, and two slots of staging
  // (piece p uses slot p % 2), each for the loaded values of a piece, its codes, what the alltoall
  // brings, the owner's segment ([scales][codes]) and what the allgather brings.
  std::vector<float> work_;
  std::vector<uint8_t> codes_;
  std::vector<float> scales_;
  std::vector<uint8_t> received_;
  std::vector<float> lost_;
  std::vector<float> tail_;
  std::vector<float> sum_block_;
  struct PieceSlot {
    std::vector<float> work;
    std::vector<uint8_t> codes;
    std::vector<uint8_t> received;
    std::vector<uint8_t> segment;
    std::vector<uint8_t> gathered;
  };
  PieceSlot slots_[2];
  // Error feedback: each named tensor's, by name, and each layout's owned chunk of the sum (at most
  // kMaxLayouts layouts: a program whose fusion groups tensors anew each step starts afresh).
  static constexpr size_t kMaxLayouts = 256;
  std::map<std::string, std::vector<float>> tensor_errors_;
  std::map<std::string, std::vector<float>> chunk_errors_;
};

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_COMPRESSION_COMPRESSED_ALLREDUCE_H_
