// Tip: channels_last (NHWC) memory format for CNNs. cuDNN's Tensor Core convolutions work in
// NHWC, so with NCHW tensors every convolution transposes its input and output; converting the
// model and the input once removes those transposes. The layout mostly pays off with 16-bit
// Tensor Core math, so each model is measured in fp32 and under bf16 autocast.
// Baseline: NCHW (PyTorch's default). Treatment: model parameters and input in channels_last.
#include "common/autocast.h"
#include "common/python_step.h"
#include "common/recipe.h"
#include "common/training.h"
#include "tipbench/suite/registry.h"

namespace tipbench::suites {

namespace {
// --quick on a CPU: bf16 NCHW steps of small_cnn take ~16x fp32's there (308 vs 19 ms at batch
// 32, measured on 2 EPYC cores), so the quick batch is 4.
constexpr std::int64_t kChannelsLastQuickCpuBatch = 4;
}  // namespace

class ChannelsLast final : public Suite {
 public:
  std::string name() const override { return "channels_last"; }
  std::string description() const override {
    return "memory format of a CNN's parameters and input: NCHW (default) vs channels_last (NHWC), in fp32 "
           "and under bf16 autocast";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"001, 002", "NHWC suits Tensor Cores"};
  }
  std::vector<SuiteOption> options() const override { return {kPythonTimeoutOption}; }  // its python_eager arm
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    std::vector<ArmSpec> arms = {{"nchw", {{"memory_format", "nchw"}}}, {"nhwc", {{"memory_format", "channels_last"}}}};
    if (!context.quick) arms.push_back(python_eager_arm(arms[0]));  // is the C++ NCHW step what Python gets?
    return training_cases(context, arms,
                          {{"precision", {precision_name(Precision::fp32), precision_name(Precision::bf16)}}},
                          {.quick_cpu_batch = kChannelsLastQuickCpuBatch});
  }
  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                         const ArmSpec&) const override {
    const auto& model = level(c.params, "model");
    if (model_family(model) == "vit") {
      return model +
             " is a ViT: its only convolution is the patch projection, so the memory format has "
             "nothing to change; channels_last applies to CNNs";
    }
    return precision_unsupported_reason(context.device, parse_precision(level(c.params, "precision")));
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    TrainingSpec spec = training_spec(c);
    spec.precision = parse_precision(level(c.params, "precision"));
    spec.model_options.channels_last = level(arm.levels, "memory_format") == "channels_last";
    if (is_python_eager_arm(arm)) return make_python_eager_workload(context, spec);
    return make_training_workload(context, spec);
  }
  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings& settings) const override {
    return cpp_against_python_notes(result, settings);
  }
};

TIPBENCH_REGISTER_SUITE(ChannelsLast);
TIPBENCH_REGISTER_INGREDIENT(channels_last,
                             {.tip = "channels_last",
                              .arm = "nhwc",
                              .alone_case = {{"precision", "fp32"}},
                              .python = {.model = {"model = model.to(memory_format=torch.channels_last)"},
                                         .batch = {"images = images.contiguous(memory_format=torch.channels_last)"}},
                              .apply = [](const SuiteContext&, TrainingSpec& spec) -> Restore {
                                spec.model_options.channels_last = true;
                                return {};
                              }});

}  // namespace tipbench::suites
