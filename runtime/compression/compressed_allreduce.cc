#include "runtime/compression/compressed_allreduce.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>

#include "runtime/compression/piece_pipeline.h"

namespace hvdrun {
namespace {

size_t DivideRoundingUp(size_t a, size_t b) { return (a + b - 1) / b; }

// Codes travel as int32 words (no arithmetic on the way, and every backend moves int32 as it is):
// every count below is a multiple of 4 bytes.
constexpr size_t kWordBytes = 4;

// The blocks per rank in piece `piece`: piece p covers blocks [p * piece_blocks, + these) of every
// rank's chunk; its staging holds them rank by rank, as do its scales (from ranks * p * piece_blocks on).
size_t PieceBlocks(size_t chunk_blocks, size_t piece_blocks, size_t piece) {
  return std::min(piece_blocks, chunk_blocks - piece * piece_blocks);
}

}  // namespace

uint64_t CompressedAllreduce::RingAllreduceBytes(size_t bytes) const {
  return 2 * static_cast<uint64_t>(size_ - 1) * bytes / static_cast<uint64_t>(size_);
}

uint64_t CompressedAllreduce::ExchangeBytes(size_t bytes) const {
  return static_cast<uint64_t>(size_ - 1) * bytes / static_cast<uint64_t>(size_);
}

CompressedAllreduce::CompressedAllreduce(int rank, int size, const CompressionOptions& options,
                                         size_t piece_elements)
    : rank_(rank),
      size_(size),
      options_(options),
      piece_elements_(piece_elements),
      cast_(options.safe_cast ? Fp8Cast::kSafe : Fp8Cast::kNaive) {}

bool CompressedAllreduce::Compresses(DataType type, ReduceOp op, CompressionFormat format) {
  return format != CompressionFormat::kNone && type == DataType::kFloat32 &&
         (op == ReduceOp::kSum || op == ReduceOp::kAverage);
}

CompressionCounters CompressedAllreduce::counters() const {
  return {compressed_bytes_.load(), wire_bytes_.load(), float32_wire_bytes_.load()};
}

Status CompressedAllreduce::Allreduce(Backend& backend, const void* send, void* recv, size_t count,
                                      DataType type, ReduceOp op, CompressionFormat format,
                                      const std::vector<TensorSpan>& tensors) {
  if (!Compresses(type, op, format)) return backend.Allreduce(send, recv, count, type, op);
  format_ = WireFormatOf(format);
  auto* values = static_cast<float*>(recv);
  if (send != recv && count > 0) std::memmove(values, send, count * sizeof(float));
  compressed_bytes_ += count * sizeof(float);
  float32_wire_bytes_ += RingAllreduceBytes(count * sizeof(float));
  if (count == 0) return Status::Ok();
  if (WireFormatSize(format_) == 2) return ReduceSixteenBits(backend, values, count, op);
  return ReduceFloat8(backend, values, count, op, tensors);
}

Status CompressedAllreduce::ReduceSixteenBits(Backend& backend, float* values, size_t count, ReduceOp op) {
  const WireFormat format = format_;
  codes_.resize(count * 2);
  const float prescale = op == ReduceOp::kAverage ? 1.0f / static_cast<float>(size_) : 1.0f;
  EncodeToWire(format, values, count, prescale, codes_.data());
  const DataType type = format == WireFormat::kFloat16 ? DataType::kFloat16 : DataType::kBFloat16;
  Status status = backend.Allreduce(codes_.data(), codes_.data(), count, type, ReduceOp::kSum);
  if (!status.ok()) return status;
  wire_bytes_ += RingAllreduceBytes(count * 2);
  DecodeFromWire(format, codes_.data(), count, 1.0f, values);
  return Status::Ok();
}

Status CompressedAllreduce::ReduceFloat8(Backend& backend, float* values, size_t count, ReduceOp op,
                                         const std::vector<TensorSpan>& tensors) {
  const CompressionOptions& settings = options_;
  const auto ranks = static_cast<size_t>(size_);
  // Blocks of kBlockElements, fewer elements for a tensor smaller than a block per rank; each
  // rank's chunk a whole number of blocks; the buffer padded with zeros to ranks * chunk.
  block_ =
      std::min(kBlockElements, kWordBytes * DivideRoundingUp(DivideRoundingUp(count, ranks), kWordBytes));
  const size_t chunk = block_ * DivideRoundingUp(DivideRoundingUp(count, block_), ranks);
  const size_t padded = chunk * ranks;
  std::vector<TensorSpan> whole;
  if (tensors.empty()) whole.push_back({"", 0, count});
  const std::vector<TensorSpan>& spans = tensors.empty() ? whole : tensors;
  if (settings.float32_sums) return ReduceInPieces(backend, values, count, op, spans);

  // Summed in fp8, an average is divided first, as the 16-bit formats' (Compression.fp16's recipe).
  const float prescale = op == ReduceOp::kAverage ? 1.0f / static_cast<float>(size_) : 1.0f;
  LoadWork(values, count, padded, prescale, spans);
  if (settings.scaling) {
    Status status = AgreeOnScales(backend, padded, static_cast<float>(size_));
    if (!status.ok()) return status;
  } else {
    scales_.assign(padded / block_, 1.0f);
  }
  codes_.resize(padded);
  const auto named = [](const TensorSpan& span) { return !span.name.empty(); };
  const bool keep_losses = settings.error_feedback && std::any_of(spans.begin(), spans.end(), named);
  if (keep_losses) lost_.resize(padded);
  for (size_t block = 0; block < padded / block_; ++block) {
    const size_t at = block * block_;
    if (keep_losses) {
      EncodeToWireKeepingLoss(format_, &work_[at], block_, scales_[block], &codes_[at], &lost_[at], cast_);
    } else {
      EncodeToWire(format_, &work_[at], block_, scales_[block], &codes_[at], cast_);
    }
  }
  if (keep_losses) KeepLostErrors(spans);
  return SumInFloat8(backend, padded, values, count);
}

void CompressedAllreduce::DecodeBlockInto(const uint8_t* codes, size_t at, float inverse_scale, float* values,
                                          size_t count) {
  if (at >= count) return;  // padding
  if (at + block_ <= count) {
    DecodeFromWire(format_, codes, block_, inverse_scale, values + at);
    return;
  }
  tail_.resize(block_);
  DecodeFromWire(format_, codes, block_, inverse_scale, tail_.data());
  std::copy(tail_.begin(), tail_.begin() + static_cast<std::ptrdiff_t>(count - at), values + at);
}

Status CompressedAllreduce::AgreeOnScales(Backend& backend, size_t padded, float headroom) {
  const size_t blocks = padded / block_;
  scales_.resize(blocks);
  for (size_t block = 0; block < blocks; ++block) {
    scales_[block] = AbsoluteMax(&work_[block * block_], block_);
  }
  Status status =
      backend.Allreduce(scales_.data(), scales_.data(), blocks, DataType::kFloat32, ReduceOp::kMax);
  if (!status.ok()) return status;
  wire_bytes_ += RingAllreduceBytes(blocks * sizeof(float));
  for (float& scale : scales_) scale = WireScaleFor(format_, scale, headroom);
  return Status::Ok();
}

void CompressedAllreduce::LoadWork(const float* values, size_t count, size_t padded, float prescale,
                                   const std::vector<TensorSpan>& spans) {
  work_.resize(padded);
  std::fill(work_.begin() + static_cast<std::ptrdiff_t>(count), work_.end(), 0.0f);
  const auto scaled = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) work_[i] = values[i] * prescale;
  };
  // One pass; the spans lie in order (Allreduce's contract), their kept errors added on the way.
  size_t next = 0;
  for (const TensorSpan& span : spans) {
    scaled(next, span.offset);
    next = span.offset + span.count;
    if (!options_.error_feedback || span.name.empty()) {
      scaled(span.offset, next);
      continue;
    }
    std::vector<float>& kept = tensor_errors_[span.name];
    if (kept.size() != span.count) kept.assign(span.count, 0.0f);
    const float* in = values + span.offset;
    float* out = &work_[span.offset];
    for (size_t i = 0; i < span.count; ++i) out[i] = in[i] * prescale + kept[i];
  }
  scaled(next, count);
}

