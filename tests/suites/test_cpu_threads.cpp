// The cpu_threads suite (suites/cpu_threads.cpp): what it plans on a CPU (cases, arms, skips with reasons)
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

using tipbench::ArmStatus;
using tipbench::CaseResult;
using tipbench::SuiteResult;
using tipbench::testing::arm_names;
using tipbench::testing::arm_with_step_ms;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;
using tipbench::testing::cuda_context;
using tipbench::testing::suite_named;
using tipbench::testing::trial_of;

TEST(CpuThreadsSuite, TheSweepRunsToTheCoresBesideTheDefault) {
  const auto& s = suite_named("cpu_threads");
  const auto full = s.cases(cpu_context(false));
  ASSERT_EQ(full.size(), 1u);
  const auto arms = arm_names(full[0]);
  EXPECT_EQ(arms.front(), "default");
  const int cores = std::stoi(tipbench::level(full[0].params, "cores"));
  const std::string default_count = "t" + std::to_string(at::get_num_threads());
  EXPECT_EQ(std::count(arms.begin(), arms.end(), default_count), 0) << "the default's count is not repeated";
  for (int t = 1; t <= cores; t *= 2) {
    if ("t" + std::to_string(t) != default_count)
      EXPECT_NE(std::find(arms.begin(), arms.end(), "t" + std::to_string(t)), arms.end()) << t;
  }
  const auto quick = arm_names(s.cases(cpu_context(true))[0]);
  EXPECT_LE(quick.size(), 3u) << "--quick: the default, 1 and the cores";
  const auto why = s.skip_reason(cuda_context(), full[0], full[0].arms[0]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "cuda")) << *why;
}

TEST(CpuThreadsSuite, ATrialPutsTheThreadCountBack) {
  const int before = at::get_num_threads();
  const auto t = trial_of("cpu_threads", "default");
  EXPECT_EQ(t.info.at("intra_op_threads").get<int>(), before);
  const auto arms = arm_names(suite_named("cpu_threads").cases(cpu_context(true))[0]);
  if (std::find(arms.begin(), arms.end(), "t1") != arms.end()) {
    const auto one = trial_of("cpu_threads", "t1");
    EXPECT_EQ(one.info.at("intra_op_threads").get<int>(), 1);
  }
  EXPECT_EQ(at::get_num_threads(), before);
}

TEST(CpuThreadsSuite, TheNoteNamesTheFastestCount) {
  SuiteResult r;
  CaseResult c;
  c.name = "cpu_threads/model:small_cnn/batch:32/cores:4";
  c.arms = {arm_with_step_ms("default", 10, true), arm_with_step_ms("t1", 30), arm_with_step_ms("t2", 8)};
  c.arms[0].status = c.arms[1].status = c.arms[2].status = ArmStatus::ok;
  c.arms[0].info = {{"intra_op_threads", 4}};
  c.arms[1].info = {{"intra_op_threads", 1}};
  c.arms[2].info = {{"intra_op_threads", 2}};
  tipbench::Comparison cmp;
  cmp.treatment = "t2";
  cmp.baseline = "default";
  cmp.metric = "throughput_samples_per_s";
  cmp.estimate = {1.25, 1.2, 1.3, 8};
  cmp.verdict = tipbench::stats::Verdict::faster;
  c.comparisons = {cmp};
  r.cases = {c};
  const auto notes = suite_named("cpu_threads").notes(r, tipbench::quick_settings());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(contains(notes[0], "fastest intra-op thread count was 2")) << notes[0];
  EXPECT_TRUE(contains(notes[0], "x1.25 [1.20, 1.30] the default's 4 threads (faster)")) << notes[0];
}

}  // namespace
