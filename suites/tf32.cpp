// Tip: TF32 Tensor Core math for fp32 on Ampere and later GPUs: matmuls and convolutions read
// fp32 tensors but multiply with a 10-bit mantissa, several times faster, accumulating in fp32.
// PyTorch's defaults are mixed: cuBLAS matmuls run IEEE fp32 ("highest") while cuDNN convolutions
// already allow TF32. Baseline: those defaults. Treatments: TF32 everywhere (matmul precision
// "high", cuDNN TF32 on: what a user who turns the tip on gets); IEEE fp32 everywhere ("highest",
// cuDNN TF32 off: what the defaults' TF32 convolutions already give, read as its inverse).
// The knobs are process-wide (common/fp32_math.h): the workload puts them back.
#include "common/fp32_math.h"
#include "common/recipe.h"
#include "common/scoped_workload.h"
#include "common/training.h"
#include "tipbench/suite/registry.h"

namespace tipbench::suites {

class Tf32 final : public Suite {
 public:
  std::string name() const override { return "tf32"; }
  std::string description() const override {
    return "fp32 matmuls and convolutions: PyTorch's defaults (IEEE matmuls, TF32 convolutions) vs TF32 Tensor "
           "Core math everywhere vs IEEE fp32 everywhere (CUDA)";
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    // A CNN and a ViT: TF32 changes convolutions (cuDNN) and matmuls (cuBLAS) through two knobs.
    return training_cases(context,
                          {{"default", {{"tf32", "default"}}}, {"tf32", {{"tf32", "on"}}}, {"ieee", {{"tf32", "off"}}}},
                          {}, {.models = {.vit = true}});
  }
  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec&, const ArmSpec&) const override {
    if (!context.device.is_cuda()) {
      return "TF32 is a Tensor Core format of NVIDIA GPUs (Ampere and later); this run is on " + context.device.str();
    }
    return std::nullopt;
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    const std::string tf32 = level(arm.levels, "tf32");
    const Fp32Math math = tf32 == "on" ? Fp32Math::tf32 : tf32 == "off" ? Fp32Math::ieee : Fp32Math::pytorch_default;
    // The info is read back under the setting: what the library did with the request.
    return with_setting([math] { return set_fp32_math(math); },
                        [&] { return make_training_workload(context, training_spec(c)); }, fp32_math_info);
  }
};

TIPBENCH_REGISTER_SUITE(Tf32);
TIPBENCH_REGISTER_INGREDIENT(
    tf32,
    {.tip = "tf32",
     .arm = "tf32",
     .changes = {kChangesNumerics},
     .python = {.setup = {"torch.backends.cuda.matmul.allow_tf32 = True", "torch.backends.cudnn.allow_tf32 = True"}},
     .apply = [](const SuiteContext&, TrainingSpec&) { return set_fp32_math(Fp32Math::tf32); }});

}  // namespace tipbench::suites
