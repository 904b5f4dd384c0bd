// The compile suite (suites/compile.cpp) and the python_eager arm (suites/common/python_step.h):
// the plan, a real compiled arm of small_cnn in the Python worker (Inductor's C++ backend on this
// CPU) that records its compile and agrees with eager, what the notes conclude, and Python eager
// beside tipbench's C++ step.
#include "common/python_step.h"
#include "model_files.h"
#include "suite_plan.h"
#include "tipbench/suite/registry.h"
#include "tipbench/models/model_file.h"
#include "tipbench/results/summary.h"
#include "tipbench/measure/trial.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using tipbench::ArmResult;
using tipbench::ArmStatus;
using tipbench::CaseResult;
using tipbench::testing::arm_names;
using tipbench::testing::cpu_context;
using tipbench::testing::suite_named;

// An ok arm of 5 blocks at `throughput` samples/s (`noise` up and down in turn), one sample per step.
ArmResult arm_at(const std::string& name, double throughput, nlohmann::json info = nlohmann::json::object(),
                 double noise = 0.01) {
  ArmResult a;
  a.arm = name;
  a.info = std::move(info);
  for (int b = 0; b < 5; ++b) {
    tipbench::Trial t;
    t.block = b;
    t.samples_per_step = 1;
    t.throughput_samples_per_s = throughput * (b % 2 ? 1 + noise : 1 - noise);
    t.step_times_ms = {1000 / t.throughput_samples_per_s};
    a.trials.push_back(t);
  }
  tipbench::summarize_arm(a);
  return a;
}

TEST(CompileSuite, EagerIsTheBaselineAndCudaGraphsAreSkippedOnACpu) {
  const auto& s = suite_named("compile");
  const auto quick = s.cases(cpu_context(true));
  ASSERT_EQ(quick.size(), 1u);
  EXPECT_EQ(tipbench::case_name("compile", quick[0]), "compile/model:small_cnn/batch:8");
  EXPECT_EQ(arm_names(quick[0]), (std::vector<std::string>{"eager", "default", "reduce_overhead"}));
  // --quick on a CPU leaves the suite out unless asked (--compile-quick-cpu run).
  for (const auto& arm : quick[0].arms) {
    const auto left_out = s.skip_reason(cpu_context(true), quick[0], arm);
    ASSERT_TRUE(left_out.has_value()) << arm.name;
    EXPECT_NE(left_out->find("--compile-quick-cpu run"), std::string::npos) << *left_out;
  }
  auto asked = cpu_context(true);
  asked.options["compile-quick-cpu"] = "run";
  const auto why = s.skip_reason(asked, quick[0], quick[0].arms[2]);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("CUDA only"), std::string::npos) << *why;
  EXPECT_FALSE(s.skip_reason(asked, quick[0], quick[0].arms[1]).has_value());
  EXPECT_FALSE(s.skip_reason(cpu_context(false), quick[0], quick[0].arms[1]).has_value());
  EXPECT_EQ(arm_names(s.cases(cpu_context(false))[0]),
            (std::vector<std::string>{"eager", "default", "max_autotune", "reduce_overhead"}));
  EXPECT_FALSE(s.skip_reason(tipbench::testing::cuda_context(), quick[0], quick[0].arms[2]).has_value());
}

// The one real compile of the tests (about 35 s on 2 cores, most of it Inductor's one-time checks
// of the CPU's vector ISAs and its C++ compiles): a cold compile in an empty cache, recorded, and
// three compiled steps that agree with three eager ones.
TEST(CompileSuite, ACompiledArmOfSmallCnnRecordsItsCompileAndAgreesWithEager) {
  const auto& s = suite_named("compile");
  auto context = cpu_context(true);
  context.options["compile-max-graph-breaks"] = "0";
  const auto c = s.cases(context)[0];
  const auto t = tipbench::run_trial(s, context, c, c.arms[1], tipbench::testing::short_trial(), 0, 0);
  EXPECT_TRUE(t.invalid_reason.empty()) << t.invalid_reason;
  EXPECT_GE(t.trial.step_times_ms.size(), 2u);
  EXPECT_EQ(t.trial.step_cpu_times_ms.size(), t.trial.step_times_ms.size());
  EXPECT_GT(t.trial.throughput_samples_per_s, 0);
  const auto& compile = t.info.at("compile");
  EXPECT_EQ(compile.at("mode"), "default");
  EXPECT_GT(compile.at("cold_s").get<double>(), 0);
  EXPECT_FALSE(compile.contains("warm_s")) << "--quick skips the warm compile";
  EXPECT_GE(compile.at("graphs").get<int>(), 1);
  EXPECT_EQ(compile.at("graph_breaks"), 0);
  EXPECT_TRUE(compile.at("numerics").at("agrees").get<bool>()) << compile.dump();
  EXPECT_EQ(compile.at("numerics").at("steps"), 3);
  EXPECT_EQ(t.info.at("step"), "torch.compile(mode=default)");
  EXPECT_EQ(t.info.at("parameters"), 391466);
  EXPECT_EQ(t.trial.metrics.at("recompiles"), 0);
}

