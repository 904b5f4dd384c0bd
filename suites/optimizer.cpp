// Tip: fuse the optimizer step. torch::optim updates one parameter at a time: a handful of
// kernels per tensor (161 tensors in ResNet-50), each reading and writing the parameter and its
// state. ATen's multi-tensor _foreach_* ops launch each operation once over all tensors, and the
// fused kernels (_fused_sgd_, _fused_adamw_) do the whole update in one pass over the memory;
// Apex's fused optimizers and a contiguous parameter buffer are the older forms of the same idea.
// Two scopes per optimizer (SGD with momentum, AdamW):
//   scope:step        the whole training step, throughput in samples/s
//   scope:optimizer   optimizer.step() alone over the model's parameters (gradients fixed), one
//                     "sample" per step: throughput is optimizer steps/s
// Baseline: the implementation Python's torch.optim picks on the device (pytorch_default_impl:
// foreach on CUDA, the per-parameter loop on a CPU); the other two are the treatments.
#include "common/optimizers.h"
#include "common/recipe.h"
#include "common/training.h"
#include "tipbench/suite/registry.h"

#include <torch/torch.h>

namespace tipbench::suites {

namespace {

// PyTorch's default for the device first (the baseline), then the others in the order loop,
// foreach, fused.
std::vector<ArmSpec> implementation_arms(const SuiteContext& context) {
  const OptimizerImpl by_default = pytorch_default_impl(context.device.type());
  std::vector<ArmSpec> arms = {{optimizer_impl_name(by_default), {{"impl", optimizer_impl_name(by_default)}}}};
  for (auto impl : {OptimizerImpl::loop, OptimizerImpl::foreach, OptimizerImpl::fused}) {
    if (impl != by_default) arms.push_back({optimizer_impl_name(impl), {{"impl", optimizer_impl_name(impl)}}});
  }
  return arms;
}

OptimizerChoice choice_of(const CaseSpec& c, const ArmSpec& arm) {
  return {parse_optimizer_kind(level(c.params, "optimizer")), parse_optimizer_impl(level(arm.levels, "impl"))};
}

// The parameter lists the optimizer alone is stepped over: the reference models of the tip on a
// GPU; on a CPU ResNet-50 (a ViT-B/16 AdamW step takes seconds there), small_cnn for --quick.
std::vector<std::string> parameter_models(const SuiteContext& context) {
  if (!context.models.empty()) return context.models;
  if (context.device.is_cuda()) {
    return context.quick ? std::vector<std::string>{"resnet18", "vit_ti_16"}
                         : std::vector<std::string>{"resnet50", "vit_b_16"};
  }
  return {context.quick ? "small_cnn" : "resnet50"};
}

// optimizer.step() over a model's parameters with fixed random gradients.
class OptimizerStepWorkload final : public Workload {
 public:
  OptimizerStepWorkload(const SuiteContext& context, const std::string& model, OptimizerChoice choice)
      : model_(model), choice_(choice) {
    auto net = models::make_model(model);
    net.ptr()->to(context.device);
    params_ = net.ptr()->parameters();
    for (auto& p : params_) {
      p.mutable_grad() = 1e-3 * torch::randn_like(p);
      elements_ += p.numel();
    }
    optimizer_ = make_optimizer(choice, params_);
  }
  void step() override { optimizer_->step(); }
  std::int64_t samples_per_step() const override { return 1; }
  nlohmann::json info() const override {
    return {{"model", model_},
            {"parameter_tensors", params_.size()},
            {"parameters", elements_},
            {"optimizer", optimizer_kind_name(choice_.kind)},
            {"optimizer_impl", optimizer_impl_name(choice_.impl)},
            {"throughput_unit", "optimizer steps/s"}};
  }

 private:
  std::string model_;
  OptimizerChoice choice_;
  std::vector<torch::Tensor> params_;
  std::int64_t elements_ = 0;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
};

}  // namespace

class Optimizer final : public Suite {
 public:
  std::string name() const override { return "optimizer"; }
  std::string description() const override {
    return "SGD-momentum and AdamW steps: the per-parameter loop vs multi-tensor foreach ops vs fused kernels, "
           "Python's default for the device first (foreach on CUDA, the loop on a CPU); the whole training step "
           "and the optimizer step alone";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"002", "a fused optimizer step: one kernel instead of hundreds of small ones"};
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    std::vector<CaseSpec> out;
    for (auto kind : {OptimizerKind::sgd, OptimizerKind::adamw}) {
      // --quick keeps the cheap scope, and the whole step of SGD alone (a training step per arm and
      // block is most of a quick budget): the step the recipe (`advise`) ranks the tip by.
      if (!context.quick || kind == OptimizerKind::sgd) {
        for (auto& c : training_cases(context, implementation_arms(context),
                                      {{"optimizer", {optimizer_kind_name(kind)}}, {"scope", {"step"}}})) {
          out.push_back(std::move(c));
        }
      }
      for (const auto& model : parameter_models(context)) {
        out.push_back({{{"model", model}, {"optimizer", optimizer_kind_name(kind)}, {"scope", "optimizer"}},
                       implementation_arms(context)});
      }
    }
    return out;
  }
  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                         const ArmSpec& arm) const override {
    return optimizer_unsupported_reason(context.device, choice_of(c, arm));
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    if (level(c.params, "scope") == "optimizer") {
      return std::make_unique<OptimizerStepWorkload>(context, level(c.params, "model"), choice_of(c, arm));
    }
    TrainingSpec spec = training_spec(c);
    spec.optimizer = choice_of(c, arm);
    return make_training_workload(context, spec);
  }
};

TIPBENCH_REGISTER_SUITE(Optimizer);

namespace {
// The recipe's optimizer is the training step's default, SGD with momentum, in another
// implementation; its single-tip case is the whole step of SGD.
Ingredient sgd_in(OptimizerImpl impl) {
  const std::string name = optimizer_impl_name(impl);
  return {.tip = "optimizer",
          .arm = name,
          .alone_case = {{"optimizer", "sgd"}, {"scope", "step"}},
          .python = {.optimizer_kwargs = {name + "=True"}},
          .apply = [impl](const SuiteContext&, TrainingSpec& spec) -> Restore {
            spec.optimizer = {OptimizerKind::sgd, impl};
            return {};
          }};
}
}  // namespace

TIPBENCH_REGISTER_INGREDIENT(optimizer_foreach, (sgd_in(OptimizerImpl::foreach)));
TIPBENCH_REGISTER_INGREDIENT(optimizer_fused, (sgd_in(OptimizerImpl::fused)));

}  // namespace tipbench::suites
