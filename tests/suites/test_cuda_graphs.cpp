// The cuda_graphs suite (suites/cuda_graphs.cpp): what it plans on a CPU (cases, arms, skips with reasons)
// and what it concludes.
#include "common/training.h"
#include "suite_plan.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/summary.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using tipbench::CaseSpec;
using tipbench::SuiteContext;
using tipbench::testing::arm_names;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;

TEST(CudaGraphsSuite, SkippedOffCudaWithTheReason) {
  const auto& s = suite_named("cuda_graphs");
  const auto context = cpu_context(true);
  const auto cases = s.cases(context);
  ASSERT_EQ(cases.size(), 2u);  // fp32 and bf16
  EXPECT_EQ(arm_names(cases[0]), (std::vector<std::string>{"eager", "graph"}));
  const auto why = s.skip_reason(context, cases[0], cases[0].arms[1]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "CUDA")) << *why;
}

// The suite's graph arm asks the spec and the step's other policies what it cannot capture; their
// reasons (a policy's own, the fp16 loss scaler, AdamW's host step count) are in
// test_step_policy.cpp.
TEST(CudaGraphsSuite, WhatAGraphCannotCaptureIsRefusedWithTheReason) {
  const auto& s = suite_named("cuda_graphs");
  const SuiteContext context = cpu_context(true);
  auto refused = [&](const std::string& precision) -> std::string {
    CaseSpec c{{{"model", "small_cnn"}, {"batch", "4"}, {"precision", precision}}, s.cases(context)[0].arms};
    try {
      s.prepare(context, c, c.arms[1], {});
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_TRUE(contains(refused("fp16"), "loss scaler")) << refused("fp16");
  EXPECT_TRUE(contains(refused("fp32"), "nothing to capture on a cpu"));  // capturable, but not on a CPU
}

}  // namespace
