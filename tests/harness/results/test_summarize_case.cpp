// The case summaries and comparisons (summarize_case) on synthetic trials: ratios, intervals,
// verdicts and what they refuse.
#include "tipbench/common/atomic_file.h"
#include "tipbench/common/progress.h"
#include "tipbench/results/result.h"
#include "tipbench/common/json_number.h"
#include "tipbench/statistics/settings.h"
#include "tipbench/results/summary.h"

#include "scratch_dir.h"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fcntl.h>
#include <functional>
#include <limits>
#include <map>
#include <numbers>
#include <random>
#include <regex>
#include <string>
#include <vector>
#include "sample_result.h"

namespace {

using tipbench::ArmResult;
using tipbench::ArmStatus;
using tipbench::CaseResult;
using tipbench::Comparison;
using tipbench::MeasureSettings;
using tipbench::Trial;
using tipbench::stats::Verdict;
using tipbench::testing::sample_result;

// ---------------------------------------------------------------------------------------------
// summarize_case on synthetic trials

// Lognormal multiplicative noise with median 1 and coefficient of variation cv, from our own
// Box-Muller draw so the data do not depend on the standard library's distributions.
class Noise {
 public:
  explicit Noise(std::uint64_t seed) : rng_(seed) {}
  double factor(double cv) {
    if (cv == 0) return 1;
    const double u1 = (static_cast<double>(rng_() >> 11) + 0.5) / 9007199254740992.0;
    const double u2 = (static_cast<double>(rng_() >> 11) + 0.5) / 9007199254740992.0;
    const double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
    const double sigma = std::sqrt(std::log1p(cv * cv));
    return std::exp(sigma * z);
  }

 private:
  std::mt19937_64 rng_;
};

ArmResult synthetic_arm(const std::string& arm, bool baseline, const std::vector<int>& blocks, double throughput,
                        double cv, Noise& noise, std::optional<std::int64_t> rss = std::nullopt) {
  ArmResult a;
  a.arm = arm;
  a.name = "suite/model:m/arm:" + arm;
  a.baseline = baseline;
  for (int b : blocks) {
    Trial t;
    t.block = b;
    t.samples_per_step = 32;
    t.throughput_samples_per_s = throughput * noise.factor(cv);
    const double step_ms = 1000.0 * 32 / t.throughput_samples_per_s;
    t.step_times_ms.assign(20, step_ms);
    if (rss) t.memory.peak_rss_growth_bytes = *rss;
    a.trials.push_back(std::move(t));
  }
  return a;
}

std::vector<int> blocks_upto(int n) {
  std::vector<int> out;
  for (int b = 0; b < n; ++b) out.push_back(b);
  return out;
}

MeasureSettings summary_settings() {
  MeasureSettings s;
  s.seed = 7;
  return s;
}

TEST(SummarizeCase, PlantedTenPercentSlowdownIsSlower) {
  Noise noise(1);
  CaseResult c;
  c.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.003, noise),
            synthetic_arm("treat", false, blocks_upto(10), 900, 0.003, noise)};
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.comparisons.size(), 1u);  // no memory figures, so no memory comparison
  const Comparison& cmp = c.comparisons[0];
  EXPECT_EQ(cmp.treatment, "treat");
  EXPECT_EQ(cmp.baseline, "base");
  EXPECT_EQ(cmp.metric, "throughput_samples_per_s");
  EXPECT_NEAR(cmp.estimate.ratio, 0.9, 0.01);
  EXPECT_LT(cmp.estimate.ci_low, cmp.estimate.ratio);
  EXPECT_GT(cmp.estimate.ci_high, cmp.estimate.ratio);
  EXPECT_LT(cmp.estimate.ci_high, 1.0);
  EXPECT_EQ(cmp.estimate.blocks, 10u);
  EXPECT_EQ(cmp.verdict, Verdict::slower);
  EXPECT_FALSE(cmp.noisy);
  EXPECT_TRUE(cmp.recommendation.empty());

  // Arm summaries are filled in too.
  EXPECT_EQ(c.arms[0].throughput_samples_per_s.n, 10u);
  EXPECT_NEAR(c.arms[0].throughput_samples_per_s.median, 1000, 10);
  EXPECT_NEAR(c.arms[1].throughput_samples_per_s.median, 900, 9);
  EXPECT_EQ(c.arms[1].step_time_ms.n, 200u);
  EXPECT_NEAR(c.arms[1].step_time_ms.median, 1000.0 * 32 / 900, 0.5);
  EXPECT_FALSE(c.arms[0].peak_memory_bytes.has_value());
}

