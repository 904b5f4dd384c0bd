// Tip (PyTorch Tuning Guide, source 003): pre-allocate memory when input sizes vary. When a short
// batch is followed by longer ones, the caching allocator cannot serve the larger activations
// from the blocks it cached and asks the device for more (near the memory limit it frees its
// whole cache and retries); the guide's remedy is one forward and backward at the largest size
// before training, no optimizer step, gradients zeroed, so later steps are cut from blocks that
// already exist. The experiment trains a CNN on inputs that grow from half the model's image size
// to its size every 8 steps, as a length-bucketed sampler feeds a model variable-length inputs
// (InputShapes::ascending: warm-up at the smallest size). The harness empties the allocator's
// cache before every trial, so each starts cold, like a new training job. Baseline: none (PyTorch's
// default). Treatment: max_shape, the pre-allocation step (BatchNorm's running statistics put
// back, so both arms train the same model). CUDA records device_mallocs: the allocator's device
// allocations while timed. CNNs only: a ViT's position embedding fixes its input size.
#include "common/input_shapes.h"
#include "common/training.h"
#include "preallocate/preallocate_step.h"
#include "tipbench/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tipbench::suites {

namespace {

// The treatment: preallocate_step at the largest input (a micro-batch of it, if the step is
// split) before training.
class PreallocateMaxShape final : public Policy<PreallocateMaxShape> {
 public:
  std::string name() const override { return "preallocate max_shape"; }
  void prepare(StepState& state) override {
    const std::int64_t micro = state.spec().batch_size / state.micro_batches(), side = state.image_size();
    preallocate_step(state.model(), state.input_of(side, side).narrow(0, 0, micro), state.labels().narrow(0, 0, micro),
                     state.spec().precision);
  }
  nlohmann::json info(const StepState&) const override { return {{"preallocated", true}}; }
};

}  // namespace

class Preallocate final : public Suite {
 public:
  std::string name() const override { return "preallocate"; }
  std::string description() const override {
    return "input sizes that grow step by step from a cold allocator: no pre-allocation (default) vs one "
           "forward and backward at the largest size first; throughput, reserved memory, device allocations";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"003", "pre-allocate for the largest shape: no allocator growth mid-run"};
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    return training_cases(context, {{"none", {{"preallocate", "none"}}}, {"max_shape", {{"preallocate", "max_shape"}}}},
                          {{"shapes", {input_shapes_name(InputShapes::ascending)}}});
  }
  std::optional<std::string> skip_reason(const SuiteContext&, const CaseSpec& c, const ArmSpec&) const override {
    const auto& model = level(c.params, "model");
    if (model_family(model) == "vit") {
      return model +
             " is a ViT: its position embedding fixes its input size, so its inputs cannot grow; the "
             "tip is measured on a CNN";
    }
    return std::nullopt;
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    TrainingSpec spec = training_spec(c);
    spec.policies.push_back(std::make_shared<InputShapesPolicy>(InputShapes::ascending));
    if (level(arm.levels, "preallocate") == "max_shape")
      spec.policies.push_back(std::make_shared<PreallocateMaxShape>());
    return make_training_workload(context, spec);
  }
  // CUDA: how often each arm's allocator asked the device for memory while timed.
  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings&) const override {
    std::vector<std::string> out;
    for (const auto& c : result.cases) {
      std::vector<std::string> parts;
      for (const auto& arm : c.arms) {
        if (arm.status != ArmStatus::ok) continue;
        if (auto it = arm.metrics.find("device_mallocs"); it != arm.metrics.end()) {
          parts.push_back(fmt::format("{} {:.0f}", arm.arm, it->second.median));
        }
      }
      if (!parts.empty()) {
        out.push_back(
            fmt::format("{}: device allocations while timed (median per trial): {}", c.name, fmt::join(parts, ", ")));
      }
    }
    return out;
  }
};

TIPBENCH_REGISTER_SUITE(Preallocate);

}  // namespace tipbench::suites