void CompressedAllreduce::KeepLostErrors(const std::vector<TensorSpan>& spans) {
  for (const TensorSpan& span : spans) {
    if (span.name.empty()) continue;
    std::vector<float>& kept = tensor_errors_[span.name];
    const auto from = lost_.begin() + static_cast<std::ptrdiff_t>(span.offset);
    std::copy(from, from + static_cast<std::ptrdiff_t>(span.count), kept.begin());
  }
}

Status CompressedAllreduce::ReduceInPieces(Backend& backend, float* values, size_t count, ReduceOp op,
                                           const std::vector<TensorSpan>& spans) {
  const CompressionOptions& settings = options_;
  const auto ranks = static_cast<size_t>(size_);
  PiecePlan plan;
  plan.values = values;
  plan.count = count;
  plan.op = op;
  plan.chunk_blocks = DivideRoundingUp(DivideRoundingUp(count, block_), ranks);
  plan.piece_blocks = std::min(plan.chunk_blocks, std::max<size_t>(1, piece_elements_ / block_));
  const size_t pieces = DivideRoundingUp(plan.chunk_blocks, plan.piece_blocks);

  // Everything the stages share is sized and looked up here, before any of them runs: the worker
  // thread then touches no map and allocates nothing.
  std::string
      layout;  // the owner's feedback keys on the layout of named tensors; an unnamed one leaves it out
  for (const TensorSpan& span : spans) {
    if (span.name.empty()) {
      layout.clear();
      break;
    }
    layout += span.name + '\n' + std::to_string(span.count) + '\n';
  }
  if (settings.error_feedback) {
    for (const TensorSpan& span : spans) {
      if (span.name.empty()) continue;
      std::vector<float>& kept = tensor_errors_[span.name];
      if (kept.size() != span.count) kept.assign(span.count, 0.0f);
      plan.kept_spans.push_back({span.offset, span.count, kept.data()});
    }
    if (!layout.empty()) {
      if (chunk_errors_.size() >= kMaxLayouts && chunk_errors_.count(layout) == 0) chunk_errors_.clear();
      std::vector<float>& kept = chunk_errors_[layout];
      if (kept.size() != plan.chunk_blocks * block_) kept.assign(plan.chunk_blocks * block_, 0.0f);
      plan.chunk_kept = kept.data();
    }
  }
  const size_t piece = plan.piece_blocks * block_;
  for (PieceSlot& slot : slots_) {
    slot.work.resize(ranks * piece);
    slot.codes.resize(ranks * (piece + ranks * plan.piece_blocks * sizeof(float)));
    slot.received.resize(slot.codes.size());
    slot.segment.resize(plan.piece_blocks * sizeof(float) + piece);
    slot.gathered.resize(ranks * slot.segment.size());
  }
  scales_.assign(ranks * plan.chunk_blocks, 1.0f);
  sum_block_.resize(block_);
  tail_.resize(block_);

  // The first piece's scales from a MAX allreduce; each next piece's come with the alltoall before.
  plan.pieces = pieces;
  LoadPiece(plan, 0);
  if (Status status = AgreeOnFirstScales(backend, plan); !status.ok()) return status;
  const std::vector<PiecePipeline::Stage> stages = {
      [&](size_t p) {
        EncodePiece(plan, p);
        if (p + 1 < pieces) LoadPiece(plan, p + 1);
        return Status::Ok();
      },
      [&](size_t p) { return ExchangePiece(backend, plan, p); },
      [&](size_t p) {
        SumPiece(plan, p);
        return Status::Ok();
      },
      [&](size_t p) { return GatherPiece(backend, plan, p); },
      [&](size_t p) {
        DecodePiece(plan, p);
        return Status::Ok();
      },
  };
  return PiecePipeline::Run(stages, pieces, /*overlap=*/pieces > 1);
}

