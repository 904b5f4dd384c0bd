// The runner with suites of the test's own (never registered): a failing arm is recorded with a
// one-line reason (its backtrace only under verbose), an invalid trial makes its arm `invalid`
// and keeps it out of the comparisons, a resumed run takes its finished cases as they are, a
// suite whose preparation fails fails only its own arms, and a trial environment is refused for
// an in-process suite.
#include "tipbench/measure/runner.h"

#include "cuda_required.h"
#include "tiny_run.h"

#include <c10/util/Exception.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <set>
#include <string>
#include <thread>

namespace {

using tipbench::ArmResult;
using tipbench::ArmSpec;
using tipbench::ArmStatus;
using tipbench::CaseResult;
using tipbench::CaseSpec;
using tipbench::SuiteContext;
using tipbench::SuiteResult;
using tipbench::TrialInfo;

// What an arm's workload does, by arm name: "ok", "slow" (a 200-us step), "broken" (its step
// throws a c10::Error),
// "invalid" (its trials say they measured the wrong thing), "fixed3" (asks for 3 warm-up steps) or
// "period8" (its timed inputs follow a schedule of 8 steps);
// an arm whose name has "kept" in it lets the runner keep its workload between trials.
class ScriptedWorkload final : public tipbench::Workload {
 public:
  explicit ScriptedWorkload(std::string arm) : arm_(std::move(arm)) {
    if (arm_ == "unavailable") throw tipbench::ArmUnavailable("the allocator it asked for does not serve malloc here");
  }
  void step() override {
    TORCH_CHECK(arm_ != "broken", "the broken arm's step fails on purpose");
    if (arm_ == "slow") {  // a busy 200 us: about a hundred times the "ok" arm's step
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
  }
  std::int64_t samples_per_step() const override { return 4; }
  int fixed_warmup_steps() const override { return arm_.ends_with("fixed3") ? 3 : 0; }
  int timed_step_period() const override { return arm_ == "period8" ? 8 : 1; }
  bool keep_between_trials() const override { return arm_.find("kept") != std::string::npos; }
  std::optional<std::string> invalid_reason() const override {
    if (arm_ == "invalid") return "skipped 5 of 8 files";
    return std::nullopt;
  }

 private:
  std::string arm_;
};

class ScriptedSuite final : public tipbench::Suite {
 public:
  ScriptedSuite(std::vector<std::string> arms, std::vector<std::string> models)
      : arms_(std::move(arms)), models_(std::move(models)) {}
  std::string name() const override { return "scripted"; }
  std::string description() const override { return "a suite of the test's own"; }
  std::vector<CaseSpec> cases(const SuiteContext&) const override {
    std::vector<CaseSpec> out;
    for (const auto& m : models_) {
      CaseSpec c{{{"model", m}}, {}};
      for (const auto& a : arms_) c.arms.push_back({a, {{"knob", a}}});
      out.push_back(c);
    }
    return out;
  }
  std::unique_ptr<tipbench::Workload> prepare(const SuiteContext&, const CaseSpec& c, const ArmSpec& arm,
                                              const TrialInfo&) const override {
    prepared.insert(tipbench::level(c.params, "model"));
    ++builds[arm.name];
    return std::make_unique<ScriptedWorkload>(arm.name);
  }
  mutable std::set<std::string> prepared;     // models whose workloads were built
  mutable std::map<std::string, int> builds;  // workloads built, by arm

