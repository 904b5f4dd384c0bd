#include "tipbench/statistics/stats.h"

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

namespace tipbench::stats {
namespace {

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument("tipbench::stats: " + message); }

// Type-7 quantile of a buffer we own; reorders it. nth_element keeps the bootstrap loop O(n) per
// resample, and sharing this one routine keeps median() and the bootstrap bit-identical.
double quantile_in_place(std::vector<double>& xs, double q) {
  const double h = q * static_cast<double>(xs.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const auto lo_it = xs.begin() + static_cast<std::ptrdiff_t>(lo);
  std::nth_element(xs.begin(), lo_it, xs.end());
  const double below = *lo_it;
  const double frac = h - static_cast<double>(lo);
  if (frac == 0.0) return below;
  // After nth_element everything right of lo is >= below, so the next order statistic is the
  // smallest of that range.
  const double above = *std::min_element(lo_it + 1, xs.end());
  return below + frac * (above - below);
}

double mean_of(std::span<const double> xs) {
  return std::accumulate(xs.begin(), xs.end(), 0.0) / static_cast<double>(xs.size());
}

// Uniform index in [0, n) from a 64-bit engine, by modulo with rejection (as OpenBSD's
// arc4random_uniform). std::uniform_int_distribution is implementation-defined, so it would give
// different resamples, and different intervals, on libstdc++ and libc++; mt19937_64 itself is
// fully specified by the standard.
std::size_t uniform_index(std::mt19937_64& rng, std::uint64_t n) {
  // 2^64 mod n: draws below it would make the low residues slightly more likely.
  const std::uint64_t reject_below = (0 - n) % n;
  std::uint64_t draw = rng();
  while (draw < reject_below) draw = rng();
  return static_cast<std::size_t>(draw % n);
}

void validate_pairs(std::span<const double> treatment, std::span<const double> baseline) {
  if (treatment.empty() || baseline.empty()) fail("paired samples must not be empty");
  if (treatment.size() != baseline.size()) {
    fail("paired samples differ in length: treatment has " + std::to_string(treatment.size()) +
         " blocks, baseline has " + std::to_string(baseline.size()));
  }
  for (std::size_t i = 0; i < treatment.size(); ++i) {
    for (double v : {treatment[i], baseline[i]}) {
      // A ratio needs positive, finite values; !(v > 0) also catches NaN.
      if (!(v > 0) || !std::isfinite(v)) {
        fail("paired samples must be positive and finite; block " + std::to_string(i) + " has " + std::to_string(v));
      }
    }
  }
}

void validate_options(const BootstrapOptions& options) {
  if (options.resamples == 0) fail("bootstrap needs at least one resample");
  if (!(options.confidence > 0 && options.confidence < 1)) {
    fail("confidence must be in (0, 1), got " + std::to_string(options.confidence));
  }
}

// Ratio of medians for every bootstrap resample of the blocks, pairs kept together.
std::vector<double> bootstrap_ratios(std::span<const double> treatment, std::span<const double> baseline,
                                     const BootstrapOptions& options) {
  const std::size_t n = treatment.size();
  std::mt19937_64 rng(options.seed);
  std::vector<double> t(n);
  std::vector<double> b(n);
  std::vector<double> ratios(options.resamples);
  for (double& ratio : ratios) {
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t block = uniform_index(rng, n);
      t[j] = treatment[block];
      b[j] = baseline[block];
    }
    ratio = quantile_in_place(t, 0.5) / quantile_in_place(b, 0.5);
  }
  return ratios;
}

// Two-sided p-value for "ratio = 1" from the bootstrap distribution. Ties at exactly 1 count on
// both sides, which errs towards not rejecting.
double bootstrap_p_value(std::span<const double> ratios) {
  const auto at_or_below = std::ranges::count_if(ratios, [](double r) { return r <= 1; });
  const auto at_or_above = std::ranges::count_if(ratios, [](double r) { return r >= 1; });
  const double tail =
      static_cast<double>(std::min(at_or_below, at_or_above) + 1) / static_cast<double>(ratios.size() + 1);
  return std::min(1.0, 2 * tail);
}

}  // namespace

