#include "runtime/negotiation/negotiation_message.h"

#include <bit>
#include <cstring>

namespace hvdrun {

CountedFields::CountedFields(size_t fields, int ranks)
    : fields_(fields),
      width_(static_cast<unsigned>(std::bit_width(static_cast<uint64_t>(ranks < 1 ? 1 : ranks)))),
      fields_per_word_(63 / width_),
      words_((fields + fields_per_word_ - 1) / fields_per_word_, 0) {}

void CountedFields::Set(size_t field) {
  const size_t shift = (field % fields_per_word_) * width_;
  words_[field / fields_per_word_] |= int64_t{1} << shift;
}

int CountedFields::Count(size_t field) const {
  const size_t shift = (field % fields_per_word_) * width_;
  const uint64_t mask = (uint64_t{1} << width_) - 1;
  return static_cast<int>((static_cast<uint64_t>(words_[field / fields_per_word_]) >> shift) & mask);
}

void CountedFields::Clear() {
  for (int64_t& word : words_) word = 0;
}

bool Announcement::operator==(const Announcement& other) const {
  return kind == other.kind && request.name == other.request.name && request.Matches(other.request);
}

namespace {

// Layout of one announcement, little-endian: kind u8, collective u8, type u8, op u8, compression u8,
// root i32, count u64, row u64, prescale f64, postscale f64, name length u32, dimensions u8, name
// bytes, the dimensions (i64 each).
constexpr size_t kFixedBytes = 5 + 4 + 8 + 8 + 8 + 8 + 4 + 1;

template <typename T>
void Append(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

template <typename T>
T Read(std::string_view bytes, size_t at) {
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  return value;
}

}  // namespace

std::string EncodeAnnouncements(const std::vector<Announcement>& announcements) {
  std::string out;
  for (const Announcement& a : announcements) {
    Append<uint8_t>(out, static_cast<uint8_t>(a.kind));
    Append<uint8_t>(out, static_cast<uint8_t>(a.request.kind));
    Append<uint8_t>(out, static_cast<uint8_t>(a.request.type));
    Append<uint8_t>(out, static_cast<uint8_t>(a.request.op));
    Append<uint8_t>(out, static_cast<uint8_t>(a.request.compression));
    Append<int32_t>(out, a.request.root);
    Append<uint64_t>(out, a.request.count);
    Append<uint64_t>(out, a.request.row);
    Append<double>(out, a.request.prescale);
    Append<double>(out, a.request.postscale);
    Append<uint32_t>(out, static_cast<uint32_t>(a.request.name.size()));
    Append<uint8_t>(out, static_cast<uint8_t>(a.request.shape.size()));
    out += a.request.name;
    for (int64_t dimension : a.request.shape) Append<int64_t>(out, dimension);
  }
  return out;
}

StatusOr<std::vector<Announcement>> DecodeAnnouncements(std::string_view bytes) {
  std::vector<Announcement> out;
  size_t at = 0;
  while (at < bytes.size()) {
    if (bytes.size() - at < kFixedBytes) {
      return Status::Error("negotiation: announcement " + std::to_string(out.size()) +
                           " is cut short at byte " + std::to_string(at));
    }
    Announcement a;
    const auto kind = Read<uint8_t>(bytes, at);
    const auto collective = Read<uint8_t>(bytes, at + 1);
    const auto type = Read<uint8_t>(bytes, at + 2);
    const auto op = Read<uint8_t>(bytes, at + 3);
    const auto compression = Read<uint8_t>(bytes, at + 4);
    if (kind > static_cast<uint8_t>(Announcement::Kind::kJoin) ||
        collective > static_cast<uint8_t>(CollectiveKind::kReducescatter) ||
        DataTypeSize(static_cast<DataType>(type)) == 0 ||
        ReduceOpName(static_cast<ReduceOp>(op)) == "unknown" ||
        CompressionFormatName(static_cast<CompressionFormat>(compression)) == "unknown") {
      return Status::Error("negotiation: announcement " + std::to_string(out.size()) +
                           " has an unknown kind, collective, data type, operation or compression");
    }
    a.kind = static_cast<Announcement::Kind>(kind);
    a.request.kind = static_cast<CollectiveKind>(collective);
    a.request.type = static_cast<DataType>(type);
    a.request.op = static_cast<ReduceOp>(op);
    a.request.compression = static_cast<CompressionFormat>(compression);
    a.request.root = Read<int32_t>(bytes, at + 5);
    a.request.count = Read<uint64_t>(bytes, at + 9);
    a.request.row = Read<uint64_t>(bytes, at + 17);
    a.request.prescale = Read<double>(bytes, at + 25);
    a.request.postscale = Read<double>(bytes, at + 33);
    const auto name_size = Read<uint32_t>(bytes, at + 41);
    const auto dimensions = Read<uint8_t>(bytes, at + 45);
    at += kFixedBytes;
    if (bytes.size() - at < name_size) {
      return Status::Error("negotiation: announcement " + std::to_string(out.size()) + "'s name of " +
                           std::to_string(name_size) + " bytes is cut short");
    }
    a.request.name.assign(bytes.substr(at, name_size));
    at += name_size;
    if (bytes.size() - at < size_t{dimensions} * sizeof(int64_t)) {
      return Status::Error("negotiation: announcement " + std::to_string(out.size()) + "'s shape of " +
                           std::to_string(dimensions) + " dimensions is cut short");
    }
    a.request.shape.resize(dimensions);
    for (int64_t& dimension : a.request.shape) {
      dimension = Read<int64_t>(bytes, at);
      at += sizeof(int64_t);
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace hvdrun
