// Model FLOP utilisation of an arm: its model's training FLOPs per sample (tipbench/models/model_flops.h)
// times its median samples/s, over the dense peak (tipbench/environment/gpu_peaks.h) of the precision its
// matrix work ran in on the run's GPU. Example:
//   if (auto m = tipbench::reports::arm_mfu(result, arm); m && m->mfu)
//     fmt::print("{:.1f} TFLOP/s, {:.1f}% of {}", m->model_tflops, 100 * *m->mfu, m->peak_name);
#pragma once

#include "tipbench/results/result.h"

#include <optional>
#include <string>
#include <vector>

namespace tipbench::reports {

struct ArmMfu {
  double flops_per_sample = 0;  // one training step's model FLOPs (forward + backward)
  double model_tflops = 0;      // achieved: flops_per_sample x median samples/s
  // Of the peak below: nullopt on a CPU, or on a GPU the peak table does not know (why_no_mfu).
  std::optional<double> mfu;
  std::string peak_name;  // "bf16", "tf32" or "fp32": the precision the matrix work ran in
  double peak_tflops = 0;
  std::string gpu_kind;  // "H100 SXM5"
  std::string why_no_mfu;
};

// nullopt when the arm's model FLOPs are not known: not ok, not a training step of a reference
// model at its image size with fixed input shapes (info.training_flops_per_sample, since schema
// 1.10; for an older result, the reference table when the arm's info shows such a step).
// The peak of an fp32 arm is TF32 where its dominant work ran in TF32 (a CNN's convolutions
// under cuDNN's allow_tf32, PyTorch's default; a ViT's matrix products at matmul precision
// "high"), else plain fp32; a bf16 or fp16 arm's is the 16-bit Tensor Core peak.
std::optional<ArmMfu> arm_mfu(const Result& result, const ArmResult& arm);

// "43.3 TFLOP/s, 8.8% of tf32 (H100 SXM5 dense 494.7)", or the TFLOP/s and why there is no MFU.
std::string mfu_words(const ArmMfu& m);
// A table's MFU cell: "11.8% of 494.7", or why there is none (not escaped).
std::string mfu_cell(const ArmMfu& m);

// A findings page's MFU table: per model and precision of its matrix work, the arm of the run
// that reached the most model TFLOP/s.
struct ModelMfu {
  std::string model;
  std::string case_name;
  const ArmResult* arm = nullptr;  // in the result given
  ArmMfu mfu;
};
std::vector<ModelMfu> best_mfu_per_model(const Result& result);

}  // namespace tipbench::reports
