// Tip: automatic mixed precision. Under autocast, matmuls and convolutions run in a 16-bit float
// (Tensor Cores on a GPU) while reductions and the weights stay fp32; activations take half the
// memory, so a larger batch fits. bfloat16 has fp32's exponent range; float16 does not, so its
// gradients need dynamic loss scaling (common/loss_scaler.h, PyTorch's GradScaler).
// The seed's claim ("several times faster than fp32 ... 2x larger batch") has three parts, and
// each arm tests one against the baseline, fp32 with PyTorch's defaults (IEEE matmuls, but cuDNN
// convolutions already in TF32: aten/src/ATen/Context.h):
//   bf16, fp16    AMP turned on from the defaults: what a user gains
//   fp32_ieee     fp32 with TF32 off in cuDNN too (CUDA only): bf16 against it (the note) is
//                 the claim's "faster than fp32", made when fp32 meant IEEE fp32
//   bf16_2x       bf16 at twice the batch (not --quick): its peak memory against fp32's at the
//                 batch is the claim's "2x larger batch"; its throughput what the batch buys
// Cases per model: layout:nchw, and for a CNN layout:nhwc (channels_last in every arm, not
// --quick), where 16-bit convolutions meet the layout Tensor Cores want; and, on CUDA,
// batch:largest, each precision at the largest batch it fits (an out-of-memory search before the
// run), so the batch claim is also measured directly.
#include "common/python_step.h"
#include "common/autocast.h"
#include "common/fp32_math.h"
#include "common/largest_batch.h"
#include "common/recipe.h"
#include "common/scoped_workload.h"
#include "common/training.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tipbench::suites {

namespace {

// --quick on a CPU: 16-bit autocast steps of small_cnn take ~20x fp32's there (415 vs 22 ms at
// batch 32, measured on 2 EPYC cores), so the quick batch is 4.
constexpr std::int64_t kAmpQuickCpuBatch = 4;
constexpr const char* kIeeeArm = "fp32_ieee";
constexpr const char* kDoubleBatchArm = "bf16_2x";

ArmSpec precision_arm(Precision p) { return {precision_name(p), {{"precision", precision_name(p)}}}; }

// The largest-batch case's arms: one per precision (memory alone decides its batch).
std::vector<ArmSpec> precision_arms() {
  return {precision_arm(Precision::fp32), precision_arm(Precision::bf16), precision_arm(Precision::fp16)};
}

std::vector<ArmSpec> amp_arms(const SuiteContext& context) {
  std::vector<ArmSpec> arms = {precision_arm(Precision::fp32),
                               {kIeeeArm, {{"precision", "fp32"}, {"tf32", "off"}}},
                               precision_arm(Precision::bf16),
                               precision_arm(Precision::fp16)};
  if (!context.quick) {
    arms.push_back({kDoubleBatchArm, {{"precision", "bf16"}, {"batch_scale", "2"}}});
    arms.push_back(python_eager_arm(arms[0]));  // fp32 in Python eager: is the C++ baseline what Python gets?
  }
  return arms;
}

std::vector<std::string> layouts(const SuiteContext& context, const std::string& model) {
  if (context.quick || model_family(model) != "cnn") return {"nchw"};
  return {"nchw", "nhwc"};
}

std::string ratio_words(const Comparison* k) {
  if (!k) return "no comparison (an arm did not run, or too few blocks)";
  return comparison_words(*k);
}

// What the case's ratios say about each part of the claim, in one line per part that ran.
std::vector<std::string> claim_lines(const CaseResult& c, const MeasureSettings& settings) {
  std::vector<std::string> out;
  const ArmResult* ieee = find_arm(c, kIeeeArm);
  if (ieee && ieee->status == ArmStatus::ok) {
    std::vector<std::string> parts;
    for (const char* arm : {"bf16", "fp16"}) {
      const ArmResult* a = find_arm(c, arm);
      if (!a || a->status != ArmStatus::ok) continue;
      const auto k = compare_arms(*a, *ieee, trial_throughput(), settings);
      parts.push_back(fmt::format("{} {}", arm, ratio_words(k ? &*k : nullptr)));
    }
    if (!parts.empty()) {
      out.push_back(
          fmt::format("{}: \"faster than fp32\", against IEEE fp32 (TF32 off): {}", c.name, fmt::join(parts, "; ")));
    }
  }
  const ArmResult* doubled = find_arm(c, kDoubleBatchArm);
  const ArmResult* base = c.arms.empty() ? nullptr : &c.arms.front();
  if (doubled && doubled->status == ArmStatus::ok && base && base->status == ArmStatus::ok) {
    const Comparison* memory = find_comparison(c, kDoubleBatchArm, base->memory_metric);
    const bool holds = memory && memory->estimate.ci_high <= 1.0;
    out.push_back(fmt::format(
        "{}: \"2x larger batch\": bf16 at twice the batch against fp32 at the batch: peak memory {}, throughput {}; "
        "{}",
        c.name, ratio_words(memory), ratio_words(find_comparison(c, kDoubleBatchArm)),
        holds ? "the claim holds here (no more memory at twice the batch)"
              : "the claim does not hold here, or is not resolved (the memory interval reaches above x1.000)"));
  }
  return out;
}

}  // namespace

