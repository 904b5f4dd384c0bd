// Tip: torch.backends.cudnn.benchmark = true autotunes the convolution algorithm per input shape.
// It pays off when shapes are fixed; when they change every step, every new shape is autotuned.
// Baseline: benchmark off (the default). Treatment: on. The flag and cuDNN's algorithm cache are
// process-wide, so every trial runs in a fresh process.
#include "common/input_shapes.h"
#include "common/recipe.h"
#include "common/training.h"
#include "tipbench/registry.h"

#include <ATen/Context.h>

namespace tipbench::suites {

class CudnnBenchmark final : public Suite {
 public:
  std::string name() const override { return "cudnn_benchmark"; }
  std::string description() const override {
    return "cudnn.benchmark off (default) vs on, for fixed input shapes and for a new shape every step";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"000-004", "1.27-1.70x faster forward and backward (002)"};
  }
  Isolation isolation(const SuiteContext&) const override { return Isolation::fresh_process; }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    return training_cases(
        context, {{"off", {{"cudnn_benchmark", "off"}}}, {"on", {{"cudnn_benchmark", "on"}}}},
        {{"shapes", {input_shapes_name(InputShapes::fixed), input_shapes_name(InputShapes::varying)}}});
  }
  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                         const ArmSpec&) const override {
    if (!context.device.is_cuda()) {
      return "cudnn.benchmark tunes cuDNN convolutions on a CUDA device; this run is on " + context.device.str();
    }
    if (!at::globalContext().hasCuDNN()) return "this LibTorch build has no cuDNN";
    const auto& model = level(c.params, "model");
    if (model_family(model) == "vit") return model + " is not a CNN; cudnn.benchmark tunes convolutions";
    return std::nullopt;
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    at::globalContext().setBenchmarkCuDNN(level(arm.levels, "cudnn_benchmark") == "on");
    TrainingSpec spec = training_spec(c);
    if (level(c.params, "shapes") == "varying") {
      spec.policies.push_back(std::make_shared<InputShapesPolicy>(InputShapes::varying));
    }
    return make_training_workload(context, spec);
  }
};

TIPBENCH_REGISTER_SUITE(CudnnBenchmark);
// The autotuner's cache outlives any flag put back: a recipe holding it runs in fresh processes.
TIPBENCH_REGISTER_INGREDIENT(cudnn_benchmark, {.tip = "cudnn_benchmark",
                                               .arm = "on",
                                               .alone_case = {{"shapes", "fixed"}},
                                               .changes = {kChangesReproducibility},
                                               .python = {.setup = {"torch.backends.cudnn.benchmark = True"}},
                                               .sticky = true,
                                               .apply = [](const SuiteContext&, TrainingSpec&) -> Restore {
                                                 at::globalContext().setBenchmarkCuDNN(true);
                                                 return {};
                                               }});

}  // namespace tipbench::suites
