// Tip: evaluate without autograd. In eval() mode a forward pass under grad mode still records
// the autograd graph and keeps every activation its backward would need, until the output is
// dropped; torch.no_grad() records nothing, and torch.inference_mode() also skips the version
// counters and view tracking of the tensors it makes. Baseline: grad mode on (the mistake: an
// evaluation loop without either). Treatments: NoGradGuard, InferenceMode. One step is one
// forward pass of an eval() model over a staged batch. Two cases per model:
//   batch:<b>        the training batch: throughput and peak memory
//   batch:largest    CUDA only: each mode at the largest batch that fits (an out-of-memory
//                    search before the run), the batch an evaluation job would pick
#include "common/largest_batch.h"
#include "common/recipe.h"
#include "common/training.h"
#include "tipbench/models/model.h"
#include "tipbench/suite/registry.h"

#include <torch/torch.h>

#include <optional>

namespace tipbench::suites {

namespace {

enum class GradMode { grad, no_grad, inference_mode };

GradMode parse_grad_mode(const std::string& name) {
  if (name == "no_grad") return GradMode::no_grad;
  if (name == "inference_mode") return GradMode::inference_mode;
  return GradMode::grad;
}

class Evaluation final : public Workload {
 public:
  Evaluation(const SuiteContext& context, const std::string& model, std::int64_t batch, GradMode mode)
      : mode_(mode), batch_(batch), model_(models::make_model(model)) {
    model_.ptr()->to(context.device);
    model_.ptr()->eval();
    const auto size = models::resolved_image_size(model, {});
    images_ = torch::randn({batch, 3, size, size}, torch::TensorOptions().device(context.device));
  }

  void step() override {
    switch (mode_) {
      case GradMode::grad: {
        [[maybe_unused]] auto out = model_.forward(images_);  // the graph lives until `out` is dropped, as in a loop
        break;
      }
      case GradMode::no_grad: {
        torch::NoGradGuard guard;
        [[maybe_unused]] auto out = model_.forward(images_);
        break;
      }
      case GradMode::inference_mode: {
        c10::InferenceMode guard;
        [[maybe_unused]] auto out = model_.forward(images_);
        break;
      }
    }
  }
  // Touches nothing process-wide: the next trial may take it over (a largest-batch case never
  // does: largest_batch.h).
  bool keep_between_trials() const override { return true; }
  std::int64_t samples_per_step() const override { return batch_; }
  nlohmann::json info() const override { return {{"batch_size", batch_}, {"model_mode", "eval"}}; }

 private:
  GradMode mode_;
  std::int64_t batch_;
  torch::nn::AnyModule model_;
  torch::Tensor images_;
};

std::vector<ArmSpec> grad_mode_arms() {
  return {{"grad", {{"grad_mode", "grad"}}},
          {"no_grad", {{"grad_mode", "no_grad"}}},
          {"inference_mode", {{"grad_mode", "inference_mode"}}}};
}

}  // namespace

class Inference final : public SuiteWithLargestBatch {
 public:
  Inference() : SuiteWithLargestBatch(make_at) {}
  std::string name() const override { return "inference"; }
  std::string description() const override {
    return "an eval() forward pass under grad mode (the mistake) vs NoGradGuard vs InferenceMode: throughput, "
           "peak memory, and (CUDA) the largest batch each fits";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"002, 003", "no_grad / inference mode for evaluation: no graph, no saved activations"};
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    return training_cases(context, grad_mode_arms(), {}, {.largest_batch = true});
  }

 private:
  static std::unique_ptr<Workload> make_at(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                           std::int64_t batch) {
    return std::make_unique<Evaluation>(context, level(c.params, "model"), batch,
                                        parse_grad_mode(level(arm.levels, "grad_mode")));
  }
};

TIPBENCH_REGISTER_SUITE(Inference);
TIPBENCH_REGISTER_INGREDIENT(inference_mode,
                             {.tip = "inference",
                              .arm = "inference_mode",
                              .python = {.eval_context = "torch.inference_mode()"},
                              .outside_recipe = "it speeds up evaluation and serving, not a training step"});

}  // namespace tipbench::suites
