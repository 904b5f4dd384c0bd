// Procedurally drawn training images whose class can be learned: the class fixes the shape
// (circle, square, triangle, ring, cross, bar) and the hue of one object drawn at a random
// place, size and rotation over a random gradient; per-pixel grain gives the JPEG files the
// entropy of photographs (about 90 KB per 500x375 image at quality 90; ImageNet's JPEGs average
// about 110 KB), so decoding costs what it costs in practice. Deterministic in (seed, index). Example:
//   RgbImage img = tipbench::data::draw_sample(/*seed=*/0, /*index=*/17, /*label=*/7, /*classes=*/10, 500, 375);
#pragma once

#include "tipbench/data/image.h"

#include <cstdint>

namespace tipbench::data {

inline constexpr int kShapeCount = 6;

RgbImage draw_sample(std::uint64_t seed, std::int64_t index, int label, int classes, int width, int height);

}  // namespace tipbench::data
