// A PNG decoder for the screenshots headless Chromium takes of report.html: 8-bit RGB or RGBA,
// not interlaced — what Chromium writes. Enough to look at pixels in a test; not a general decoder.
#ifndef HVDRUN_TESTS_LAB_PNG_IMAGE_H_
#define HVDRUN_TESTS_LAB_PNG_IMAGE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hvdrun::lab_test {

struct Rgb {
  uint8_t r = 0;
  uint8_t g = 0;
  uint8_t b = 0;
  bool operator==(const Rgb&) const = default;
};

struct PngImage {
  int width = 0;
  int height = 0;
  std::vector<Rgb> pixels;  // row by row, alpha dropped

  const Rgb& At(int x, int y) const { return pixels[static_cast<size_t>(y) * width + x]; }
};

// Decodes PNG bytes; nullopt (with `error` set) for anything this decoder does not read.
std::optional<PngImage> DecodePng(const std::string& bytes, std::string* error);

// Encodes an 8-bit RGB image with the same filter (0 to 4) on every row: for testing the decoder.
std::string EncodePng(const PngImage& image, int filter);

// "#1f77b4" -> its colour.
Rgb ParseColor(const std::string& hex);

}  // namespace hvdrun::lab_test

#endif  // HVDRUN_TESTS_LAB_PNG_IMAGE_H_
