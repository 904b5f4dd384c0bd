// An 8-bit RGB image in row-major HWC order: what the JPEG codec reads and writes and what the
// augmentation crops. Example:
//   tipbench::data::RgbImage img(500, 375);  img.at(x, y)[0] = 255;   // red channel
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tipbench::data {

struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> pixels;  // width * height * 3

  RgbImage() = default;
  RgbImage(int w, int h) : width(w), height(h), pixels(static_cast<std::size_t>(w) * h * 3) {}
  void resize(int w, int h) {
    width = w;
    height = h;
    pixels.resize(static_cast<std::size_t>(w) * h * 3);
  }
  std::uint8_t* at(int x, int y) { return pixels.data() + (static_cast<std::size_t>(y) * width + x) * 3; }
  const std::uint8_t* at(int x, int y) const { return pixels.data() + (static_cast<std::size_t>(y) * width + x) * 3; }
};

}  // namespace tipbench::data
