// The optimizer suite (suites/optimizer.cpp): what it plans on a CPU (cases, arms, skips with reasons)
// and what it concludes.
#include "common/training.h"
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

TEST(OptimizerSuite, QuickStepsTheOptimizerAloneAndTrainsSgdFullAlsoTrainsAdamW) {
  const auto& s = suite_named("optimizer");
  const auto quick = s.cases(cpu_context(true));
  ASSERT_EQ(quick.size(), 3u);
  EXPECT_EQ(tipbench::case_name("optimizer", quick[0]), "optimizer/model:small_cnn/batch:32/optimizer:sgd/scope:step");
  EXPECT_EQ(tipbench::case_name("optimizer", quick[1]), "optimizer/model:small_cnn/optimizer:sgd/scope:optimizer");
  EXPECT_EQ(tipbench::case_name("optimizer", quick[2]), "optimizer/model:small_cnn/optimizer:adamw/scope:optimizer");
  EXPECT_EQ(arm_names(quick[1]), (std::vector<std::string>{"loop", "foreach", "fused"}));
  const auto full = s.cases(cpu_context(false));
  ASSERT_EQ(full.size(), 4u);
  EXPECT_EQ(tipbench::case_name("optimizer", full[0]), "optimizer/model:small_cnn/batch:32/optimizer:sgd/scope:step");
  EXPECT_EQ(tipbench::case_name("optimizer", full[1]), "optimizer/model:resnet50/optimizer:sgd/scope:optimizer");
  for (const auto& arm : quick[1].arms) {
    if (auto why = s.skip_reason(cpu_context(true), quick[1], arm)) {
      EXPECT_TRUE(contains(*why, "fused")) << *why;
      continue;
    }
    auto alone = s.prepare(cpu_context(true), quick[1], arm, {});
    alone->step();
    EXPECT_EQ(alone->info().at("optimizer_impl"), arm.name);
    EXPECT_EQ(alone->samples_per_step(), 1);  // throughput = optimizer steps/s
  }
  auto training = s.prepare(cpu_context(false), full[0], full[0].arms[1], {});
  training->step();
  EXPECT_EQ(training->info().at("optimizer_impl"), "foreach");
}

}  // namespace
