// Statistics as pure functions: robust summaries of samples, paired bootstrap ratios and the
// verdict rule. No I/O, no torch. Example:
//   auto s = tipbench::stats::summarize(step_times_ms);          // s.median, s.cv, s.n
//   auto r = tipbench::stats::paired_ratio_of_medians(treat, base, {.seed = 1});
//   auto v = tipbench::stats::decide(r, {.practical_threshold = 0.02});
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace tipbench::stats {

struct Summary {
  double median = 0;
  double p10 = 0;
  double p90 = 0;
  double mean = 0;
  double cv = 0;  // sample standard deviation / mean; 0 when n < 2
  std::size_t n = 0;
};

// Quantile with linear interpolation between order statistics (R type 7, numpy's default).
// q in [0, 1]. Throws std::invalid_argument on an empty input or q outside [0, 1].
// Also throws on a NaN sample, which has no rank.
double quantile(std::span<const double> xs, double q);
// The two-sided Student-t quantile t(df) with (1 - confidence) / 2 in each tail (df > 0; a
// Welch-Satterthwaite df need not be whole).
double t_quantile(double df, double confidence);
double median(std::span<const double> xs);
// Sample coefficient of variation (n-1 denominator); 0 for n < 2 or a zero mean.
double coefficient_of_variation(std::span<const double> xs);
// Throws std::invalid_argument on an empty input (there is no median to report).
Summary summarize(std::span<const double> xs);

struct BootstrapOptions {
  std::size_t resamples = 2000;
  double confidence = 0.95;
  std::uint64_t seed = 0;
};

struct RatioEstimate {
  double ratio = 1;   // median(treatment) / median(baseline) over all blocks
  double ci_low = 1;  // percentile bootstrap interval of the same statistic
  double ci_high = 1;
  std::size_t blocks = 0;
};

// treatment[i] and baseline[i] were measured in the same block i (paired). Blocks are resampled
// with replacement, keeping pairs together; the statistic is the ratio of the medians.
// Throws std::invalid_argument when the spans differ in length or are empty, or when a value is
// not positive. Also throws when a value is not finite, resamples is 0 or confidence is not in
// (0, 1). Deterministic for a given seed, on every standard library.
RatioEstimate paired_ratio_of_medians(std::span<const double> treatment, std::span<const double> baseline,
                                      const BootstrapOptions& options = {});

struct RatioTest {
  RatioEstimate estimate;
  // Two-sided bootstrap p-value for "ratio = 1": twice the smaller tail share of resampled ratios
  // on either side of 1, as (count + 1) / (resamples + 1) so it is never 0; capped at 1.
  // Its resolution is limited by the resample count (smallest value 2 / (resamples + 1)).
  double p_value = 1;
};

// The same bootstrap as paired_ratio_of_medians (same seed, same resamples, same interval), plus
// the p-value that multiple-comparison control (holm_reject) needs. Same preconditions.
RatioTest paired_ratio_test(std::span<const double> treatment, std::span<const double> baseline,
                            const BootstrapOptions& options = {});

// treatment and baseline come from different runs, so nothing pairs them: each side's blocks are
// resampled independently (with replacement) and the statistic is the ratio of the medians. The
// sides may differ in length; estimate.blocks is the smaller side. Interval and p-value are as in
// paired_ratio_test. Same preconditions on the values and options; each side needs >= 1 value.
RatioTest unpaired_ratio_test(std::span<const double> treatment, std::span<const double> baseline,
                              const BootstrapOptions& options = {});

// The paired blocks' log-ratios log(treatment[i] / baseline[i]) with a Student-t interval: the
// estimate is their geometric mean exp(m), the interval exp(m -+ t(n-1) * sd / sqrt(n)) at
// `confidence`, the p-value the two-sided t-test of "m = 0". Exact when the log-ratios are
// normal, and it covers at 3 blocks where a percentile bootstrap cannot (that interval lies
// inside the extreme block ratios); docs/measurement.md has the coverage table. Same
// preconditions as paired_ratio_test, and at least 2 pairs (std::invalid_argument).
RatioTest paired_log_ratio_t(std::span<const double> treatment, std::span<const double> baseline,
                             double confidence = 0.95);

// The sample SD of the paired log-ratios (0 below 2 pairs); same preconditions on the values.
double log_ratio_sd(std::span<const double> treatment, std::span<const double> baseline);

// The fewest pairs (>= 2) at which a paired t-interval at `confidence` has a half-width of at
// most `half_width` on the log scale when the log-ratios' SD is `sd`; `most` when none up to it.
std::size_t blocks_for_half_width(double sd, double half_width, double confidence, std::size_t most);

// A ratio of two runs (unpaired) whose interval `within` holds only the noise the runs' own
// blocks show, widened by the spread between runs that no block shows (another boot, clock or
// memory layout): each run's level moves by a log-normal factor of SD `run_sd`, so their ratio
// by one of SD sqrt(2) * run_sd, added in quadrature on the log scale to each side's half-width
// (the within part read as normal at `confidence`). The p-value is the larger of the within one
// and the normal test of the ratio against the total. run_sd = 0 returns `within`. Throws
// std::invalid_argument on a negative or NaN run_sd, a non-positive ratio or interval end, or a
// confidence outside (0, 1).
RatioTest with_between_run_spread(const RatioTest& within, double run_sd, double confidence = 0.95);

struct MedianInterval {
  double median = 0;
  double ci_low = 0;  // percentile bootstrap interval of the median
  double ci_high = 0;
  std::size_t n = 0;
};

// The median of one sample with a percentile bootstrap interval. Values must be finite (any
// sign); throws std::invalid_argument on an empty sample or bad options.
MedianInterval median_interval(std::span<const double> xs, const BootstrapOptions& options = {});

// Holm-Bonferroni step-down: which hypotheses to reject so that the family-wise error rate over
// all of them stays at most alpha. result[i] belongs to p_values[i]. Throws std::invalid_argument
// when alpha is not in (0, 1) or a p-value is not in [0, 1].
std::vector<bool> holm_reject(std::span<const double> p_values, double alpha);

// faster/slower: significant and beyond the practical threshold. under_threshold: significant (the
// interval excludes 1) but the change is under the threshold (zero_grad's x0.987 [0.9870, 0.9875]
// on an H100). no_significant_difference: the interval holds 1 (no detectable difference).
enum class Verdict { faster, slower, under_threshold, no_significant_difference };
std::string_view to_string(Verdict verdict);  // the result file's word: "under_threshold"
// The words every summary, comparison and report shows: "faster", "slower", "significant, under
// the threshold", "no detectable difference".
std::string_view verdict_words(Verdict verdict);

struct VerdictPolicy {
  double practical_threshold = 0.02;  // the smallest relative change that matters
  bool higher_is_better = true;       // throughput: true; step time, memory: false
};

// faster/slower needs both: the interval excludes 1 (statistical) and the point estimate moves
// by at least the threshold (practical); an interval that excludes 1 with a smaller move is
// under_threshold; an interval that holds 1 is no_significant_difference.
// "Moves by at least" means |ratio - 1| >= practical_threshold, on the side the interval is on.
// Throws std::invalid_argument on a negative or NaN threshold.
Verdict decide(const RatioEstimate& estimate, const VerdictPolicy& policy);

// Blocks needed to resolve a relative effect delta at coefficient of variation cv
// (about 30 * (cv / delta)^2, at least 2). Used in the recommendation of a noisy row.
// Throws std::invalid_argument when delta <= 0 or cv < 0 (or either is NaN).
std::size_t blocks_needed(double cv, double delta);

}  // namespace tipbench::stats
