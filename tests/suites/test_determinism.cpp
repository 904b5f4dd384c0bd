// The determinism suite (suites/determinism.cpp): what it plans on a CPU (cases, arms, skips with reasons)
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
using tipbench::testing::cpu_context;
using tipbench::testing::cuda_context;
using tipbench::testing::suite_named;
using tipbench::testing::trial_of;

TEST(DeterminismSuite, FreshProcessesWithTheCublasWorkspaceOnCudaOnly) {
  const auto& s = suite_named("determinism");
  const auto cpu = cpu_context(true);
  EXPECT_EQ(s.isolation(cpu), tipbench::Isolation::in_process);
  EXPECT_EQ(s.isolation(cuda_context()), tipbench::Isolation::fresh_process);
  const auto cases = s.cases(cpu);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(arm_names(cases[0]), (std::vector<std::string>{"default", "deterministic"}));
  EXPECT_TRUE(s.trial_environment(cpu, cases[0], cases[0].arms[1]).empty());
  EXPECT_TRUE(s.trial_environment(cuda_context(), cases[0], cases[0].arms[0]).empty());
  EXPECT_EQ(s.trial_environment(cuda_context(), cases[0], cases[0].arms[1]),
            (std::map<std::string, std::string>{{"CUBLAS_WORKSPACE_CONFIG", ":4096:8"}}));
}

TEST(DeterminismSuite, ATrialPutsTheDefaultBack) {
  const auto before = tipbench::suites::current_determinism();
  const auto t = trial_of("determinism", "deterministic");
  EXPECT_TRUE(t.info.at("deterministic_algorithms").get<bool>()) << t.info.dump();
  const auto after = tipbench::suites::current_determinism();
  EXPECT_EQ(after.algorithms, before.algorithms);
  EXPECT_EQ(after.cudnn_deterministic, before.cudnn_deterministic);
  EXPECT_EQ(after.cudnn_benchmark, before.cudnn_benchmark);
}

}  // namespace
