#include "tipbench/measure/runner.h"

#include "tipbench/statistics/block_looks.h"
#include "tipbench/statistics/block_order.h"
#include "tipbench/device/device_allocator.h"
#include "tipbench/device/device_init.h"
#include "tipbench/common/error_text.h"
#include "tipbench/results/summary.h"
#include "tipbench/measure/trial.h"

#include "kept_arm.h"
#include "tipbench/measure/time_budget.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

namespace tipbench {

namespace {

// One case of one suite with the runnable arms already separated from the skipped ones.
struct PlannedCase {
  const Suite* suite;
  int case_index;
  CaseSpec spec;
  CaseResult result;
  std::vector<int> runnable;  // indices into spec.arms
};

CaseResult empty_case_result(const Suite& suite, const CaseSpec& c) {
  CaseResult r;
  r.name = case_name(suite.name(), c);
  r.params = c.params;
  for (std::size_t i = 0; i < c.arms.size(); ++i) {
    ArmResult a;
    a.name = arm_name(suite.name(), c, c.arms[i]);
    a.arm = c.arms[i].name;
    a.baseline = i == 0;
    a.levels = c.arms[i].levels;
    r.arms.push_back(std::move(a));
  }
  return r;
}

// `staging_error`: why the suite's prepare_run failed (empty when it did not): its arms that
// would have run are failed with that reason instead, and the other suites run.
std::vector<PlannedCase> plan_cases(const Suite& suite, const SuiteContext& context, const std::string& staging_error) {
  std::vector<PlannedCase> planned;
  const auto cases = suite.cases(context);
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    PlannedCase p{&suite, static_cast<int>(ci), cases[ci], empty_case_result(suite, cases[ci]), {}};
    for (std::size_t ai = 0; ai < cases[ci].arms.size(); ++ai) {
      if (auto why = suite.skip_reason(context, cases[ci], cases[ci].arms[ai])) {
        p.result.arms[ai].status = ArmStatus::skipped;
        p.result.arms[ai].reason = *why;
      } else if (!staging_error.empty()) {
        p.result.arms[ai].status = ArmStatus::failed;
        p.result.arms[ai].reason = "the suite's preparation failed: " + staging_error;
      } else {
        p.runnable.push_back(static_cast<int>(ai));
      }
      if (suite.isolation(context) == Isolation::in_process &&
          !suite.trial_environment(context, cases[ci], cases[ci].arms[ai]).empty()) {
        throw std::logic_error(suite.name() + ": a trial environment needs fresh-process isolation");
      }
    }
    planned.push_back(std::move(p));
  }
  return planned;
}

// What the case's kept arms other than `arm` hold between their trials.
detail::HeldMemory held_by_others(const std::vector<detail::KeptArm>& kept, int arm) {
  detail::HeldMemory sum;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    if (static_cast<int>(i) != arm && kept[i].workload) sum += kept[i].held;
  }
  return sum;
}

