// The cudnn_benchmark suite (suites/cudnn_benchmark.cpp): its plan (fixed and varying shapes, each
// with the setting off and on), fresh-process trials, and the reasons it skips.
#include "common/input_shapes.h"
#include "suite_plan.h"
#include "tipbench/suite/registry.h"
#include "tipbench/results/summary.h"

#include <ATen/Context.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

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

// The new-shape case warms up on new shapes too, none of which a timed step uses, so the trial's
// step count is sized by what a new shape costs; a real (CPU) trial warms up with exactly those steps.
TEST(CudnnBenchmarkSuite, TheNewShapeCaseWarmsUpOnNewShapesTheTimedStepsNeverUse) {
  namespace s = tipbench::suites;
  for (std::int64_t base : {32, 224}) {
    std::set<std::pair<std::int64_t, std::int64_t>> timed;
    for (std::int64_t i = 0; i < 289; ++i) timed.insert(s::varying_shape(base, i));
    EXPECT_EQ(timed.size(), 289u) << base;
    for (int i = 0; i < s::kVaryingWarmupNew; ++i) {
      const auto side = s::varying_warmup_side(base, i);
      EXPECT_FALSE(timed.contains({side, side})) << base << " " << side;
      for (const auto& [h, w] : timed) EXPECT_GT(side, std::max(h, w)) << base;
    }
  }
  const bool before = at::globalContext().benchmarkCuDNN();
  const auto varying = tipbench::testing::trial_of("cudnn_benchmark", "off", 1);
  at::globalContext().setBenchmarkCuDNN(before);  // the suite's trials run in fresh processes
  EXPECT_EQ(varying.trial.warmup_steps, s::kVaryingWarmupFixed + s::kVaryingWarmupNew);
  EXPECT_EQ(varying.info.at("input_shapes"), "varying");
}

// The note sets the whole trial's peak (the autotuner's search included) beside the timed steps'
// and compares the timed steps' memory: the steady state with fixed shapes, the autotuner's own
// with a new shape every step (review L11, 2026-11-28).
TEST(CudnnBenchmarkSuite, TheNoteSeparatesTheAutotunersMemoryFromTheSteadyState) {
  tipbench::SuiteResult r;
  tipbench::CaseResult c;
  c.name = "cudnn_benchmark/model:resnet50/batch:128/shapes:fixed";
  c.params = {{"model", "resnet50"}, {"batch", "128"}, {"shapes", "fixed"}};
  constexpr std::int64_t kMiB = 1 << 20;
  c.arms = {tipbench::testing::measured_arm("off", {{"cudnn_benchmark", "off"}}, 100, 800 * kMiB, 4),
            tipbench::testing::measured_arm("on", {{"cudnn_benchmark", "on"}}, 100, 1200 * kMiB, 4)};
  for (auto& arm : c.arms) {
    for (auto& t : arm.trials) t.memory.timed_peak_allocated_bytes = 790 * kMiB * (1 + 0.001 * t.block);
  }
  c.arms[0].baseline = true;
  r.cases = {c};
  const auto notes = suite_named("cudnn_benchmark").notes(r, tipbench::MeasureSettings{});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(contains(notes[0],
                       "median: off 800 / 791 MiB, on 1200 / 791 MiB; the timed steps' memory (the steady "
                       "state), on against off: x1.000 [1.000, 1.000] no detectable difference"))
      << notes[0];
  r.cases[0].params.back().second = "varying";
  const auto varying = suite_named("cudnn_benchmark").notes(r, tipbench::MeasureSettings{});
  ASSERT_EQ(varying.size(), 1u);
  EXPECT_TRUE(contains(varying[0], "(on searches again in every one of them: the autotuner's memory)")) << varying[0];
  // A CPU run records no timed peak: no note.
  for (auto& arm : r.cases[0].arms) {
    for (auto& t : arm.trials) t.memory.timed_peak_allocated_bytes.reset();
  }
  EXPECT_TRUE(suite_named("cudnn_benchmark").notes(r, tipbench::MeasureSettings{}).empty());
}

}  // namespace
