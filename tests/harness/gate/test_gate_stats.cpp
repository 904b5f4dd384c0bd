// The statistics the gate adds to tipbench::stats, on synthetic sample streams with known
// answers: the unpaired ratio test (stored baselines: two independent runs) and the median
// interval that `compare` shows per run.
#include "tipbench/statistics/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <vector>

namespace {

namespace st = tipbench::stats;

std::vector<double> draw(std::mt19937_64& rng, std::size_t n, double median, double cv) {
  std::normal_distribution<double> noise(0.0, cv);
  std::vector<double> xs(n);
  for (double& x : xs) x = median * (1 + noise(rng));
  return xs;
}

TEST(UnpairedRatio, PointEstimateIsTheRatioOfMedians) {
  const std::vector<double> t{10, 12, 11};
  const std::vector<double> b{20, 22, 21, 19};
  const auto r = st::unpaired_ratio_test(t, b, {.seed = 1});
  EXPECT_DOUBLE_EQ(r.estimate.ratio, 11.0 / 20.5);
  EXPECT_EQ(r.estimate.blocks, 3u);  // the smaller side
  EXPECT_LE(r.estimate.ci_low, r.estimate.ratio);
  EXPECT_GE(r.estimate.ci_high, r.estimate.ratio);
}

TEST(UnpairedRatio, IsDeterministicForASeedAndVariesWithIt) {
  std::mt19937_64 rng(7);
  const auto t = draw(rng, 12, 100, 0.05);
  const auto b = draw(rng, 9, 100, 0.05);
  const auto a1 = st::unpaired_ratio_test(t, b, {.seed = 3});
  const auto a2 = st::unpaired_ratio_test(t, b, {.seed = 3});
  EXPECT_EQ(a1.estimate.ci_low, a2.estimate.ci_low);
  EXPECT_EQ(a1.estimate.ci_high, a2.estimate.ci_high);
  EXPECT_EQ(a1.p_value, a2.p_value);
  // Interval ends are order statistics of a discrete set, so two seeds can agree by chance; ten cannot.
  std::set<double> lows;
  for (std::uint64_t seed = 10; seed < 20; ++seed)
    lows.insert(st::unpaired_ratio_test(t, b, {.seed = seed}).estimate.ci_low);
  EXPECT_GT(lows.size(), 1u);
}

TEST(UnpairedRatio, RejectsInvalidInput) {
  const std::vector<double> ok{1, 2, 3};
  EXPECT_THROW(st::unpaired_ratio_test({}, ok), std::invalid_argument);
  EXPECT_THROW(st::unpaired_ratio_test(ok, {}), std::invalid_argument);
  EXPECT_THROW(st::unpaired_ratio_test(std::vector<double>{1, 0, 2}, ok), std::invalid_argument);
  EXPECT_THROW(st::unpaired_ratio_test(ok, std::vector<double>{1, -1}), std::invalid_argument);
  EXPECT_THROW(st::unpaired_ratio_test(ok, std::vector<double>{1, NAN}), std::invalid_argument);
  EXPECT_THROW(st::unpaired_ratio_test(ok, ok, {.resamples = 0}), std::invalid_argument);
  EXPECT_THROW(st::unpaired_ratio_test(ok, ok, {.confidence = 1.0}), std::invalid_argument);
}

// 95% intervals of independent samples (10 blocks a side, 2% noise) cover a known 0.95 ratio.
TEST(UnpairedRatio, NinetyFivePercentIntervalCoversTheTruth) {
  std::mt19937_64 rng(11);
  int covered = 0;
  constexpr int kExperiments = 200;
  for (int e = 0; e < kExperiments; ++e) {
    const auto t = draw(rng, 10, 95, 0.02);
    const auto b = draw(rng, 10, 100, 0.02);
    const auto r = st::unpaired_ratio_test(t, b, {.seed = static_cast<std::uint64_t>(e)});
    covered += r.estimate.ci_low <= 0.95 && 0.95 <= r.estimate.ci_high;
  }
  // A percentile bootstrap of medians at n=10 under-covers a little; 85% is the floor we accept.
  EXPECT_GE(covered, 170) << covered << " of " << kExperiments;
}

// A/A: p < 0.05 in about 5% of experiments at most (the bootstrap is somewhat liberal at small n).
TEST(UnpairedRatio, AAGivesFewSmallPValues) {
  std::mt19937_64 rng(5);
  int small = 0;
  constexpr int kExperiments = 200;
  for (int e = 0; e < kExperiments; ++e) {
    const auto t = draw(rng, 10, 100, 0.02);
    const auto b = draw(rng, 10, 100, 0.02);
    small += st::unpaired_ratio_test(t, b, {.seed = static_cast<std::uint64_t>(e)}).p_value < 0.05;
  }
  EXPECT_LE(small, 25) << small << " of " << kExperiments;
}

TEST(UnpairedRatio, CatchesAPlantedFivePercentSlowdown) {
  std::mt19937_64 rng(9);
  int caught = 0;
  for (int e = 0; e < 50; ++e) {
    const auto t = draw(rng, 10, 95, 0.01);
    const auto b = draw(rng, 10, 100, 0.01);
    const auto r = st::unpaired_ratio_test(t, b, {.seed = static_cast<std::uint64_t>(e)});
    caught += r.p_value < 0.01 && r.estimate.ci_high < 1;
  }
  EXPECT_EQ(caught, 50);
}

TEST(UnpairedRatio, PValueResolutionIsBoundedByResamples) {
  const std::vector<double> slow{50, 51, 52, 50, 51};
  const std::vector<double> fast{100, 101, 99, 100, 102};
  const auto r = st::unpaired_ratio_test(slow, fast, {.resamples = 999});
  EXPECT_DOUBLE_EQ(r.p_value, 2.0 / 1000.0);  // every resample below 1: (0 + 1) / (999 + 1), twice
}

// The between-run spread widens each side in quadrature on the log scale: an interval of zero
// width becomes exp(+-1.96 * sqrt(2) * sd); the p-value only grows; sd 0 changes nothing.
TEST(BetweenRunSpread, WidensTheIntervalInQuadratureAndNeverShrinksThePValue) {
  const st::RatioTest tight{.estimate = {.ratio = 0.99, .ci_low = 0.99, .ci_high = 0.99, .blocks = 10},
                            .p_value = 0.001};
  const auto wide = st::with_between_run_spread(tight, 0.005);
  const double z = 1.959963984540054;
  EXPECT_NEAR(std::log(wide.estimate.ci_high / 0.99), z * std::sqrt(2.0) * 0.005, 1e-9);
  EXPECT_NEAR(std::log(0.99 / wide.estimate.ci_low), z * std::sqrt(2.0) * 0.005, 1e-9);
  EXPECT_DOUBLE_EQ(wide.estimate.ratio, 0.99);
  // |log 0.99| / (sqrt(2) * 0.005) = 1.42 standard errors: p about 0.16.
  EXPECT_NEAR(wide.p_value, 0.155, 0.01);
  const st::RatioTest already{.estimate = {.ratio = 1.1, .ci_low = 1.0, .ci_high = 1.2, .blocks = 5}, .p_value = 0.04};
  const auto both = st::with_between_run_spread(already, 0.01);
  EXPECT_LT(both.estimate.ci_low, 1.0);
  EXPECT_GT(both.estimate.ci_high, 1.2);
  EXPECT_GE(both.p_value, 0.04);
  const auto none = st::with_between_run_spread(already, 0);
  EXPECT_EQ(none.estimate.ci_low, already.estimate.ci_low);
  EXPECT_EQ(none.p_value, already.p_value);
  EXPECT_THROW(st::with_between_run_spread(already, -0.01), std::invalid_argument);
  EXPECT_THROW(st::with_between_run_spread(already, std::nan("")), std::invalid_argument);
}

TEST(MedianInterval, BracketsTheMedianAndIsDeterministic) {
  std::mt19937_64 rng(2);
  const auto xs = draw(rng, 15, 50, 0.05);
  const auto a = st::median_interval(xs, {.seed = 1});
  const auto b = st::median_interval(xs, {.seed = 1});
  EXPECT_DOUBLE_EQ(a.median, st::median(xs));
  EXPECT_LE(a.ci_low, a.median);
  EXPECT_GE(a.ci_high, a.median);
  EXPECT_EQ(a.ci_low, b.ci_low);
  EXPECT_EQ(a.n, 15u);
}

TEST(MedianInterval, SingleValueHasAZeroWidthInterval) {
  const auto a = st::median_interval(std::vector<double>{4.5});
  EXPECT_EQ(a.ci_low, 4.5);
  EXPECT_EQ(a.ci_high, 4.5);
}

TEST(MedianInterval, RejectsEmptyAndNonFinite) {
  EXPECT_THROW(st::median_interval(std::vector<double>{}), std::invalid_argument);
  EXPECT_THROW(st::median_interval(std::vector<double>{1, INFINITY}), std::invalid_argument);
}

}  // namespace
