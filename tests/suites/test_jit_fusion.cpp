// The jit_fusion suite (suites/jit_fusion.cpp): what it plans on a CPU (cases, arms, skips with reasons)
// and what it concludes.
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

TEST(JitFusionSuite, QuickCpuPlan) {
  const auto& s = suite_named("jit_fusion");
  const auto cases = s.cases(cpu_context(true));
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(tipbench::case_name("jit_fusion", cases[0]), "jit_fusion/block:bias_gelu/shape:256x3072");
  EXPECT_EQ(tipbench::case_name("jit_fusion", cases[1]),
            "jit_fusion/block:vit_mlp/model:vit_ti_16/batch:8/image:32/layers:2");
  for (const auto& c : cases) {
    EXPECT_EQ(arm_names(c), (std::vector<std::string>{"eager", "torchscript", "native"}));
    EXPECT_FALSE(s.skip_reason(cpu_context(true), c, c.arms[0]));
  }
  const auto full = s.cases(cpu_context(false));
  EXPECT_EQ(full.size(), 5u);  // four pointwise blocks and the ViT MLP
  const auto& bdr = full[2];
  ASSERT_EQ(tipbench::level(bdr.params, "block"), "bias_dropout_residual");
  const auto why = s.skip_reason(cpu_context(false), bdr, bdr.arms[2]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "no fused")) << *why;
}

TEST(JitFusionSuite, MacroCaseNeedsAViT) {
  auto context = cpu_context(true);
  context.models = {"resnet18"};
  const auto& s = suite_named("jit_fusion");
  const auto cases = s.cases(context);
  const auto& macro = cases.back();
  const auto why = s.skip_reason(context, macro, macro.arms[0]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "ViT")) << *why;
}

}  // namespace
