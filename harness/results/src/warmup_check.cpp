#include "tipbench/results/warmup_check.h"

#include "tipbench/statistics/stats.h"

#include <algorithm>
#include <cmath>

namespace tipbench {

namespace {

constexpr int kMinLaterTrials = 3;
constexpr double kNormalMadScale = 1.4826;  // MAD x this estimates the SD of normal noise
constexpr double kSpreads = 3;

double robust_cv(const std::vector<double>& xs, double median) {
  std::vector<double> deviations;
  deviations.reserve(xs.size());
  for (double x : xs) deviations.push_back(std::abs(x - median));
  return median > 0 ? kNormalMadScale * stats::median(deviations) / median : 0;
}

}  // namespace

std::vector<FirstTrialGap> first_trial_gaps(const std::vector<SuiteResult>& suites, double floor) {
  std::vector<FirstTrialGap> gaps;
  for (const auto& suite : suites) {
    for (const auto& c : suite.cases) {
      for (const auto& arm : c.arms) {
        if (arm.status != ArmStatus::ok || static_cast<int>(arm.trials.size()) < 1 + kMinLaterTrials) continue;
        std::vector<double> later;
        bool reused = false;
        for (std::size_t i = 1; i < arm.trials.size(); ++i) {
          later.push_back(arm.trials[i].throughput_samples_per_s);
          reused = reused || arm.trials[i].reused_workload;
        }
        const double median = stats::median(later);
        if (median <= 0) continue;
        FirstTrialGap gap;
        gap.arm = arm.name;
        gap.ratio = arm.trials.front().throughput_samples_per_s / median;
        gap.spread = robust_cv(later, median);
        gap.later_trials = static_cast<int>(later.size());
        gap.reused = reused;
        gap.beyond_noise = std::abs(gap.ratio - 1) > std::max(kSpreads * gap.spread, floor);
        gaps.push_back(gap);
      }
    }
  }
  return gaps;
}

}  // namespace tipbench