double quantile(std::span<const double> xs, double q) {
  if (xs.empty()) fail("quantile of an empty sample");
  if (!(q >= 0 && q <= 1)) fail("quantile q must be in [0, 1], got " + std::to_string(q));
  if (std::any_of(xs.begin(), xs.end(), [](double x) { return std::isnan(x); })) {
    fail("quantile of a sample that contains NaN");
  }
  std::vector<double> copy(xs.begin(), xs.end());
  return quantile_in_place(copy, q);
}

double median(std::span<const double> xs) { return quantile(xs, 0.5); }

double coefficient_of_variation(std::span<const double> xs) {
  if (xs.size() < 2) return 0;
  const double mean = mean_of(xs);
  if (mean == 0) return 0;
  // Two passes: the one-pass sum-of-squares formula cancels badly when the spread is tiny
  // relative to the mean, which is exactly the case for stable step times.
  double squares = 0;
  for (double x : xs) squares += (x - mean) * (x - mean);
  const double sd = std::sqrt(squares / static_cast<double>(xs.size() - 1));
  return sd / std::abs(mean);
}

Summary summarize(std::span<const double> xs) {
  if (xs.empty()) fail("summary of an empty sample");
  return Summary{.median = median(xs),
                 .p10 = quantile(xs, 0.10),
                 .p90 = quantile(xs, 0.90),
                 .mean = mean_of(xs),
                 .cv = coefficient_of_variation(xs),
                 .n = xs.size()};
}

namespace {

// The test from its bootstrap distribution: the point ratio of the medians, the percentile
// interval and the two-sided p-value of "no change".
RatioTest ratio_test_from(std::vector<double> ratios, std::span<const double> treatment,
                          std::span<const double> baseline, double confidence, std::size_t blocks) {
  const double p_value = bootstrap_p_value(ratios);
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1 - confidence) / 2;
  RatioEstimate estimate{.ratio = median(treatment) / median(baseline),
                         .ci_low = quantile(ratios, tail),
                         .ci_high = quantile(ratios, 1 - tail),
                         .blocks = blocks};
  return RatioTest{.estimate = estimate, .p_value = p_value};
}

}  // namespace

RatioTest paired_ratio_test(std::span<const double> treatment, std::span<const double> baseline,
                            const BootstrapOptions& options) {
  validate_pairs(treatment, baseline);
  validate_options(options);
  std::vector<double> ratios = bootstrap_ratios(treatment, baseline, options);
  return ratio_test_from(std::move(ratios), treatment, baseline, options.confidence, treatment.size());
}

RatioEstimate paired_ratio_of_medians(std::span<const double> treatment, std::span<const double> baseline,
                                      const BootstrapOptions& options) {
  return paired_ratio_test(treatment, baseline, options).estimate;
}

RatioTest unpaired_ratio_test(std::span<const double> treatment, std::span<const double> baseline,
                              const BootstrapOptions& options) {
  if (treatment.empty() || baseline.empty()) fail("unpaired samples must not be empty");
  for (auto side : {treatment, baseline}) {
    for (double v : side) {
      if (!(v > 0) || !std::isfinite(v)) {
        fail("unpaired samples must be positive and finite, got " + std::to_string(v));
      }
    }
  }
  validate_options(options);
  // One engine drives both sides in a fixed order, so the result depends on the seed alone.
  std::mt19937_64 rng(options.seed);
  std::vector<double> t(treatment.size());
  std::vector<double> b(baseline.size());
  std::vector<double> ratios(options.resamples);
  for (double& ratio : ratios) {
    for (double& x : t) x = treatment[uniform_index(rng, treatment.size())];
    for (double& x : b) x = baseline[uniform_index(rng, baseline.size())];
    ratio = quantile_in_place(t, 0.5) / quantile_in_place(b, 0.5);
  }
  return ratio_test_from(std::move(ratios), treatment, baseline, options.confidence,
                         std::min(treatment.size(), baseline.size()));
}

