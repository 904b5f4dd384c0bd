// Tip: gradient accumulation. The same effective batch B run as k micro-batches of B/k (a
// forward and backward each, gradients summing up, one optimizer step) needs the activations of
// only B/k samples at a time: a batch too large for the memory still trains, at the cost of k
// smaller (less efficient) kernels per layer. BatchNorm statistics are then per micro-batch.
// Baseline: k = 1 (the whole batch at once). Treatments: k = 2, 4, 8 (--quick: 4). The note states the memory
// saved per unit of throughput lost.
#include "common/step_policy.h"
#include "tipbench/suite/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tipbench::suites {

namespace {

std::int64_t micro_batches(const ArmSpec& arm) { return level_int(arm.levels, "micro_batches"); }

// "k=4 (micro-batch 8): peak memory -38% for throughput -12%: 3.2% of the memory saved per 1% of
// the throughput lost"
std::string trade_off(const ArmResult& whole, const ArmResult& split, std::int64_t batch) {
  const double memory = static_cast<double>(*split.peak_memory_bytes) / *whole.peak_memory_bytes - 1;
  const double speed = split.throughput_samples_per_s.median / whole.throughput_samples_per_s.median - 1;
  const std::int64_t k = level_int(split.levels, "micro_batches");
  std::string text = fmt::format("k={} (micro-batch {}): peak memory {:+.0f}% for throughput {:+.0f}%", k, batch / k,
                                 100 * memory, 100 * speed);
  if (memory >= 0) return text + ": no memory saved";
  if (speed >= 0) return text + ": the memory saved cost no throughput";
  return text + fmt::format(": {:.1f}% of the memory saved per 1% of the throughput lost", memory / speed);
}

// The step's batch as k micro-batches, a forward and backward each, one optimizer step.
class MicroBatches final : public Policy<MicroBatches> {
 public:
  explicit MicroBatches(std::int64_t k) : k_(k) {}
  std::string name() const override { return std::to_string(k_) + " micro-batches"; }
  std::int64_t micro_batches() const override { return k_; }
  nlohmann::json info(const StepState&) const override {
    if (k_ == 1) return nlohmann::json::object();  // the whole batch: recorded as any training step
    return {{"micro_batches", k_}};
  }

 private:
  std::int64_t k_;
};

}  // namespace

class GradAccumulation final : public Suite {
 public:
  std::string name() const override { return "grad_accumulation"; }
  std::string description() const override {
    return "one effective batch as 1 (default) vs 2, 4, 8 accumulated micro-batches: throughput and peak memory";
  }
  std::optional<SourceClaim> source_claim() const override {
    return SourceClaim{"002, 003", "k micro-batches per step trade memory for throughput; fewer all-reduces under DDP"};
  }
  std::vector<CaseSpec> cases(const SuiteContext& context) const override {
    // --quick: k = 1 and 4 only; every arm costs a quick run ~3 s on two CPU cores.
    const std::vector<int> splits = context.quick ? std::vector<int>{1, 4} : std::vector<int>{1, 2, 4, 8};
    std::vector<ArmSpec> arms;
    for (int k : splits) arms.push_back({fmt::format("k{}", k), {{"micro_batches", std::to_string(k)}}});
    return training_cases(context, arms);
  }
  std::optional<std::string> skip_reason(const SuiteContext&, const CaseSpec& c, const ArmSpec& arm) const override {
    const std::int64_t batch = level_int(c.params, "batch"), k = micro_batches(arm);
    if (batch % k == 0) return std::nullopt;
    return fmt::format("batch {} does not split into {} equal micro-batches; pass a --batch-size divisible by 8", batch,
                       k);
  }
  std::unique_ptr<Workload> prepare(const SuiteContext& context, const CaseSpec& c, const ArmSpec& arm,
                                    const TrialInfo&) const override {
    TrainingSpec spec = training_spec(c);
    spec.policies.push_back(std::make_shared<MicroBatches>(micro_batches(arm)));
    return make_training_workload(context, spec);
  }
  std::vector<std::string> notes(const SuiteResult& result, const MeasureSettings&) const override {
    std::vector<std::string> out;
    for (const auto& c : result.cases) {
      if (c.arms.empty()) continue;
      const ArmResult& whole = c.arms[0];
      auto usable = [](const ArmResult& a) {
        return a.status == ArmStatus::ok && a.peak_memory_bytes && *a.peak_memory_bytes > 0 &&
               a.throughput_samples_per_s.median > 0;
      };
      if (!usable(whole)) continue;
      std::vector<std::string> parts;
      for (std::size_t i = 1; i < c.arms.size(); ++i) {
        if (usable(c.arms[i])) parts.push_back(trade_off(whole, c.arms[i], level_int(c.params, "batch")));
      }
      if (!parts.empty())
        out.push_back(fmt::format("{} ({} peak): {}", c.name, whole.memory_metric, fmt::join(parts, "; ")));
    }
    return out;
  }
};

TIPBENCH_REGISTER_SUITE(GradAccumulation);

}  // namespace tipbench::suites
