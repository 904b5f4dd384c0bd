// Dynamic loss scaling for float16 training: PyTorch's GradScaler, which LibTorch lacks, on the
// same ATen kernels. float16's smallest normal number is 6e-5, so small gradients would flush to
// zero; the loss is multiplied by a large power of two before backward and the gradients divided
// by it before the step (exact in binary floating point). A step whose gradients hold an inf or
// NaN is skipped and the scale halved; after `growth_interval` clean steps it doubles. Example:
//   LossScaler scaler(device);
//   scaler.scale(loss).backward();
//   scaler.step(optimizer);   // unscales, steps unless a gradient is not finite
//   scaler.update();          // backs off or grows the scale
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace tipbench::suites {

// PyTorch's GradScaler defaults.
struct LossScalerOptions {
  double init_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  std::int64_t growth_interval = 2000;
};

class LossScaler {
 public:
  explicit LossScaler(const c10::Device& device, LossScalerOptions options = {});

  // loss × scale, computed on the device (nothing synchronizes).
  torch::Tensor scale(const torch::Tensor& loss) const;
  // Divides every gradient of the optimizer's parameters by the scale in place and records on the
  // device whether any is inf or NaN. Once per step; step() calls it when it has not been called.
  void unscale(torch::optim::Optimizer& optimizer);
  // Steps the optimizer unless a gradient was not finite. Reads that flag on the host: a
  // synchronization, as GradScaler.step has one. Returns whether it stepped.
  bool step(torch::optim::Optimizer& optimizer);
  // Halves the scale after a skipped step, doubles it after growth_interval clean ones (on the
  // device, ATen's _amp_update_scale_). Call once per step, after step().
  void update();

  double current_scale() const;  // reads the scale on the host (synchronizes)
  std::int64_t skipped_steps() const { return skipped_steps_; }

 private:
  LossScalerOptions options_;
  torch::Tensor scale_;           // float32 scalar on the device
  torch::Tensor growth_tracker_;  // int32 scalar: clean steps since the last change
  torch::Tensor found_inf_;       // float32 scalar: 1 when this step's gradients are not finite
  bool unscaled_ = false;
  std::int64_t skipped_steps_ = 0;
};

}  // namespace tipbench::suites
