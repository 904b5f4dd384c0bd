// The grad_accumulation suite (suites/grad_accumulation.cpp): what it plans on a CPU (cases, arms, skips with reasons)
// and what it concludes.
#include "common/training.h"
#include "suite_plan.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/summary.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using tipbench::ArmResult;
using tipbench::testing::arm_names;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;

TEST(GradAccumulationSuite, SplitsTheBatchAndSkipsWhatDoesNotDivide) {
  const auto& s = suite_named("grad_accumulation");
  EXPECT_EQ(arm_names(s.cases(cpu_context(true))[0]), (std::vector<std::string>{"k1", "k4"}));
  auto context = cpu_context(false);
  auto c = s.cases(context)[0];
  EXPECT_EQ(arm_names(c), (std::vector<std::string>{"k1", "k2", "k4", "k8"}));
  auto workload = s.prepare(context, c, c.arms[3], {});
  workload->step();
  EXPECT_EQ(workload->info().at("micro_batches"), 8);
  EXPECT_EQ(workload->samples_per_step(), 32);  // the effective batch, not the micro-batch
  context.batch_size = 12;
  c = s.cases(context)[0];
  EXPECT_FALSE(s.skip_reason(context, c, c.arms[2]));  // 12 = 4 x 3
  const auto why = s.skip_reason(context, c, c.arms[3]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "batch 12 does not split into 8")) << *why;
}

ArmResult accumulation_arm(int k, double throughput, std::int64_t memory) {
  return tipbench::testing::measured_arm("k" + std::to_string(k), {{"micro_batches", std::to_string(k)}}, throughput,
                                         memory);
}

TEST(GradAccumulationSuite, NoteStatesMemorySavedPerThroughputLost) {
  tipbench::SuiteResult r;
  tipbench::CaseResult c;
  c.name = "grad_accumulation/model:resnet50/batch:128";
  c.params = {{"model", "resnet50"}, {"batch", "128"}};
  // k=4: 40% less memory for 10% less throughput; k=2: less memory at no cost.
  c.arms = {accumulation_arm(1, 100, 1000), accumulation_arm(2, 101, 700), accumulation_arm(4, 90, 600)};
  r.cases.push_back(c);
  const auto notes = suite_named("grad_accumulation").notes(r, tipbench::MeasureSettings{});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(contains(notes[0],
                       "k=2 (micro-batch 64): peak memory -30% for throughput +1%: the memory saved cost no "
                       "throughput"))
      << notes[0];
  EXPECT_TRUE(contains(notes[0],
                       "k=4 (micro-batch 32): peak memory -40% for throughput -10%: 4.0% of the memory "
                       "saved per 1% of the throughput lost"))
      << notes[0];
}

}  // namespace
