// The inplace suite (suites/inplace.cpp): what it plans on a CPU (cases, arms, skips with reasons)
// and what it concludes.
#include "determinism/determinism.h"
#include "allocator/malloc_provider.h"
#include "suite_plan.h"
#include "tipbench/suite/registry.h"
#include "tipbench/measure/trial.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/anomaly_mode.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <string>

namespace {

using tipbench::testing::arm_names;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;

TEST(InplaceSuite, CnnsOnlyWithTheReason) {
  const auto& s = suite_named("inplace");
  auto context = cpu_context(true);
  context.models = {"small_cnn", "vit_ti_16"};
  const auto cases = s.cases(context);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(arm_names(cases[0]), (std::vector<std::string>{"out_of_place", "inplace"}));
  EXPECT_FALSE(s.skip_reason(context, cases[0], cases[0].arms[1]));
  const auto why = s.skip_reason(context, cases[1], cases[1].arms[1]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "GELU")) << *why;
}

}  // namespace
