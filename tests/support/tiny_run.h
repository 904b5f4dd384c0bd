// Runs of the real runner whose trials take microseconds: the runner's bookkeeping is under test,
// not the timing. One warm-up window, trials of at least 3 steps and 1 ms, a small bootstrap.
//   auto plan = tipbench::testing::tiny_run_plan(suite, /*blocks=*/4);
//   const auto results = tipbench::testing::run_quietly(plan);
#pragma once

#include "tipbench/measure/runner.h"

#include <cstdio>
#include <vector>

namespace tipbench::testing {

inline RunPlan tiny_run_plan(const Suite& suite, int blocks) {
  RunPlan plan;
  plan.suites = {&suite};
  plan.settings.blocks = blocks;
  plan.settings.warmup_min_steps = 1;
  plan.settings.warmup_max_steps = 2;
  plan.settings.warmup_window = 1;
  plan.settings.trial_min_steps = 3;
  plan.settings.trial_min_time_s = 0.001;
  plan.settings.bootstrap_resamples = 200;
  return plan;
}

// The run, its progress lines thrown away.
inline std::vector<SuiteResult> run_quietly(const RunPlan& plan) {
  std::FILE* quiet = std::tmpfile();
  Progress progress(/*tty=*/false, quiet);
  auto results = run_suites(plan, progress);
  std::fclose(quiet);
  return results;
}

}  // namespace tipbench::testing