void CompressedAllreduce::LoadBlock(const PiecePlan& plan, size_t at, float* out) const {
  const size_t end = std::min(at + block_, plan.count);
  if (at >= end) {
    std::fill(out, out + block_, 0.0f);
    return;
  }
  std::copy(plan.values + at, plan.values + end, out);
  std::fill(out + (end - at), out + block_, 0.0f);
  // The named tensors that overlap [at, end): spans lie in order of their offsets.
  const auto& kept = plan.kept_spans;
  auto span = std::upper_bound(kept.begin(), kept.end(), at,
                               [](size_t offset, const KeptSpan& s) { return offset < s.offset; });
  if (span != kept.begin()) --span;
  for (; span != kept.end() && span->offset < end; ++span) {
    const size_t from = std::max(at, span->offset);
    const size_t to = std::min(end, span->offset + span->count);
    for (size_t i = from; i < to; ++i) out[i - at] += span->kept[i - span->offset];
  }
}

void CompressedAllreduce::EncodeBlock(const PiecePlan& plan, size_t at, const float* in, float scale,
                                      uint8_t* codes) const {
  // Runs without a named tensor are encoded alone, each named tensor's run keeping its losses.
  const size_t end = at + block_;
  const auto& kept = plan.kept_spans;
  auto span = std::upper_bound(kept.begin(), kept.end(), at,
                               [](size_t offset, const KeptSpan& s) { return offset < s.offset; });
  if (span != kept.begin()) --span;
  size_t next = at;
  for (; span != kept.end() && span->offset < end; ++span) {
    const size_t from = std::max(next, span->offset);
    const size_t to = std::min(end, span->offset + span->count);
    if (from >= to) continue;
    if (next < from) EncodeToWire(format_, in + (next - at), from - next, scale, codes + (next - at), cast_);
    EncodeToWireKeepingLoss(format_, in + (from - at), to - from, scale, codes + (from - at),
                            span->kept + (from - span->offset), cast_);
    next = to;
  }
  if (next < end) EncodeToWire(format_, in + (next - at), end - next, scale, codes + (next - at), cast_);
}

