#include "loss_scaler.h"

#include <map>
#include <vector>

namespace tipbench::suites {

LossScaler::LossScaler(const c10::Device& device, LossScalerOptions options)
    : options_(options),
      scale_(torch::full({}, options.init_scale, torch::TensorOptions().device(device).dtype(torch::kFloat))),
      growth_tracker_(torch::zeros({}, torch::TensorOptions().device(device).dtype(torch::kInt))),
      found_inf_(torch::zeros({}, torch::TensorOptions().device(device).dtype(torch::kFloat))) {}

torch::Tensor LossScaler::scale(const torch::Tensor& loss) const { return loss * scale_.to(loss.scalar_type()); }

void LossScaler::unscale(torch::optim::Optimizer& optimizer) {
  // The reciprocal in double, as GradScaler takes it, so 1/scale is exact for a power of two.
  const auto inv_scale = scale_.to(torch::kDouble).reciprocal().to(torch::kFloat);
  found_inf_.zero_();
  // The ATen kernel takes gradients of one dtype per call.
  std::map<c10::ScalarType, std::vector<torch::Tensor>> grads_by_dtype;
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) {
      if (p.grad().defined()) grads_by_dtype[p.grad().scalar_type()].push_back(p.grad());
    }
  }
  for (auto& [dtype, grads] : grads_by_dtype) {
    at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inv_scale);
  }
  unscaled_ = true;
}

bool LossScaler::step(torch::optim::Optimizer& optimizer) {
  if (!unscaled_) unscale(optimizer);
  const bool finite = found_inf_.item<float>() == 0.0f;
  if (finite) {
    optimizer.step();
  } else {
    ++skipped_steps_;
  }
  return finite;
}

void LossScaler::update() {
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, options_.growth_factor, options_.backoff_factor,
                         options_.growth_interval);
  unscaled_ = false;
}

double LossScaler::current_scale() const { return scale_.item<double>(); }

}  // namespace tipbench::suites
