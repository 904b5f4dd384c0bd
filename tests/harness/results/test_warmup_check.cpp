// The warm-up check (warmup_check.h): a first trial far from the later ones, in units of their
// robust spread, is named; one within the spread, an arm with too few trials and a failed arm are
// not.
#include "tipbench/results/warmup_check.h"

#include "sample_result.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using tipbench::ArmResult;
using tipbench::ArmStatus;
using tipbench::CaseResult;
using tipbench::SuiteResult;
using tipbench::testing::make_trial;

// An arm whose trials ran at these step times (ms), 8 samples per step.
ArmResult arm_with_steps(const std::string& name, const std::vector<double>& step_ms) {
  ArmResult arm;
  arm.name = name;
  for (std::size_t i = 0; i < step_ms.size(); ++i) {
    auto t = make_trial(static_cast<int>(i), 0, step_ms[i], 8, 5);
    t.reused_workload = i > 0;
    arm.trials.push_back(t);
  }
  return arm;
}

std::vector<SuiteResult> one_case(std::vector<ArmResult> arms) {
  CaseResult c;
  c.arms = std::move(arms);
  SuiteResult s;
  s.cases = {c};
  return {s};
}

TEST(WarmupCheck, AFirstTrialBeyondThreeRobustSpreadsIsNamed) {
  // Later trials within 1% of 10 ms: a first trial at 12 ms (throughput x0.83) is far beyond.
  const auto gaps =
      tipbench::first_trial_gaps(one_case({arm_with_steps("cold", {12.0, 10.0, 10.1, 9.9, 10.0, 10.05}),
                                           arm_with_steps("warm", {10.02, 10.0, 10.1, 9.9, 10.0, 10.05})}),
                                 /*floor=*/0.005);
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].arm, "cold");
  EXPECT_NEAR(gaps[0].ratio, 10.0 / 12.0, 1e-9);
  EXPECT_TRUE(gaps[0].beyond_noise);
  EXPECT_TRUE(gaps[0].reused);
  EXPECT_EQ(gaps[0].later_trials, 5);
  EXPECT_FALSE(gaps[1].beyond_noise) << "0.2% off, within the floor and the spread";
}

TEST(WarmupCheck, ANoisyArmNeedsAGapBeyondItsOwnSpread) {
  // Later trials spread by about 10%: a first trial 15% slow is within 3 robust SDs.
  const auto gaps = tipbench::first_trial_gaps(
      one_case({arm_with_steps("noisy", {11.5, 9.0, 11.0, 10.0, 9.5, 10.5, 8.8, 11.2})}), 0.005);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_GT(gaps[0].spread, 0.05);
  EXPECT_FALSE(gaps[0].beyond_noise);
}

TEST(WarmupCheck, TooFewTrialsAndFailedArmsAreLeftOut) {
  ArmResult failed = arm_with_steps("failed", {20, 10, 10, 10, 10});
  failed.status = ArmStatus::failed;
  const auto gaps = tipbench::first_trial_gaps(one_case({arm_with_steps("short", {20, 10, 10}), failed}), 0.005);
  EXPECT_TRUE(gaps.empty());
}

}  // namespace
