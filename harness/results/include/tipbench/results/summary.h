// Turns raw trials into the summaries and comparisons of a case: arm summaries, then every
// treatment against the baseline as a ratio with a paired t-interval and a verdict.
//   tipbench::summarize_case(case_result, settings);
// compare_arms is that comparison rule on its own, for a suite's notes that compare other pairs
// of arms (a batch against the one before it): the same rule gives the same verdict.
//   if (auto c = tipbench::compare_arms(b64, b32, tipbench::trial_throughput(), settings))
//     note += fmt::format("x{:.2f} {}", c->estimate.ratio, tipbench::stats::to_string(c->verdict));
#pragma once

#include "tipbench/results/result.h"
#include "tipbench/statistics/settings.h"

#include <cstddef>
#include <optional>
#include <string>

namespace tipbench {

// One figure of a trial that two arms are compared on.
struct TrialMetric {
  std::string name;  // the comparison's `metric`: "throughput_samples_per_s"
  bool higher_is_better = true;
  std::optional<double> (*value)(const Trial&) = nullptr;  // nullopt: the trial did not record it
};

// The trial's throughput (samples/s, higher is better), the metric every note compares.
TrialMetric trial_throughput();

// Fewer paired blocks leave too little to estimate the noise from: no comparison.
inline constexpr std::size_t kMinPairedBlocks = 3;

// The harness's one comparison rule. The arms' trials are paired by block (a block where either
// arm has no positive value is dropped); the estimate is the geometric mean of the per-block
// ratios treatment/baseline with a paired t-interval (stats::paired_log_ratio_t) at
// look_confidence(settings), the verdict comes from stats::decide at settings.practical_threshold,
// the stop reason from stop_reason (block_looks.h), and the row is noisy when the larger
// between-block CV exceeds noisy_cv_limit(settings). nullopt below kMinPairedBlocks pairs.
std::optional<Comparison> compare_arms(const ArmResult& treatment, const ArmResult& baseline, const TrialMetric& metric,
                                       const MeasureSettings& settings);

// A note's words for a comparison: "x1.023 [1.010, 1.036] faster [noisy]" (stats::verdict_words).
std::string comparison_words(const Comparison& c);

void summarize_arm(ArmResult& arm);
// Fills arm summaries and case.comparisons (compare_arms of every ok arm against the ok baseline
// on throughput, CPU time per step and memory) from the trials.
void summarize_case(CaseResult& c, const MeasureSettings& settings);

}  // namespace tipbench