namespace {

std::vector<double> log_ratios(std::span<const double> treatment, std::span<const double> baseline) {
  validate_pairs(treatment, baseline);
  std::vector<double> out(treatment.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::log(treatment[i] / baseline[i]);
  return out;
}

double sample_sd(std::span<const double> xs) {
  if (xs.size() < 2) return 0;
  const double m = mean_of(xs);
  double squares = 0;
  for (double x : xs) squares += (x - m) * (x - m);
  return std::sqrt(squares / static_cast<double>(xs.size() - 1));
}

}  // namespace

double t_quantile(double df, double confidence) {
  const boost::math::students_t t(df);
  return boost::math::quantile(boost::math::complement(t, (1 - confidence) / 2));
}

RatioTest paired_log_ratio_t(std::span<const double> treatment, std::span<const double> baseline, double confidence) {
  const std::vector<double> logs = log_ratios(treatment, baseline);
  if (logs.size() < 2) fail("a t-interval needs at least 2 paired blocks, got " + std::to_string(logs.size()));
  if (!(confidence > 0 && confidence < 1)) fail("confidence must be in (0, 1), got " + std::to_string(confidence));
  const double n = static_cast<double>(logs.size());
  const double m = mean_of(logs);
  const double se = sample_sd(logs) / std::sqrt(n);
  const double half = t_quantile(logs.size() - 1, confidence) * se;
  double p_value = 1;
  if (se > 0) {
    const boost::math::students_t t(n - 1);
    p_value = std::min(1.0, 2 * boost::math::cdf(boost::math::complement(t, std::abs(m) / se)));
  } else if (m != 0) {
    p_value = 0;  // every block moved by the same factor: no noise left to explain it
  }
  return RatioTest{.estimate = {.ratio = std::exp(m),
                                .ci_low = std::exp(m - half),
                                .ci_high = std::exp(m + half),
                                .blocks = logs.size()},
                   .p_value = p_value};
}

double log_ratio_sd(std::span<const double> treatment, std::span<const double> baseline) {
  return sample_sd(log_ratios(treatment, baseline));
}

std::size_t blocks_for_half_width(double sd, double half_width, double confidence, std::size_t most) {
  if (!(sd >= 0) || !(half_width > 0)) fail("blocks_for_half_width: needs sd >= 0 and half_width > 0");
  if (!(confidence > 0 && confidence < 1)) fail("confidence must be in (0, 1), got " + std::to_string(confidence));
  // t(n-1) is above the normal quantile z, so no n below (z * sd / half_width)^2 is enough.
  const double z = boost::math::quantile(boost::math::complement(boost::math::normal(), (1 - confidence) / 2));
  const double floor_n = std::pow(z * sd / half_width, 2);
  if (!(floor_n < static_cast<double>(most))) return most;
  for (std::size_t n = std::max<std::size_t>(2, static_cast<std::size_t>(floor_n)); n <= most; ++n) {
    if (t_quantile(n - 1, confidence) * sd / std::sqrt(static_cast<double>(n)) <= half_width) return n;
  }
  return most;
}

RatioTest with_between_run_spread(const RatioTest& within, double run_sd, double confidence) {
  if (!(run_sd >= 0)) fail("with_between_run_spread: run_sd must be >= 0");
  if (!(confidence > 0 && confidence < 1)) fail("confidence must be in (0, 1), got " + std::to_string(confidence));
  const auto& e = within.estimate;
  if (!(e.ratio > 0 && e.ci_low > 0 && e.ci_high > 0)) fail("with_between_run_spread: ratios must be positive");
  if (run_sd == 0) return within;
  const double z = boost::math::quantile(boost::math::complement(boost::math::normal(), (1 - confidence) / 2));
  const double m = std::log(e.ratio);
  const double between = std::sqrt(2.0) * run_sd;  // two runs, each off by its own factor
  const double low = std::hypot(m - std::log(e.ci_low), z * between);
  const double high = std::hypot(std::log(e.ci_high) - m, z * between);
  const double se = (low + high) / (2 * z);
  const double p_total = 2 * boost::math::cdf(boost::math::complement(boost::math::normal(), std::abs(m) / se));
  RatioTest out = within;
  out.estimate.ci_low = std::exp(m - low);
  out.estimate.ci_high = std::exp(m + high);
  out.p_value = std::min(1.0, std::max(within.p_value, p_total));
  return out;
}

MedianInterval median_interval(std::span<const double> xs, const BootstrapOptions& options) {
  if (xs.empty()) fail("median interval of an empty sample");
  for (double v : xs) {
    if (!std::isfinite(v)) fail("median interval of a sample with a non-finite value");
  }
  validate_options(options);
  std::mt19937_64 rng(options.seed);
  std::vector<double> resample(xs.size());
  std::vector<double> medians(options.resamples);
  for (double& m : medians) {
    for (double& x : resample) x = xs[uniform_index(rng, xs.size())];
    m = quantile_in_place(resample, 0.5);
  }
  const double tail = (1 - options.confidence) / 2;
  return MedianInterval{
      .median = median(xs), .ci_low = quantile(medians, tail), .ci_high = quantile(medians, 1 - tail), .n = xs.size()};
}

std::vector<bool> holm_reject(std::span<const double> p_values, double alpha) {
  if (!(alpha > 0 && alpha < 1)) fail("alpha must be in (0, 1), got " + std::to_string(alpha));
  for (double p : p_values) {
    if (!(p >= 0 && p <= 1)) fail("p-values must be in [0, 1], got " + std::to_string(p));
  }
  const std::size_t m = p_values.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Stable, so equal p-values keep their input order and the result is deterministic.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p_values[a] < p_values[b]; });
  std::vector<bool> reject(m, false);
  // Step down from the smallest p-value; the k-th smallest is tested at alpha / (m - k). The first
  // one that survives stops the procedure: every larger p-value survives too.
  for (std::size_t k = 0; k < m; ++k) {
    if (p_values[order[k]] > alpha / static_cast<double>(m - k)) break;
    reject[order[k]] = true;
  }
  return reject;
}

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::faster: return "faster";
    case Verdict::slower: return "slower";
    case Verdict::under_threshold: return "under_threshold";
    case Verdict::no_significant_difference: return "no_significant_difference";
  }
  return "unknown";
}