 private:
  std::vector<std::string> arms_;
  std::vector<std::string> models_;
};

using tipbench::testing::tiny_run_plan;
tipbench::RunPlan tiny_plan(const tipbench::Suite& suite, int blocks) { return tiny_run_plan(suite, blocks); }

struct RunOutcome {
  std::vector<SuiteResult> suites;
  std::string progress;  // what the runner printed
};

RunOutcome run(const tipbench::RunPlan& plan) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* out = ::open_memstream(&buffer, &size);
  RunOutcome r;
  {
    tipbench::Progress progress(/*tty=*/false, out);
    r.suites = tipbench::run_suites(plan, progress);
  }
  std::fclose(out);
  r.progress.assign(buffer, size);
  std::free(buffer);
  return r;
}

const ArmResult& arm_named(const CaseResult& c, const std::string& name) {
  for (const auto& a : c.arms) {
    if (a.arm == name) return a;
  }
  throw std::runtime_error("no arm " + name);
}

// An epoch-long step (time-to-accuracy) warms up with the steps it asks for, not until the step
// times settle: more than warmup_max_steps here, and counted as a stable warm-up.
TEST(Runner, AWorkloadCanAskForAFixedWarmUp) {
  const ScriptedSuite suite({"ok", "fixed3"}, {"m"});
  const RunOutcome r = run(tiny_plan(suite, 2));
  const auto& c = r.suites.at(0).cases.at(0);
  for (const auto& t : arm_named(c, "fixed3").trials) {
    EXPECT_EQ(t.warmup_steps, 3);
    EXPECT_TRUE(t.warmup_stable);
  }
  for (const auto& t : arm_named(c, "ok").trials) EXPECT_LE(t.warmup_steps, 2);
}

// A workload with a timed schedule (growing input shapes) times whole periods of it, at least
// two, however few steps the settings ask for, and no more than the cap's whole periods.
TEST(Runner, AScheduledWorkloadTimesWholePeriodsAtLeastTwo) {
  const ScriptedSuite suite({"ok", "period8"}, {"m"});
  auto plan = tiny_plan(suite, 2);
  plan.settings.trial_min_time_s = 0;  // the step counts alone decide
  const RunOutcome few = run(plan);
  for (const auto& t : arm_named(few.suites.at(0).cases.at(0), "period8").trials)
    EXPECT_EQ(t.step_times_ms.size(), 16u);
  for (const auto& t : arm_named(few.suites.at(0).cases.at(0), "ok").trials) EXPECT_EQ(t.step_times_ms.size(), 3u);
  plan.settings.trial_min_steps = 17;
  const RunOutcome more = run(plan);
  for (const auto& t : arm_named(more.suites.at(0).cases.at(0), "period8").trials)
    EXPECT_EQ(t.step_times_ms.size(), 24u);
  plan.settings.trial_min_steps = 60;
  plan.settings.trial_max_steps = 30;
  const RunOutcome capped = run(plan);
  for (const auto& t : arm_named(capped.suites.at(0).cases.at(0), "period8").trials) {
    EXPECT_EQ(t.step_times_ms.size(), 24u);
  }
}

// A workload that needs 64 MiB for a while during its warm-up (as an autotuner's search does)
// and 1 MiB per timed step.
class WorkspaceWorkload final : public tipbench::Workload {
 public:
  void step() override {
    const std::int64_t mib = timing_ ? 1 : 64;
    torch::empty({mib << 18}, torch::TensorOptions().device(torch::kCUDA)).fill_(1);  // floats: 4 bytes each
  }
  std::int64_t samples_per_step() const override { return 1; }
  void begin_measurement() override { timing_ = true; }

 private:
  bool timing_ = false;
};

class WorkspaceSuite final : public tipbench::Suite {
 public:
  std::string name() const override { return "workspace"; }
  std::string description() const override { return "a suite of the test's own"; }
  std::vector<CaseSpec> cases(const SuiteContext&) const override { return {{{{"model", "m"}}, {{"a", {}}}}}; }
  std::unique_ptr<tipbench::Workload> prepare(const SuiteContext&, const CaseSpec&, const ArmSpec&,
                                              const TrialInfo&) const override {
    return std::make_unique<WorkspaceWorkload>();
  }
};

// The trial's CUDA memory: the peak over the whole trial holds the warm-up's workspace, the timed
// steps' own peak does not.
TEST(Runner_CUDA, TheTimedStepsPeakIsToldFromTheWholeTrials) {
  TIPBENCH_REQUIRE_CUDA();
  const WorkspaceSuite suite;
  auto plan = tiny_plan(suite, 1);
  plan.context.device = c10::Device(c10::kCUDA, 0);
  const RunOutcome r = run(plan);
  const auto& t = r.suites.at(0).cases.at(0).arms.at(0).trials.at(0);
  ASSERT_TRUE(t.memory.peak_allocated_bytes && t.memory.timed_peak_allocated_bytes);
  EXPECT_GE(*t.memory.peak_allocated_bytes, 64 << 20);
  EXPECT_GE(*t.memory.timed_peak_allocated_bytes, 1 << 20);
  EXPECT_LT(*t.memory.timed_peak_allocated_bytes, 2 << 20);
}

// A workload whose steps run in another process (the Python worker's): warmed up through step(),
// then asked for its timed steps, whose times and memory the trial records as given; a count
// other than asked fails the arm.
class ElsewhereWorkload final : public tipbench::Workload {
 public:
  explicit ElsewhereWorkload(int extra) : extra_(extra) {}
  void step() override { ++warmup_steps; }
  std::int64_t samples_per_step() const override { return 4; }
  bool steps_run_elsewhere() const override { return true; }
  tipbench::StepsTimedElsewhere time_steps_elsewhere(int steps) override {
    tipbench::StepsTimedElsewhere out;
    out.step_times_ms.assign(steps + extra_, 2.0);
    out.step_cpu_times_ms.assign(steps + extra_, 3.0);
    out.memory.peak_rss_growth_bytes = 12345;
    return out;
  }
  int warmup_steps = 0;

