// Model FLOPs of the reference models: what one sample costs in matrix products and convolutions,
// forward and forward + backward, counted once by PyTorch's own counter (scripts/count_flops.py,
// which wrote the table in models/flops/src/model_flop_table.cpp and says how). What MFU is computed
// from (tipbench/environment/gpu_peaks.h has the other half):
//   if (const auto* f = tipbench::reference_flops("resnet50", 224))
//     double tflops = f->training_flops * samples_per_s / 1e12;
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tipbench {

struct ModelFlops {
  std::string model;
  std::string family;           // "cnn" or "vit"
  std::int64_t image_size = 0;  // the size counted at (the model's default)
  std::int64_t parameters = 0;  // of the counted model, as models::count_parameters gives for make_model(model)
  double forward_flops = 0;     // one sample's forward pass
  double training_flops = 0;    // forward and backward (the optimizer's elementwise update not counted)
  // The attention's two matrix products per forward (4 N^2 D per layer), in forward_flops: what
  // torch 2.11's counter misses on a CPU, where attention runs a fused kernel it has no formula for.
  double attention_forward_flops = 0;
};

// Every counted model, in the order of the table.
const std::vector<ModelFlops>& reference_flop_table();
// The count for `model` at `image_size`; nullptr for a model not counted (a user's model file) or
// another image size.
const ModelFlops* reference_flops(const std::string& model, std::int64_t image_size);

}  // namespace tipbench
