#include "common/protocol/byte_codec.h"

namespace hvdrun {

void ByteWriter::U16(uint16_t value) {
  U8(static_cast<uint8_t>(value >> 8));
  U8(static_cast<uint8_t>(value));
}

void ByteWriter::U32(uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) U8(static_cast<uint8_t>(value >> shift));
}

void ByteWriter::U64(uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) U8(static_cast<uint8_t>(value >> shift));
}

void ByteWriter::Bytes(std::string_view value) {
  U32(static_cast<uint32_t>(value.size()));
  out_.append(value);
}

void ByteWriter::BytesList(const std::vector<std::string>& values) {
  List(values, [](ByteWriter& out, const std::string& value) { out.Bytes(value); });
}

bool ByteReader::U8(uint8_t* value) {
  if (in_.empty()) return false;
  *value = static_cast<uint8_t>(in_.front());
  in_.remove_prefix(1);
  return true;
}

bool ByteReader::U16(uint16_t* value) {
  if (in_.size() < 2) return false;
  *value = static_cast<uint16_t>((static_cast<uint8_t>(in_[0]) << 8) | static_cast<uint8_t>(in_[1]));
  in_.remove_prefix(2);
  return true;
}

bool ByteReader::U32(uint32_t* value) {
  if (in_.size() < 4) return false;
  uint32_t result = 0;
  for (int i = 0; i < 4; ++i) result = (result << 8) | static_cast<uint8_t>(in_[i]);
  *value = result;
  in_.remove_prefix(4);
  return true;
}

bool ByteReader::I32(int32_t* value) {
  uint32_t raw = 0;
  if (!U32(&raw)) return false;
  *value = static_cast<int32_t>(raw);
  return true;
}

bool ByteReader::U64(uint64_t* value) {
  if (in_.size() < 8) return false;
  uint64_t result = 0;
  for (int i = 0; i < 8; ++i) result = (result << 8) | static_cast<uint8_t>(in_[i]);
  *value = result;
  in_.remove_prefix(8);
  return true;
}

bool ByteReader::I64(int64_t* value) {
  uint64_t raw = 0;
  if (!U64(&raw)) return false;
  *value = static_cast<int64_t>(raw);
  return true;
}

bool ByteReader::Bool(bool* value) {
  uint8_t raw = 0;
  if (!U8(&raw) || raw > 1) return false;
  *value = raw == 1;
  return true;
}

bool ByteReader::Bytes(std::string* value) {
  uint32_t size = 0;
  if (!U32(&size) || size > in_.size()) return false;
  value->assign(in_.data(), size);
  in_.remove_prefix(size);
  return true;
}

bool ByteReader::Expect(std::string_view expected) {
  std::string value;
  return Bytes(&value) && value == expected;
}

bool ByteReader::BytesList(std::vector<std::string>* values) {
  // Every item takes at least its 4-byte length.
  return List(values, 4, [](ByteReader& in, std::string& value) { return in.Bytes(&value); });
}

}  // namespace hvdrun
