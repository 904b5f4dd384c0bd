// Tip: a convolution directly followed by BatchNorm needs no bias: BN subtracts the per-channel
// mean, which cancels any constant the conv adds. Dropping it saves parameters, memory and an
// add per output element.
// Baseline: nn.Conv2d's default, bias=true. Treatment: bias=false (what torchvision does).
#include "common/recipe.h"
#include "common/training.h"
#include "tipbench/suite/registry.h"

namespace tipbench::suites {

class ConvBias final : public Suite {
 public:
  std::string name() const override { return "conv_bias"; }
  std::string description() const override {
    return "bias on convolutions that feed BatchNorm: on (nn.Conv2d default) vs off";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"000, 002-004", "saves parameters and memory (002)"};
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    return training_cases(context, {{"bias", {{"conv_bias", "on"}}}, {"no_bias", {{"conv_bias", "off"}}}});
  }
  std::optional<std::string> skip_reason(const SuiteContext&, const CaseSpec& c, const ArmSpec&) const override {
    const auto& model = level(c.params, "model");
    if (auto why = model_code_fixed(model, "adds a bias to every convolution before a BatchNorm")) return why;
    if (model_family(model) != "cnn") {
      return model + " has no convolution followed by BatchNorm; conv_bias applies to CNNs";
    }
    return std::nullopt;
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    TrainingSpec spec = training_spec(c);
    spec.model_options.conv_bias_before_bn = level(arm.levels, "conv_bias") == "on";
    return make_training_workload(context, spec);
  }
};

TIPBENCH_REGISTER_SUITE(ConvBias);
TIPBENCH_REGISTER_INGREDIENT(conv_bias_off,
                             {.tip = "conv_bias",
                              .arm = "no_bias",
                              .python = {.model_kwargs = {"conv_bias=False"},
                                         .comments = {"nn.Conv2d(..., bias=False) where a BatchNorm follows, in your "
                                                      "model's code"}},
                              .outside_recipe = "a change to the model's code that the reference models already "
                                                "have (torchvision's layout has no bias before a BatchNorm), so the "
                                                "recipe's default step has it too"});

}  // namespace tipbench::suites
