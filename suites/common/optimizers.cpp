#include "optimizers.h"

#include <torch/torch.h>

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>

namespace tipbench::suites {

namespace {

using torch::Tensor;

// The parameters that have a gradient this step, with their positions in the optimizer's list
// (where their state lives).
struct StepBatch {
  std::vector<std::size_t> index;
  std::vector<Tensor> params, grads;
};

// A torch::optim::Optimizer (so zero_grad, the loss scaler and get_lr work as for the loop
// optimizers) whose step hands all parameters with a gradient to one multi-tensor update.
class MultiTensorOptimizer : public torch::optim::Optimizer {
 public:
  MultiTensorOptimizer(std::vector<Tensor> params, std::unique_ptr<torch::optim::OptimizerOptions> defaults)
      : Optimizer({torch::optim::OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

  Tensor step(LossClosure closure = nullptr) override {
    Tensor loss;
    if (closure) {
      torch::AutoGradMode enable_grad(true);
      loss = closure();
    }
    torch::NoGradGuard no_grad;
    // One multi-tensor update per (device, dtype), as torch.optim's _multi_tensor_sgd/_adamw group
    // them (Optimizer._group_tensors_by_device_and_dtype): ATen's foreach fast path takes only
    // lists of one device and dtype, and a mixed list falls back to a loop per tensor.
    std::map<std::pair<std::string, c10::ScalarType>, StepBatch> groups;
    const auto& params = param_groups_.at(0).params();
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (!params[i].grad().defined()) continue;
      auto& batch = groups[{params[i].device().str(), params[i].scalar_type()}];
      batch.index.push_back(i);
      batch.params.push_back(params[i]);
      batch.grads.push_back(params[i].grad());
    }
    for (const auto& [key, batch] : groups) update(batch);
    return loss;
  }

 protected:
  std::size_t size() const { return param_groups_.at(0).params().size(); }
  virtual void update(const StepBatch& batch) = 0;
};

template <typename F>
std::vector<Tensor> pick(const std::vector<Tensor>& state, const StepBatch& batch, F&& make_if_missing) {
  std::vector<Tensor> out;
  out.reserve(batch.index.size());
  for (std::size_t k = 0; k < batch.index.size(); ++k) {
    const Tensor& s = state[batch.index[k]];
    out.push_back(s.defined() ? s : make_if_missing(k));
  }
  return out;
}

// SGD with momentum (dampening 0, no Nesterov, no weight decay), as torch::optim::SGD: the first
// step's buffer is a copy of the gradient, later ones buf = momentum * buf + grad; p -= lr * buf.
class ForeachSgd final : public MultiTensorOptimizer {
 public:
  ForeachSgd(std::vector<Tensor> params, SgdSettings s, bool fused)
      : MultiTensorOptimizer(std::move(params), std::make_unique<torch::optim::SGDOptions>(s.lr)),
        settings_(s),
        fused_(fused),
        momentum_(size()) {}

 private:
  void update(const StepBatch& batch) override {
    StepBatch first, later;
    for (std::size_t k = 0; k < batch.index.size(); ++k) {
      StepBatch& part = momentum_[batch.index[k]].defined() ? later : first;
      part.index.push_back(batch.index[k]);
      part.params.push_back(batch.params[k]);
      part.grads.push_back(batch.grads[k]);
    }
    if (!first.params.empty()) update_part(first, true);
    if (!later.params.empty()) update_part(later, false);
  }

  void update_part(const StepBatch& part, bool first_step) {
    if (fused_) {
      auto bufs = pick(momentum_, part, [&](std::size_t k) { return torch::empty_like(part.grads[k]); });
      at::_fused_sgd_(part.params, part.grads, bufs, /*weight_decay=*/0, settings_.momentum, settings_.lr,
                      /*dampening=*/0, /*nesterov=*/false, /*maximize=*/false, first_step);
      remember(part, bufs);
      return;
    }
    std::vector<Tensor> bufs;
    if (first_step) {
      bufs = at::_foreach_add(part.grads, 0);  // a copy of every gradient in one call
    } else {
      bufs = pick(momentum_, part, [](std::size_t) { return Tensor(); });
      at::_foreach_mul_(bufs, settings_.momentum);
      at::_foreach_add_(bufs, part.grads);
    }
    at::_foreach_add_(part.params, bufs, -settings_.lr);
    remember(part, bufs);
  }

