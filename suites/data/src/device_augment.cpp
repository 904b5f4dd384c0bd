#include "tipbench/data/device_augment.h"

#include <stdexcept>

namespace tipbench::data {

void crop_resize_flip_into(const torch::Tensor& image, const CropBox& box, torch::Tensor out) {
  if (image.scalar_type() != torch::kByte || image.dim() != 3 || image.size(0) != 3) {
    throw std::invalid_argument("crop_resize_flip_into: the image must be uint8 (3, H, W)");
  }
  if (out.scalar_type() != torch::kByte || out.dim() != 3 || out.size(0) != 3 || out.size(1) != out.size(2) ||
      out.device() != image.device()) {
    throw std::invalid_argument("crop_resize_flip_into: out must be uint8 (3, S, S) on the image's device");
  }
  if (box.width <= 0 || box.height <= 0 || box.x < 0 || box.y < 0 || box.x + box.width > image.size(2) ||
      box.y + box.height > image.size(1)) {
    throw std::invalid_argument("crop_resize_flip_into: crop box outside the image");
  }
  namespace F = torch::nn::functional;
  const torch::Tensor crop = image.slice(1, box.y, box.y + box.height).slice(2, box.x, box.x + box.width);
  torch::Tensor resized =
      F::interpolate(crop.unsqueeze(0).to(torch::kFloat), F::InterpolateFuncOptions()
                                                              .size(std::vector<std::int64_t>{out.size(1), out.size(2)})
                                                              .mode(torch::kBilinear)
                                                              .align_corners(false)
                                                              .antialias(true));
  if (box.flip) resized = resized.flip({3});
  out.copy_(resized.squeeze(0).round_().clamp_(0, 255));  // copy_ converts to uint8
}

}  // namespace tipbench::data