// One trial of every runnable arm, in the block's shuffled order. `kept`: the case's kept
// workloads by arm (kept_arm.h), empty for fresh-process suites.
void run_block(PlannedCase& p, const RunPlan& plan, Progress& progress, int block, int most_blocks,
               std::vector<detail::KeptArm>& kept) {
  const Suite& suite = *p.suite;
  const auto order = block_order(p.runnable, plan.settings.seed, p.result.name, block);
  for (std::size_t position = 0; position < order.size(); ++position) {
    const int ai = order[position];
    ArmResult& arm = p.result.arms[ai];
    if (arm.status != ArmStatus::ok) continue;  // failed or invalid in an earlier block
    progress.trial_started(suite.name(), join_levels(p.spec.params) + " arm:" + arm.arm, block, most_blocks);
    const auto started = std::chrono::steady_clock::now();
    try {
      const detail::HeldMemory others = kept.empty() ? detail::HeldMemory{} : held_by_others(kept, ai);
      TrialOutcome outcome =
          suite.isolation(plan.context) == Isolation::fresh_process
              ? run_trial_in_fresh_process(plan.self_executable, suite, plan.context, p.case_index, ai, plan.settings,
                                           block, static_cast<int>(position),
                                           suite.trial_environment(plan.context, p.spec, p.spec.arms[ai]))
              : run_trial(suite, plan.context, p.spec, p.spec.arms[ai], plan.settings, block,
                          static_cast<int>(position), kept.empty() ? nullptr : &kept[ai], &others);
      arm.trials.push_back(std::move(outcome.trial));
      arm.info = std::move(outcome.info);
      if (outcome.profile) {
        if (!outcome.profile->error.empty()) progress.note("profile: " + arm.name + ": " + outcome.profile->error);
        arm.profile = std::move(outcome.profile);
      }
      if (!outcome.invalid_reason.empty()) {  // kept for inspection, never compared
        arm.status = ArmStatus::invalid;
        arm.reason = fmt::format("block {}: {}", block, outcome.invalid_reason);
        progress.note("invalid: " + arm.name + ": " + arm.reason);
      }
    } catch (const InputError&) {
      // Bad input from outside (e.g. a corrupt file under --corrupt-policy fail) stops the run.
      progress.end();
      throw;
    } catch (const ArmUnavailable& e) {
      // Found only by the trial's own process: skipped with the reason, like a planned skip.
      arm.status = ArmStatus::skipped;
      arm.reason = e.what();
      arm.trials.clear();
      progress.note("skipped: " + arm.name + ": " + arm.reason);
    } catch (const std::exception& e) {
      // One failing arm is recorded and the run goes on with the others.
      arm.status = ArmStatus::failed;
      arm.reason = error_summary(e);
      progress.note("failed: " + arm.name + ": " + arm.reason);
      if (plan.verbose) progress.note(error_details(e));
    }
    // An arm that will not run again releases what it kept.
    if (arm.status != ArmStatus::ok && !kept.empty()) kept[ai] = {};
    progress.trial_finished(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
}

// A case may stop at a look when none of its throughput comparisons is still unresolved (the
// CPU-time and memory comparisons ride along with the blocks that settle the speed).
bool case_settled(const CaseResult& c) {
  const std::string speed = trial_throughput().name;
  return std::none_of(c.comparisons.begin(), c.comparisons.end(),
                      [&](const Comparison& cmp) { return cmp.metric == speed && cmp.stop == StopReason::unresolved; });
}

// A resumed case's finished blocks go into its planned arms, matched by name: the arms' trials,
// status and reason as they were. Returns the blocks done.
int take_resumed_blocks(PlannedCase& p, const CaseInProgress& resumed) {
  if (resumed.case_result.arms.size() != p.result.arms.size()) {
    throw InputError(fmt::format("the case in progress {} has {} arms, this run's plan {}", p.result.name,
                                 resumed.case_result.arms.size(), p.result.arms.size()));
  }
  for (std::size_t i = 0; i < p.result.arms.size(); ++i) {
    const ArmResult& kept = resumed.case_result.arms[i];
    ArmResult& arm = p.result.arms[i];
    if (kept.name != arm.name) {
      throw InputError(
          fmt::format("the case in progress has the arm {} where this run's plan has {}", kept.name, arm.name));
    }
    if (arm.status == ArmStatus::skipped) continue;  // skipped here and now: as planned
    arm.status = kept.status;
    arm.reason = kept.reason;
    arm.info = kept.info;
    arm.trials = kept.trials;
  }
  return resumed.blocks_done;
}

// A case the time budget has no time for: its runnable arms that would have run are skipped, with
// the reason ("" : spent before the case started).
void skip_for_budget(PlannedCase& p, const RunPlan& plan, Progress& progress, const std::string& why = "") {
  p.result.budget_cut = why.empty() ? fmt::format("the {} time budget was spent before this case started",
                                                  detail::TimeBudget::duration_text(plan.settings.time_budget_s))
                                    : why;
  for (int ai : p.runnable) {
    if (p.result.arms[ai].status != ArmStatus::ok) continue;
    p.result.arms[ai].status = ArmStatus::skipped;
    p.result.arms[ai].reason = p.result.budget_cut;
  }
  progress.trials_dropped(static_cast<int>(p.runnable.size()) * block_looks(plan.settings).back());
  progress.note("time budget: " + p.result.name + ": " + p.result.budget_cut);
}

// The suite's per-case preparation (Suite::prepare_case); on failure the arms that would have run
// fail with the reason, and the case ends there.
bool prepare_case(PlannedCase& p, const RunPlan& plan, Progress& progress) {
  try {
    p.suite->prepare_case(plan.context, p.spec, p.result);
    return true;
  } catch (const InputError&) {
    progress.end();
    throw;
  } catch (const std::exception& e) {
    const std::string why = "the case's preparation failed: " + error_summary(e);
    for (int ai : p.runnable) {
      if (p.result.arms[ai].status != ArmStatus::ok) continue;
      p.result.arms[ai].status = ArmStatus::failed;
      p.result.arms[ai].reason = why;
    }
    progress.note("failed: " + p.result.name + ": " + why);
    if (plan.verbose) progress.note(error_details(e));
    summarize_case(p.result, plan.settings);
    return false;
  }
}

// Blocks up to each look (block_looks.h); after each look the case is summarised, and it stops
// at the first look where it is settled, or at the last. A resumed case starts after its finished
// blocks, at the looks it had not passed. `keep` is told after every block that does not end it.
// Under a time budget the case also stops before a block that would overrun its share (`share_s`)
// once it has kMinBudgetBlocks, and says so in budget_cut unless it was settled by then.
void run_case(PlannedCase& p, const RunPlan& plan, Progress& progress, detail::TimeBudget& budget, double share_s,
              const std::function<void(const CaseInProgress&)>& keep) {
  const auto looks = block_looks(plan.settings);
  // In-process arms may keep their workloads between their trials; released with the case.
  std::vector<detail::KeptArm> kept;
  if (plan.settings.keep_workloads && p.suite->isolation(plan.context) == Isolation::in_process) {
    kept.resize(p.spec.arms.size());
  }
  int block = 0;
  if (plan.resumed_case && plan.resumed_case->case_result.name == p.result.name) {
    block = std::min(take_resumed_blocks(p, *plan.resumed_case), looks.back());
    progress.trials_dropped(static_cast<int>(p.runnable.size()) * block);
  }
  if (!prepare_case(p, plan, progress)) {
    progress.trials_dropped(static_cast<int>(p.runnable.size()) * (looks.back() - block));
    return;
  }
  // A preparation that spent what was left of the budget (a largest-batch search) leaves no
  // time for the case's blocks: the overrun stops at the preparation.
  if (budget.limited() && budget.left_s() <= 0 && block < looks.back()) {
    skip_for_budget(p, plan, progress,
                    fmt::format("the {} time budget was spent while the case was prepared (its largest-batch searches)",
                                detail::TimeBudget::duration_text(plan.settings.time_budget_s)));
    return;
  }
  const int runnable = static_cast<int>(p.runnable.size());
  double measured_s = 0;  // the blocks run in this command
  int measured_blocks = 0;
  for (std::size_t k = 0; k < looks.size(); ++k) {
    if (looks[k] < block) continue;  // a look the interrupted command took
    bool out_of_time = false;
    for (; block < looks[k]; ++block) {
      if (block >= detail::kMinBudgetBlocks && measured_blocks > 0 &&
          !budget.block_fits(measured_s / measured_blocks)) {
        out_of_time = true;
        break;
      }
      const auto started = std::chrono::steady_clock::now();
      run_block(p, plan, progress, block, looks.back(), kept);
      measured_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      ++measured_blocks;
      if (block + 1 < looks.back() && keep) keep(CaseInProgress{p.suite->name(), p.result, block + 1});
    }
    summarize_case(p.result, plan.settings);
    const bool settled = case_settled(p.result);
    if (out_of_time) {
      progress.trials_dropped(runnable * (looks.back() - block));
      if (!settled || block < looks[k]) {
        p.result.budget_cut = fmt::format("its share of the {} time budget, {}, ended after {} of {} blocks",
                                          detail::TimeBudget::duration_text(plan.settings.time_budget_s),
                                          detail::TimeBudget::duration_text(share_s), block, looks.back());
        progress.note("time budget: " + p.result.name + ": " + p.result.budget_cut);
      }
      break;
    }
    if (k + 1 < looks.size() && settled) {
      progress.trials_dropped(runnable * (looks.back() - block));
      break;
    }
  }
}

// Up front, from the earlier run's case times (--estimate-from): which cases the budget will
// likely cut, and which it will never start.
void say_forecast(const std::vector<std::vector<PlannedCase>>& planned, const RunPlan& plan, Progress& progress) {
  std::vector<std::pair<std::string, std::optional<CaseTime>>> cases;
  for (const auto& suite_cases : planned) {
    for (const auto& p : suite_cases) {
      if (plan.finished_cases.contains(p.result.name) || p.runnable.empty()) continue;
      const auto earlier = plan.earlier_case_times.find(p.result.name);
      cases.emplace_back(p.result.name, earlier == plan.earlier_case_times.end()
                                            ? std::nullopt
                                            : std::optional<CaseTime>(earlier->second));
    }
  }
  const auto forecast = detail::forecast_budget(cases, plan.settings.time_budget_s);
  const auto say = [&](const std::vector<std::string>& names, const char* what) {
    if (names.empty()) return;
    progress.note(fmt::format("time budget: by the earlier run's times, {} case(s) {}: {}", names.size(), what,
                              fmt::join(names, ", ")));
  };
  say(forecast.cut, "will likely be cut before they settle");
  say(forecast.not_started, "will not start");
  if (forecast.cut.empty() && forecast.not_started.empty()) {
    progress.note("time budget: by the earlier run's times, every case fits");
  }
}

}  // namespace

std::vector<SuiteResult> run_suites(const RunPlan& plan, Progress& progress) {
  // The budget's clock starts here: the suites' preparation is part of what it pays for.
  const auto run_started = std::chrono::steady_clock::now();
  std::vector<SuiteResult> results;
  initialize_device(plan.context.device);  // before any allocator call (device_init.h)
  // What PyTorch allocates once per process and keeps (cuBLAS workspaces), made before any arm
  // exists: in every arm's baseline, in no kept arm's own memory (device_allocator.h).
  if (auto* allocator = device_allocator(plan.context.device)) allocator->make_process_wide_state();
  // Run-wide staging and input checks first: bad input stops the run before anything is measured;
  // any other failure fails that suite's arms, and the other suites run.
  std::map<const Suite*, std::string> staging_errors;
  for (const Suite* suite : plan.suites) {
    try {
      suite->prepare_run(plan.context);
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      staging_errors[suite] = error_summary(e);
      progress.note("failed: " + suite->name() + ": preparation: " + staging_errors[suite]);
      if (plan.verbose) progress.note(error_details(e));
    }
  }
  std::vector<std::vector<PlannedCase>> planned;
  int total_trials = 0;
  std::set<std::string> planned_names;
  for (const Suite* suite : plan.suites) {
    const auto staging = staging_errors.find(suite);
    planned.push_back(plan_cases(*suite, plan.context, staging == staging_errors.end() ? "" : staging->second));
    for (const auto& p : planned.back()) planned_names.insert(p.result.name);
    for (const auto& p : planned.back()) {
      if (plan.finished_cases.contains(p.result.name)) continue;
      total_trials += static_cast<int>(p.runnable.size()) * plan.settings.blocks;
      for (const auto& arm : p.result.arms) {
        if (arm.status == ArmStatus::skipped) progress.note("skipped: " + arm.name + ": " + arm.reason);
      }
    }
  }
  if (plan.resumed_case && !planned_names.contains(plan.resumed_case->case_result.name)) {
    throw InputError(
        fmt::format("the case in progress {} is not in this run's plan: the run's options do not "
                    "describe it",
                    plan.resumed_case->case_result.name));
  }
  // A resumed run's finished cases must be cases of this plan: one the plan lacks would be lost.
  for (const auto& [name, kept] : plan.finished_cases) {
    if (!planned_names.contains(name)) {
      throw InputError(
          fmt::format("the finished case {} is not in this run's plan: the run's options do not "
                      "describe the cases it kept",
                      name));
    }
  }
  int cases_to_measure = 0;
  for (const auto& suite_cases : planned) {
    for (const auto& p : suite_cases) {
      cases_to_measure += !plan.finished_cases.contains(p.result.name) && !p.runnable.empty();
    }
  }
  detail::TimeBudget budget(plan.settings.time_budget_s, cases_to_measure, run_started);
  if (budget.limited() && !plan.earlier_case_times.empty()) say_forecast(planned, plan, progress);
  if (budget.limited()) {
    progress.note(
        fmt::format("time budget: {} for {} case(s), about {} each to start with; a case that settles "
                    "early leaves its rest to the later ones",
                    detail::TimeBudget::duration_text(plan.settings.time_budget_s), cases_to_measure,
                    detail::TimeBudget::duration_text(plan.settings.time_budget_s / std::max(1, cases_to_measure))));
  }
  progress.begin(total_trials);
  for (std::size_t si = 0; si < plan.suites.size(); ++si) {
    const Suite& suite = *plan.suites[si];
    SuiteResult sr;
    sr.name = suite.name();
    sr.description = suite.description();
    sr.source_claim = suite.source_claim();
    sr.chart = suite.chart();
    sr.isolation = suite.isolation(plan.context) == Isolation::fresh_process ? "fresh_process" : "in_process";
    for (auto& p : planned[si]) {
      if (const auto done = plan.finished_cases.find(p.result.name); done != plan.finished_cases.end()) {
        sr.cases.push_back(done->second);
        continue;
      }
      const auto keep = [&](const CaseInProgress& in_progress) {
        if (!plan.block_finished) return;
        results.push_back(sr);  // the suite so far, for the callback only
        plan.block_finished(results, in_progress);
        results.pop_back();
      };
      if (!p.runnable.empty()) {
        const double share_s = budget.start_case();
        const auto started = std::chrono::steady_clock::now();
        const auto earlier = plan.earlier_case_times.find(p.result.name);
        // What the case's first blocks took in the earlier run (its preparation spread over them):
        // more than the whole budget has left, and it would only overrun it.
        const double floor_s =
            earlier == plan.earlier_case_times.end() ? 0 : earlier->second.block_s * detail::kMinBudgetBlocks;
        if (share_s <= 0) {
          skip_for_budget(p, plan, progress);
        } else if (budget.limited() && floor_s > budget.left_s()) {
          skip_for_budget(p, plan, progress,
                          fmt::format("its first {} blocks took {} in the earlier run (--estimate-from), more than "
                                      "the {} left of the {} time budget",
                                      detail::kMinBudgetBlocks, detail::TimeBudget::duration_text(floor_s),
                                      detail::TimeBudget::duration_text(budget.left_s()),
                                      detail::TimeBudget::duration_text(plan.settings.time_budget_s)));
        } else {
          progress.case_started(p.result.name);
          run_case(p, plan, progress, budget, share_s, keep);
          progress.case_finished();
        }
        p.result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      } else {
        summarize_case(p.result, plan.settings);  // nothing to run: every arm skipped or failed
      }
      sr.cases.push_back(std::move(p.result));
      if (plan.case_finished) {
        results.push_back(sr);  // the suite so far, for the callback only
        plan.case_finished(results);
        results.pop_back();
      }
    }
    sr.notes = suite.notes(sr, plan.settings);
    results.push_back(std::move(sr));
  }
  progress.end();
  return results;
}

}  // namespace tipbench
