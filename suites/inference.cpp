// Tip: evaluate without autograd. In eval() mode a forward pass under grad mode still records
// the autograd graph and keeps every activation its backward would need, until the output is
// dropped; torch.no_grad() records nothing, and torch.inference_mode() also skips the version
// counters and view tracking of the tensors it makes. Baseline: grad mode on (the mistake: an
// evaluation loop without either). Treatments: NoGradGuard, InferenceMode. One step is one
// forward pass of an eval() model over a staged batch. Two cases per model:
//   batch:<b>        the training batch: throughput and peak memory
//   batch:largest    CUDA only: each mode at the largest batch that fits (an out-of-memory
//                    search before the run), the batch an evaluation job would pick
#include "common/device_memory.h"
#include "common/training.h"
#include "tipbench/models/model.h"
#include "tipbench/registry.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <optional>

namespace tipbench::suites {

namespace {

constexpr const char* kLargest = "largest";

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
  std::int64_t samples_per_step() const override { return batch_; }
  nlohmann::json info() const override {
    nlohmann::json j = {{"batch_size", batch_}, {"model_mode", "eval"}};
    if (search_) j["largest_batch_search"] = *search_;
    return j;
  }
  void set_search(const BatchSearch& search) { search_ = search; }

 private:
  GradMode mode_;
  std::int64_t batch_;
  torch::nn::AnyModule model_;
  torch::Tensor images_;
  std::optional<BatchSearch> search_;
};

std::vector<ArmSpec> grad_mode_arms() {
  return {{"grad", {{"grad_mode", "grad"}}},
          {"no_grad", {{"grad_mode", "no_grad"}}},
          {"inference_mode", {{"grad_mode", "inference_mode"}}}};
}

}  // namespace

class Inference final : public Suite {
 public:
  std::string name() const override { return "inference"; }
  std::string description() const override {
    return "an eval() forward pass under grad mode (the mistake) vs NoGradGuard vs InferenceMode: throughput, "
           "peak memory, and (CUDA) the largest batch each fits";
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    std::vector<CaseSpec> out;
    for (const auto& model : models_to_run(context)) {
      out.push_back({training_params(context, model), grad_mode_arms()});
      out.push_back({{{"model", model}, {"batch", kLargest}}, grad_mode_arms()});
    }
    return out;
  }
  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                         const ArmSpec&) const override {
    if (level(c.params, "batch") == kLargest) return largest_batch_search_unavailable(context.device);
    return std::nullopt;
  }
  // CUDA: every mode's largest batch is searched before any trial, so no trial's memory peak
  // includes the search's failed attempts.
  void prepare_run(const SuiteContext& context) const override {
    if (!context.device.is_cuda()) return;
    for (const auto& c : cases(context)) {
      if (level(c.params, "batch") != kLargest) continue;
      for (const auto& arm : c.arms) largest_batch(context, c, arm);
    }
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c,
                                    const ArmSpec& arm) const override {
    const auto& model = level(c.params, "model");
    const GradMode mode = parse_grad_mode(level(arm.levels, "grad_mode"));
    if (level(c.params, "batch") != kLargest) {
      return std::make_unique<Evaluation>(context, model, std::stoll(level(c.params, "batch")), mode);
    }
    const BatchSearch search = largest_batch(context, c, arm);
    if (search.largest == 0) throw std::runtime_error(fmt::format("{} with {}: not even batch 1 fits", model, arm.name));
    auto workload = std::make_unique<Evaluation>(context, model, search.largest, mode);
    workload->set_search(search);
    return workload;
  }

 private:
  BatchSearch largest_batch(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm) const {
    const auto& model = level(c.params, "model");
    const GradMode mode = parse_grad_mode(level(arm.levels, "grad_mode"));
    auto make = [&](std::int64_t b) -> std::unique_ptr<Workload> {
      return std::make_unique<Evaluation>(context, model, b, mode);
    };
    SuiteContext defaults = context;
    defaults.batch_size = 0;
    return searches_.find(arm_name(name(), c, arm), context.device, make, batch_size_for(defaults, model));
  }

  mutable LargestBatchSearches searches_;
};

TIPBENCH_REGISTER_SUITE(Inference);

}  // namespace tipbench::suites
