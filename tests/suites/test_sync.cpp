// The sync suite (suites/sync.cpp): what it plans on a CPU (cases, arms, skips with reasons)
// and what it concludes.
#include "common/training.h"
#include "suite_plan.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/summary.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using tipbench::SuiteContext;
using tipbench::testing::arm_names;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;

TEST(SyncSuite, QuickDropsTheEvery50ArmThatItsShortTrialsCouldNotTell) {
  const auto& s = suite_named("sync");
  const auto full = s.cases(cpu_context(false));
  ASSERT_EQ(full.size(), 1u);  // on a CPU no launch-bound case: one batch
  EXPECT_EQ(arm_names(full[0]), (std::vector<std::string>{"every_step", "every_50", "never"}));
  const auto quick = s.cases(cpu_context(true));
  EXPECT_EQ(arm_names(quick[0]), (std::vector<std::string>{"every_step", "never"}));
  auto workload = s.prepare(cpu_context(true), quick[0], quick[0].arms[0], {});
  for (int i = 0; i < 2; ++i) workload->step();
  EXPECT_EQ(workload->info().at("loss_read_every"), 1);
}

TEST(SyncSuite, OnCudaABatch8CaseShowsTheLaunchBoundStep) {
  SuiteContext context;
  context.device = c10::Device(c10::kCUDA);  // planning only: nothing runs
  const auto cases = suite_named("sync").cases(context);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(tipbench::case_name("sync", cases[0]), "sync/model:resnet50/batch:128");
  EXPECT_EQ(tipbench::case_name("sync", cases[1]), "sync/model:resnet50/batch:8");
}

}  // namespace
