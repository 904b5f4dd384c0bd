// RandomResizedCrop's crop, resize and flip of an image already decoded into a tensor, computed
// where the tensor lives: the GPU-decode pipeline's augmentation (nvJPEG decodes onto the device,
// so the pixels never come back to the host). The resize is torch's antialiased bilinear
// interpolation, which is Pillow's triangle filter, the filter crop_resize_u8 computes on the
// host (tipbench/data/augment.h): the two differ by float rounding, a grey level at most. Example:
//   torch::Tensor out = torch::empty({n, 3, 224, 224}, uint8 on the device);
//   crop_resize_flip_into(decoded_chw, box, out[i]);
#pragma once

#include "tipbench/data/augment.h"

#include <torch/torch.h>

namespace tipbench::data {

// `image`: uint8 (3, H, W) with the box inside it; `out`: uint8 (3, S, S) on the same device,
// written with the box resized to S x S (rounded, clamped to 0..255) and mirrored when box.flip.
// Throws std::invalid_argument for other dtypes or shapes, or a box outside the image.
void crop_resize_flip_into(const torch::Tensor& image, const CropBox& box, torch::Tensor out);

}  // namespace tipbench::data
