// ImageNet training augmentation on the CPU, as torchvision's
// RandomResizedCrop(size) + RandomHorizontalFlip() + ToTensor() + Normalize(mean, std):
// a random box (torchvision's sampling of scale and aspect ratio, with its centre-crop
// fallback), resized with an antialiased bilinear (triangle) filter like Pillow's and
// torchvision's antialias=True, mirrored with probability 1/2, scaled to [0, 1] and normalised,
// written as float32 CHW straight into the batch. Example:
//   Rng rng = Rng::keyed({seed, epoch, index});
//   CropBox box = random_resized_crop(img.width, img.height, options, rng);
//   crop_resize_normalize(img, box, options, batch_ptr + i * 3 * 224 * 224, scratch);
#pragma once

#include "tipbench/data/image.h"
#include "tipbench/data/rng.h"

#include <array>
#include <cstdint>
#include <vector>

namespace tipbench::data {

struct AugmentOptions {
  int output_size = 224;
  double scale_min = 0.08, scale_max = 1.0;           // of the image area
  double ratio_min = 3.0 / 4, ratio_max = 4.0 / 3;    // width / height
  bool flip = true;                                   // horizontal, with probability 1/2
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f};  // ImageNet's, per RGB channel
  std::array<float, 3> std{0.229f, 0.224f, 0.225f};
};

struct CropBox {
  int x = 0, y = 0, width = 0, height = 0;
  bool flip = false;
};

// torchvision.transforms.RandomResizedCrop.get_params: up to 10 draws of (area, log-uniform
// aspect ratio) that fit, else the largest centre crop within the ratio bounds; then the flip.
CropBox random_resized_crop(int width, int height, const AugmentOptions& options, Rng& rng);

// Reused between calls so the hot loop allocates nothing.
struct ResizeScratch {
  std::vector<float> rows;                  // crop height x output width x 3, after the horizontal pass
  std::vector<int> x_bounds, y_bounds;      // per output pixel: first source pixel, count
  std::vector<float> x_weights, y_weights;  // per output pixel: its filter taps
};

// Writes 3 x output_size x output_size floats to `chw`: (pixel / 255 - mean) / std.
void crop_resize_normalize(const RgbImage& image, const CropBox& box, const AugmentOptions& options, float* chw,
                           ResizeScratch& scratch);
// The same crop and resize, rounded to 3 x output_size x output_size bytes (no ToTensor, no
// Normalize): NVIDIA's fast_collate batch, a quarter of the float bytes, normalised later on the
// device by normalize_uint8_batch (tipbench/data/device_normalize.h).
void crop_resize_u8(const RgbImage& image, const CropBox& box, const AugmentOptions& options, std::uint8_t* chw,
                    ResizeScratch& scratch);

}  // namespace tipbench::data
