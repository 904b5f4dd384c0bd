// The batch_size suite (suites/batch_size.cpp): what it plans on a CPU (cases, arms, skips with reasons)
// and what it concludes.
#include "suite_plan.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/summary.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using tipbench::ArmResult;
using tipbench::CaseResult;
using tipbench::testing::arm_names;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;

TEST(BatchSizeSuite, QuickCpuPlan) {
  const auto& s = suite_named("batch_size");
  const auto cases = s.cases(cpu_context(true));
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(arm_names(cases[0]), (std::vector<std::string>{"b16", "b32", "b64"}));
  EXPECT_EQ(arm_names(cases[1]), (std::vector<std::string>{"small", "large_warmup"}));
  EXPECT_EQ(tipbench::join_levels(cases[1].arms[1].levels), "batch:256/lr:0.4/warmup_epochs:1");
  EXPECT_EQ(arm_names(s.cases(cpu_context(false))[1]), (std::vector<std::string>{"small", "large", "large_warmup"}));
}

// Block k of every time-to-accuracy arm trains with seed + k: a fixed seed set, paired across arms.
TEST(BatchSizeSuite, TimeToAccuracyTrialsWalkTheSeedSet) {
  const auto& s = suite_named("batch_size");
  auto context = cpu_context(true);
  context.seed = 100;
  const auto c = s.cases(context)[1];
  for (std::uint64_t k = 0; k < 3; ++k) {
    for (const auto& arm : c.arms)
      EXPECT_EQ(s.prepare(context, c, arm, {.block = static_cast<int>(k)})->metrics().at("seed"), 100.0 + k);
  }
}

ArmResult sweep_arm(int batch, std::vector<double> throughputs) {
  ArmResult a;
  a.arm = "b" + std::to_string(batch);
  a.levels = {{"batch", std::to_string(batch)}};
  for (int b = 0; b < static_cast<int>(throughputs.size()); ++b) {
    tipbench::Trial t;
    t.block = b;
    t.throughput_samples_per_s = throughputs[b];
    a.trials.push_back(t);
  }
  return a;
}

std::vector<std::string> sweep_notes(std::vector<ArmResult> arms) {
  tipbench::SuiteResult r;
  CaseResult c;
  c.name = "batch_size/model:small_cnn/experiment:sweep";
  c.params = {{"model", "small_cnn"}, {"experiment", "sweep"}};
  c.arms = std::move(arms);
  r.cases.push_back(c);
  return suite_named("batch_size").notes(r, tipbench::MeasureSettings{});
}

TEST(BatchSizeSuite, NotesMarkWhereThroughputStopsGrowing) {
  const std::vector<double> base{100, 101, 99, 100, 100.5, 99.5};
  auto scaled = [&](double f) {
    std::vector<double> v;
    for (double x : base) v.push_back(x * f);
    return v;
  };
  auto notes = sweep_notes({sweep_arm(16, base), sweep_arm(32, scaled(1.5)), sweep_arm(64, scaled(1.505))});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(contains(notes[0], "stops growing at batch 32")) << notes[0];
  EXPECT_TRUE(contains(notes[0], "b64 vs b32")) << notes[0];
  notes = sweep_notes({sweep_arm(16, base), sweep_arm(32, scaled(1.5)), sweep_arm(64, scaled(2.1))});
  EXPECT_TRUE(contains(notes[0], "still grows")) << notes[0];
}

TEST(BatchSizeSuite, NotesGiveSeedsAndEpochsToTarget) {
  ArmResult a;
  a.arm = "small";
  a.info = {{"target_accuracy", 0.85}};
  for (int b = 0; b < 4; ++b) {
    tipbench::Trial t;
    t.block = b;
    t.metrics = {{"accuracy_at_epoch_001", 0.7}, {"accuracy_at_epoch_002", 0.86}};
    if (b < 3) {
      t.metrics["epochs_to_target"] = 2;
      t.metrics["seconds_to_target"] = 1.5;
    }
    a.trials.push_back(t);
  }
  tipbench::summarize_arm(a);
  tipbench::SuiteResult r;
  CaseResult c;
  c.name = "batch_size/model:small_cnn/experiment:time_to_accuracy";
  c.params = {{"model", "small_cnn"}, {"experiment", "time_to_accuracy"}};
  c.arms = {a};
  r.cases.push_back(c);
  const auto notes = suite_named("batch_size").notes(r, tipbench::MeasureSettings{});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(contains(notes[0], "reached in 3/4 seeds")) << notes[0];
  EXPECT_TRUE(contains(notes[0], "epochs 2")) << notes[0];
  EXPECT_TRUE(contains(notes[0], "by epoch: 0.700 0.860")) << notes[0];
}

}  // namespace
