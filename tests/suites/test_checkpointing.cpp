// The checkpointing suite (suites/checkpointing.cpp): what it plans on a CPU (cases, arms, skips with reasons)
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

TEST(CheckpointingSuite, CpuPlanSkipsTheLargestBatchSearchWithTheReason) {
  const auto& s = suite_named("checkpointing");
  const auto quick = s.cases(cpu_context(true));
  ASSERT_EQ(quick.size(), 2u);
  EXPECT_EQ(arm_names(quick[0]), (std::vector<std::string>{"off", "per_stage"}));
  EXPECT_EQ(arm_names(s.cases(cpu_context(false))[0]), (std::vector<std::string>{"off", "per_stage", "every_2"}));
  EXPECT_FALSE(s.skip_reason(cpu_context(true), quick[0], quick[0].arms[1]));
  const auto why = s.skip_reason(cpu_context(true), quick[1], quick[1].arms[0]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "CUDA")) << *why;
  EXPECT_EQ(tipbench::level(quick[1].params, "batch"), "largest");
}

}  // namespace