TEST(CompileSuite, TheNoteSaysAfterHowManyStepsTheCompileIsPaidBack) {
  const auto& s = suite_named("compile");
  const nlohmann::json compile = {
      {"mode", "default"},
      {"cold_s", 30.0},
      {"warm_s", 12.0},
      {"graphs", 1},
      {"graph_breaks", 0},
      {"numerics", {{"steps", 3}, {"max_relative_difference", 1e-7}, {"tolerance", 7.8e-3}, {"agrees", true}}}};
  CaseResult c;
  c.name = "compile/model:m/batch:8";
  nlohmann::json stochastic = compile;
  stochastic["numerics"] = {{"steps", 3}, {"stochastic", true}, {"agrees", nullptr}};
  c.arms = {arm_at("eager", 100, {}, 0), arm_at("default", 125, {{"compile", compile}}, 0),
            arm_at("slow", 80, {{"compile", compile}}, 0), arm_at("dropout", 100, {{"compile", stochastic}}, 0)};
  c.arms[0].baseline = true;
  tipbench::SuiteResult result;
  result.cases = {c};
  const auto notes = s.notes(result, tipbench::quick_settings());
  ASSERT_EQ(notes.size(), 3u);
  // 10 ms eager, 8 ms compiled: 2 ms saved per step; 30 s / 2 ms = 15000 steps, 12 s / 2 ms = 6000.
  EXPECT_NE(notes[0].find("cold compile 30.0 s, warm 12.0 s"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("paid back after 15000 steps (2.00 ms saved per step), 6000 with a warm cache"),
            std::string::npos)
      << notes[0];
  EXPECT_NE(notes[0].find("agrees with eager after 3 steps"), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find("not paid back by a faster step"), std::string::npos) << notes[1];
  // A step with dropout: Inductor's random numbers are not eager's, so nothing is compared.
  EXPECT_NE(notes[2].find("numerics not compared: the step draws random numbers"), std::string::npos) << notes[2];
}

TEST(PythonEager, TheDefaultStepInPythonRunsBesideTheCppBaseline) {
  const auto& s = suite_named("zero_grad");
  auto context = cpu_context(false);
  context.batch_size = 4;
  const auto c = s.cases(context)[0];
  ASSERT_EQ(arm_names(c), (std::vector<std::string>{"none", "zero", "python_eager"}));
  EXPECT_TRUE(tipbench::suites::is_python_eager_arm(c.arms[2]));
  EXPECT_FALSE(tipbench::suites::is_python_eager_arm(c.arms[0]));
  const auto python = tipbench::run_trial(s, context, c, c.arms[2], tipbench::testing::short_trial(), 0, 0);
  const auto cpp = tipbench::run_trial(s, context, c, c.arms[0], tipbench::testing::short_trial(), 0, 0);
  EXPECT_EQ(python.info.at("step"), "python_eager");
  for (const char* same :
       {"model", "parameters", "batch_size", "image_size", "precision", "optimizer", "optimizer_impl"}) {
    EXPECT_EQ(python.info.at(same), cpp.info.at(same))
        << same << ": " << python.info.dump() << " vs " << cpp.info.dump();
  }
  EXPECT_GT(python.trial.throughput_samples_per_s, 0);
  EXPECT_TRUE(python.trial.memory.peak_rss_growth_bytes.has_value());
}

// A user's .pt2 reaches the worker by its path and its train program trains there; a TorchScript
// file does not (it would run in TorchScript's interpreter): that arm is unavailable, with why.
TEST(PythonEager, AModelFileTrainsInTheWorkerAsItsPt2) {
  const auto& files = tipbench::testing::model_files();
  ASSERT_TRUE(files.error.empty()) << files.error;
  const auto& pt2 = tipbench::models::use_model_file({.path = files.path("tiny.pt2")});
  auto workload = tipbench::suites::make_python_step_workload(cpu_context(true), {.model = pt2.name, .batch_size = 4});
  workload->step();
  EXPECT_EQ(workload->info().at("parameters"), pt2.parameters);  // the C++ loader's count
  EXPECT_EQ(workload->info().at("model"), "tiny_pt2");
  const auto& script = tipbench::models::use_model_file({.path = files.path("tiny.pt")});
  try {
    tipbench::suites::make_python_step_workload(cpu_context(true), {.model = script.name, .batch_size = 4});
    FAIL() << "a TorchScript file ran in the worker";
  } catch (const tipbench::ArmUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("TorchScript's interpreter"), std::string::npos) << e.what();
  }
}

TEST(PythonEager, TheNoteGivesTheCppStepAgainstPythonByTheHarnesssRule) {
  CaseResult c;
  c.name = "zero_grad/model:m/batch:8";
  c.arms = {arm_at("none", 104), arm_at("zero", 100), arm_at("python_eager", 100)};
  c.arms[0].baseline = true;
  const auto note = tipbench::suites::cpp_against_python_note(c, tipbench::quick_settings());
  ASSERT_TRUE(note.has_value());
  const auto k = tipbench::compare_arms(c.arms[0], c.arms[2], tipbench::trial_throughput(), tipbench::quick_settings());
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(*note, "zero_grad/model:m/batch:8: tipbench's C++ step (none) against Python eager: " +
                       tipbench::comparison_words(*k));
  c.arms[2].status = ArmStatus::skipped;
  EXPECT_FALSE(tipbench::suites::cpp_against_python_note(c, tipbench::quick_settings()).has_value());
}

}  // namespace
