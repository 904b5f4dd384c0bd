#include "check_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tipbench::gate {

namespace {

// The interval rules a regression of the threshold's size out when its bad-side end stays short
// of it: throughput ci_low > 1 - t, memory ci_high < 1 + t.
bool rules_out_regression(const CellComparison& c, double threshold) {
  const auto& e = c.test.estimate;
  return higher_is_better(c.key.metric) ? e.ci_low > 1 - threshold : e.ci_high < 1 + threshold;
}

}  // namespace

bool worse_than(const CellComparison& c, double threshold) {
  const double ratio = c.test.estimate.ratio;
  return higher_is_better(c.key.metric) ? 1 - ratio >= threshold : ratio - 1 >= threshold;
}

double badness(const CellComparison& c) {
  const double delta = c.delta();
  return higher_is_better(c.key.metric) ? -delta : delta;
}

std::string describe(const CellComparison& c) {
  const auto& e = c.test.estimate;
  const std::string between =
      c.between_run_source.empty() ? "" : fmt::format(", between runs {}", c.between_run_source);
  return fmt::format("x{:.3f} [{:.3f}, {:.3f}] ({:+.1f}%), p={:.4f}, CV {:.1f}%{}", e.ratio, e.ci_low, e.ci_high,
                     100 * c.delta(), c.test.p_value, 100 * c.cv, between);
}

std::size_t blocks_to_resolve(const CellComparison& c, double threshold) {
  const auto& e = c.test.estimate;
  const double half_width = (e.ci_high - e.ci_low) / 2;
  const double target = threshold / 2;
  const double scale = half_width / target;
  return std::max<std::size_t>(e.blocks,
                               static_cast<std::size_t>(std::ceil(static_cast<double>(e.blocks) * scale * scale)));
}

void decide_without_rerun(Check& check) {
  const CellComparison& c = *check.comparison;
  const bool worse = worse_than(c, check.threshold);
  check.noisy = !rules_out_regression(c, check.threshold);
  if (check.significant && worse) {
    check.candidate = true;
    check.status = CheckStatus::regression;
    check.detail = "regression candidate, not yet confirmed: " + describe(c);
  } else if (worse) {
    check.status = CheckStatus::inconclusive;
    check.detail = fmt::format("worse by at least the {:g}% threshold but not significant after Holm: {}",
                               100 * check.threshold, describe(c));
  } else if (check.noisy) {
    check.status = CheckStatus::inconclusive;
    check.detail = fmt::format("too noisy to rule out a {:g}% regression (the 95% interval reaches it): {}",
                               100 * check.threshold, describe(c));
  } else {
    check.status = CheckStatus::pass;
    const char* what = !check.significant ? "no significant change"
                       : badness(c) > 0   ? "significant, but below the threshold"
                                          : "better";
    check.detail = fmt::format("{}: {}", what, describe(c));
  }
}

}  // namespace tipbench::gate
