// compare_arms, the harness's one comparison rule: what it pairs, when it declines, and that the
// case summaries (summarize_case) are made of it. Core only.
#include "tipbench/results/summary.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace {

using tipbench::ArmResult;
using tipbench::Trial;

// An arm with one trial per value: trial b is block b (a value of 0 records no throughput).
ArmResult arm(const std::string& name, const std::vector<double>& throughputs) {
  ArmResult a;
  a.arm = name;
  for (std::size_t b = 0; b < throughputs.size(); ++b) {
    Trial t;
    t.block = static_cast<int>(b);
    t.samples_per_step = 8;
    t.throughput_samples_per_s = throughputs[b];
    const double ms = throughputs[b] > 0 ? 8000.0 / throughputs[b] : 1.0;
    t.step_times_ms = {ms, ms};
    t.step_cpu_times_ms = {2 * ms, 2 * ms};
    t.memory.peak_rss_growth_bytes = static_cast<std::int64_t>(1000 + throughputs[b]);
    a.trials.push_back(t);
  }
  return a;
}

TEST(CompareArms, FewerThanThreePairedBlocksGiveNoComparison) {
  const tipbench::MeasureSettings s;
  EXPECT_FALSE(tipbench::compare_arms(arm("t", {110, 111}), arm("b", {100, 101}), tipbench::trial_throughput(), s));
  // Three trials each, but block 2 has no positive value on one side: two pairs remain.
  EXPECT_FALSE(
      tipbench::compare_arms(arm("t", {110, 111, 0}), arm("b", {100, 101, 102}), tipbench::trial_throughput(), s));
  const auto k =
      tipbench::compare_arms(arm("t", {110, 111, 112}), arm("b", {100, 101, 102}), tipbench::trial_throughput(), s);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->estimate.blocks, tipbench::kMinPairedBlocks);
}

TEST(CompareArms, PairsByBlockAndDropsBlocksWithoutAPositiveValue) {
  const tipbench::MeasureSettings s;
  // Block 1 recorded no treatment throughput; block 4 ran in the baseline only.
  const auto k = tipbench::compare_arms(arm("t", {200, 0, 202, 204}), arm("b", {100, 90, 101, 102, 99}),
                                        tipbench::trial_throughput(), s);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->treatment, "t");
  EXPECT_EQ(k->baseline, "b");
  EXPECT_EQ(k->metric, "throughput_samples_per_s");
  EXPECT_EQ(k->estimate.blocks, 3u);
  EXPECT_DOUBLE_EQ(k->estimate.ratio, 202.0 / 101.0);
  EXPECT_EQ(k->verdict, tipbench::stats::Verdict::faster);
}

TEST(CompareArms, ALowerIsBetterMetricCallsAHigherRatioSlower) {
  const tipbench::MeasureSettings s;
  const tipbench::TrialMetric step_ms{"step_cpu_time_ms", false, tipbench::cpu_time_per_step_ms};
  // Half the throughput: twice the CPU time per step.
  const auto k = tipbench::compare_arms(arm("t", {50, 51, 52, 50}), arm("b", {100, 101, 102, 100}), step_ms, s);
  ASSERT_TRUE(k);
  EXPECT_GT(k->estimate.ratio, 1.9);
  EXPECT_EQ(k->verdict, tipbench::stats::Verdict::slower);
}

// The case summaries are the same rule: every comparison summarize_case makes is compare_arms'.
TEST(CompareArms, IsTheRuleOfTheCaseSummaries) {
  tipbench::MeasureSettings s;
  s.seed = 7;
  tipbench::CaseResult c;
  c.arms = {arm("base", {100, 104, 97, 101, 99, 103}), arm("treat", {108, 0, 111, 104, 109, 107})};
  c.arms[0].baseline = true;
  tipbench::summarize_case(c, s);
  ASSERT_EQ(c.comparisons.size(), 3u);  // throughput, CPU time per step, memory
  const tipbench::TrialMetric metrics[] = {
      tipbench::trial_throughput(),
      {"step_cpu_time_ms", false, tipbench::cpu_time_per_step_ms},
      {"peak_rss_growth_bytes", false,
       [](const Trial& t) -> std::optional<double> { return static_cast<double>(*t.memory.peak_rss_growth_bytes); }}};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto expected = tipbench::compare_arms(c.arms[1], c.arms[0], metrics[i], s);
    ASSERT_TRUE(expected);
    const auto& got = c.comparisons[i];
    EXPECT_EQ(got.metric, expected->metric);
    EXPECT_DOUBLE_EQ(got.estimate.ratio, expected->estimate.ratio);
    EXPECT_DOUBLE_EQ(got.estimate.ci_low, expected->estimate.ci_low);
    EXPECT_DOUBLE_EQ(got.estimate.ci_high, expected->estimate.ci_high);
    EXPECT_EQ(got.estimate.blocks, expected->estimate.blocks);
    EXPECT_EQ(got.verdict, expected->verdict);
    EXPECT_DOUBLE_EQ(got.cv, expected->cv);
    EXPECT_EQ(got.noisy, expected->noisy);
    EXPECT_EQ(got.recommendation, expected->recommendation);
  }
}

}  // namespace
