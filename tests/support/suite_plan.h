// For tests of what a suite plans and concludes: the registered suite by name, a CPU context, the
// arm names of a case, a short real trial of an arm, a measured arm to feed a suite's notes. Example:
//   const auto cases = suite_named("sync").cases(cpu_context(/*quick=*/true));
//   EXPECT_EQ(arm_names(cases[0]), (std::vector<std::string>{"every_step", "never"}));
#pragma once

#include "tipbench/suite/registry.h"
#include "tipbench/results/summary.h"
#include "tipbench/measure/trial.h"

#include "text_match.h"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tipbench::testing {

inline SuiteContext cpu_context(bool quick) {
  SuiteContext c;
  c.quick = quick;
  return c;
}

// A quick context on a CUDA device, for planning only (nothing runs): what a suite skips or
// isolates there.
inline SuiteContext cuda_context() {
  SuiteContext c = cpu_context(true);
  c.device = c10::Device(c10::kCUDA);
  return c;
}

// A measured arm for a suite's notes: its median step time, and the throughput of one sample per step.
inline ArmResult arm_with_step_ms(const std::string& name, double step_ms, bool baseline = false) {
  ArmResult a;
  a.arm = name;
  a.baseline = baseline;
  a.step_time_ms.median = step_ms;
  a.throughput_samples_per_s.median = 1000.0 / step_ms;
  return a;
}

inline const Suite& suite_named(const std::string& name) {
  const auto* s = find_suite(name);
  if (!s) throw std::runtime_error("suite not registered: " + name);
  return *s;
}

inline std::vector<std::string> arm_names(const CaseSpec& c) {
  std::vector<std::string> out;
  for (const auto& a : c.arms) out.push_back(a.name);
  return out;
}

// A short real trial of an arm of the quick CPU plan: what the arm sets up and records is under
// test, not the timing.
inline MeasureSettings short_trial() {
  MeasureSettings s = quick_settings();
  s.warmup_min_steps = 1;
  s.warmup_max_steps = 2;
  s.warmup_window = 1;
  s.trial_min_steps = 2;
  s.trial_min_time_s = 0.001;
  return s;
}

inline TrialOutcome trial_of(const std::string& suite, const std::string& arm, int case_index = 0) {
  const auto& s = suite_named(suite);
  const auto context = cpu_context(true);
  const auto cases = s.cases(context);
  const CaseSpec& c = cases.at(case_index);
  for (const auto& a : c.arms) {
    if (a.name == arm) return run_trial(s, context, c, a, short_trial(), 0, 0);
  }
  throw std::runtime_error("no arm " + arm);
}

// An ok arm of `blocks` trials at one throughput (and CUDA memory peak, when given), summarised.
inline ArmResult measured_arm(const std::string& name, Levels levels, double throughput,
                              std::optional<std::int64_t> peak_allocated_bytes = std::nullopt, int blocks = 3) {
  ArmResult a;
  a.arm = name;
  a.levels = std::move(levels);
  for (int b = 0; b < blocks; ++b) {
    Trial t;
    t.block = b;
    t.throughput_samples_per_s = throughput;
    t.memory.peak_allocated_bytes = peak_allocated_bytes;
    a.trials.push_back(t);
  }
  summarize_arm(a);
  return a;
}

}  // namespace tipbench::testing
