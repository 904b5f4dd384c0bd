// Tip: reset gradients by setting them to None instead of writing zeros. Zeroing costs a memset
// per parameter and makes backward accumulate (read + write) instead of assign.
// Baseline: LibTorch's default, zero_grad(set_to_none=true). Treatment: zero_grad(false).
#include "common/python_step.h"
#include "common/step_policy.h"
#include "tipbench/suite/registry.h"

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
  std::vector<SuiteOption> options() const override { return {kPythonTimeoutOption}; }  // its python_eager arm
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    std::vector<ArmSpec> arms = {{"none", {{"set_to_none", "true"}}}, {"zero", {{"set_to_none", "false"}}}};
    // The default step in Python eager (not --quick: a worker per case): is C++'s what Python gets?
    if (!context.quick) arms.push_back(python_eager_arm(arms[0]));
    return training_cases(context, arms);
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    TrainingSpec spec = training_spec(c);
    if (is_python_eager_arm(arm)) return make_python_eager_workload(context, spec);
    if (level(arm.levels, "set_to_none") == "false") spec.policies.push_back(std::make_shared<FillWithZeros>());
    return make_training_workload(context, spec);
  }
  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings& settings) const override {
    return cpp_against_python_notes(result, settings);
  }
};

TIPBENCH_REGISTER_SUITE(ZeroGrad);

}  // namespace tipbench::suites