TEST(SummarizeCase, PlantedSpeedupIsFaster) {
  Noise noise(2);
  CaseResult c;
  c.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.003, noise),
            synthetic_arm("treat", false, blocks_upto(10), 1100, 0.003, noise)};
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.comparisons.size(), 1u);
  EXPECT_NEAR(c.comparisons[0].estimate.ratio, 1.1, 0.011);
  EXPECT_EQ(c.comparisons[0].verdict, Verdict::faster);
}

TEST(SummarizeCase, IdenticalArmsShowNoSignificantDifference) {
  Noise noise(3);
  CaseResult c;
  ArmResult base = synthetic_arm("base", true, blocks_upto(10), 1000, 0.003, noise);
  ArmResult same = base;
  same.arm = "same";
  same.baseline = false;
  c.arms = {base, same};
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.comparisons.size(), 1u);
  EXPECT_DOUBLE_EQ(c.comparisons[0].estimate.ratio, 1.0);
  EXPECT_EQ(c.comparisons[0].verdict, Verdict::no_significant_difference);
  EXPECT_FALSE(c.comparisons[0].noisy);
}

TEST(SummarizeCase, AaArmsWithIndependentNoiseShowNoSignificantDifference) {
  for (std::uint64_t seed = 10; seed < 30; ++seed) {
    SCOPED_TRACE(seed);
    Noise noise(seed);
    CaseResult c;
    c.arms = {synthetic_arm("a", true, blocks_upto(10), 1000, 0.004, noise),
              synthetic_arm("b", false, blocks_upto(10), 1000, 0.004, noise)};
    tipbench::summarize_case(c, summary_settings());
    ASSERT_EQ(c.comparisons.size(), 1u);
    EXPECT_NEAR(c.comparisons[0].estimate.ratio, 1.0, 0.01);
    // Never faster or slower; an interval that misses 1 by chance (5% of A/A runs) is a change
    // under the threshold, not a finding.
    EXPECT_NE(c.comparisons[0].verdict, Verdict::faster);
    EXPECT_NE(c.comparisons[0].verdict, Verdict::slower);
  }
}

TEST(SummarizeCase, NoisyArmsAreMarkedWithTheFix) {
  Noise noise(4);
  CaseResult c;
  c.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.10, noise),
            synthetic_arm("treat", false, blocks_upto(10), 1000, 0.10, noise)};
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.comparisons.size(), 1u);
  const Comparison& cmp = c.comparisons[0];
  EXPECT_TRUE(cmp.noisy);
  EXPECT_NE(cmp.recommendation.find("--blocks"), std::string::npos) << cmp.recommendation;
  // The recommended block count is more than what was run (it would not be a fix otherwise).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(cmp.recommendation, m, std::regex("--blocks (\\d+)"))) << cmp.recommendation;
  EXPECT_GT(std::stoi(m[1]), 10) << cmp.recommendation;
  // Noise never makes an A/A difference significant here.
  EXPECT_EQ(cmp.verdict, Verdict::no_significant_difference);
}

