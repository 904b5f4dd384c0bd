#include "tipbench/data/device_normalize.h"

#include <stdexcept>

namespace tipbench::data {

DeviceNormalizer::DeviceNormalizer(const c10::Device& device, const AugmentOptions& o) {
  std::vector<float> scale(3), shift(3);
  for (int c = 0; c < 3; ++c) {
    scale[c] = 1.0f / (255.0f * o.std[c]);
    shift[c] = -o.mean[c] / o.std[c];
  }
  // Made once, copied once: no per-batch host-to-device copy of the constants.
  scale_ = torch::tensor(scale).view({1, 3, 1, 1}).to(device);
  shift_ = torch::tensor(shift).view({1, 3, 1, 1}).to(device);
}

torch::Tensor DeviceNormalizer::operator()(const torch::Tensor& images) const {
  if (images.scalar_type() != torch::kByte || images.dim() != 4 || images.size(1) != 3) {
    throw std::invalid_argument("DeviceNormalizer: expects a (N, 3, S, S) uint8 batch");
  }
  return images.to(torch::kFloat).mul_(scale_).add_(shift_);
}

}  // namespace tipbench::data
