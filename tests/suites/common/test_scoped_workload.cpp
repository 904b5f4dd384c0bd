// A workload that owns a process-wide knob (common/scoped_workload.h): made with_setting it may
// be kept between its trials, and through the real runner every trial of every arm sees exactly
// its own setting: the kept arm's knob goes back while the other arms run and is set again for
// its next trial. A knob the caller set (with_restore) cannot be set again, so that workload is
// never kept; with_info keeps what the inner workload keeps, unless told never to.
#include "common/scoped_workload.h"
#include "tipbench/measure/runner.h"

#include "tiny_run.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

namespace {

using tipbench::ArmSpec;
using tipbench::CaseSpec;
using tipbench::SuiteContext;
using tipbench::TrialInfo;
namespace s = tipbench::suites;

int knob = 0;  // a process-wide setting, as TF32 or cuDNN's allow_tf32 is

std::function<void()> set_knob(int value) {
  const int before = knob;
  knob = value;
  return [before] { knob = before; };
}

// Checks at every step that the knob is what its arm asked for.
class KnobReader final : public tipbench::Workload {
 public:
  KnobReader(int expected, int* wrong) : expected_(expected), wrong_(wrong) {}
  void step() override { *wrong_ += knob != expected_; }
  std::int64_t samples_per_step() const override { return 1; }
  bool keep_between_trials() const override { return true; }

 private:
  int expected_;
  int* wrong_;
};

class KnobSuite final : public tipbench::Suite {
 public:
  std::string name() const override { return "knob"; }
  std::string description() const override { return "arms that set a process-wide knob"; }
  std::vector<CaseSpec> cases(const SuiteContext&) const override {
    return {{{{"model", "m"}}, {{"default", {}}, {"one", {}}, {"two", {}}}}};
  }
  std::unique_ptr<tipbench::Workload> prepare(const SuiteContext&, const CaseSpec&, const ArmSpec& arm,
                                              const TrialInfo&) const override {
    ++builds;
    if (arm.name == "default") return std::make_unique<KnobReader>(0, &wrong);
    const int value = arm.name == "one" ? 1 : 2;
    return s::with_setting([value] { return set_knob(value); },
                           [&] { return std::make_unique<KnobReader>(value, &wrong); },
                           [] {
                             return nlohmann::json{{"knob", knob}};
                           });
  }
  mutable int wrong = 0;
  mutable int builds = 0;
};

TEST(ScopedWorkload, AKeptArmSetsItsKnobForItsOwnTrialsOnly) {
  const KnobSuite suite;
  auto plan = tipbench::testing::tiny_run_plan(suite, 5);
  plan.settings.min_blocks = 5;
  const auto results = tipbench::testing::run_quietly(plan);
  EXPECT_EQ(suite.wrong, 0) << "a step ran under another arm's knob";
  EXPECT_EQ(suite.builds, 3) << "every arm built once and kept";
  EXPECT_EQ(knob, 0) << "put back when the case released its arms";
  const auto& one = results.at(0).cases.at(0).arms.at(1);
  EXPECT_EQ(one.info.at("knob"), 1) << "the info is read under the setting";
  for (std::size_t i = 1; i < one.trials.size(); ++i) EXPECT_TRUE(one.trials[i].reused_workload);
}

TEST(ScopedWorkload, WhatMayBeKeptFollowsHowTheKnobWasSet) {
  int wrong = 0;
  const auto reader = [&] { return std::make_unique<KnobReader>(0, &wrong); };
  EXPECT_TRUE(s::with_setting([] { return set_knob(0); }, reader)->keep_between_trials());
  EXPECT_FALSE(s::with_restore(reader(), [] {})->keep_between_trials()) << "its knob cannot be set again";
  EXPECT_TRUE(s::with_info(reader(), {{"x", 1}})->keep_between_trials());
  EXPECT_FALSE(s::with_info(reader(), {{"x", 1}}, s::Keep::never)->keep_between_trials());
  {
    auto w = s::with_setting([] { return set_knob(7); }, reader);
    EXPECT_EQ(knob, 7);
    w->set_aside();
    EXPECT_EQ(knob, 0);
    w->take_back();
    EXPECT_EQ(knob, 7);
    w->set_aside();
  }
  EXPECT_EQ(knob, 0) << "destroyed while set aside: nothing set twice, nothing restored twice";
  EXPECT_THROW(
      s::with_setting([] { return set_knob(3); },
                      []() -> std::unique_ptr<tipbench::Workload> { throw std::runtime_error("out of memory"); }),
      std::runtime_error);
  EXPECT_EQ(knob, 0) << "put back when the build throws";
}

}  // namespace
