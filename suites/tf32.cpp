// Tip: TF32 Tensor Core math for fp32 on Ampere and later GPUs: matmuls and convolutions read
// fp32 tensors but multiply with a 10-bit mantissa, several times faster, accumulating in fp32.
// PyTorch's defaults are mixed: cuBLAS matmuls run IEEE fp32 ("highest") while cuDNN convolutions
// already allow TF32. Baseline: IEEE fp32 everywhere (matmul precision "highest", cuDNN TF32
// off). Treatment: TF32 everywhere (matmul precision "high", cuDNN TF32 on).
// Only the legacy setters are used: mixing them with 2.9's setFloat32Precision makes the
// getters throw (../shared/LIBTORCH.md). The knobs are process-wide: the workload puts them back.
#include "common/recipe.h"
#include "common/scoped_workload.h"
#include "common/training.h"
#include "tipbench/registry.h"

#include <ATen/Context.h>
#include <torch/version.h>

#include <fmt/format.h>

namespace tipbench::suites {

namespace {

std::string matmul_precision_name(at::Float32MatmulPrecision p) {
  switch (p) {
    case at::Float32MatmulPrecision::HIGHEST: return "highest";
    case at::Float32MatmulPrecision::HIGH: return "high";
    case at::Float32MatmulPrecision::MEDIUM: return "medium";
  }
  return "highest";
}

// Sets both knobs (TF32 on or IEEE fp32); returns what puts the process's values back.
Restore set_tf32(bool on) {
  auto& ctx = at::globalContext();
  const std::string matmul_before = matmul_precision_name(ctx.float32MatmulPrecision());
  const bool cudnn_before = ctx.allowTF32CuDNN();
  ctx.setFloat32MatmulPrecision(on ? "high" : "highest");
  ctx.setAllowTF32CuDNN(on);
  return [matmul_before, cudnn_before] {
    at::globalContext().setFloat32MatmulPrecision(matmul_before);
    at::globalContext().setAllowTF32CuDNN(cudnn_before);
  };
}

}  // namespace

class Tf32 final : public Suite {
 public:
  std::string name() const override { return "tf32"; }
  std::string description() const override {
    return "fp32 matmuls and convolutions in IEEE precision vs TF32 Tensor Core math (CUDA)";
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    // A CNN and a ViT: TF32 changes convolutions (cuDNN) and matmuls (cuBLAS) through two knobs.
    return training_cases(context, {{"ieee", {{"tf32", "off"}}}, {"tf32", {{"tf32", "on"}}}}, {},
                          {.models = {.vit = true}});
  }
  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec&, const ArmSpec&) const override {
    if (!context.device.is_cuda()) {
      return "TF32 is a Tensor Core format of NVIDIA GPUs (Ampere and later); this run is on " + context.device.str();
    }
    return std::nullopt;
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    auto& ctx = at::globalContext();
    const Restore restore = set_tf32(level(arm.levels, "tf32") == "on");
    // Read back, so the result shows what the library did with the request.
    nlohmann::json info = {
        {"tf32_api", fmt::format("legacy setters (setFloat32MatmulPrecision, setAllowTF32CuDNN) of LibTorch {}.{}",
                                 TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR)},
        {"matmul_precision", matmul_precision_name(ctx.float32MatmulPrecision())},
        {"cublas_tf32", ctx.allowTF32CuBLAS()},
        {"cudnn_tf32", ctx.allowTF32CuDNN()}};
    try {
      return with_restore(make_training_workload(context, training_spec(c)), restore, std::move(info));
    } catch (...) {
      restore();
      throw;
    }
  }
};

TIPBENCH_REGISTER_SUITE(Tf32);
TIPBENCH_REGISTER_INGREDIENT(tf32, {.tip = "tf32",
                                    .arm = "tf32",
                                    .changes = {kChangesNumerics},
                                    .python = {.setup = {"torch.backends.cuda.matmul.allow_tf32 = True",
                                                         "torch.backends.cudnn.allow_tf32 = True"}},
                                    .apply = [](const SuiteContext&, TrainingSpec&) { return set_tf32(true); }});

}  // namespace tipbench::suites