  void remember(const StepBatch& part, const std::vector<Tensor>& bufs) {
    for (std::size_t k = 0; k < part.index.size(); ++k) momentum_[part.index[k]] = bufs[k];
  }

  SgdSettings settings_;
  bool fused_;
  std::vector<Tensor> momentum_;
};

// AdamW as torch::optim::AdamW (no amsgrad): p *= 1 - lr * wd; m = b1 m + (1 - b1) g;
// v = b2 v + (1 - b2) g^2; p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
class ForeachAdamW final : public MultiTensorOptimizer {
 public:
  ForeachAdamW(std::vector<Tensor> params, AdamWSettings s, bool fused)
      : MultiTensorOptimizer(std::move(params), std::make_unique<torch::optim::AdamWOptions>(s.lr)),
        settings_(s),
        fused_(fused),
        exp_avg_(size()),
        exp_avg_sq_(size()),
        step_tensor_(size()),
        steps_(size(), 0) {}

 private:
  void update(const StepBatch& batch) override {
    auto zeros = [&](std::size_t k) { return torch::zeros_like(batch.params[k]); };
    auto m = pick(exp_avg_, batch, zeros);
    auto v = pick(exp_avg_sq_, batch, zeros);
    for (std::size_t k = 0; k < batch.index.size(); ++k) {
      exp_avg_[batch.index[k]] = m[k];
      exp_avg_sq_[batch.index[k]] = v[k];
      ++steps_[batch.index[k]];
    }
    if (fused_) {
      // The fused kernel reads the step count from a float32 scalar per parameter on the device.
      auto t = pick(step_tensor_, batch,
                    [&](std::size_t k) { return torch::zeros({}, batch.params[k].options().dtype(torch::kFloat32)); });
      at::_foreach_add_(t, 1);
      for (std::size_t k = 0; k < batch.index.size(); ++k) step_tensor_[batch.index[k]] = t[k];
      at::_fused_adamw_(batch.params, batch.grads, m, v, /*max_exp_avg_sqs=*/{}, t, settings_.lr, settings_.beta1,
                        settings_.beta2, settings_.weight_decay, settings_.eps, /*amsgrad=*/false, /*maximize=*/false);
      return;
    }
    const auto& s = settings_;
    std::vector<at::Scalar> bias2_sqrt, neg_step_size;
    for (std::size_t k = 0; k < batch.index.size(); ++k) {
      const auto t = static_cast<double>(steps_[batch.index[k]]);
      bias2_sqrt.emplace_back(std::sqrt(1 - std::pow(s.beta2, t)));
      neg_step_size.emplace_back(-s.lr / (1 - std::pow(s.beta1, t)));
    }
    at::_foreach_mul_(batch.params, 1 - s.lr * s.weight_decay);
    at::_foreach_mul_(m, s.beta1);
    at::_foreach_add_(m, batch.grads, 1 - s.beta1);
    at::_foreach_mul_(v, s.beta2);
    at::_foreach_addcmul_(v, batch.grads, batch.grads, 1 - s.beta2);
    auto denom = at::_foreach_sqrt(v);
    at::_foreach_div_(denom, bias2_sqrt);
    at::_foreach_add_(denom, s.eps);
    at::_foreach_addcdiv_(batch.params, m, denom, neg_step_size);
  }

