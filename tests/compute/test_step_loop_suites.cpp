// What sync, device_creation, grad_accumulation, optimizer and cuda_graphs plan on a CPU (cases,
// arms, skips with reasons), the arm each builds (recorded in its info), the grad_accumulation
// trade-off note, and the steps a CUDA graph cannot capture.
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
using tipbench::ArmResult;
using tipbench::CaseSpec;
using tipbench::SuiteContext;

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

TEST(DeviceCreationSuite, SkippedOnCpuWhereTheHostIsTheDevice) {
  const auto& s = suite_named("device_creation");
  const auto context = cpu_context(true);
  const auto c = s.cases(context)[0];
  EXPECT_EQ(arm_names(c), (std::vector<std::string>{"host", "device"}));
  const auto why = s.skip_reason(context, c, c.arms[0]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "the host is the device")) << *why;
  auto workload = s.prepare(context, c, c.arms[0], {});  // the workload itself runs anywhere
  workload->step();
  EXPECT_EQ(workload->info().at("step_tensors"), "host");
}

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
  EXPECT_TRUE(contains(notes[0], "k=2 (micro-batch 64): peak memory -30% for throughput +1%: the memory saved cost no "
                                 "throughput")) << notes[0];
  EXPECT_TRUE(contains(notes[0], "k=4 (micro-batch 32): peak memory -40% for throughput -10%: 4.0% of the memory "
                                 "saved per 1% of the throughput lost")) << notes[0];
}

TEST(OptimizerSuite, QuickStepsTheOptimizerAloneFullAlsoTrains) {
  const auto& s = suite_named("optimizer");
  const auto quick = s.cases(cpu_context(true));
  ASSERT_EQ(quick.size(), 2u);
  EXPECT_EQ(tipbench::case_name("optimizer", quick[0]), "optimizer/model:small_cnn/optimizer:sgd/scope:optimizer");
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
