// Tip: create tensors directly on the device. A tensor a step needs (labels, a noise or dropout
// mask, an index) made on the host and then copied costs the host's random-number generation
// and a pageable host-to-device copy every step (torch.randn(...).cuda()); made on the device
// (torch.randn(..., device=...)) it is one kernel. Each step here makes its labels and a noise
// tensor of the input's shape (added to the input, as a noise augmentation would).
// Baseline: made on the host and copied (the common pattern). Treatment: made on the device.
#include "common/step_policy.h"
#include "tipbench/suite/registry.h"

namespace tipbench::suites {

namespace {

// Every step makes its labels and a noise tensor of the input's shape on the host (then copies
// them) or on the device.
class MakeStepTensors final : public Policy<MakeStepTensors> {
 public:
  explicit MakeStepTensors(bool on_host) : on_host_(on_host) {}
  std::string name() const override { return std::string("step tensors made on the ") + where(); }
  StepInputs inputs(StepState& state, bool) override {
    const auto& device = state.device();
    const auto made_on = torch::TensorOptions().device(on_host_ ? c10::Device(c10::kCPU) : device);
    StepInputs in = state.fixed_inputs();
    in.labels = torch::randint(state.classes(), {state.spec().batch_size}, made_on.dtype(torch::kLong)).to(device);
    in.images = in.images + 0.01 * torch::randn(in.images.sizes(), made_on).to(device);
    return in;
  }
  nlohmann::json info(const StepState&) const override { return {{"step_tensors", where()}}; }
  std::optional<std::string> capture_unsafe_reason() const override { return "make new tensors every step"; }

 private:
  const char* where() const { return on_host_ ? "host" : "device"; }
  bool on_host_;
};

}  // namespace

class DeviceCreation final : public Suite {
 public:
  std::string name() const override { return "device_creation"; }
  std::string description() const override {
    return "tensors a step needs (labels, input noise) made on the host and copied (default) vs made on the "
           "device (CUDA)";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"000, 002, 003", "create tensors on the device: no host allocation + copy"};
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    return training_cases(context, {{"host", {{"step_tensors", "host"}}}, {"device", {{"step_tensors", "device"}}}});
  }
  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec&, const ArmSpec&) const override {
    if (context.device.is_cuda()) return std::nullopt;
    return "on a " + context.device.str() +
           " the host is the device: both arms make the tensors in the same "
           "memory with the same code, and the tip is about the host-to-device copy";
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    TrainingSpec spec = training_spec(c);
    spec.policies.push_back(std::make_shared<MakeStepTensors>(level(arm.levels, "step_tensors") == "host"));
    return make_training_workload(context, spec);
  }
};

TIPBENCH_REGISTER_SUITE(DeviceCreation);

}  // namespace tipbench::suites
