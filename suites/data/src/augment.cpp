#include "tipbench/data/augment.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tipbench::data {

CropBox random_resized_crop(int width, int height, const AugmentOptions& o, Rng& rng) {
  if (width <= 0 || height <= 0) throw std::invalid_argument("random_resized_crop: empty image");
  CropBox box;
  const double area = double(width) * height;
  const double log_lo = std::log(o.ratio_min), log_hi = std::log(o.ratio_max);
  bool found = false;
  for (int attempt = 0; attempt < 10 && !found; ++attempt) {
    const double target = area * rng.uniform(o.scale_min, o.scale_max);
    const double aspect = std::exp(rng.uniform(log_lo, log_hi));
    const int w = static_cast<int>(std::lround(std::sqrt(target * aspect)));
    const int h = static_cast<int>(std::lround(std::sqrt(target / aspect)));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      const int y = static_cast<int>(rng.below(height - h + 1));  // top first, as torchvision
      const int x = static_cast<int>(rng.below(width - w + 1));
      box = {x, y, w, h, false};
      found = true;
    }
  }
  if (!found) {  // torchvision's fallback: the whole image, cut to the nearest allowed ratio
    const double in_ratio = double(width) / height;
    int w = width, h = height;
    if (in_ratio < o.ratio_min) {
      h = static_cast<int>(std::lround(w / o.ratio_min));
    } else if (in_ratio > o.ratio_max) {
      w = static_cast<int>(std::lround(h * o.ratio_max));
    }
    box = {(width - w) / 2, (height - h) / 2, w, h, false};
  }
  box.flip = o.flip && rng.uniform() < 0.5;
  return box;
}

namespace {

// Filter taps of a triangle (bilinear) filter widened by the downscale factor, so every source
// pixel contributes (antialiasing), as Pillow's ImagingResample computes them. Output pixel j
// reads `count` source pixels from `first`, with weights at j * taps.
int compute_taps(int in_size, int out_size, std::vector<int>& bounds, std::vector<float>& weights) {
  const double scale = double(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = filter_scale;  // the triangle's radius is 1 source pixel, widened
  const int taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  bounds.assign(std::size_t(out_size) * 2, 0);
  weights.assign(std::size_t(out_size) * taps, 0.0f);
  for (int j = 0; j < out_size; ++j) {
    const double centre = (j + 0.5) * scale;
    const int first = std::max(static_cast<int>(centre - support + 0.5), 0);
    const int count = std::min(static_cast<int>(centre + support + 0.5), in_size) - first;
    double total = 0;
    float* w = weights.data() + std::size_t(j) * taps;
    for (int k = 0; k < count; ++k) {
      const double d = std::abs((first + k - centre + 0.5) / filter_scale);
      w[k] = static_cast<float>(d < 1 ? 1 - d : 0);
      total += w[k];
    }
    if (total > 0) {
      for (int k = 0; k < count; ++k) w[k] = static_cast<float>(w[k] / total);
    }
    bounds[2 * j] = first;
    bounds[2 * j + 1] = count;
  }
  return taps;
}

}  // namespace

namespace {

// The crop resized to output_size x output_size with the triangle filter; `write(c, offset, v)`
// stores channel c's value v (clamped to [0, 255], like Pillow's uint8 result) at planar CHW
// offset `offset`, flipped already.
template <typename Write>
void crop_resize(const RgbImage& image, const CropBox& box, const AugmentOptions& o, ResizeScratch& s, Write write) {
  if (box.width <= 0 || box.height <= 0 || box.x < 0 || box.y < 0 || box.x + box.width > image.width ||
      box.y + box.height > image.height) {
    throw std::invalid_argument("crop_resize: crop box outside the image");
  }
  const int out = o.output_size;
  // Horizontal pass: every row of the crop to `out` columns (float, interleaved RGB).
  const int xtaps = compute_taps(box.width, out, s.x_bounds, s.x_weights);
  s.rows.resize(std::size_t(box.height) * out * 3);
  for (int r = 0; r < box.height; ++r) {
    const std::uint8_t* src = image.at(box.x, box.y + r);
    float* dst = s.rows.data() + std::size_t(r) * out * 3;
    for (int j = 0; j < out; ++j) {
      const int first = s.x_bounds[2 * j], count = s.x_bounds[2 * j + 1];
      const float* w = s.x_weights.data() + std::size_t(j) * xtaps;
      float acc0 = 0, acc1 = 0, acc2 = 0;
      for (int k = 0; k < count; ++k) {
        const std::uint8_t* p = src + (first + k) * 3;
        acc0 += w[k] * p[0];
        acc1 += w[k] * p[1];
        acc2 += w[k] * p[2];
      }
      dst[3 * j] = acc0;
      dst[3 * j + 1] = acc1;
      dst[3 * j + 2] = acc2;
    }
  }
  // Vertical pass and the flip, into planar CHW.
  const int ytaps = compute_taps(box.height, out, s.y_bounds, s.y_weights);
  const std::size_t plane = std::size_t(out) * out;
  for (int i = 0; i < out; ++i) {
    const int first = s.y_bounds[2 * i], count = s.y_bounds[2 * i + 1];
    const float* w = s.y_weights.data() + std::size_t(i) * ytaps;
    for (int j = 0; j < out; ++j) {
      float acc[3] = {0, 0, 0};
      for (int k = 0; k < count; ++k) {
        const float* p = s.rows.data() + (std::size_t(first + k) * out + j) * 3;
        acc[0] += w[k] * p[0];
        acc[1] += w[k] * p[1];
        acc[2] += w[k] * p[2];
      }
      const int col = box.flip ? out - 1 - j : j;
      for (int c = 0; c < 3; ++c) write(c, c * plane + std::size_t(i) * out + col, std::clamp(acc[c], 0.0f, 255.0f));
    }
  }
}

}  // namespace

void crop_resize_normalize(const RgbImage& image, const CropBox& box, const AugmentOptions& o, float* chw,
                           ResizeScratch& s) {
  // ToTensor's 1/255 and Normalize folded into one multiply-add per value.
  float scale[3], shift[3];
  for (int c = 0; c < 3; ++c) {
    scale[c] = 1.0f / (255.0f * o.std[c]);
    shift[c] = -o.mean[c] / o.std[c];
  }
  crop_resize(image, box, o, s, [&](int c, std::size_t at, float v) { chw[at] = v * scale[c] + shift[c]; });
}

void crop_resize_u8(const RgbImage& image, const CropBox& box, const AugmentOptions& o, std::uint8_t* chw,
                    ResizeScratch& s) {
  crop_resize(image, box, o, s,
              [&](int, std::size_t at, float v) { chw[at] = static_cast<std::uint8_t>(std::lround(v)); });
}

}  // namespace tipbench::data
