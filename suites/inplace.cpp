// Tip: in-place activations. nn.ReLU(inplace=True) overwrites its input instead of allocating a
// new tensor: one activation-sized buffer less per ReLU, and its backward reads the output it
// kept anyway, so the gradients are the same (tests/models: InplaceRelu). Baseline: nn.ReLU()'s
// default, out of place. Treatment: in place, as torchvision's ResNet builds it. CNNs only: the
// ViTs' activation is GELU, whose backward needs its input.
#include "common/recipe.h"
#include "common/training.h"
#include "tipbench/suite/registry.h"

namespace tipbench::suites {

class Inplace final : public Suite {
 public:
  std::string name() const override { return "inplace"; }
  std::string description() const override {
    return "a CNN's ReLUs out of place (nn.ReLU() default) vs in place: peak memory and throughput";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"002", "in-place activations: less activation memory"};
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    return training_cases(context,
                          {{"out_of_place", {{"inplace_relu", "false"}}}, {"inplace", {{"inplace_relu", "true"}}}});
  }
  std::optional<std::string> skip_reason(const SuiteContext&, const CaseSpec& c, const ArmSpec&) const override {
    const auto& model = level(c.params, "model");
    if (auto why = model_code_fixed(model, "switches the model's ReLUs between in-place and out-of-place")) return why;
    if (model_family(model) != "cnn") {
      return model +
             " is a ViT: its activation is GELU, whose backward needs its input, so it has no in-place "
             "form; the tip applies to a CNN's ReLUs";
    }
    return std::nullopt;
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    TrainingSpec spec = training_spec(c);
    spec.model_options.inplace_relu = level(arm.levels, "inplace_relu") == "true";
    return make_training_workload(context, spec);
  }
};

TIPBENCH_REGISTER_SUITE(Inplace);
TIPBENCH_REGISTER_INGREDIENT(inplace_relu,
                             {.tip = "inplace",
                              .arm = "inplace",
                              .python = {.model_kwargs = {"inplace=True"},
                                         .comments = {"nn.ReLU(inplace=True) in your model's code"}},
                              .outside_recipe = "a change to the model's code that the reference models already "
                                                "have (torchvision's ResNet builds its ReLUs in place), so the "
                                                "recipe's default step has it too"});

}  // namespace tipbench::suites