void CompressedAllreduce::LoadPiece(const PiecePlan& plan, size_t piece) {
  const auto ranks = static_cast<size_t>(size_);
  const size_t first = piece * plan.piece_blocks;
  const size_t blocks = PieceBlocks(plan.chunk_blocks, plan.piece_blocks, piece);
  std::vector<float>& work = slots_[piece % 2].work;
  for (size_t r = 0; r < ranks; ++r) {
    for (size_t b = 0; b < blocks; ++b) {
      float* out = &work[(r * blocks + b) * block_];
      LoadBlock(plan, (r * plan.chunk_blocks + first + b) * block_, out);
      if (options_.scaling) scales_[ranks * first + r * blocks + b] = AbsoluteMax(out, block_);
    }
  }
}

Status CompressedAllreduce::AgreeOnFirstScales(Backend& backend, const PiecePlan& plan) {
  if (!options_.scaling) return Status::Ok();
  const auto ranks = static_cast<size_t>(size_);
  const size_t n = ranks * PieceBlocks(plan.chunk_blocks, plan.piece_blocks, 0);
  float* scales = scales_.data();
  Status status = backend.Allreduce(scales, scales, n, DataType::kFloat32, ReduceOp::kMax);
  if (!status.ok()) return status;
  wire_bytes_ += RingAllreduceBytes(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) scales[i] = WireScaleFor(format_, scales[i], 1.0f);
  return Status::Ok();
}

