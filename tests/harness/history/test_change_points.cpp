// The change-point detector (tipbench/history/change_points.h) on series whose answer is known:
// no change in noise, a step found where it was planted with an interval holding its size, a
// trailing step needing two runs beyond it, two steps, and the run-to-run noise estimate.
#include "tipbench/history/change_points.h"

#include <gtest/gtest.h>

#include <random>

namespace {

namespace h = tipbench::history;

// `n` points around 100 with relative noise `cv`; from `step_at` on (if < n) times `factor`.
std::vector<double> series(std::size_t n, double cv, std::uint64_t seed, std::size_t step_at = SIZE_MAX,
                           double factor = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, cv);
  std::vector<double> x;
  for (std::size_t i = 0; i < n; ++i) x.push_back(100 * (i >= step_at ? factor : 1.0) * (1 + noise(rng)));
  return x;
}

TEST(ChangePoints, NoneInStepFreeNoise) {
  // With the bound `history detect` sets (1.5 x the noise): docs/history.md measures the rate.
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    EXPECT_TRUE(h::find_change_points(series(100, 0.02, seed), {.min_change = 0.03}).empty()) << "seed " << seed;
  }
}

TEST(ChangePoints, FindsAPlantedStepWithItsSize) {
  const auto x = series(100, 0.02, 7, 60, 0.90);
  const auto points = h::find_change_points(x, {});
  ASSERT_EQ(points.size(), 1u);
  const auto& p = points[0];
  EXPECT_NEAR(static_cast<double>(p.index), 60.0, 1.0);
  EXPECT_LE(p.p_value, 0.001);
  EXPECT_LT(p.ratio_low, p.ratio);
  EXPECT_GT(p.ratio_high, p.ratio);
  EXPECT_LE(p.ratio_low, 0.90 + 0.01);  // the interval holds the planted factor (CV 2% / sqrt(40))
  EXPECT_GE(p.ratio_high, 0.90 - 0.01);
  EXPECT_EQ(p.n_before + p.n_after, 100u);
}

TEST(ChangePoints, TwoStepsBothFound) {
  auto x = series(120, 0.01, 3, 40, 0.8);
  for (std::size_t i = 80; i < x.size(); ++i) x[i] *= 1.25 * 1.1;  // back up, and then some
  const auto points = h::find_change_points(x, {});
  ASSERT_EQ(points.size(), 2u);
  EXPECT_NEAR(static_cast<double>(points[0].index), 40.0, 1.0);
  EXPECT_NEAR(static_cast<double>(points[1].index), 80.0, 1.0);
  EXPECT_LT(points[0].ratio, 1.0);
  EXPECT_GT(points[1].ratio, 1.0);
}

TEST(ChangePoints, ATrailingStepNeedsTwoRunsBeyondIt) {
  auto x = series(60, 0.01, 5);
  x.push_back(50);  // one run far off at the end: not a change yet
  EXPECT_TRUE(h::find_change_points(x, {}).empty());
  x.push_back(50);  // a second: now it is
  const auto points = h::find_change_points(x, {});
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].index, 60u);
  EXPECT_EQ(points[0].n_after, 2u);
}

TEST(ChangePoints, MinChangeDropsSmallSignificantSteps) {
  const auto x = series(100, 0.001, 11, 50, 1.005);  // a significant 0.5% step at CV 0.1%
  ASSERT_EQ(h::find_change_points(x, {}).size(), 1u);
  EXPECT_TRUE(h::find_change_points(x, {.min_change = 0.01}).empty());
}

TEST(ChangePoints, ConstantSidesSplitWithoutNoise) {
  std::vector<double> x(30, 5.0);
  for (std::size_t i = 20; i < x.size(); ++i) x[i] = 6.0;
  const auto points = h::find_change_points(x, {});
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].index, 20u);
  EXPECT_EQ(points[0].p_value, 0.0);
  EXPECT_DOUBLE_EQ(points[0].ratio, 1.2);
  EXPECT_TRUE(h::find_change_points(std::vector<double>(30, 5.0), {}).empty());
  EXPECT_TRUE(h::find_change_points({}, {}).empty());
  EXPECT_TRUE(h::find_change_points({1.0, 2.0, 3.0}, {}).empty());
}

TEST(ChangePoints, LongSeriesAcrossWindows) {
  const auto x = series(400, 0.02, 13, 310, 1.10);
  const auto points = h::find_change_points(x, {});
  ASSERT_EQ(points.size(), 1u);
  EXPECT_NEAR(static_cast<double>(points[0].index), 310.0, 1.0);
}

TEST(ChangePoints, RunToRunNoiseIsTheSeriesCv) {
  // 1.4826 * median|dx| / sqrt(2) estimates sigma for normal noise; a step is one difference of many.
  EXPECT_NEAR(h::run_to_run_noise(series(2000, 0.03, 17)), 0.03, 0.003);
  const double with_step = h::run_to_run_noise(series(2000, 0.03, 17, 1000, 0.7));
  EXPECT_GT(with_step, 0.02);  // the two sides' noise (3 and 2.1 around 100 and 70) over the
  EXPECT_LT(with_step, 0.04);  // median level, not the 30% step
  EXPECT_EQ(h::run_to_run_noise({1.0, 2.0}), 0.0);
}

}  // namespace