TEST(SummarizeCase, NoisyLimitFollowsThePracticalThreshold) {
  // CV about 2%: noisy under the default 2% threshold (limit 1%), fine under 10% (limit 5%).
  Noise n1(5), n2(5);
  CaseResult strict, lenient;
  strict.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.02, n1),
                 synthetic_arm("treat", false, blocks_upto(10), 1000, 0.02, n1)};
  lenient.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.02, n2),
                  synthetic_arm("treat", false, blocks_upto(10), 1000, 0.02, n2)};
  MeasureSettings lenient_settings = summary_settings();
  lenient_settings.practical_threshold = 0.10;
  tipbench::summarize_case(strict, summary_settings());
  tipbench::summarize_case(lenient, lenient_settings);
  ASSERT_EQ(strict.comparisons.size(), 1u);
  ASSERT_EQ(lenient.comparisons.size(), 1u);
  EXPECT_TRUE(strict.comparisons[0].noisy);
  EXPECT_FALSE(lenient.comparisons[0].noisy);
  EXPECT_TRUE(lenient.comparisons[0].recommendation.empty());
}

TEST(SummarizeCase, UnpairedBlocksAreDropped) {
  Noise noise(6);
  CaseResult c;
  // The treatment misses blocks 3 and 7 and has a block 12 the baseline never ran.
  c.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.003, noise),
            synthetic_arm("treat", false, {0, 1, 2, 4, 5, 6, 8, 9, 12}, 900, 0.003, noise)};
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.comparisons.size(), 1u);
  EXPECT_EQ(c.comparisons[0].estimate.blocks, 8u);
  EXPECT_NEAR(c.comparisons[0].estimate.ratio, 0.9, 0.01);
  // The arm's own summary still covers all of its trials.
  EXPECT_EQ(c.arms[1].throughput_samples_per_s.n, 9u);
}

TEST(SummarizeCase, PairingIsByBlockNotByOrder) {
  // Block b of the baseline has throughput 1000 * (1 + b); the treatment's block b is exactly 0.9
  // of it, but its trials are stored in reverse order. Pairing by position would mix blocks.
  CaseResult c;
  ArmResult base, treat;
  base.arm = "base";
  base.baseline = true;
  treat.arm = "treat";
  for (int b = 0; b < 8; ++b) {
    Trial t;
    t.block = b;
    t.throughput_samples_per_s = 1000.0 * (1 + b);
    t.step_times_ms = {1.0};
    base.trials.push_back(t);
  }
  for (int b = 7; b >= 0; --b) {
    Trial t;
    t.block = b;
    t.throughput_samples_per_s = 900.0 * (1 + b);
    t.step_times_ms = {1.0};
    treat.trials.push_back(t);
  }
  c.arms = {base, treat};
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.comparisons.size(), 1u);
  EXPECT_NEAR(c.comparisons[0].estimate.ratio, 0.9, 1e-12);
  EXPECT_NEAR(c.comparisons[0].estimate.ci_low, 0.9, 1e-12);
  EXPECT_NEAR(c.comparisons[0].estimate.ci_high, 0.9, 1e-12);
  EXPECT_EQ(c.comparisons[0].verdict, Verdict::slower);
}

TEST(SummarizeCase, SkippedBaselineMeansNoComparisons) {
  Noise noise(7);
  CaseResult c;
  ArmResult base = synthetic_arm("base", true, {}, 1000, 0.003, noise);
  base.status = ArmStatus::skipped;
  base.reason = "needs CUDA";
  c.arms = {base, synthetic_arm("treat", false, blocks_upto(10), 900, 0.003, noise)};
  c.comparisons.push_back(Comparison{});  // stale comparisons from an earlier call go away
  tipbench::summarize_case(c, summary_settings());
  EXPECT_TRUE(c.comparisons.empty());
  EXPECT_EQ(c.arms[1].throughput_samples_per_s.n, 10u);  // the treatment is still summarized
}

TEST(SummarizeCase, FailedOrSkippedTreatmentsAreNotCompared) {
  Noise noise(8);
  CaseResult c;
  ArmResult failed = synthetic_arm("failed", false, blocks_upto(10), 500, 0.003, noise);
  failed.status = ArmStatus::failed;
  ArmResult skipped = synthetic_arm("skipped", false, {}, 500, 0.003, noise);
  skipped.status = ArmStatus::skipped;
  c.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.003, noise), failed, skipped,
            synthetic_arm("ok", false, blocks_upto(10), 1000, 0.003, noise)};
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.comparisons.size(), 1u);
  EXPECT_EQ(c.comparisons[0].treatment, "ok");
}

