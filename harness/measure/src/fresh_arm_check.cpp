#include "tipbench/measure/fresh_arm_check.h"

#include "tipbench/common/error_text.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/suite/registry.h"
#include "tipbench/measure/trial.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace tipbench {

namespace {

// small_cnn where the suite takes it (its staging, e.g. a largest-batch search, is then cheap),
// else the first model the suite supports.
SuiteContext check_context(const Suite& suite, const c10::Device& device) {
  SuiteContext context;
  context.device = device;
  context.quick = true;
  const auto supported = suite.supported_models();
  const bool small_cnn =
      supported.empty() || std::find(supported.begin(), supported.end(), "small_cnn") != supported.end();
  context.models = {small_cnn ? std::string("small_cnn") : supported.front()};
  return context;
}

// A trial just long enough to warm up and time a few steps.
MeasureSettings short_settings() {
  MeasureSettings s = quick_settings();
  s.blocks = 1;
  s.warmup_min_steps = 2;
  s.warmup_max_steps = 5;
  s.warmup_window = 1;
  s.trial_min_steps = 3;
  s.trial_min_time_s = 0.05;
  return s;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// One suite: 'o' ok, 's' skipped, 'f' failed; the line printed.
char check_suite(const std::string& self, const Suite& suite, const c10::Device& device) {
  const SuiteContext context = check_context(suite, device);
  const MeasureSettings settings = short_settings();
  std::string name = suite.name();
  try {
    suite.prepare_run(context);
    const auto cases = suite.cases(context);
    std::string why_skipped = "no cases";
    for (std::size_t ci = 0; ci < cases.size(); ++ci) {
      for (std::size_t ai = 0; ai < cases[ci].arms.size(); ++ai) {
        const auto& arm = cases[ci].arms[ai];
        if (auto why = suite.skip_reason(context, cases[ci], arm)) {
          if (ci == 0 && ai == 0) why_skipped = *why;
          continue;
        }
        name = arm_name(suite.name(), cases[ci], arm);
        const auto outcome =
            run_trial_in_fresh_process(self, suite, context, static_cast<int>(ci), static_cast<int>(ai), settings, 0, 0,
                                       suite.trial_environment(context, cases[ci], arm));
        auto ms = outcome.trial.step_times_ms;
        std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
        fmt::print("ok       {}  {:.3g} ms/step\n", name, ms.empty() ? 0.0 : ms[ms.size() / 2]);
        return 'o';
      }
    }
    fmt::print("skipped  {}: {}\n", suite.name(), first_line(why_skipped));
    return 's';
  } catch (const ArmUnavailable& e) {
    fmt::print("skipped  {}: {}\n", name, first_line(e.what()));
    return 's';
  } catch (const std::exception& e) {
    fmt::print("failed   {}: {}\n", name, first_line(error_summary(e)));
    return 'f';
  }
}

}  // namespace

int check_first_arms_in_fresh_processes(const std::string& self_executable, const std::string& device_name,
                                        const std::vector<std::string>& suite_names) {
  c10::Device device(c10::kCPU);
  try {
    device = c10::Device(device_name);
  } catch (const std::exception&) {
    fmt::print(stderr, "error: unknown device '{}'\n", device_name);
    return exit_code::usage;
  }
  std::vector<const Suite*> suites;
  for (const auto& name : suite_names) {
    const Suite* s = find_suite(name);
    if (s == nullptr) {
      fmt::print(stderr, "error: unknown suite '{}'\n", name);
      return exit_code::usage;
    }
    suites.push_back(s);
  }
  if (suites.empty()) suites = all_suites();
  int ok = 0, skipped = 0, failed = 0;
  for (const Suite* s : suites) {
    const char outcome = check_suite(self_executable, *s, device);
    ok += outcome == 'o';
    skipped += outcome == 's';
    failed += outcome == 'f';
    std::fflush(stdout);
  }
  fmt::print("fresh arms on {}: {} ok, {} skipped, {} failed\n", device.str(), ok, skipped, failed);
  return failed == 0 ? exit_code::ok : exit_code::failed;
}

}  // namespace tipbench
