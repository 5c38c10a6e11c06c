#include "tests/lab/png_image.h"

#include <zlib.h>

#include <cstdlib>

namespace hvdrun::lab_test {
namespace {

constexpr char kSignature[] = "\x89PNG\r\n\x1a\n";

uint32_t ReadU32(const std::string& bytes, size_t at) {
  return static_cast<uint32_t>(static_cast<uint8_t>(bytes[at])) << 24 |
         static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 1])) << 16 |
         static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 2])) << 8 |
         static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + 3]));
}

void AppendU32(std::string& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((value >> shift) & 0xff);
}

void AppendChunk(std::string& out, const std::string& type, const std::string& data) {
  AppendU32(out, static_cast<uint32_t>(data.size()));
  std::string body = type + data;
  out += body;
  AppendU32(out, static_cast<uint32_t>(
                     crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()))));
}

uint8_t Paeth(int a, int b, int c) {
  int p = a + b - c;
  int pa = std::abs(p - a);
  int pb = std::abs(p - b);
  int pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return static_cast<uint8_t>(a);
  return static_cast<uint8_t>(pb <= pc ? b : c);
}

}  // namespace

std::optional<PngImage> DecodePng(const std::string& bytes, std::string* error) {
  auto fail = [&](const std::string& why) {
    *error = why;
    return std::nullopt;
  };
  if (bytes.size() < 8 || bytes.compare(0, 8, kSignature, 8) != 0) return fail("not a PNG file");
  PngImage image;
  int channels = 0;
  std::string compressed;
  for (size_t at = 8; at + 8 <= bytes.size();) {
    const uint32_t length = ReadU32(bytes, at);
    const std::string type = bytes.substr(at + 4, 4);
    if (at + 12 + length > bytes.size()) return fail("chunk " + type + " runs past the end");
    const std::string data = bytes.substr(at + 8, length);
    if (type == "IHDR") {
      if (data.size() != 13) return fail("bad IHDR");
      image.width = static_cast<int>(ReadU32(data, 0));
      image.height = static_cast<int>(ReadU32(data, 4));
      const int depth = static_cast<uint8_t>(data[8]);
      const int color = static_cast<uint8_t>(data[9]);
      const int interlace = static_cast<uint8_t>(data[12]);
      if (depth != 8 || (color != 2 && color != 6) || interlace != 0) {
        return fail("unsupported PNG: depth " + std::to_string(depth) + ", colour type " +
                    std::to_string(color) + ", interlace " + std::to_string(interlace));
      }
      channels = color == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      compressed += data;
    } else if (type == "IEND") {
      break;
    }
    at += 12 + length;
  }
  if (channels == 0 || image.width <= 0 || image.height <= 0) return fail("no IHDR");
  const size_t stride = static_cast<size_t>(image.width) * channels;
  std::string raw((stride + 1) * image.height, '\0');
  uLongf raw_size = static_cast<uLongf>(raw.size());
  if (uncompress(reinterpret_cast<Bytef*>(raw.data()), &raw_size,
                 reinterpret_cast<const Bytef*>(compressed.data()),
                 static_cast<uLong>(compressed.size())) != Z_OK ||
      raw_size != raw.size()) {
    return fail("cannot inflate the image data");
  }
  std::vector<uint8_t> previous(stride, 0);
  std::vector<uint8_t> row(stride, 0);
  image.pixels.reserve(static_cast<size_t>(image.width) * image.height);
  for (int y = 0; y < image.height; ++y) {
    const size_t base = static_cast<size_t>(y) * (stride + 1);
    const int filter = static_cast<uint8_t>(raw[base]);
    for (size_t i = 0; i < stride; ++i) {
      const int x = static_cast<uint8_t>(raw[base + 1 + i]);
      const int a = i >= static_cast<size_t>(channels) ? row[i - channels] : 0;
      const int b = previous[i];
      const int c = i >= static_cast<size_t>(channels) ? previous[i - channels] : 0;
      int value = 0;
      switch (filter) {
        case 0:
          value = x;
          break;
        case 1:
          value = x + a;
          break;
        case 2:
          value = x + b;
          break;
        case 3:
          value = x + (a + b) / 2;
          break;
        case 4:
          value = x + Paeth(a, b, c);
          break;
        default:
          return fail("unknown filter " + std::to_string(filter) + " on row " + std::to_string(y));
      }
      row[i] = static_cast<uint8_t>(value & 0xff);
    }
    for (int x = 0; x < image.width; ++x) {
      const size_t p = static_cast<size_t>(x) * channels;
      image.pixels.push_back(Rgb{row[p], row[p + 1], row[p + 2]});
    }
    previous.swap(row);
  }
  return image;
}

std::string EncodePng(const PngImage& image, int filter) {
  std::string out(kSignature, 8);
  std::string header;
  AppendU32(header, static_cast<uint32_t>(image.width));
  AppendU32(header, static_cast<uint32_t>(image.height));
  header += std::string("\x08\x02\x00\x00\x00", 5);
  AppendChunk(out, "IHDR", header);
  const size_t stride = static_cast<size_t>(image.width) * 3;
  std::vector<uint8_t> previous(stride, 0);
  std::string raw;
  for (int y = 0; y < image.height; ++y) {
    std::vector<uint8_t> row;
    for (int x = 0; x < image.width; ++x) {
      const Rgb& pixel = image.At(x, y);
      row.insert(row.end(), {pixel.r, pixel.g, pixel.b});
    }
    raw += static_cast<char>(filter);
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= 3 ? row[i - 3] : 0;
      const int b = previous[i];
      const int c = i >= 3 ? previous[i - 3] : 0;
      const int predicted = filter == 1   ? a
                            : filter == 2 ? b
                            : filter == 3 ? (a + b) / 2
                            : filter == 4 ? Paeth(a, b, c)
                                          : 0;
      raw += static_cast<char>((row[i] - predicted) & 0xff);
    }
    previous = row;
  }
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::string compressed(size, '\0');
  compress(reinterpret_cast<Bytef*>(compressed.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
           static_cast<uLong>(raw.size()));
  compressed.resize(size);
  AppendChunk(out, "IDAT", compressed);
  AppendChunk(out, "IEND", "");
  return out;
}

Rgb ParseColor(const std::string& hex) {
  auto channel = [&](size_t at) {
    return static_cast<uint8_t>(std::strtol(hex.substr(at, 2).c_str(), nullptr, 16));
  };
  return Rgb{channel(1), channel(3), channel(5)};
}

}  // namespace hvdrun::lab_test