 private:
  int extra_;
};

class ElsewhereSuite final : public tipbench::Suite {
 public:
  std::string name() const override { return "elsewhere"; }
  std::string description() const override { return "a suite of the test's own"; }
  std::vector<CaseSpec> cases(const SuiteContext&) const override {
    return {{{{"model", "m"}}, {{"right", {}}, {"miscounted", {}}}}};
  }
  std::unique_ptr<tipbench::Workload> prepare(const SuiteContext&, const CaseSpec&, const ArmSpec& arm,
                                              const TrialInfo&) const override {
    return std::make_unique<ElsewhereWorkload>(arm.name == "miscounted" ? 1 : 0);
  }
};

TEST(Runner, StepsThatRunElsewhereAreTimedThereAndRecordedAsGiven) {
  const ElsewhereSuite suite;
  const RunOutcome r = run(tiny_plan(suite, 2));
  const auto& c = r.suites.at(0).cases.at(0);
  const auto& right = arm_named(c, "right");
  ASSERT_EQ(right.status, ArmStatus::ok) << right.reason;
  for (const auto& t : right.trials) {
    EXPECT_FALSE(t.step_times_ms.empty());
    for (double ms : t.step_times_ms) EXPECT_EQ(ms, 2.0);
    EXPECT_EQ(t.step_cpu_times_ms, std::vector<double>(t.step_times_ms.size(), 3.0));
    EXPECT_EQ(t.memory.peak_rss_growth_bytes, 12345);
    EXPECT_FALSE(t.memory.peak_allocated_bytes.has_value());
    EXPECT_DOUBLE_EQ(t.throughput_samples_per_s, 4 / 0.002);  // 4 samples every 2 ms
    EXPECT_GT(t.warmup_steps, 0);
  }
  const auto& miscounted = arm_named(c, "miscounted");
  EXPECT_EQ(miscounted.status, ArmStatus::failed);
  EXPECT_NE(miscounted.reason.find("steps, not"), std::string::npos) << miscounted.reason;
}

// Sequential blocks (block_looks.h): a case whose comparison is settled at the pilot stops there
// and says why; so does a case with nothing to compare (its baseline failed).
TEST(Runner, ASettledCaseStopsAtThePilotAndSaysWhy) {
  const ScriptedSuite suite({"slow", "ok"}, {"m"});
  tipbench::RunPlan plan = tiny_plan(suite, 20);
  plan.settings.min_blocks = 5;
  const RunOutcome r = run(plan);
  const auto& c = r.suites.at(0).cases.at(0);
  EXPECT_EQ(arm_named(c, "slow").trials.size(), 5u);
  EXPECT_EQ(arm_named(c, "ok").trials.size(), 5u);
  ASSERT_FALSE(c.comparisons.empty());
  EXPECT_EQ(c.comparisons.front().stop, tipbench::StopReason::settled_outside);
  EXPECT_EQ(c.comparisons.front().estimate.blocks, 5u);
  EXPECT_NE(r.progress.find(": 10 trials, 5 blocks in "), std::string::npos) << r.progress;
  EXPECT_EQ(r.progress.find("[11/"), std::string::npos) << "no trial after the pilot:\n" << r.progress;

  const ScriptedSuite nothing_to_compare({"broken", "ok"}, {"m"});
  const RunOutcome b = run(tiny_plan(nothing_to_compare, 20));
  EXPECT_EQ(arm_named(b.suites.at(0).cases.at(0), "ok").trials.size(), 5u);
}

// A workload that allows it is built once per case and arm; its later trials say they reused it.
// One that does not, one with a fixed warm-up (an epoch that restarts) and every workload of a
// run with keep_workloads off are built for every trial.
TEST(Runner, AKeptWorkloadIsBuiltOncePerCaseAndItsLaterTrialsSaySo) {
  const ScriptedSuite suite({"ok", "kept", "kept_fixed3"}, {"a", "b"});
  tipbench::RunPlan plan = tiny_plan(suite, 4);
  plan.settings.min_blocks = 4;
  const RunOutcome r = run(plan);
  EXPECT_EQ(suite.builds.at("kept"), 2) << "once per case";
  EXPECT_EQ(suite.builds.at("ok"), 8);
  EXPECT_EQ(suite.builds.at("kept_fixed3"), 8);
  for (const auto& c : r.suites.at(0).cases) {
    const auto& trials = arm_named(c, "kept").trials;
    ASSERT_EQ(trials.size(), 4u);
    EXPECT_FALSE(trials.front().reused_workload);
    for (std::size_t i = 1; i < trials.size(); ++i) {
      EXPECT_TRUE(trials[i].reused_workload) << c.name << " trial " << i;
      EXPECT_EQ(trials[i].step_times_ms.size(), trials.front().step_times_ms.size()) << "as many steps as the first";
    }
    for (const auto& t : arm_named(c, "ok").trials) EXPECT_FALSE(t.reused_workload);
  }

  const ScriptedSuite fresh({"ok", "kept"}, {"a"});
  plan = tiny_plan(fresh, 4);
  plan.settings.min_blocks = 4;
  plan.settings.keep_workloads = false;
  const RunOutcome f = run(plan);
  EXPECT_EQ(fresh.builds.at("kept"), 4);
  for (const auto& t : arm_named(f.suites.at(0).cases.at(0), "kept").trials) EXPECT_FALSE(t.reused_workload);
}

// A case whose preparation (a largest-batch search) spends what is left of the time budget runs
// no blocks, and says why (review D3, 2026-11-28): the overrun stops at the preparation.
class SlowlyPreparedSuite final : public tipbench::Suite {
 public:
  std::string name() const override { return "slowly_prepared"; }
  std::string description() const override { return "a case whose preparation takes a while"; }
  std::vector<CaseSpec> cases(const SuiteContext&) const override {
    return {{{{"model", "a"}}, {{"ok", {}}, {"kept", {}}}}, {{{"model", "b"}}, {{"ok", {}}, {"kept", {}}}}};
  }
  void prepare_case(const SuiteContext&, const CaseSpec& c, const CaseResult&) const override {
    ++prepared;
    if (tipbench::level(c.params, "model") == "a") std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  std::unique_ptr<tipbench::Workload> prepare(const SuiteContext&, const CaseSpec&, const ArmSpec& arm,
                                              const TrialInfo&) const override {
    return std::make_unique<ScriptedWorkload>(arm.name);
  }
  mutable int prepared = 0;
};

TEST(Runner, ACasePreparedPastTheTimeBudgetRunsNoBlocksAndSaysWhy) {
  const SlowlyPreparedSuite suite;
  tipbench::RunPlan plan = tiny_plan(suite, 4);
  plan.settings.time_budget_s = 0.2;
  const RunOutcome r = run(plan);
  const auto& a = r.suites.at(0).cases.at(0);
  EXPECT_NE(a.budget_cut.find("spent while the case was prepared"), std::string::npos) << a.budget_cut;
  for (const auto& arm : a.arms) {
    EXPECT_EQ(arm.status, ArmStatus::skipped) << arm.name;
    EXPECT_TRUE(arm.trials.empty()) << arm.name;
  }
  EXPECT_NE(r.suites.at(0).cases.at(1).budget_cut.find("spent before this case started"), std::string::npos)
      << "the next case is not prepared at all: " << r.suites.at(0).cases.at(1).budget_cut;
  EXPECT_EQ(suite.prepared, 1);
}

// --time-budget: a case that would overrun its share stops after kMinBudgetBlocks (3) and says
// so; a case that starts with the budget spent is skipped with the reason; both record wall time.
TEST(Runner, ATimeBudgetCutsACaseAtItsShareAndSkipsWhatNoLongerFits) {
  const ScriptedSuite suite({"slow", "ok"}, {"a", "b"});
  tipbench::RunPlan plan = tiny_plan(suite, 8);
  plan.settings.min_blocks = 8;
  plan.settings.time_budget_s = 0.001;  // a millisecond for two cases: the first gets half of it
  const RunOutcome r = run(plan);
  const auto& cut = r.suites.at(0).cases.at(0);
  EXPECT_EQ(arm_named(cut, "slow").trials.size(), 3u);
  EXPECT_NE(cut.budget_cut.find("ended after 3 of 8 blocks"), std::string::npos) << cut.budget_cut;
  EXPECT_GT(cut.wall_s, 0);
  ASSERT_FALSE(cut.comparisons.empty()) << "a cut case is still compared on the blocks it has";
  const auto& skipped = r.suites.at(0).cases.at(1);
  EXPECT_NE(skipped.budget_cut.find("spent before this case started"), std::string::npos) << skipped.budget_cut;
  for (const auto& arm : skipped.arms) {
    EXPECT_EQ(arm.status, ArmStatus::skipped);
    EXPECT_EQ(arm.reason, skipped.budget_cut);
  }
  EXPECT_NE(r.progress.find("time budget: 0.0s for 2 case(s)"), std::string::npos) << r.progress;

  // Up front, from an earlier run's case times: case a took 10 s a block for 8 blocks, b is unknown.
  plan.settings.time_budget_s = 60;
  plan.earlier_case_times = {{"scripted/model:a", {.block_s = 10, .blocks = 8}}};
  const RunOutcome forecast = run(plan);
  EXPECT_NE(forecast.progress.find("1 case(s) will likely be cut before they settle: scripted/model:a"),
            std::string::npos)
      << forecast.progress;
  plan.earlier_case_times = {{"scripted/model:a", {.block_s = 1e-6, .blocks = 8}}};
  EXPECT_NE(run(plan).progress.find("every case fits"), std::string::npos);
  plan.earlier_case_times.clear();

  plan.settings.time_budget_s = 0;  // none: every block runs, nothing is cut
  const RunOutcome all = run(plan);
  for (const auto& c : all.suites.at(0).cases) {
    EXPECT_EQ(arm_named(c, "ok").trials.size(), 8u);
    EXPECT_TRUE(c.budget_cut.empty());
  }
}

TEST(Runner, AFixedBlockCountRunsEveryBlock) {
  const ScriptedSuite suite({"slow", "ok"}, {"m"});
  tipbench::RunPlan plan = tiny_plan(suite, 7);
  plan.settings.min_blocks = 7;
  const RunOutcome r = run(plan);
  const auto& c = r.suites.at(0).cases.at(0);
  EXPECT_EQ(arm_named(c, "ok").trials.size(), 7u);
  ASSERT_FALSE(c.comparisons.empty());
  EXPECT_EQ(c.comparisons.front().stop, tipbench::StopReason::fixed);
}

TEST(Runner, AFailedArmKeepsAOneLineReasonAndTheRunGoesOn) {
  const ScriptedSuite suite({"ok", "broken", "ok2"}, {"m"});
  const RunOutcome r = run(tiny_plan(suite, 2));
  const auto& c = r.suites.at(0).cases.at(0);
  const auto& broken = arm_named(c, "broken");
  EXPECT_EQ(broken.status, ArmStatus::failed);
  EXPECT_EQ(broken.reason.find('\n'), std::string::npos) << broken.reason;
  EXPECT_NE(broken.reason.find("the broken arm's step fails on purpose"), std::string::npos) << broken.reason;
  EXPECT_NE(broken.reason.find("raised from"), std::string::npos) << "where c10 raised it: " << broken.reason;
  EXPECT_EQ(broken.reason.find("frame #"), std::string::npos) << broken.reason;
  EXPECT_EQ(r.progress.find("frame #"), std::string::npos) << "no backtrace without verbose:\n" << r.progress;
  EXPECT_EQ(arm_named(c, "ok2").status, ArmStatus::ok);
  EXPECT_EQ(arm_named(c, "ok2").trials.size(), 2u);
}

// An arm that finds, while preparing, that it cannot run here is skipped with the reason (not
// failed), and the others run.
TEST(Runner, AnArmUnavailableWhenPreparedIsSkippedWithTheReason) {
  const ScriptedSuite suite({"ok", "unavailable", "ok2"}, {"m"});
  const RunOutcome r = run(tiny_plan(suite, 2));
  const auto& c = r.suites.at(0).cases.at(0);
  const auto& unavailable = arm_named(c, "unavailable");
  EXPECT_EQ(unavailable.status, ArmStatus::skipped);
  EXPECT_EQ(unavailable.reason, "the allocator it asked for does not serve malloc here");
  EXPECT_TRUE(unavailable.trials.empty());
  EXPECT_EQ(arm_named(c, "ok2").trials.size(), 2u);
  EXPECT_NE(r.progress.find("skipped: scripted/model:m/arm:unavailable"), std::string::npos) << r.progress;
}

TEST(Runner, VerbosePrintsTheWholeErrorOfAFailedArm) {
  const ScriptedSuite suite({"ok", "broken"}, {"m"});
  auto plan = tiny_plan(suite, 1);
  plan.verbose = true;
  const RunOutcome r = run(plan);
  EXPECT_EQ(arm_named(r.suites.at(0).cases.at(0), "broken").reason.find('\n'), std::string::npos);
  EXPECT_NE(r.progress.find("Exception raised from"), std::string::npos) << r.progress;
}

TEST(Runner, AnInvalidTrialMakesItsArmInvalidKeptAndNeverCompared) {
  const ScriptedSuite suite({"ok", "invalid", "ok2"}, {"m"});
  const RunOutcome r = run(tiny_plan(suite, 3));
  const auto& c = r.suites.at(0).cases.at(0);
  const auto& invalid = arm_named(c, "invalid");
  EXPECT_EQ(invalid.status, ArmStatus::invalid);
  EXPECT_EQ(invalid.reason, "block 0: skipped 5 of 8 files");
  EXPECT_EQ(invalid.trials.size(), 1u) << "kept for inspection, not run again";
  for (const auto& cmp : c.comparisons) EXPECT_NE(cmp.treatment, "invalid");
  bool compared_ok2 = false;
  for (const auto& cmp : c.comparisons) compared_ok2 = compared_ok2 || cmp.treatment == "ok2";
  EXPECT_TRUE(compared_ok2);
  EXPECT_NE(r.progress.find("invalid: scripted/model:m/arm:invalid"), std::string::npos) << r.progress;
}

TEST(Runner, FinishedCasesAreTakenAsTheyAreAndEveryMeasuredCaseIsReported) {
  const ScriptedSuite suite({"ok", "ok2"}, {"a", "b", "c"});
  auto plan = tiny_plan(suite, 2);
  CaseResult kept;
  kept.name = "scripted/model:b";
  kept.params = {{"model", "b"}};
  kept.arms.push_back({.name = "scripted/model:b/arm:ok", .arm = "ok", .reason = "measured before the interruption"});
  plan.finished_cases.emplace(kept.name, kept);
  std::vector<std::vector<std::string>> seen;  // case names the callback saw, per call
  plan.case_finished = [&](const std::vector<SuiteResult>& so_far) {
    std::vector<std::string> names;
    for (const auto& s : so_far)
      for (const auto& c : s.cases) names.push_back(c.name);
    seen.push_back(names);
  };
  const RunOutcome r = run(plan);
  EXPECT_EQ(suite.prepared, (std::set<std::string>{"a", "c"})) << "the finished case is not measured again";
  const auto& cases = r.suites.at(0).cases;
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[1].name, "scripted/model:b");
  EXPECT_EQ(cases[1].arms.at(0).reason, "measured before the interruption");
  EXPECT_EQ(seen, (std::vector<std::vector<std::string>>{
                      {"scripted/model:a"}, {"scripted/model:a", "scripted/model:b", "scripted/model:c"}}));
}

// A suite whose run-wide preparation fails (other than for bad input) fails its own arms with the
// reason; the other suites of the run are measured. Bad input still stops the whole run.
class SuiteWhosePreparationFails final : public tipbench::Suite {
 public:
  explicit SuiteWhosePreparationFails(bool input_error) : input_error_(input_error) {}
  std::string name() const override { return "unprepared"; }
  std::string description() const override { return "its prepare_run throws"; }
  std::vector<CaseSpec> cases(const SuiteContext&) const override {
    return {{{{"model", "m"}}, {{"base", {}}, {"treated", {}}, {"never", {}}}}};
  }
  std::optional<std::string> skip_reason(const SuiteContext&, const CaseSpec&, const ArmSpec& arm) const override {
    if (arm.name == "never") return "not on this device";
    return std::nullopt;
  }
  void prepare_run(const SuiteContext&) const override {
    if (input_error_) throw tipbench::InputError("the dataset folder is empty");
    TORCH_CHECK(false, "integer out of range");
  }
  std::unique_ptr<tipbench::Workload> prepare(const SuiteContext&, const CaseSpec&, const ArmSpec& arm,
                                              const TrialInfo&) const override {
    ADD_FAILURE() << "an arm of a suite whose preparation failed was prepared";
    return std::make_unique<ScriptedWorkload>(arm.name);
  }

