// The debug_apis suite (suites/debug_apis.cpp): what it plans on a CPU (cases, arms, skips with reasons)
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

using tipbench::CaseResult;
using tipbench::SuiteResult;
using tipbench::testing::arm_names;
using tipbench::testing::arm_with_step_ms;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;
using tipbench::testing::trial_of;

TEST(DebugApisSuite, QuickCpuPlan) {
  const auto cases = suite_named("debug_apis").cases(cpu_context(true));
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(arm_names(cases[0]), (std::vector<std::string>{"off", "anomaly", "profiler"}));
}

TEST(DebugApisSuite, ATrialSwitchesTheDebuggingApisOffAgain) {
  ASSERT_FALSE(torch::autograd::AnomalyMode::is_enabled());
  const auto anomaly = trial_of("debug_apis", "anomaly");
  EXPECT_TRUE(anomaly.info.at("anomaly_detection").get<bool>()) << anomaly.info.dump();
  EXPECT_FALSE(torch::autograd::AnomalyMode::is_enabled());
  const auto profiler = trial_of("debug_apis", "profiler");
  EXPECT_TRUE(contains(profiler.info.at("profiler").get<std::string>(), "Kineto")) << profiler.info.dump();
  EXPECT_FALSE(torch::profiler::impl::profilerEnabled());
  EXPECT_GT(profiler.trial.throughput_samples_per_s, 0);
}

TEST(DebugApisSuite, TheNoteStatesTheOverheadPerStep) {
  SuiteResult r;
  CaseResult c;
  c.name = "debug_apis/model:small_cnn/batch:32";
  c.arms = {arm_with_step_ms("off", 10, true), arm_with_step_ms("anomaly", 25), arm_with_step_ms("profiler", 12)};
  r.cases = {c};
  const auto notes = suite_named("debug_apis").notes(r, tipbench::quick_settings());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(contains(notes[0], "anomaly +15.00 ms per step (x2.50")) << notes[0];
  EXPECT_TRUE(contains(notes[0], "profiler +2.00 ms per step (x1.20")) << notes[0];
}

}  // namespace
