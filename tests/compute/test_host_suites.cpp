// What debug_apis, inference, inplace, cpu_threads, allocator and determinism plan (cases, arms,
// skips with reasons, isolation and trial environments), the conclusions their notes draw, and
// that a real trial of an arm that sets a process-wide knob (anomaly detection, the profiler, the
// intra-op threads, deterministic algorithms) leaves the knob as it found it.
#include "determinism/determinism.h"
#include "allocator/malloc_provider.h"
#include "suite_plan.h"
#include "tipbench/registry.h"
#include "tipbench/trial.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/anomaly_mode.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <string>

namespace {

using tipbench::ArmResult;
using tipbench::ArmStatus;
using tipbench::CaseResult;
using tipbench::CaseSpec;
using tipbench::SuiteResult;
using tipbench::testing::arm_names;
using tipbench::testing::contains;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;
using tipbench::testing::trial_of;

tipbench::SuiteContext cuda_context() {
  auto c = cpu_context(true);
  c.device = c10::Device(c10::kCUDA);
  return c;
}

ArmResult arm_with_step_ms(const std::string& name, double step_ms, bool baseline = false) {
  ArmResult a;
  a.arm = name;
  a.baseline = baseline;
  a.step_time_ms.median = step_ms;
  a.throughput_samples_per_s.median = 1000.0 / step_ms;
  return a;
}

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

TEST(InferenceSuite, QuickCpuPlanSkipsTheLargestBatchWithTheReason) {
  const auto& s = suite_named("inference");
  const auto cases = s.cases(cpu_context(true));
  ASSERT_EQ(cases.size(), 2u);
  for (const auto& c : cases) {
    EXPECT_EQ(arm_names(c), (std::vector<std::string>{"grad", "no_grad", "inference_mode"}));
  }
  EXPECT_FALSE(s.skip_reason(cpu_context(true), cases[0], cases[0].arms[0]));
  const auto why = s.skip_reason(cpu_context(true), cases[1], cases[1].arms[0]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "CUDA")) << *why;
}

TEST(InferenceSuite, EveryGradModeEvaluatesInEvalMode) {
  for (const char* arm : {"grad", "no_grad", "inference_mode"}) {
    SCOPED_TRACE(arm);
    const auto t = trial_of("inference", arm);
    EXPECT_EQ(t.info.at("model_mode"), "eval");
    EXPECT_GT(t.trial.throughput_samples_per_s, 0);
  }
}

TEST(InplaceSuite, CnnsOnlyWithTheReason) {
  const auto& s = suite_named("inplace");
  auto context = cpu_context(true);
  context.models = {"small_cnn", "vit_ti_16"};
  const auto cases = s.cases(context);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(arm_names(cases[0]), (std::vector<std::string>{"out_of_place", "inplace"}));
  EXPECT_FALSE(s.skip_reason(context, cases[0], cases[0].arms[1]));
  const auto why = s.skip_reason(context, cases[1], cases[1].arms[1]);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "GELU")) << *why;
}

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
    if ("t" + std::to_string(t) != default_count) EXPECT_NE(std::find(arms.begin(), arms.end(), "t" + std::to_string(t)), arms.end()) << t;
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
