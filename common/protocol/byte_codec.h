// ByteWriter and ByteReader: the binary encoding of hvdrun's wire messages.
//
// Integers are big-endian and fixed-width; a string is a u32 length followed by its bytes (any
// bytes, not only UTF-8); a list is a u32 count followed by its items. The reader never reads past
// its input and never allocates more than its input could hold, so malformed or hostile input
// yields a false return, not a crash or a huge allocation. Neither class is thread-safe.
#ifndef HVDRUN_COMMON_PROTOCOL_BYTE_CODEC_H_
#define HVDRUN_COMMON_PROTOCOL_BYTE_CODEC_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hvdrun {

class ByteWriter {
 public:
  void U8(uint8_t value) { out_.push_back(static_cast<char>(value)); }
  void U16(uint16_t value);
  void U32(uint32_t value);
  void I32(int32_t value) { U32(static_cast<uint32_t>(value)); }
  void U64(uint64_t value);
  void I64(int64_t value) { U64(static_cast<uint64_t>(value)); }
  void Bytes(std::string_view value);
  void BytesList(const std::vector<std::string>& values);

  // A list of items: the count, then each item as write_item(*this, item) writes it.
  template <typename T, typename WriteItem>
  void List(const std::vector<T>& items, WriteItem write_item) {
    U32(static_cast<uint32_t>(items.size()));
    for (const T& item : items) write_item(*this, item);
  }

  const std::string& data() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}

  // Each returns false, leaving *value unspecified, when the input ends too early.
  bool U8(uint8_t* value);
  bool U16(uint16_t* value);
  bool U32(uint32_t* value);
  bool I32(int32_t* value);
  bool U64(uint64_t* value);
  bool I64(int64_t* value);
  bool Bool(bool* value);  // a u8 that must be 0 or 1
  bool Bytes(std::string* value);
  bool BytesList(std::vector<std::string>* values);
  // A string that must equal `expected` (a protocol's magic).
  bool Expect(std::string_view expected);

  // A list that ByteWriter::List wrote, each item read by read_item(*this, item), which returns
  // false when the item is malformed. `min_item_bytes` (> 0) is the least an item takes: a count
  // the rest of the input could not hold fails before anything is allocated.
  template <typename T, typename ReadItem>
  bool List(std::vector<T>* items, size_t min_item_bytes, ReadItem read_item) {
    uint32_t count = 0;
    if (!U32(&count) || count > remaining() / min_item_bytes) return false;
    items->resize(count);
    for (T& item : *items) {
      if (!read_item(*this, item)) return false;
    }
    return true;
  }

  bool AtEnd() const { return in_.empty(); }
  size_t remaining() const { return in_.size(); }

 private:
  std::string_view in_;
};

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PROTOCOL_BYTE_CODEC_H_