TEST(SummarizeCase, EveryTreatmentIsComparedWithTheBaseline) {
  Noise noise(9);
  CaseResult c;
  // The baseline need not come first in the list: it is the arm flagged baseline.
  c.arms = {synthetic_arm("slow", false, blocks_upto(10), 800, 0.003, noise),
            synthetic_arm("base", true, blocks_upto(10), 1000, 0.003, noise),
            synthetic_arm("fast", false, blocks_upto(10), 1250, 0.003, noise)};
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.comparisons.size(), 2u);
  EXPECT_EQ(c.comparisons[0].treatment, "slow");
  EXPECT_EQ(c.comparisons[0].baseline, "base");
  EXPECT_EQ(c.comparisons[0].verdict, Verdict::slower);
  EXPECT_EQ(c.comparisons[1].treatment, "fast");
  EXPECT_EQ(c.comparisons[1].verdict, Verdict::faster);
}

TEST(SummarizeCase, MemoryIsComparedWhereTrialsRecordIt) {
  Noise noise(10);
  CaseResult c;
  c.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.003, noise, 100'000'000),
            synthetic_arm("treat", false, blocks_upto(10), 1000, 0.003, noise, 80'000'000)};
  tipbench::summarize_case(c, summary_settings());
  EXPECT_EQ(c.arms[0].peak_memory_bytes, 100'000'000);
  EXPECT_EQ(c.arms[0].memory_metric, "peak_rss_growth_bytes");
  ASSERT_EQ(c.comparisons.size(), 2u);
  ASSERT_NE(tipbench::find_comparison(c, "treat", "throughput_samples_per_s"), nullptr);
  const Comparison* mem = tipbench::find_comparison(c, "treat", "peak_rss_growth_bytes");
  ASSERT_NE(mem, nullptr);
  EXPECT_DOUBLE_EQ(mem->estimate.ratio, 0.8);
  // Lower is better for memory: 20% less is the good direction ("faster" is the better verdict).
  EXPECT_EQ(mem->verdict, Verdict::faster);
}

TEST(SummarizeCase, WorkloadMetricsAreSummarizedPerArm) {
  Noise noise(12);
  CaseResult c;
  c.arms = {synthetic_arm("base", true, blocks_upto(4), 1000, 0.003, noise),
            synthetic_arm("treat", false, blocks_upto(4), 1000, 0.003, noise)};
  for (int b = 0; b < 4; ++b) c.arms[0].trials[b].metrics["data_wait_fraction"] = 0.1 * (b + 1);
  tipbench::summarize_case(c, summary_settings());
  ASSERT_EQ(c.arms[0].metrics.size(), 1u);
  const auto& s = c.arms[0].metrics.at("data_wait_fraction");
  EXPECT_EQ(s.n, 4u);
  EXPECT_DOUBLE_EQ(s.median, 0.25);
  EXPECT_TRUE(c.arms[1].metrics.empty());
}

TEST(SummarizeCase, SummaryIsDeterministicForASeed) {
  auto run = [] {
    Noise noise(11);
    CaseResult c;
    c.arms = {synthetic_arm("base", true, blocks_upto(10), 1000, 0.02, noise),
              synthetic_arm("treat", false, blocks_upto(10), 970, 0.02, noise)};
    tipbench::summarize_case(c, summary_settings());
    return c.comparisons.at(0).estimate;
  };
  const auto a = run();
  const auto b = run();
  EXPECT_EQ(a.ratio, b.ratio);
  EXPECT_EQ(a.ci_low, b.ci_low);
  EXPECT_EQ(a.ci_high, b.ci_high);
}

}  // namespace
