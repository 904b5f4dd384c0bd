// The large-batch learning-rate recipe (Goyal et al. 2017): scale the LR linearly with the batch,
// ramp it up linearly over a warm-up, then decay it along a cosine. LibTorch ships no warm-up or
// cosine scheduler, so this is a torch::optim::LRScheduler subclass, per parameter group.
// Example:
//   const double lr = linear_scaled_lr(0.1, /*batch=*/1024, /*reference_batch=*/256);   // 0.4
//   torch::optim::SGD opt(params, torch::optim::SGDOptions(lr).momentum(0.9));
//   WarmupCosineLR sched(opt, {.warmup_steps = 500, .total_steps = 10000});
//   for (...) { loss.backward(); opt.step(); sched.step(); }   // step i used lr_at(i)
#pragma once

#include <torch/optim/optimizer.h>
#include <torch/optim/schedulers/lr_scheduler.h>

#include <cstdint>
#include <vector>

namespace tipbench::suites {

// The linear scaling rule: base_lr * batch / reference_batch.
double linear_scaled_lr(double base_lr, std::int64_t batch, std::int64_t reference_batch);

struct WarmupCosineOptions {
  std::int64_t warmup_steps = 0;  // 0: no warm-up
  std::int64_t total_steps = 1;   // warm-up + decay; later steps stay at the floor
  double min_factor = 0.0;        // the floor, as a fraction of each group's peak LR
};

// The factor on a group's peak LR at optimizer step `step` (0-based):
//   warm-up  (step + 1) / warmup_steps            for step < warmup_steps
//   decay    min + (1 - min) * (1 + cos(pi * t)) / 2, t = (step - warmup) / (total - warmup)
//   after    min_factor                           for step >= total_steps
// Throws std::invalid_argument for negative steps, warmup_steps > total_steps, total_steps < 1
// or min_factor outside [0, 1].
double warmup_cosine_factor(std::int64_t step, const WarmupCosineOptions& options);

class WarmupCosineLR : public torch::optim::LRScheduler {
 public:
  // Each group's current LR is its peak. The constructor sets every group to its step-0 LR, so
  // the first optimizer step already follows the schedule; step() after optimizer step i sets the
  // LRs for step i + 1.
  WarmupCosineLR(torch::optim::Optimizer& optimizer, WarmupCosineOptions options);

  const std::vector<double>& peak_lrs() const { return peak_lrs_; }
  // The LRs optimizer step `step` uses, one per parameter group.
  std::vector<double> lrs_at(std::int64_t step) const;

 protected:
  std::vector<double> get_lrs() override;

 private:
  WarmupCosineOptions options_;
  std::vector<double> peak_lrs_;
};

}  // namespace tipbench::suites
