// Tip: CUDA graphs. A training step is thousands of kernel launches; when the kernels are short
// (a small batch, a fast GPU) the host's launch cost, not the GPU, sets the pace. Capturing the
// whole step (forward, backward, optimizer) once and replaying it launches everything with one
// call (common/captured_step.h: static inputs, side-stream warm-up, autocast cache off). Measured
// at the default batch and at batch 8 (launch-bound), in fp32 and under bf16 autocast.
// Baseline: eager (PyTorch's default). Treatment: the captured step replayed. CUDA only.
#include "common/autocast.h"
#include "common/captured_step.h"
#include "common/training.h"
#include "tipbench/registry.h"

namespace tipbench::suites {

class CudaGraphs final : public Suite {
 public:
  std::string name() const override { return "cuda_graphs"; }
  std::string description() const override {
    return "the training step launched kernel by kernel (eager, default) vs captured once as a CUDA graph and "
           "replayed (CUDA)";
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    std::vector<CaseSpec> out;
    for (const auto& model : models_to_run(context)) {
      for (auto params : step_loop_params(context, model)) {
        for (Precision p : {Precision::fp32, Precision::bf16}) {
          Levels with_precision = params;
          with_precision.emplace_back("precision", precision_name(p));
          out.push_back({with_precision, {{"eager", {{"cuda_graph", "off"}}}, {"graph", {{"cuda_graph", "on"}}}}});
        }
      }
    }
    return out;
  }
  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                          const ArmSpec&) const override {
    if (auto why = cuda_graph_unavailable(context.device)) return why;
    return precision_unsupported_reason(context.device, parse_precision(level(c.params, "precision")));
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c,
                                    const ArmSpec& arm) const override {
    TrainingSpec spec = training_spec(c);
    spec.precision = parse_precision(level(c.params, "precision"));
    spec.cuda_graph = level(arm.levels, "cuda_graph") == "on";
    return make_training_workload(context, spec);
  }
};

TIPBENCH_REGISTER_SUITE(CudaGraphs);

}  // namespace tipbench::suites
