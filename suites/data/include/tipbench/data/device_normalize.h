// The second half of a uint8 batch pipeline (LoaderOptions::uint8_batches): ToTensor's 1/255 and
// Normalize, done by the consumer on the batch's device (on a GPU: one fused-size elementwise
// pass instead of the workers' float work and 4x the copy bytes). The arithmetic is the host
// path's (v * 1/(255 std) - mean/std), so the two differ only by the uint8 rounding of v.
//   DeviceNormalizer normalize(device, loader_options.augment);
//   torch::Tensor x = normalize(batch.images);   // (N, 3, S, S) float32 on the device
#pragma once

#include "tipbench/data/augment.h"

#include <torch/torch.h>

namespace tipbench::data {

class DeviceNormalizer {
 public:
  DeviceNormalizer(const c10::Device& device, const AugmentOptions& options);
  // uint8 (N, 3, S, S) on the normalizer's device -> float32, normalised. Throws
  // std::invalid_argument for another dtype or shape.
  torch::Tensor operator()(const torch::Tensor& images) const;

 private:
  torch::Tensor scale_, shift_;  // (1, 3, 1, 1) float32 on the device
};

}  // namespace tipbench::data