void CompressedAllreduce::EncodePiece(const PiecePlan& plan, size_t piece) {
  const auto ranks = static_cast<size_t>(size_);
  const size_t first = piece * plan.piece_blocks;
  const size_t blocks = PieceBlocks(plan.chunk_blocks, plan.piece_blocks, piece);
  const size_t stride = ExchangeStride(plan, piece);
  PieceSlot& slot = slots_[piece % 2];
  for (size_t r = 0; r < ranks; ++r) {
    for (size_t b = 0; b < blocks; ++b) {
      EncodeBlock(plan, (r * plan.chunk_blocks + first + b) * block_, &slot.work[(r * blocks + b) * block_],
                  scales_[ranks * first + r * blocks + b], &slot.codes[r * stride + b * block_]);
    }
  }
}

size_t CompressedAllreduce::ExchangeStride(const PiecePlan& plan, size_t piece) const {
  const size_t codes = PieceBlocks(plan.chunk_blocks, plan.piece_blocks, piece) * block_;
  if (!options_.scaling || piece + 1 >= plan.pieces) return codes;
  return codes + static_cast<size_t>(size_) * PieceBlocks(plan.chunk_blocks, plan.piece_blocks, piece + 1) *
                     sizeof(float);
}

Status CompressedAllreduce::ExchangePiece(Backend& backend, const PiecePlan& plan, size_t piece) {
  const auto ranks = static_cast<size_t>(size_);
  const size_t codes = PieceBlocks(plan.chunk_blocks, plan.piece_blocks, piece) * block_;
  const size_t stride = ExchangeStride(plan, piece);
  const size_t next_maxima = (stride - codes) / sizeof(float);  // every rank's blocks of the next piece
  float* next_scales = next_maxima == 0 ? nullptr : &scales_[ranks * (piece + 1) * plan.piece_blocks];
  PieceSlot& slot = slots_[piece % 2];
  // This rank's maxima of the next piece go to every rank with its codes: each takes the largest.
  for (size_t r = 0; r < ranks && next_maxima > 0; ++r) {
    std::memcpy(&slot.codes[r * stride + codes], next_scales, next_maxima * sizeof(float));
  }
  Status status =
      backend.Alltoall(slot.codes.data(), slot.received.data(), stride / kWordBytes, DataType::kInt32);
  if (!status.ok()) return status;
  wire_bytes_ += ExchangeBytes(ranks * stride);
  for (size_t i = 0; i < next_maxima; ++i) {
    float largest = 0;
    for (size_t from = 0; from < ranks; ++from) {
      float maximum = 0;
      std::memcpy(&maximum, &slot.received[from * stride + codes + i * sizeof(float)], sizeof maximum);
      largest = std::max(largest, maximum);
    }
    next_scales[i] = WireScaleFor(format_, largest, 1.0f);
  }
  return Status::Ok();
}

void CompressedAllreduce::SumPiece(const PiecePlan& plan, size_t piece) {
  const CompressionOptions& settings = options_;
  const auto ranks = static_cast<size_t>(size_);
  const size_t first = piece * plan.piece_blocks;
  const size_t blocks = PieceBlocks(plan.chunk_blocks, plan.piece_blocks, piece);
  const size_t stride = ExchangeStride(plan, piece);
  PieceSlot& slot = slots_[piece % 2];
  uint8_t* segment_codes = slot.segment.data() + blocks * sizeof(float);
  float* sum = sum_block_.data();
  for (size_t b = 0; b < blocks; ++b) {
    // Every rank's codes of this rank's block, summed in float32.
    std::fill(sum, sum + block_, 0.0f);
    const float inverse_scale = 1.0f / scales_[ranks * first + static_cast<size_t>(rank_) * blocks + b];
    for (size_t from = 0; from < ranks; ++from) {
      DecodeAddFromWire(format_, &slot.received[from * stride + b * block_], block_, inverse_scale, sum);
    }
    if (plan.op == ReduceOp::kAverage) {
      for (size_t i = 0; i < block_; ++i) sum[i] /= static_cast<float>(size_);
    }
    // Encoded again with a scale of its own: [scales][codes] for the allgather.
    float* kept = plan.chunk_kept == nullptr ? nullptr : plan.chunk_kept + (first + b) * block_;
    if (kept != nullptr) {
      for (size_t i = 0; i < block_; ++i) sum[i] += kept[i];
    }
    const float scale = settings.scaling ? WireScaleFor(format_, AbsoluteMax(sum, block_), 1.0f) : 1.0f;
    std::memcpy(slot.segment.data() + b * sizeof(float), &scale, sizeof scale);
    if (kept != nullptr) {
      EncodeToWireKeepingLoss(format_, sum, block_, scale, segment_codes + b * block_, kept, cast_);
    } else {
      EncodeToWire(format_, sum, block_, scale, segment_codes + b * block_, cast_);
    }
  }
}