 private:
  bool input_error_;
};

TEST(Runner, AFailedPreparationFailsOnlyThatSuitesArms) {
  const SuiteWhosePreparationFails unprepared(/*input_error=*/false);
  const ScriptedSuite fine({"ok", "ok2"}, {"m"});
  auto plan = tiny_plan(fine, 1);
  plan.suites = {&unprepared, &fine};
  const RunOutcome r = run(plan);
  ASSERT_EQ(r.suites.size(), 2u);
  const auto& c = r.suites[0].cases.at(0);
  for (const std::string arm : {"base", "treated"}) {
    EXPECT_EQ(arm_named(c, arm).status, ArmStatus::failed) << arm;
    EXPECT_NE(arm_named(c, arm).reason.find("preparation failed: integer out of range"), std::string::npos)
        << arm_named(c, arm).reason;
    EXPECT_EQ(arm_named(c, arm).reason.find('\n'), std::string::npos);
  }
  EXPECT_EQ(arm_named(c, "never").status, ArmStatus::skipped) << "a skip keeps its own reason";
  for (const auto& a : r.suites[1].cases.at(0).arms) EXPECT_EQ(a.status, ArmStatus::ok) << a.name;
  EXPECT_NE(r.progress.find("failed: unprepared: preparation: integer out of range"), std::string::npos) << r.progress;
}

TEST(Runner, BadInputInAPreparationStillStopsTheRun) {
  const SuiteWhosePreparationFails unprepared(/*input_error=*/true);
  EXPECT_THROW(run(tiny_plan(unprepared, 1)), tipbench::InputError);
}

// A resumed run's kept case that the plan does not contain would be dropped from the result and
// lost with the partial file: refused before anything is measured.
TEST(Runner, AFinishedCaseOutsideThePlanIsRefusedBeforeAnyTrial) {
  const ScriptedSuite suite({"ok", "ok2"}, {"a"});
  auto plan = tiny_plan(suite, 1);
  CaseResult kept;
  kept.name = "scripted/model:gone";
  plan.finished_cases.emplace(kept.name, kept);
  EXPECT_THROW(run(plan), tipbench::InputError);
  EXPECT_TRUE(suite.prepared.empty()) << "nothing was measured";
}

// An environment is what a fresh process starts with: an in-process suite that asks for one
// (it would be silently ignored) is a bug of the suite, refused before anything runs.
class InProcessSuiteWithAnEnvironment final : public tipbench::Suite {
 public:
  std::string name() const override { return "in_process_env"; }
  std::string description() const override { return "asks for an environment it cannot get"; }
  std::vector<CaseSpec> cases(const SuiteContext&) const override { return {{{{"model", "m"}}, {{"a", {}}}}}; }
  std::map<std::string, std::string> trial_environment(const SuiteContext&, const CaseSpec&,
                                                       const ArmSpec&) const override {
    return {{"LD_PRELOAD", "libjemalloc.so.2"}};
  }
  std::unique_ptr<tipbench::Workload> prepare(const SuiteContext&, const CaseSpec&, const ArmSpec& arm,
                                              const TrialInfo&) const override {
    return std::make_unique<ScriptedWorkload>(arm.name);
  }
};

TEST(Runner, ATrialEnvironmentNeedsFreshProcessIsolation) {
  const InProcessSuiteWithAnEnvironment suite;
  try {
    run(tiny_plan(suite, 1));
    FAIL() << "the run started";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("fresh-process"), std::string::npos) << e.what();
  }
}

}  // namespace
