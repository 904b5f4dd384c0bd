// The check that nothing warms up inside the timed region: every ok arm's first trial (built and
// warmed up from cold) against the median of its later trials (kept workloads re-warmed, or fresh
// ones), in units of the later trials' robust spread. A first trial far slower says the warm-up
// stopped too early; far faster, that a kept workload's re-warm did. Example:
//   for (const auto& gap : tipbench::first_trial_gaps(result.suites))
//     if (gap.beyond_noise) fmt::print("{}: x{:.3f}\n", gap.arm, gap.ratio);
#pragma once

#include "tipbench/results/result.h"

#include <string>
#include <vector>

namespace tipbench {

struct FirstTrialGap {
  std::string arm;    // the arm's full name
  double ratio = 1;   // first trial's throughput / median of the later trials'
  double spread = 0;  // the later trials' robust CV (1.4826 x MAD / median)
  int later_trials = 0;
  bool reused = false;  // some later trial reused the first one's workload
  // |ratio - 1| beyond 3 robust SDs of the later trials and beyond `floor`
  bool beyond_noise = false;
};

// Arms with at least 3 later trials; `floor`: the smallest relative gap worth naming.
std::vector<FirstTrialGap> first_trial_gaps(const std::vector<SuiteResult>& suites, double floor);

}  // namespace tipbench
