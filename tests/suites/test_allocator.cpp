// The allocator suite (suites/allocator.cpp): what it plans on a CPU (cases, arms, skips with reasons)
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

// In a process without a preload, glibc serves malloc, and says so.
TEST(AllocatorSuite, TheMallocProviderIsAskedOfTheAllocatorItself) {
  const auto p = tipbench::suites::malloc_provider();
  EXPECT_EQ(p.kind, "glibc") << p.library;
  EXPECT_NE(p.library.find("libc.so"), std::string::npos) << p.library;
  EXPECT_FALSE(p.version.empty());
}

TEST(AllocatorSuite, EveryTrialIsAFreshProcessWithTheArmsPreload) {
  const auto& s = suite_named("allocator");
  const auto context = cpu_context(true);
  EXPECT_EQ(s.isolation(context), tipbench::Isolation::fresh_process);
  const auto quick = s.cases(context);
  ASSERT_EQ(quick.size(), 1u) << "--quick: the training step only";
  EXPECT_EQ(tipbench::level(quick[0].params, "workload"), "training");
  EXPECT_EQ(arm_names(quick[0]), (std::vector<std::string>{"glibc", "jemalloc"}));
  const auto full = s.cases(cpu_context(false));
  ASSERT_EQ(full.size(), 2u);
  EXPECT_EQ(arm_names(full[0]), (std::vector<std::string>{"glibc", "jemalloc", "tcmalloc"}));
  EXPECT_EQ(tipbench::level(full[1].params, "workload"), "loader");
  const auto glibc = s.trial_environment(context, quick[0], quick[0].arms[0]);
  EXPECT_EQ(glibc, (std::map<std::string, std::string>{{"LD_PRELOAD", ""}})) << "a preload of the parent is cleared";
  for (std::size_t i = 1; i < full[0].arms.size(); ++i) {
    const auto& arm = full[0].arms[i];
    SCOPED_TRACE(arm.name);
    if (const auto why = s.skip_reason(context, full[0], arm)) {
      EXPECT_TRUE(contains(*why, "apt install")) << *why;
      continue;
    }
    const auto env = s.trial_environment(context, full[0], arm);
    ASSERT_TRUE(env.contains("LD_PRELOAD"));
    EXPECT_TRUE(contains(env.at("LD_PRELOAD"), "lib" + arm.name)) << env.at("LD_PRELOAD");
  }
}

}  // namespace
