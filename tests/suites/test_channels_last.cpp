// The channels_last suite (suites/channels_last.cpp): what it plans on a CPU (cases, arms, skips with reasons)
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

TEST(ChannelsLastSuite, CnnsInTwoPrecisionsViTsSkippedWithTheReason) {
  const auto& s = suite_named("channels_last");
  auto context = cpu_context(true);
  context.models = {"small_cnn", "vit_ti_16"};
  const auto cases = s.cases(context);
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(tipbench::case_name("channels_last", cases[1]), "channels_last/model:small_cnn/batch:4/precision:bf16");
  EXPECT_EQ(arm_names(cases[0]), (std::vector<std::string>{"nchw", "nhwc"}));
  EXPECT_FALSE(s.skip_reason(context, cases[0], cases[0].arms[1]));
  const auto why = s.skip_reason(context, cases[2], cases[2].arms[0]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "patch projection")) << *why;
  auto workload = s.prepare(context, cases[0], cases[0].arms[1], {});
  EXPECT_EQ(workload->info().at("channels_last"), true);
}

}  // namespace
