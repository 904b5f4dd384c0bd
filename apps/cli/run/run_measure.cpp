#include "run_measure.h"

#include "tipbench/device/slowdown.h"

#include "run_checks.h"
#include "run_launch.h"
#include "run_resume.h"
#include "tipbench/statistics/block_looks.h"
#include "tipbench/common/error_text.h"
#include "tipbench/common/exit_codes.h"
#include "tipbench/processes/interrupt_notice.h"
#include "tipbench/results/partial_run.h"
#include "tipbench/common/progress.h"
#include "tipbench/machine/gpu_conditions.h"
#include "tipbench/environment/conditions_probe.h"
#include "tipbench/reports/console.h"
#include "tipbench/reports/format.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>

namespace tipbench::cli {

namespace {

void print_banner(const RunOptions& o, const RunPlan& plan, const Result& result) {
  const auto looks = block_looks(plan.settings);
  const std::string blocks =
      looks.size() == 1 ? fmt::format("{} blocks", looks.front())
                        : fmt::format("up to {} blocks per case (looks at {})", looks.back(), fmt::join(looks, ", "));
  fmt::print(stderr, "tipbench {}: {} suite(s) on {} ({}), {}{}\n", result.context.tipbench_version, plan.suites.size(),
             plan.context.device.str(), result.context.fingerprint_slug, blocks, o.quick ? ", quick" : "");
  if (!plan.finished_cases.empty()) {
    fmt::print(stderr, "resuming {}: {} case(s) already measured\n", o.resume, plan.finished_cases.size());
  }
  if (const auto& c = plan.resumed_case) {
    fmt::print(stderr, "resuming {}: {} block(s) of {} already measured\n", o.resume, c->blocks_done,
               c->case_result.name);
  }
  for (const auto& w : result.context.warnings) fmt::print(stderr, "warning: {}\n", w);
  if (const auto banner = reports::injected_slowdown_banner(result); !banner.empty()) {
    fmt::print(stderr, "{}\n", banner);
  }
}

// After every case, the cases so far go to the partial file and the interrupt notice names it.
// `partial_kept` says whether the file on disk holds finished cases: a message names it only then.
void keep_finished_cases(const RunOptions& o, RunPlan& plan, const Result& result, const std::string& partial_path,
                         bool& partial_kept) {
  const int kept = static_cast<int>(plan.finished_cases.size());
  const CaseInProgress* resumed = plan.resumed_case ? &*plan.resumed_case : nullptr;
  install_interrupt_notice(kept > 0 || resumed ? resume_hint(kept, partial_path, resumed)
                                               : "\ninterrupted: no case had finished; nothing kept");
  const auto keep = [&o, &result, &partial_path, &partial_kept](const std::vector<SuiteResult>& so_far,
                                                                const CaseInProgress* in_progress) {
    Result done = result;
    done.suites = so_far;
    const std::string hint = resume_hint(count_cases(done), partial_path, in_progress);
    try {
      // A signal right after the rename (a user, or a test that waits for the file) names it.
      stage_interrupt_notice(hint, partial_path);
      PartialRun partial{o.out, run_options_to_json(o), done, std::nullopt};
      if (in_progress) partial.in_progress = *in_progress;
      write_partial_run(partial, partial_path);
      partial_kept = true;  // a later failed write leaves this file as it was
      set_interrupt_notice(hint);
    } catch (const std::exception& e) {  // losing the safety net is no reason to stop measuring
      unstage_interrupt_notice();
      fmt::print(stderr, "warning: cannot keep finished cases in {}: {}\n", abbreviated(partial_path),
                 error_summary(e));
    }
  };
  plan.case_finished = [keep](const std::vector<SuiteResult>& so_far) { keep(so_far, nullptr); };
  plan.block_finished = [keep](const std::vector<SuiteResult>& so_far, const CaseInProgress& in_progress) {
    keep(so_far, &in_progress);
  };
}

// The partial file goes only once the result holds every case it kept.
void remove_partial_file(const RunPlan& plan, const Result& result, const std::string& partial_path) {
  remove_interrupt_notice();
  const auto written = finished_cases_of(result);
  const bool complete = std::all_of(plan.finished_cases.begin(), plan.finished_cases.end(),
                                    [&](const auto& kept) { return written.contains(kept.first); });
  if (complete) {
    std::remove(partial_path.c_str());
  } else {
    fmt::print(stderr, "warning: {} kept: the result lacks cases it holds\n", partial_path);
  }
}

// A failed or invalid arm makes the run's exit code 1 (the result is still written).
bool any_unusable(const std::vector<SuiteResult>& suites) {
  for (const auto& s : suites)
    for (const auto& c : s.cases)
      for (const auto& a : c.arms)
        if (a.status == ArmStatus::failed || a.status == ArmStatus::invalid) return true;
  return false;
}

}  // namespace

int measure_and_write(const RunOptions& o, RunPlan& plan, Result& result, const std::string& partial_path) {
  print_banner(o, plan, result);
  bool partial_kept = !plan.finished_cases.empty() || plan.resumed_case;  // a resumed run's file
  if (!partial_path.empty()) keep_finished_cases(o, plan, result, partial_path, partial_kept);
  Progress progress(Progress::stderr_is_tty(), stderr, /*every_trial=*/o.verbose);
  const ConditionsProbe conditions;                                // what else ran on these CPUs while the suites did
  const GpuConditionsProbe gpu_conditions(result.context.device);  // and on its GPU
  const auto op_delays_before = detail::op_delays_spent();
  try {
    result.suites = run_suites(plan, progress);
    RunConditions measured = conditions.finish();
    measured.gpus = gpu_conditions.finish();
    result.context.conditions = conditions_to_json(measured);
    // The knob's claim ("every timed step spent ... inside OP") holds only if OP ran in a step.
    const auto& s = plan.settings;
    if (s.inject_slowdown_pct > 0 && !s.inject_slowdown_op.empty() && detail::op_delays_spent() == op_delays_before) {
      result.context.warnings.push_back(
          fmt::format("--inject-slowdown-op {}: the op never ran inside a step of this process, so no step was slowed "
                      "(pick an op the workload calls: --explain names them)",
                      s.inject_slowdown_op));
    }
    end_distributed_run();         // the other ranks exit while rank 0 writes
  } catch (const InputError& e) {  // bad input found while staging or measuring: nothing written
    return usage_error(e.what());
  }
  try {
    write_result_atomically(result, o.out);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", result_write_failure(error_summary(e), partial_kept ? partial_path : ""));
    return exit_code::internal;
  }
  if (!partial_path.empty()) remove_partial_file(plan, result, partial_path);
  reports::print_run_summary(result, stdout, {.verbose = o.verbose});
  fmt::print("\nwrote {}\n", o.out);
  return any_unusable(result.suites) ? exit_code::failed : exit_code::ok;
}

}  // namespace tipbench::cli
