// Tip: automatic mixed precision. Under autocast, matmuls and convolutions run in a 16-bit float
// (Tensor Cores on a GPU) while reductions and the weights stay fp32; activations take half the
// memory, so a larger batch fits. bfloat16 has fp32's exponent range; float16 does not, so its
// gradients need dynamic loss scaling (common/loss_scaler.h, PyTorch's GradScaler).
// Two experiments per model:
//   batch:<b>       every arm at the same batch: throughput, peak memory, steps the scaler skipped
//   batch:largest   CUDA only: each arm at the largest batch that fits (out-of-memory search
//                   before the run), so "2x larger batch" is measured, not assumed
// Baseline: fp32 (PyTorch's default). Treatments: bf16 autocast; fp16 autocast + loss scaling.
#include "common/autocast.h"
#include "common/largest_batch.h"
#include "common/recipe.h"
#include "common/training.h"
#include "tipbench/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tipbench::suites {

namespace {

// --quick on a CPU: 16-bit autocast steps of small_cnn take ~20x fp32's there (415 vs 22 ms at
// batch 32, measured on 2 EPYC cores), so the quick batch is 4.
constexpr std::int64_t kAmpQuickCpuBatch = 4;

std::vector<ArmSpec> precision_arms() {
  std::vector<ArmSpec> arms;
  for (Precision p : {Precision::fp32, Precision::bf16, Precision::fp16}) {
    arms.push_back({precision_name(p), {{"precision", precision_name(p)}}});
  }
  return arms;
}

TrainingSpec spec_at(const std::string& model, std::int64_t batch, const ArmSpec& arm) {
  TrainingSpec spec{.model = model, .batch_size = batch};
  spec.precision = parse_precision(level(arm.levels, "precision"));
  return spec;
}

}  // namespace

class Amp final : public SuiteWithLargestBatch {
 public:
  Amp() : SuiteWithLargestBatch(make_at) {}
  std::string name() const override { return "amp"; }
  std::string description() const override {
    return "precision of the training step: fp32 (default) vs bf16 autocast vs fp16 autocast with loss "
           "scaling; throughput, memory, skipped steps and the largest batch that fits";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"000-004", "\"several times faster than fp32 ... 2x larger batch\" (001)"};
  }

  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    return training_cases(context, precision_arms(), {}, {.quick_cpu_batch = kAmpQuickCpuBatch, .largest_batch = true});
  }

  std::optional<std::string> skip_reason(const SuiteContext& context, const CaseSpec& c,
                                         const ArmSpec& arm) const override {
    if (auto why = precision_unsupported_reason(context.device, parse_precision(level(arm.levels, "precision")))) {
      return why;
    }
    return SuiteWithLargestBatch::skip_reason(context, c, arm);
  }

  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings&) const override {
    std::vector<std::string> out;
    for (const auto& c : result.cases) {
      std::vector<std::string> skipped, largest;
      for (const auto& arm : c.arms) {
        if (arm.status != ArmStatus::ok) continue;
        if (auto it = arm.metrics.find("skipped_steps"); it != arm.metrics.end()) {
          skipped.push_back(fmt::format("{} {:.0f}", arm.arm, it->second.median));
        }
        if (auto found = largest_batch_found(arm)) largest.push_back(fmt::format("{} {}", arm.arm, *found));
      }
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
  static std::unique_ptr<Workload> make_at(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                           std::int64_t batch) {
    return make_training_workload(context, spec_at(level(c.params, "model"), batch, arm));
  }
};

TIPBENCH_REGISTER_SUITE(Amp);
TIPBENCH_REGISTER_INGREDIENT(amp_bf16, {.tip = "amp",
                                        .arm = "bf16",
                                        .changes = {kChangesNumerics},
                                        .python = {.autocast_dtype = "torch.bfloat16"},
                                        .apply = [](const SuiteContext&, TrainingSpec& spec) -> Restore {
                                          spec.precision = Precision::bf16;
                                          return {};
                                        }});
TIPBENCH_REGISTER_INGREDIENT(amp_fp16, {.tip = "amp",
                                        .arm = "fp16",
                                        .changes = {kChangesNumerics},
                                        .python = {.autocast_dtype = "torch.float16", .grad_scaler = true},
                                        .apply = [](const SuiteContext&, TrainingSpec& spec) -> Restore {
                                          spec.precision = Precision::fp16;
                                          return {};
                                        }});

}  // namespace tipbench::suites
