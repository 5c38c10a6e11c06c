#include "runtime/compressed_allreduce.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace hvdrun {
namespace {

size_t DivideRoundingUp(size_t a, size_t b) { return (a + b - 1) / b; }

// Codes travel as int32 words (no arithmetic on the way, and every backend moves int32 as it is):
// every count below is a multiple of 4 bytes.
constexpr size_t kWordBytes = 4;

}  // namespace

uint64_t CompressedAllreduce::RingAllreduceBytes(size_t bytes) const {
  return 2 * static_cast<uint64_t>(size_ - 1) * bytes / static_cast<uint64_t>(size_);
}

uint64_t CompressedAllreduce::ExchangeBytes(size_t bytes) const {
  return static_cast<uint64_t>(size_ - 1) * bytes / static_cast<uint64_t>(size_);
}

CompressedAllreduce::CompressedAllreduce(int rank, int size, const CompressionOptions& options)
    : rank_(rank),
      size_(size),
      options_(options),
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
  // Summed in fp8, an average is divided first, as the 16-bit formats' (Compression.fp16's recipe).
  const float prescale =
      !settings.float32_sums && op == ReduceOp::kAverage ? 1.0f / static_cast<float>(size_) : 1.0f;
  LoadWork(values, count, padded, prescale, spans);
  const float headroom = settings.float32_sums ? 1.0f : static_cast<float>(size_);
  if (settings.scaling) {
    Status status = AgreeOnScales(backend, padded, headroom);
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

  // The owner's feedback keys on the layout of named tensors; any unnamed one leaves it out.
  std::string layout;
  for (const TensorSpan& span : spans) {
    if (span.name.empty()) {
      layout.clear();
      break;
    }
    layout += span.name + '\n' + std::to_string(span.count) + '\n';
  }
  return settings.float32_sums ? SumInFloat32(backend, padded, op, layout, values, count)
                               : SumInFloat8(backend, padded, values, count);
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

Status CompressedAllreduce::SumInFloat32(Backend& backend, size_t padded, ReduceOp op,
                                         const std::string& layout, float* values, size_t count) {
  const CompressionOptions& settings = options_;
  const auto ranks = static_cast<size_t>(size_);
  const size_t chunk = padded / ranks;
  const size_t chunk_blocks = chunk / block_;
  const size_t first_block = static_cast<size_t>(rank_) * chunk_blocks;

  // Every rank's codes of this rank's chunk, then their sum in float32.
  received_.resize(padded);
  Status status = backend.Alltoall(codes_.data(), received_.data(), chunk / kWordBytes, DataType::kInt32);
  if (!status.ok()) return status;
  wire_bytes_ += ExchangeBytes(padded);
  chunk_sum_.assign(chunk, 0.0f);
  for (size_t from = 0; from < ranks; ++from) {
    for (size_t block = 0; block < chunk_blocks; ++block) {
      DecodeAddFromWire(format_, &received_[from * chunk + block * block_], block_,
                        1.0f / scales_[first_block + block], &chunk_sum_[block * block_]);
    }
  }
  if (op == ReduceOp::kAverage) {
    for (float& value : chunk_sum_) value /= static_cast<float>(size_);
  }

  // The chunk of the sum, encoded again with scales of its own: [scales][codes] for the allgather.
  std::vector<float>* kept = nullptr;
  if (settings.error_feedback && !layout.empty()) {
    if (chunk_errors_.size() >= kMaxLayouts && chunk_errors_.count(layout) == 0) chunk_errors_.clear();
    kept = &chunk_errors_[layout];
    if (kept->size() != chunk) kept->assign(chunk, 0.0f);
    for (size_t i = 0; i < chunk; ++i) chunk_sum_[i] += (*kept)[i];
  }
  const size_t segment_bytes = chunk_blocks * sizeof(float) + chunk;
  segment_.resize(segment_bytes);
  uint8_t* segment_codes = segment_.data() + chunk_blocks * sizeof(float);
  for (size_t block = 0; block < chunk_blocks; ++block) {
    const float* sum = &chunk_sum_[block * block_];
    const float scale = settings.scaling ? WireScaleFor(format_, AbsoluteMax(sum, block_), 1.0f) : 1.0f;
    std::memcpy(segment_.data() + block * sizeof(float), &scale, sizeof scale);
    if (kept != nullptr) {
      EncodeToWireKeepingLoss(format_, sum, block_, scale, segment_codes + block * block_,
                              &(*kept)[block * block_], cast_);
    } else {
      EncodeToWire(format_, sum, block_, scale, segment_codes + block * block_, cast_);
    }
  }

  // Every chunk to every rank; each decodes all of them, its own too, so that all hold the same.
  received_.resize(segment_bytes * ranks);
  status = backend.Allgather(segment_.data(), received_.data(), segment_bytes / kWordBytes, DataType::kInt32);
  if (!status.ok()) return status;
  wire_bytes_ += ExchangeBytes(segment_bytes * ranks);
  for (size_t owner = 0; owner < ranks; ++owner) {
    const uint8_t* segment = &received_[owner * segment_bytes];
    for (size_t block = 0; block < chunk_blocks; ++block) {
      float scale = 0;
      std::memcpy(&scale, segment + block * sizeof(float), sizeof scale);
      DecodeBlockInto(segment + chunk_blocks * sizeof(float) + block * block_, owner * chunk + block * block_,
                      1.0f / scale, values, count);
    }
  }
  return Status::Ok();
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
