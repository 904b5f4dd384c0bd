#include "tipbench/results/summary.h"

#include "tipbench/statistics/block_looks.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace tipbench {

namespace {

// The device's own memory figure: CUDA allocator peaks where present, else CPU RSS growth.
std::optional<std::int64_t> trial_memory(const Trial& t, std::string* metric) {
  if (t.memory.peak_allocated_bytes) {
    if (metric) *metric = "peak_allocated_bytes";
    return t.memory.peak_allocated_bytes;
  }
  if (t.memory.peak_rss_growth_bytes) {
    if (metric) *metric = "peak_rss_growth_bytes";
    return t.memory.peak_rss_growth_bytes;
  }
  return std::nullopt;
}

struct Paired {
  std::vector<double> treatment;
  std::vector<double> baseline;
};

// Pairs the two arms' trials by block; a block where either arm has no positive value is dropped.
Paired pair_by_block(const ArmResult& treatment, const ArmResult& baseline, const TrialMetric& metric) {
  std::map<int, double> base;
  for (const auto& t : baseline.trials) {
    if (auto v = metric.value(t); v && *v > 0) base[t.block] = *v;
  }
  Paired p;
  for (const auto& t : treatment.trials) {
    auto v = metric.value(t);
    auto it = base.find(t.block);
    if (v && *v > 0 && it != base.end()) {
      p.treatment.push_back(*v);
      p.baseline.push_back(it->second);
    }
  }
  return p;
}

std::optional<double> throughput_of(const Trial& t) { return t.throughput_samples_per_s; }

std::optional<double> memory_of(const Trial& t) {
  if (auto m = trial_memory(t, nullptr)) return static_cast<double>(*m);
  return std::nullopt;
}

}  // namespace

TrialMetric trial_throughput() { return {"throughput_samples_per_s", true, throughput_of}; }

std::string comparison_words(const Comparison& c) {
  return fmt::format("x{:.3f} [{:.3f}, {:.3f}] {}{}", c.estimate.ratio, c.estimate.ci_low, c.estimate.ci_high,
                     stats::verdict_words(c.verdict), c.noisy ? " [noisy]" : "");
}

std::optional<Comparison> compare_arms(const ArmResult& treatment, const ArmResult& baseline, const TrialMetric& metric,
                                       const MeasureSettings& settings) {
  const Paired paired = pair_by_block(treatment, baseline, metric);
  if (paired.treatment.size() < kMinPairedBlocks) return std::nullopt;
  Comparison c;
  c.treatment = treatment.arm;
  c.baseline = baseline.arm;
  c.metric = metric.name;
  // A t-interval on the paired log-ratios (docs/measurement.md): it covers at the few blocks a
  // sequential case may stop at, at each look's confidence.
  c.estimate = stats::paired_log_ratio_t(paired.treatment, paired.baseline, look_confidence(settings)).estimate;
  c.stop = stop_reason(c.estimate, settings);
  if (c.stop == StopReason::unresolved) {
    c.blocks_to_resolve =
        blocks_to_resolve(c.estimate, stats::log_ratio_sd(paired.treatment, paired.baseline), settings);
  }
  c.verdict = stats::decide(
      c.estimate, {.practical_threshold = settings.practical_threshold, .higher_is_better = metric.higher_is_better});
  const double cv =
      std::max(stats::coefficient_of_variation(paired.treatment), stats::coefficient_of_variation(paired.baseline));
  c.cv = cv;
  c.noisy = cv > noisy_cv_limit(settings);
  if (c.noisy) {
    c.recommendation = fmt::format(
        "between-block CV {:.1f}% exceeds {:.1f}%: re-run with --blocks {} (or longer trials) "
        "to resolve a {:.0f}% effect",
        100 * cv, 100 * noisy_cv_limit(settings), stats::blocks_needed(cv, settings.practical_threshold),
        100 * settings.practical_threshold);
  }
  return c;
}

void summarize_arm(ArmResult& arm) {
  std::vector<double> steps;
  std::vector<double> throughputs;
  std::vector<double> memory;
  std::vector<double> cpu_steps;
  for (const auto& t : arm.trials) {
    steps.insert(steps.end(), t.step_times_ms.begin(), t.step_times_ms.end());
    cpu_steps.insert(cpu_steps.end(), t.step_cpu_times_ms.begin(), t.step_cpu_times_ms.end());
    throughputs.push_back(t.throughput_samples_per_s);
    if (auto m = trial_memory(t, &arm.memory_metric)) memory.push_back(static_cast<double>(*m));
  }
  if (!steps.empty()) arm.step_time_ms = stats::summarize(steps);
  if (!throughputs.empty()) arm.throughput_samples_per_s = stats::summarize(throughputs);
  arm.step_cpu_time_ms.reset();
  if (!cpu_steps.empty()) arm.step_cpu_time_ms = stats::summarize(cpu_steps);
  if (!memory.empty()) arm.peak_memory_bytes = static_cast<std::int64_t>(stats::median(memory));
  std::map<std::string, std::vector<double>> metrics;
  for (const auto& t : arm.trials) {
    for (const auto& [name, value] : t.metrics) metrics[name].push_back(value);
  }
  arm.metrics.clear();
  for (const auto& [name, values] : metrics) arm.metrics[name] = stats::summarize(values);
}

void summarize_case(CaseResult& c, const MeasureSettings& settings) {
  for (auto& arm : c.arms) summarize_arm(arm);
  c.comparisons.clear();
  auto base = std::find_if(c.arms.begin(), c.arms.end(), [](const ArmResult& a) { return a.baseline; });
  if (base == c.arms.end() || base->status != ArmStatus::ok) return;
  const TrialMetric metrics[] = {
      trial_throughput(), {"step_cpu_time_ms", false, cpu_time_per_step_ms}, {base->memory_metric, false, memory_of}};
  for (const auto& arm : c.arms) {
    if (arm.baseline || arm.status != ArmStatus::ok) continue;
    for (const auto& metric : metrics) {
      if (auto cmp = compare_arms(arm, *base, metric, settings)) c.comparisons.push_back(*cmp);
    }
  }
}

}  // namespace tipbench
