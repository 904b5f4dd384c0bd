// Tip: deterministic algorithms have a price; pay it when reproducibility matters, not by
// default. torch.use_deterministic_algorithms(True) picks deterministic kernels (on CUDA:
// deterministic cuDNN convolutions and cuBLAS with a fixed workspace, no atomics-based
// reductions) and fills new empty tensors, and it goes with cudnn.benchmark off. Baseline:
// PyTorch's default (nondeterministic kernels allowed, benchmark off). Treatment: deterministic
// algorithms + cuDNN deterministic + benchmark off, and on CUDA CUBLAS_WORKSPACE_CONFIG=:4096:8,
// which cuBLAS reads once per process: on CUDA every trial runs in a fresh process. A test
// checks that two deterministic CPU runs give bit-identical parameters.
#include "determinism/determinism.h"
#include "common/recipe.h"
#include "common/scoped_workload.h"
#include "common/training.h"
#include "tipbench/suite/registry.h"

namespace tipbench::suites {

namespace {

bool deterministic_arm(const ArmSpec& arm) { return level(arm.levels, "deterministic") == "on"; }

}  // namespace

class DeterminismSuite final : public Suite {
 public:
  std::string name() const override { return "determinism"; }
  std::string description() const override {
    return "PyTorch's default kernels vs deterministic algorithms (+ cuDNN deterministic, benchmark off, "
           "CUBLAS_WORKSPACE_CONFIG on CUDA)";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"002", "deterministic algorithms: reproducible but slower"};
  }
  Isolation isolation(const SuiteContext& context) const override {
    return context.device.is_cuda() ? Isolation::fresh_process : Isolation::in_process;
  }
  std::map<std::string, std::string> trial_environment(const SuiteContext& context, const CaseSpec&,
                                                       const ArmSpec& arm) const override {
    if (!context.device.is_cuda() || !deterministic_arm(arm)) return {};
    return {{kCublasWorkspaceVariable, kCublasWorkspaceDeterministic}};
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    // A CNN and a ViT on CUDA: convolutions and matmuls have different deterministic kernels.
    return training_cases(context,
                          {{"default", {{"deterministic", "off"}}}, {"deterministic", {{"deterministic", "on"}}}}, {},
                          {.models = {.vit = true}});
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    const Determinism before = current_determinism();
    if (deterministic_arm(arm)) apply(Determinism::deterministic());
    auto restore = [before] { apply(before); };
    try {
      return with_restore(make_training_workload(context, training_spec(c)), restore, determinism_info());
    } catch (...) {
      restore();
      throw;
    }
  }
};

TIPBENCH_REGISTER_SUITE(DeterminismSuite);
// Reproducibility at a price: a user asks for it, so it joins a recipe only when it is not slower
// (advise takes winners). cuBLAS reads its workspace setting once per process: fresh processes.
TIPBENCH_REGISTER_INGREDIENT(
    determinism,
    {.tip = "determinism",
     .arm = "deterministic",
     .changes = {kChangesReproducibility},
     .excludes = {{"cudnn_benchmark", "deterministic mode turns cuDNN's autotuner off (cudnn.benchmark = False)"}},
     .python = {.setup = {"os.environ.setdefault(\"CUBLAS_WORKSPACE_CONFIG\", \":4096:8\")",
                          "torch.use_deterministic_algorithms(True)", "torch.backends.cudnn.deterministic = True",
                          "torch.backends.cudnn.benchmark = False"}},
     .environment = [](const SuiteContext& context) -> std::map<std::string, std::string> {
       if (!context.device.is_cuda()) return {};
       return {{kCublasWorkspaceVariable, kCublasWorkspaceDeterministic}};
     },
     .apply = [](const SuiteContext&, TrainingSpec&) -> Restore {
       const Determinism before = current_determinism();
       apply(Determinism::deterministic());
       return [before] { apply(before); };
     }});

}  // namespace tipbench::suites
