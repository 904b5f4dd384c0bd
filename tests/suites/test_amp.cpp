// The amp suite (suites/amp.cpp): what it plans on a CPU (cases, arms, skips with reasons), the
// arms it builds, and (test_note_verdicts.cpp) what its notes conclude.
#include "suite_plan.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/summary.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using tipbench::testing::arm_names;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;

TEST(AmpSuite, CpuPlanRunsBf16AndExplainsWhatItSkips) {
  const auto& s = suite_named("amp");
  const auto context = cpu_context(true);
  const auto cases = s.cases(context);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(tipbench::case_name("amp", cases[0]), "amp/model:small_cnn/batch:4/layout:nchw");
  EXPECT_EQ(arm_names(cases[0]), (std::vector<std::string>{"fp32", "fp32_ieee", "bf16", "fp16"}));
  EXPECT_FALSE(s.skip_reason(context, cases[0], cases[0].arms[0]));
  EXPECT_FALSE(s.skip_reason(context, cases[0], cases[0].arms[2]));
  // IEEE fp32 is the CPU's only fp32: the arm says so rather than repeat the baseline.
  const auto ieee = s.skip_reason(context, cases[0], cases[0].arms[1]);
  ASSERT_TRUE(ieee);
  EXPECT_TRUE(contains(*ieee, "TF32")) << *ieee;
  // fp16 on the CPU: runs if this LibTorch's CPU kernels take it, else the reason says fp16.
  if (auto why = s.skip_reason(context, cases[0], cases[0].arms[3])) EXPECT_TRUE(contains(*why, "fp16")) << *why;
  EXPECT_EQ(tipbench::level(cases[1].params, "batch"), "largest");
  EXPECT_EQ(arm_names(cases[1]), (std::vector<std::string>{"fp32", "bf16", "fp16"}));
  const auto why = s.skip_reason(context, cases[1], cases[1].arms[0]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "CUDA")) << *why;
}

// The full plan adds bf16 at twice the batch and, for a CNN, the channels_last case.
TEST(AmpSuite, FullPlanTestsTheBatchClaimAndChannelsLastInEveryArm) {
  const auto& s = suite_named("amp");
  auto context = cpu_context(false);
  const auto cases = s.cases(context);
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(tipbench::case_name("amp", cases[1]), "amp/model:small_cnn/batch:32/layout:nhwc");
  EXPECT_EQ(arm_names(cases[1]),
            (std::vector<std::string>{"fp32", "fp32_ieee", "bf16", "fp16", "bf16_2x", "python_eager"}));
  context.batch_size = 2;  // a short step: the arm's setup is under test
  const auto small = s.cases(context);
  auto doubled = s.prepare(context, small[1], small[1].arms[4], {});
  doubled->step();
  EXPECT_EQ(doubled->info().at("batch_size"), 4);
  EXPECT_EQ(doubled->info().at("precision"), "bf16");
  EXPECT_EQ(doubled->info().at("channels_last"), true);
  EXPECT_EQ(doubled->samples_per_step(), 4);
  auto nchw = s.prepare(context, small[0], small[0].arms[0], {});
  EXPECT_EQ(nchw->info().at("channels_last"), false);
  // A ViT has no channels_last case.
  context.models = {"vit_ti_16"};
  EXPECT_EQ(s.cases(context).size(), 2u);
}

TEST(AmpSuite, Bf16ArmTrainsUnderAutocastAndRecordsIt) {
  const auto& s = suite_named("amp");
  const auto context = cpu_context(true);
  const auto c = s.cases(context)[0];
  auto workload = s.prepare(context, c, c.arms[2], {});
  workload->step();
  EXPECT_EQ(workload->info().at("precision"), "bf16");
  EXPECT_TRUE(workload->metrics().empty());  // no loss scaler: nothing skipped to count
}

}  // namespace