Status CompressedAllreduce::GatherPiece(Backend& backend, const PiecePlan& plan, size_t piece) {
  const auto ranks = static_cast<size_t>(size_);
  const size_t blocks = PieceBlocks(plan.chunk_blocks, plan.piece_blocks, piece);
  const size_t segment_bytes = blocks * sizeof(float) + blocks * block_;
  PieceSlot& slot = slots_[piece % 2];
  Status status = backend.Allgather(slot.segment.data(), slot.gathered.data(), segment_bytes / kWordBytes,
                                    DataType::kInt32);
  if (!status.ok()) return status;
  wire_bytes_ += ExchangeBytes(segment_bytes * ranks);
  return Status::Ok();
}

void CompressedAllreduce::DecodePiece(const PiecePlan& plan, size_t piece) {
  // Every owner's piece, this rank's own too, so that all ranks hold the same.
  const auto ranks = static_cast<size_t>(size_);
  const size_t first = piece * plan.piece_blocks;
  const size_t blocks = PieceBlocks(plan.chunk_blocks, plan.piece_blocks, piece);
  const size_t segment_bytes = blocks * sizeof(float) + blocks * block_;
  const PieceSlot& slot = slots_[piece % 2];
  for (size_t owner = 0; owner < ranks; ++owner) {
    const uint8_t* segment = &slot.gathered[owner * segment_bytes];
    for (size_t b = 0; b < blocks; ++b) {
      float scale = 0;
      std::memcpy(&scale, segment + b * sizeof(float), sizeof scale);
      DecodeBlockInto(segment + blocks * sizeof(float) + b * block_,
                      (owner * plan.chunk_blocks + first + b) * block_, 1.0f / scale, plan.values,
                      plan.count);
    }
  }
}

Status CompressedAllreduce::SumInFloat8(Backend& backend, size_t padded, float* values, size_t count) {
  const WireFormat format = format_;
  const auto ranks = static_cast<size_t>(size_);
  received_.resize(padded * ranks);
  Status status = backend.Allgather(codes_.data(), received_.data(), padded / kWordBytes, DataType::kInt32);
  if (!status.ok()) return status;
  wire_bytes_ += ExchangeBytes(padded * ranks);
  // In the scaled domain (inverse scale 1), rank by rank, back to fp8 after each addition.
  std::vector<float> sum(block_);
  std::vector<uint8_t> rounded(block_);
  for (size_t block = 0; block < padded / block_; ++block) {
    const size_t at = block * block_;
    std::copy(&received_[at], &received_[at] + block_, rounded.begin());
    for (size_t from = 1; from < ranks; ++from) {
      DecodeFromWire(format, rounded.data(), block_, 1.0f, sum.data());
      DecodeAddFromWire(format, &received_[from * padded + at], block_, 1.0f, sum.data());
      EncodeToWire(format, sum.data(), block_, 1.0f, rounded.data(), cast_);
    }
    DecodeBlockInto(rounded.data(), at, 1.0f / scales_[block], values, count);
  }
  return Status::Ok();
}

}  // namespace hvdrun
