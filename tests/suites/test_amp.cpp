// The amp suite (suites/amp.cpp): what it plans on a CPU (cases, arms, skips with reasons)
// and what it concludes.
#include "suite_plan.h"
#include "tipbench/registry.h"
#include "tipbench/summary.h"

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
  EXPECT_EQ(tipbench::case_name("amp", cases[0]), "amp/model:small_cnn/batch:4");
  EXPECT_EQ(arm_names(cases[0]), (std::vector<std::string>{"fp32", "bf16", "fp16"}));
  EXPECT_FALSE(s.skip_reason(context, cases[0], cases[0].arms[0]));
  EXPECT_FALSE(s.skip_reason(context, cases[0], cases[0].arms[1]));
  // fp16 on the CPU: runs if this LibTorch's CPU kernels take it, else the reason says fp16.
  if (auto why = s.skip_reason(context, cases[0], cases[0].arms[2])) EXPECT_TRUE(contains(*why, "fp16")) << *why;
  EXPECT_EQ(tipbench::level(cases[1].params, "batch"), "largest");
  const auto why = s.skip_reason(context, cases[1], cases[1].arms[0]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "CUDA")) << *why;
}

TEST(AmpSuite, Bf16ArmTrainsUnderAutocastAndRecordsIt) {
  const auto& s = suite_named("amp");
  const auto context = cpu_context(true);
  const auto c = s.cases(context)[0];
  auto workload = s.prepare(context, c, c.arms[1], {});
  workload->step();
  EXPECT_EQ(workload->info().at("precision"), "bf16");
  EXPECT_TRUE(workload->metrics().empty());  // no loss scaler: nothing skipped to count
}

}  // namespace