class Amp final : public SuiteWithLargestBatch {
 public:
  Amp() : SuiteWithLargestBatch(make_at) {}
  std::string name() const override { return "amp"; }
  std::string description() const override {
    return "precision of the training step: fp32 with PyTorch's defaults vs IEEE fp32 vs bf16 autocast vs fp16 "
           "autocast with loss scaling vs bf16 at twice the batch, NCHW and channels_last; throughput, memory, "
           "skipped steps and the largest batch that fits";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"000-004", "\"several times faster than fp32 ... 2x larger batch\" (001)"};
  }

  std::vector<SuiteOption> options() const override { return {kPythonTimeoutOption}; }  // its python_eager arm
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    std::vector<CaseSpec> out;
    for (const auto& model : models_to_run(context)) {
      for (const auto& layout : layouts(context, model)) {
        Levels params = training_params(context, model, kAmpQuickCpuBatch);
        params.emplace_back("layout", layout);
        out.push_back({std::move(params), amp_arms(context)});
      }
      out.push_back(largest_batch_case(model, precision_arms()));
    }
    return out;
  }

  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                         const ArmSpec& arm) const override {
    if (auto why = precision_unsupported_reason(context.device, parse_precision(level(arm.levels, "precision")))) {
      return why;
    }
    if (arm.name == kIeeeArm && !context.device.is_cuda()) {
      return "TF32 is a Tensor Core format of NVIDIA GPUs: on " + context.device.str() +
             " fp32 is IEEE fp32 already (the fp32 baseline)";
    }
    return SuiteWithLargestBatch::skip_reason(context, c, arm);
  }

  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings& settings) const override {
    std::vector<std::string> out;
    for (const auto& c : result.cases) {
      std::vector<std::string> skipped, largest;
      for (const auto& arm : c.arms) {
        if (arm.status != ArmStatus::ok) continue;
        if (auto it = arm.metrics.find("skipped_steps"); it != arm.metrics.end()) {
          skipped.push_back(fmt::format("{} {:.0f}", arm.arm, it->second.median));
        }
        if (auto found = largest_batch_text(arm)) largest.push_back(fmt::format("{} {}", arm.arm, *found));
      }
      for (auto& line : claim_lines(c, settings)) out.push_back(std::move(line));
      if (auto line = cpp_against_python_note(c, settings)) out.push_back(std::move(*line));
      if (!skipped.empty()) {
        out.push_back(fmt::format("{}: optimizer steps the loss scaler skipped per trial (median): {}", c.name,
                                  fmt::join(skipped, ", ")));
      }
      if (!largest.empty()) {
        out.push_back(fmt::format("{}: largest batch that fits: {}", c.name, fmt::join(largest, ", ")));
      }
    }
    return out;
  }

 private:
  // The arm at `batch` (times its batch_scale), in the case's layout; on CUDA with its fp32 math
  // set and read back into its info (the baseline's shows PyTorch's defaults).
  static std::unique_ptr<Workload> make_at(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                           std::int64_t batch) {
    TrainingSpec spec{.model = level(c.params, "model"), .batch_size = batch};
    spec.precision = parse_precision(level(arm.levels, "precision"));
    if (find_level(arm.levels, "batch_scale")) spec.batch_size *= level_int(arm.levels, "batch_scale");
    spec.model_options.channels_last = find_level(c.params, "layout") == "nhwc";
    if (is_python_eager_arm(arm)) return make_python_eager_workload(context, spec);  // PyTorch's own defaults
    if (!context.device.is_cuda()) return make_training_workload(context, spec);
    const Fp32Math math = find_level(arm.levels, "tf32") == "off" ? Fp32Math::ieee : Fp32Math::pytorch_default;
    // Set again whenever the kept arm runs, put back while the other arms do.
    return with_setting([math] { return set_fp32_math(math); }, [&] { return make_training_workload(context, spec); },
                        fp32_math_info);
  }
};

TIPBENCH_REGISTER_SUITE(Amp);
TIPBENCH_REGISTER_INGREDIENT(amp_bf16, {.tip = "amp",
                                        .arm = "bf16",
                                        .alone_case = {{"layout", "nchw"}},
                                        .changes = {kChangesNumerics},
                                        .python = {.autocast_dtype = "torch.bfloat16"},
                                        .apply = [](const SuiteContext&, TrainingSpec& spec) -> Restore {
                                          spec.precision = Precision::bf16;
                                          return {};
                                        }});
TIPBENCH_REGISTER_INGREDIENT(amp_fp16, {.tip = "amp",
                                        .arm = "fp16",
                                        .alone_case = {{"layout", "nchw"}},
                                        .changes = {kChangesNumerics},
                                        .python = {.autocast_dtype = "torch.float16", .grad_scaler = true},
                                        .apply = [](const SuiteContext&, TrainingSpec& spec) -> Restore {
                                          spec.precision = Precision::fp16;
                                          return {};
                                        }});

}  // namespace tipbench::suites
