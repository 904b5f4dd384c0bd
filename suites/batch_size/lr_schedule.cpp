#include "lr_schedule.h"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace tipbench::suites {

double linear_scaled_lr(double base_lr, std::int64_t batch, std::int64_t reference_batch) {
  if (batch < 1 || reference_batch < 1) throw std::invalid_argument("batch sizes must be at least 1");
  return base_lr * static_cast<double>(batch) / static_cast<double>(reference_batch);
}

double warmup_cosine_factor(std::int64_t step, const WarmupCosineOptions& o) {
  if (step < 0) throw std::invalid_argument("step must be >= 0, got " + std::to_string(step));
  if (o.total_steps < 1 || o.warmup_steps < 0 || o.warmup_steps > o.total_steps) {
    throw std::invalid_argument("need 0 <= warmup_steps <= total_steps and total_steps >= 1, got warmup " +
                                std::to_string(o.warmup_steps) + ", total " + std::to_string(o.total_steps));
  }
  if (!(o.min_factor >= 0.0 && o.min_factor <= 1.0)) throw std::invalid_argument("min_factor must be in [0, 1]");
  if (step < o.warmup_steps) return static_cast<double>(step + 1) / static_cast<double>(o.warmup_steps);
  if (step >= o.total_steps) return o.min_factor;
  const double t = static_cast<double>(step - o.warmup_steps) / static_cast<double>(o.total_steps - o.warmup_steps);
  return o.min_factor + (1.0 - o.min_factor) * 0.5 * (1.0 + std::cos(std::numbers::pi * t));
}

WarmupCosineLR::WarmupCosineLR(torch::optim::Optimizer& optimizer, WarmupCosineOptions options)
    : LRScheduler(optimizer), options_(options) {
  warmup_cosine_factor(0, options_);  // validates the options
  peak_lrs_ = get_current_lrs();
  const auto first = lrs_at(0);
  auto& groups = optimizer.param_groups();
  for (std::size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(first[i]);
}

std::vector<double> WarmupCosineLR::lrs_at(std::int64_t step) const {
  const double factor = warmup_cosine_factor(step, options_);
  std::vector<double> out;
  out.reserve(peak_lrs_.size());
  for (double peak : peak_lrs_) out.push_back(peak * factor);
  return out;
}

// LRScheduler::step() applies these, then counts the step: after optimizer step i (step_count_
// == i) the next step is i + 1.
std::vector<double> WarmupCosineLR::get_lrs() { return lrs_at(static_cast<std::int64_t>(step_count_) + 1); }

}  // namespace tipbench::suites
