// Tip: activation checkpointing trades compute for memory. A checkpointed segment keeps only its
// input during the forward pass and recomputes its activations in backward, so the step costs
// about one extra forward of the segments and the activation memory shrinks; the memory it frees
// buys a larger batch. Segments (checkpointing/segments.h): per stage (a ResNet stage, a ViT block), or
// every k units. Two experiments per model:
//   batch:<b>        the same batch for every arm: step time overhead, peak memory and the
//                    activation bytes held between forward and backward (measured directly)
//   batch:largest    CUDA only: each arm trains at the largest batch that fits with its policy
//                    (an out-of-memory search before the run; every OOM is caught and recorded),
//                    so the throughput comparison answers "does the bigger batch pay for the
//                    recompute?". The CPU has no out-of-memory error to search on.
// Baseline: no checkpointing (PyTorch's default).
#include "checkpointing/checkpoint.h"
#include "common/device_memory.h"
#include "common/largest_batch.h"
#include "checkpointing/segments.h"
#include "common/training.h"
#include "tipbench/models/model.h"
#include "tipbench/suite/registry.h"
#include "common/optimizers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <map>

namespace tipbench::suites {

namespace {

class CheckpointedTraining final : public Workload {
 public:
  CheckpointedTraining(const SuiteContext& context, const std::string& model, std::int64_t batch,
                       CheckpointPolicy policy)
      : model_name_(model),
        batch_(batch),
        policy_(policy),
        device_(context.device),
        image_size_(models::resolved_image_size(model, {})),
        net_(models::make_model(model), policy) {
    net_.module().to(device_);
    net_.module().train();
    parameters_ = models::count_parameters(net_.module());
    optimizer_ = make_default_sgd(net_.module().parameters());
    const auto options = torch::TensorOptions().device(device_);
    images_ = torch::randn({batch, 3, image_size_, image_size_}, options);
    labels_ = torch::randint(models::resolved_num_classes(model, {}), {batch}, options.dtype(torch::kLong));
  }

  void step() override {
    optimizer_->zero_grad();
    loss().backward();
    optimizer_->step();
  }

  // One more step, untimed, that reads the bytes held between forward and backward: what the
  // autograd graph keeps for backward (gradients are unset at that point).
  void begin_measurement() override {
    optimizer_->zero_grad();
    const std::int64_t before = bytes_in_use(device_);
    auto l = loss();
    saved_activation_bytes_ = static_cast<double>(bytes_in_use(device_) - before);
    l.backward();
    optimizer_->step();
  }

  // Touches nothing process-wide: the next trial may take it over (a largest-batch case never
  // does: largest_batch.h).
  bool keep_between_trials() const override { return true; }
  std::int64_t samples_per_step() const override { return batch_; }

  nlohmann::json info() const override {
    nlohmann::json out = {{"model", model_name_},         {"parameters", parameters_},
                          {"batch_size", batch_},         {"image_size", image_size_},
                          {"checkpoint", policy_.name()}, {"units_per_segment", net_.units_per_segment()}};
    out.update(default_sgd_info(device_));
    return out;
  }

  std::map<std::string, double> metrics() const override {
    return {{"saved_activation_bytes", saved_activation_bytes_}};
  }

 private:
  torch::Tensor loss() { return torch::nn::functional::cross_entropy(net_.forward(images_), labels_); }

  std::string model_name_;
  std::int64_t batch_;
  CheckpointPolicy policy_;
  c10::Device device_;
  std::int64_t image_size_;
  SegmentedModel net_;
  std::int64_t parameters_ = 0;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;  // make_default_sgd: Python's default step
  torch::Tensor images_, labels_;
  double saved_activation_bytes_ = 0;
};

// --quick leaves out every_2: per_stage already shows the trade.
std::vector<ArmSpec> policy_arms(const SuiteContext& context) {
  std::vector<ArmSpec> arms;
  for (const char* p : {"off", "per_stage", "every_2"}) {
    if (context.quick && std::string(p) == "every_2") continue;
    arms.push_back({p, {{"checkpoint", p}}});
  }
  return arms;
}

std::string mib(double bytes) { return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0)); }

}  // namespace

class Checkpointing final : public SuiteWithLargestBatch {
 public:
  Checkpointing() : SuiteWithLargestBatch(make_at) {}
  std::string name() const override { return "checkpointing"; }
  std::string description() const override {
    return "activation checkpointing off (default) vs per stage / every 2 units: step overhead, activation "
           "memory, and the largest batch that fits";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"002-004", "activation memory O(N) to O(sqrt N), \"not significantly slower\" (002)"};
  }
  // Each policy: the memory it saves against the time it costs.
  ChartKind chart() const override { return ChartKind::memory_vs_time; }

  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    return training_cases(context, policy_arms(context), {}, {.largest_batch = true});
  }

  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                         const ArmSpec& arm) const override {
    if (auto why = model_code_fixed(level(c.params, "model"), "splits the model into checkpointed segments"))
      return why;
    return SuiteWithLargestBatch::skip_reason(context, c, arm);
  }

  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings&) const override {
    std::vector<std::string> out;
    for (const auto& c : result.cases) {
      const ArmResult& off = c.arms.front();
      std::vector<std::string> parts;
      for (const auto& arm : c.arms) {
        if (arm.status != ArmStatus::ok || !arm.metrics.count("saved_activation_bytes")) continue;
        const double saved = arm.metrics.at("saved_activation_bytes").median;
        std::string part = fmt::format("{} {}", arm.arm, mib(saved));
        if (&arm != &off && off.status == ArmStatus::ok && off.metrics.count("saved_activation_bytes")) {
          const double base = off.metrics.at("saved_activation_bytes").median;
          if (base > 0) part += fmt::format(" (x{:.2f})", saved / base);
        }
        if (auto found = largest_batch_text(arm)) part += fmt::format(" at largest batch {}", *found);
        parts.push_back(part);
      }
      if (!parts.empty()) {
        out.push_back(fmt::format("{}: activations held for backward (median): {}", c.name, fmt::join(parts, ", ")));
      }
    }
    return out;
  }

 private:
  static std::unique_ptr<Workload> make_at(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                           std::int64_t batch) {
    return std::make_unique<CheckpointedTraining>(context, level(c.params, "model"), batch,
                                                  CheckpointPolicy::parse(level(arm.levels, "checkpoint")));
  }
};

TIPBENCH_REGISTER_SUITE(Checkpointing);

}  // namespace tipbench::suites
