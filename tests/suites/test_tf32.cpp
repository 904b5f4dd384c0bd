// The tf32 suite (suites/tf32.cpp): what it plans on a CPU (cases, arms, skips with reasons)
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

TEST(Tf32Suite, SkippedOffCudaWithTheReason) {
  const auto& s = suite_named("tf32");
  const auto context = cpu_context(true);
  const auto cases = s.cases(context);
  ASSERT_FALSE(cases.empty());
  EXPECT_EQ(arm_names(cases[0]), (std::vector<std::string>{"ieee", "tf32"}));
  const auto why = s.skip_reason(context, cases[0], cases[0].arms[1]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "cpu")) << *why;
}

}  // namespace
