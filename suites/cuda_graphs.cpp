// Tip: CUDA graphs. A training step is thousands of kernel launches; when the kernels are short
// (a small batch, a fast GPU) the host's launch cost, not the GPU, sets the pace. Capturing the
// whole step (forward, backward, optimizer) once and replaying it launches everything with one
// call (cuda_graphs/captured_step.h: static inputs, side-stream warm-up, autocast cache off). Measured
// at the default batch and at batch 8 (launch-bound), in fp32 and under bf16 autocast.
// Baseline: eager (PyTorch's default). Treatment: the captured step replayed. CUDA only.
#include "common/autocast.h"
#include "common/recipe.h"
#include "cuda_graphs/captured_step.h"
#include "common/step_policy.h"
#include "tipbench/suite/registry.h"

namespace tipbench::suites {

namespace {

// The treatment: the eager step on the fixed inputs captured once (after the other policies'
// prepare) and replayed; what the other policies or the spec do that a capture cannot hold is
// refused (invalid_argument) before capturing.
class CaptureStep final : public Policy<CaptureStep> {
 public:
  std::string name() const override { return "cuda_graph"; }
  void prepare(StepState& state) override {
    // What the CUDA-graph variant of the step cannot capture: per-step host work, synchronisation.
    if (auto why = state.capture_unsafe_reason()) {
      throw std::invalid_argument("a training step captured as a CUDA graph cannot " + *why);
    }
    const StepInputs fixed = state.fixed_inputs();
    graph_.emplace(
        state.device(), [&state, fixed] { state.eager_step(fixed); }, 3,
        [&state] { state.optimizer().zero_grad(/*set_to_none=*/true); });
  }
  at::Tensor run_step(StepState&) override {
    graph_->replay();
    return {};  // the loss stays in the graph's static tensor
  }
  nlohmann::json info(const StepState&) const override { return {{"cuda_graph", true}}; }
  bool replays_a_graph() const override { return true; }

 private:
  std::optional<CapturedStep> graph_;
};

}  // namespace

class CudaGraphs final : public Suite {
 public:
  std::string name() const override { return "cuda_graphs"; }
  std::string description() const override {
    return "the training step launched kernel by kernel (eager, default) vs captured once as a CUDA graph and "
           "replayed (CUDA)";
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    return training_cases(context, {{"eager", {{"cuda_graph", "off"}}}, {"graph", {{"cuda_graph", "on"}}}},
                          {{"precision", {precision_name(Precision::fp32), precision_name(Precision::bf16)}}},
                          {.step_loop = true});
  }
  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                         const ArmSpec&) const override {
    if (auto why = cuda_graph_unavailable(context.device)) return why;
    return precision_unsupported_reason(context.device, parse_precision(level(c.params, "precision")));
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    TrainingSpec spec = training_spec(c);
    spec.precision = parse_precision(level(c.params, "precision"));
    if (level(arm.levels, "cuda_graph") == "on") spec.policies.push_back(std::make_shared<CaptureStep>());
    return make_training_workload(context, spec);
  }
};

TIPBENCH_REGISTER_SUITE(CudaGraphs);
// What a capture cannot hold is also refused at prepare (StepState::capture_unsafe_reason); the
// exclusions say it before anything is measured.
TIPBENCH_REGISTER_INGREDIENT(
    cuda_graphs,
    {.tip = "cuda_graphs",
     .arm = "graph",
     .alone_case = {{"precision", "fp32"}},
     .excludes = {{"amp:fp16",
                   "the fp16 loss scaler reads its inf/NaN check on the host every step, which a "
                   "captured graph cannot hold"}},
     .python = {.comments = {"capture the whole step as a CUDA graph: torch.cuda.graph with static input tensors "
                             "(PyTorch's CUDA Graphs docs, whole-network capture), or "
                             "torch.compile(mode=\"reduce-overhead\"); no line of this script does it"}},
     .apply = [](const SuiteContext&, TrainingSpec& spec) -> Restore {
       spec.policies.push_back(std::make_shared<CaptureStep>());
       return {};
     }});

}  // namespace tipbench::suites
