// The cudnn_benchmark suite (suites/cudnn_benchmark.cpp): its plan (fixed and varying shapes, each
// with the setting off and on), fresh-process trials, and the reasons it skips.
#include "suite_plan.h"
#include "tipbench/registry.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using tipbench::testing::arm_names;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;
using tipbench::testing::cuda_context;
using tipbench::testing::suite_named;

TEST(CudnnBenchmarkSuite, FixedAndVaryingShapesEachOffAndOnInFreshProcesses) {
  const auto& s = suite_named("cudnn_benchmark");
  const auto cases = s.cases(cpu_context(true));
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(tipbench::case_name("cudnn_benchmark", cases[0]), "cudnn_benchmark/model:small_cnn/batch:32/shapes:fixed");
  EXPECT_EQ(tipbench::case_name("cudnn_benchmark", cases[1]),
            "cudnn_benchmark/model:small_cnn/batch:32/shapes:varying");
  for (const auto& c : cases) EXPECT_EQ(arm_names(c), (std::vector<std::string>{"off", "on"}));
  // cudnn.benchmark's cache lives for the process: each trial starts without it.
  EXPECT_EQ(s.isolation(cpu_context(true)), tipbench::Isolation::fresh_process);
}

TEST(CudnnBenchmarkSuite, SkipsOffCudaAndForModelsWithoutConvolutions) {
  const auto& s = suite_named("cudnn_benchmark");
  const auto c = s.cases(cpu_context(true))[0];
  const auto why = s.skip_reason(cpu_context(true), c, c.arms[0]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "on a CUDA device")) << *why;
  auto vit_context = cuda_context();
  vit_context.models = {"vit_ti_16"};
  const auto vit = s.cases(vit_context)[0];
  const auto vit_why = s.skip_reason(vit_context, vit, vit.arms[0]);
  ASSERT_TRUE(vit_why);  // no cuDNN in a CPU-only build, or not a CNN: a reason either way
  EXPECT_FALSE(vit_why->empty());
}

}  // namespace
