// The inference suite (suites/inference.cpp): what it plans on a CPU (cases, arms, skips with reasons)
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
using tipbench::testing::trial_of;

TEST(InferenceSuite, QuickCpuPlanSkipsTheLargestBatchWithTheReason) {
  const auto& s = suite_named("inference");
  const auto cases = s.cases(cpu_context(true));
  ASSERT_EQ(cases.size(), 2u);
  for (const auto& c : cases) {
    EXPECT_EQ(arm_names(c), (std::vector<std::string>{"grad", "no_grad", "inference_mode"}));
  }
  EXPECT_FALSE(s.skip_reason(cpu_context(true), cases[0], cases[0].arms[0]));
  const auto why = s.skip_reason(cpu_context(true), cases[1], cases[1].arms[0]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "CUDA")) << *why;
}

TEST(InferenceSuite, EveryGradModeEvaluatesInEvalMode) {
  for (const char* arm : {"grad", "no_grad", "inference_mode"}) {
    SCOPED_TRACE(arm);
    const auto t = trial_of("inference", arm);
    EXPECT_EQ(t.info.at("model_mode"), "eval");
    EXPECT_GT(t.trial.throughput_samples_per_s, 0);
  }
}

}  // namespace
