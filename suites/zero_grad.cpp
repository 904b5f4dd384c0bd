// Tip: reset gradients by setting them to None instead of writing zeros. Zeroing costs a memset
// per parameter and makes backward accumulate (read + write) instead of assign.
// Baseline: LibTorch's default, zero_grad(set_to_none=true). Treatment: zero_grad(false).
#include "common/step_policy.h"
#include "tipbench/registry.h"

namespace tipbench::suites {

namespace {

// The treatment: gradients filled with zeros, so backward accumulates into them.
class FillWithZeros final : public Policy<FillWithZeros> {
 public:
  std::string name() const override { return "zero_grad(set_to_none=false)"; }
  void zero_grad(StepState& state) override { state.optimizer().zero_grad(/*set_to_none=*/false); }
  nlohmann::json info(const StepState&) const override { return {{"set_to_none", false}}; }
};

}  // namespace

class ZeroGrad final : public Suite {
 public:
  std::string name() const override { return "zero_grad"; }
  std::string description() const override {
    return "optimizer.zero_grad(): set gradients to None (default) vs fill them with zeros";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"000, 002-004", "\"moderately improves performance\", less memory (002)"};
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    return training_cases(context, {{"none", {{"set_to_none", "true"}}}, {"zero", {{"set_to_none", "false"}}}});
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    TrainingSpec spec = training_spec(c);
    if (level(arm.levels, "set_to_none") == "false") spec.policies.push_back(std::make_shared<FillWithZeros>());
    return make_training_workload(context, spec);
  }
};

TIPBENCH_REGISTER_SUITE(ZeroGrad);

}  // namespace tipbench::suites
