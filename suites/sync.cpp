// Tip: avoid CPU-GPU synchronisation in the step loop. loss.item() (like printing a tensor,
// nonzero() or branching on a value) makes the host wait until the device has run everything
// queued, so the next step's kernels are launched only after the GPU ran dry: the GPU idles for
// the host's launch latency every step. Keeping the running loss on the device and reading it
// rarely removes the wait. On a CPU the device is the host (an op has finished when it returns),
// so the read costs nothing there and the arms should tie.
// Baseline: loss.item() every step (what most logging loops do). Treatments: every 50 steps;
// never (summed on the device).
#include "common/step_policy.h"
#include "tipbench/suite/registry.h"

namespace tipbench::suites {

namespace {

ArmSpec read_every(const std::string& name, std::int64_t steps) {
  return {name, {{"loss_read_every", std::to_string(steps)}}};
}

// The loss added to a running sum on the device every step and read on the host with .item()
// every `every` steps (0: never).
class ReadLossEvery final : public Policy<ReadLossEvery> {
 public:
  explicit ReadLossEvery(std::int64_t every) : every_(every) {}
  std::string name() const override { return "loss read every " + std::to_string(every_) + " steps"; }
  bool keeps_loss() const override { return true; }
  void prepare(StepState& state) override {
    running_loss_ = torch::zeros({}, torch::TensorOptions().device(state.device()));
    steps_since_read_ = 0;
  }
  void after_step(StepState&, const at::Tensor& loss) override {
    running_loss_ += loss;
    if (every_ > 0 && ++steps_since_read_ == every_) {
      last_read_loss_ = running_loss_.item<double>();  // the host waits for the device here
      steps_since_read_ = 0;
    }
  }
  nlohmann::json info(const StepState&) const override { return {{"loss_read_every", every_}}; }
  std::optional<std::string> capture_unsafe_reason() const override {
    return "keep the loss (read it from the static loss tensor instead)";
  }

 private:
  std::int64_t every_;
  at::Tensor running_loss_;
  std::int64_t steps_since_read_ = 0;
  double last_read_loss_ = 0;
};

}  // namespace

class Sync final : public Suite {
 public:
  std::string name() const override { return "sync"; }
  std::string description() const override {
    return "reading the loss on the host (loss.item(), a CPU-GPU sync) every step (default) vs every 50 steps "
           "vs never (summed on the device)";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"002, 003", "a CPU-GPU sync per step (.item(), printing) drains the launch queue"};
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    std::vector<ArmSpec> arms{read_every("every_step", 1)};
    // A --quick trial is shorter than 50 steps: its every_50 arm would be the never arm again.
    if (!context.quick) arms.push_back(read_every("every_50", 50));
    arms.push_back(read_every("never", 0));
    return training_cases(context, arms, {}, {.step_loop = true});
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    TrainingSpec spec = training_spec(c);
    spec.policies.push_back(std::make_shared<ReadLossEvery>(level_int(arm.levels, "loss_read_every")));
    return make_training_workload(context, spec);
  }
};

TIPBENCH_REGISTER_SUITE(Sync);

}  // namespace tipbench::suites
