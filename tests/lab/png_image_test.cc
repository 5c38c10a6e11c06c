#include "tests/lab/png_image.h"

#include <gtest/gtest.h>

namespace hvdrun::lab_test {
namespace {

TEST(PngImage, DecodesWhatItEncodes) {
  PngImage image;
  image.width = 3;
  image.height = 2;
  image.pixels = {ParseColor("#1f77b4"), ParseColor("#ffffff"), ParseColor("#000000"),
                  ParseColor("#ff7f0e"), ParseColor("#2ca02c"), ParseColor("#7f7f7f")};
  // Every filter type: PNG writers such as Chromium's pick one per row.
  for (int filter = 0; filter <= 4; ++filter) {
    std::string error;
    std::optional<PngImage> decoded = DecodePng(EncodePng(image, filter), &error);
    ASSERT_TRUE(decoded) << error;
    EXPECT_EQ(decoded->width, 3);
    EXPECT_EQ(decoded->height, 2);
    EXPECT_EQ(decoded->pixels, image.pixels) << "filter " << filter;
    EXPECT_EQ(decoded->At(0, 1), (Rgb{0xff, 0x7f, 0x0e}));
  }
}

TEST(PngImage, RejectsOtherFiles) {
  std::string error;
  EXPECT_FALSE(DecodePng("GIF89a", &error));
  EXPECT_EQ(error, "not a PNG file");
}

}  // namespace
}  // namespace hvdrun::lab_test