  AdamWSettings settings_;
  bool fused_;
  std::vector<Tensor> exp_avg_, exp_avg_sq_, step_tensor_;
  std::vector<std::int64_t> steps_;
};

}  // namespace

OptimizerImpl pytorch_default_impl(c10::DeviceType device) {
  switch (device) {
    case c10::DeviceType::CUDA:
    case c10::DeviceType::XPU:
    case c10::DeviceType::MTIA:
    case c10::DeviceType::PrivateUse1: return OptimizerImpl::foreach;
    default: return OptimizerImpl::loop;
  }
}

const char* optimizer_kind_name(OptimizerKind kind) { return kind == OptimizerKind::sgd ? "sgd" : "adamw"; }

const char* optimizer_impl_name(OptimizerImpl impl) {
  switch (impl) {
    case OptimizerImpl::loop: return "loop";
    case OptimizerImpl::foreach: return "foreach";
    case OptimizerImpl::fused: return "fused";
  }
  return "?";
}

OptimizerKind parse_optimizer_kind(const std::string& name) {
  for (auto kind : {OptimizerKind::sgd, OptimizerKind::adamw}) {
    if (name == optimizer_kind_name(kind)) return kind;
  }
  throw std::invalid_argument("unknown optimizer '" + name + "' (sgd, adamw)");
}

OptimizerImpl parse_optimizer_impl(const std::string& name) {
  for (auto impl : {OptimizerImpl::loop, OptimizerImpl::foreach, OptimizerImpl::fused}) {
    if (name == optimizer_impl_name(impl)) return impl;
  }
  throw std::invalid_argument("unknown optimizer implementation '" + name + "' (loop, foreach, fused)");
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(OptimizerChoice choice, std::vector<torch::Tensor> params) {
  const bool fused = choice.impl == OptimizerImpl::fused;
  if (choice.kind == OptimizerKind::sgd) {
    const SgdSettings s;
    if (choice.impl == OptimizerImpl::loop) {
      return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(s.lr).momentum(s.momentum));
    }
    return std::make_unique<ForeachSgd>(std::move(params), s, fused);
  }
  const AdamWSettings s;
  if (choice.impl == OptimizerImpl::loop) {
    return std::make_unique<torch::optim::AdamW>(
        params, torch::optim::AdamWOptions(s.lr).betas({s.beta1, s.beta2}).eps(s.eps).weight_decay(s.weight_decay));
  }
  return std::make_unique<ForeachAdamW>(std::move(params), s, fused);
}

std::unique_ptr<torch::optim::Optimizer> make_default_sgd(std::vector<torch::Tensor> params) {
  const OptimizerImpl impl =
      params.empty() ? OptimizerImpl::loop : pytorch_default_impl(params.front().device().type());
  return make_optimizer({OptimizerKind::sgd, impl}, std::move(params));
}

nlohmann::json default_sgd_info(const c10::Device& device) {
  return {{"optimizer", optimizer_kind_name(OptimizerKind::sgd)},
          {"optimizer_impl", optimizer_impl_name(pytorch_default_impl(device.type()))}};
}

std::optional<std::string> graph_capture_unsafe_reason(OptimizerChoice choice) {
  if (choice.kind != OptimizerKind::adamw || choice.impl == OptimizerImpl::fused) return std::nullopt;
  return fmt::format(
      "use the {} AdamW step: its bias correction comes from a step count on the host, which the graph "
      "would freeze at its capture value (torch.optim.AdamW needs capturable=True, a step count on the "
      "device, as the fused AdamW keeps it)",
      optimizer_impl_name(choice.impl));
}

std::optional<std::string> optimizer_unsupported_reason(const c10::Device& device, OptimizerChoice choice) {
  if (choice.impl != OptimizerImpl::fused) return std::nullopt;
  static std::mutex mutex;
  static std::map<std::pair<c10::DeviceType, OptimizerKind>, std::optional<std::string>> known;
  std::lock_guard lock(mutex);
  const auto key = std::make_pair(device.type(), choice.kind);
  if (auto it = known.find(key); it != known.end()) return it->second;
  std::optional<std::string> reason;
  try {
    auto p = torch::ones({4}, torch::TensorOptions().device(device));
    p.mutable_grad() = torch::ones_like(p);
    make_optimizer(choice, {p})->step();
  } catch (const c10::Error& e) {
    reason = fmt::format("this LibTorch has no {} kernel for the fused {} step ({})",
                         c10::DeviceTypeName(device.type(), /*lower_case=*/true), optimizer_kind_name(choice.kind),
                         e.what_without_backtrace());
    if (auto cut = reason->find('\n'); cut != std::string::npos) reason->resize(cut);
  }
  return known[key] = reason;
}

}  // namespace tipbench::suites