std::string_view verdict_words(Verdict verdict) {
  switch (verdict) {
    case Verdict::faster: return "faster";
    case Verdict::slower: return "slower";
    case Verdict::under_threshold: return "significant, under the threshold";
    case Verdict::no_significant_difference: return "no detectable difference";
  }
  return "unknown";
}

Verdict decide(const RatioEstimate& estimate, const VerdictPolicy& policy) {
  if (!(policy.practical_threshold >= 0)) {
    fail("practical_threshold must be >= 0, got " + std::to_string(policy.practical_threshold));
  }
  // Both tests must point the same way: the interval on one side of 1 and the point estimate far
  // enough out on that same side.
  const bool went_up = estimate.ci_low > 1 && estimate.ratio - 1 >= policy.practical_threshold;
  const bool went_down = estimate.ci_high < 1 && 1 - estimate.ratio >= policy.practical_threshold;
  if (!went_up && !went_down) {
    const bool significant = estimate.ci_low > 1 || estimate.ci_high < 1;
    return significant ? Verdict::under_threshold : Verdict::no_significant_difference;
  }
  // A higher ratio is good news for throughput and bad news for step time or memory.
  return went_up == policy.higher_is_better ? Verdict::faster : Verdict::slower;
}

std::size_t blocks_needed(double cv, double delta) {
  if (!(delta > 0)) fail("blocks_needed: delta must be > 0, got " + std::to_string(delta));
  if (!(cv >= 0)) fail("blocks_needed: cv must be >= 0, got " + std::to_string(cv));
  const double ratio = cv / delta;
  const double exact = 30 * ratio * ratio;
  // Values like 0.02/0.01 are not exact in binary; without the slack 30 * 2^2 could come out as
  // 120.00000000000001 and round up to 121.
  constexpr double slack = 1e-9;
  const double rounded = std::ceil(exact - slack);
  // Past this the cast would overflow; no one will run that many blocks anyway.
  constexpr auto most = std::numeric_limits<std::size_t>::max();
  if (!(rounded < static_cast<double>(most))) return most;
  return std::max<std::size_t>(2, static_cast<std::size_t>(rounded));
}

}  // namespace tipbench::stats
