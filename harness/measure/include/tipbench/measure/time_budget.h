// Internal: `run --time-budget` (MeasureSettings::time_budget_s). The run's cases share the
// budget in their order: each gets what is left divided by the cases left, so a case that settles
// early leaves more for the later ones. A case stops before the block that would overrun its
// share once it has kMinBudgetBlocks blocks (a t-interval covers from 3 blocks on: the coverage
// table in docs/measurement.md); a case that starts with nothing left is skipped. Example:
//   TimeBudget budget(settings.time_budget_s, cases);
//   const double share = budget.start_case();          // 0: skip the case
//   if (blocks >= kMinBudgetBlocks && !budget.block_fits(mean_block_s)) stop;
#pragma once

#include "tipbench/results/result.h"

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tipbench {

// What a case took in an earlier run (`run --estimate-from`): wall seconds per block, and blocks.
struct CaseTime {
  double block_s = 0;
  int blocks = 0;
};
// The cases of an earlier result that recorded their wall time (schema 1.8), by case name.
std::map<std::string, CaseTime> case_times_of(const std::vector<SuiteResult>& suites);

}  // namespace tipbench

namespace tipbench::detail {

inline constexpr int kMinBudgetBlocks = 3;

// Up front, from an earlier run's case times: the cases (in run order, with their times where
// known) that the budget will likely cut before they settle, and those it will never start. A
// case with no earlier time is assumed to use its share.
struct BudgetForecast {
  std::vector<std::string> cut;
  std::vector<std::string> not_started;
};
BudgetForecast forecast_budget(const std::vector<std::pair<std::string, std::optional<CaseTime>>>& cases,
                               double budget_s);

class TimeBudget {
 public:
  using Clock = std::chrono::steady_clock;
  // `started`: when the run's clock started (run_suites' entry: the suites' preparation counts).
  TimeBudget(double budget_s, int cases, Clock::time_point started = Clock::now());
  bool limited() const { return budget_s_ > 0; }
  // A case starts now: its share in seconds (0 when nothing is left; unlimited: a huge number).
  double start_case();
  // Whether a block of `block_s` seconds started now ends within the current case's share.
  bool block_fits(double block_s) const;
  // Seconds of the whole budget left now (0 when spent; unlimited: a huge number).
  double left_s() const;
  // "15m 0s", "52s", "0.5s".
  static std::string duration_text(double seconds);

 private:
  double budget_s_;
  int cases_left_;
  Clock::time_point started_;
  Clock::time_point case_deadline_ = Clock::time_point::max();
};

}  // namespace tipbench::detail
