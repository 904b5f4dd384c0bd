#include "tipbench/measure/time_budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tipbench::detail {

BudgetForecast forecast_budget(const std::vector<std::pair<std::string, std::optional<CaseTime>>>& cases,
                               double budget_s) {
  BudgetForecast out;
  double left_s = budget_s;
  auto cases_left = static_cast<double>(cases.size());
  for (const auto& [name, time] : cases) {
    const double share = std::max(0.0, left_s) / std::max(1.0, cases_left);
    cases_left -= 1;
    if (share <= 0) {
      out.not_started.push_back(name);
      continue;
    }
    double spent = share;
    if (time && time->block_s > 0 && time->blocks > 0) {
      const double needed = time->block_s * time->blocks;
      if (needed <= share) {
        spent = needed;
      } else {
        out.cut.push_back(name);
        spent = std::max(time->block_s * kMinBudgetBlocks, std::floor(share / time->block_s) * time->block_s);
      }
    }
    left_s -= spent;
  }
  return out;
}

TimeBudget::TimeBudget(double budget_s, int cases, Clock::time_point started)
    : budget_s_(budget_s), cases_left_(std::max(cases, 1)), started_(started) {}

double TimeBudget::start_case() {
  if (!limited()) return std::numeric_limits<double>::max();
  const double spent = std::chrono::duration<double>(Clock::now() - started_).count();
  const double share = std::max(0.0, budget_s_ - spent) / cases_left_;
  cases_left_ = std::max(1, cases_left_ - 1);
  case_deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(share));
  return share;
}

bool TimeBudget::block_fits(double block_s) const {
  if (!limited()) return true;
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(block_s)) <=
         case_deadline_;
}

double TimeBudget::left_s() const {
  if (!limited()) return std::numeric_limits<double>::max();
  return std::max(0.0, budget_s_ - std::chrono::duration<double>(Clock::now() - started_).count());
}

std::string TimeBudget::duration_text(double seconds) {
  if (seconds < 10) return fmt::format("{:.1f}s", seconds);
  const auto whole = static_cast<long long>(std::llround(seconds));
  if (whole < 60) return fmt::format("{}s", whole);
  if (whole < 3600) return fmt::format("{}m {}s", whole / 60, whole % 60);
  return fmt::format("{}h {}m", whole / 3600, (whole % 3600) / 60);
}

}  // namespace tipbench::detail

namespace tipbench {

std::map<std::string, CaseTime> case_times_of(const std::vector<SuiteResult>& suites) {
  std::map<std::string, CaseTime> out;
  for (const auto& suite : suites) {
    for (const auto& c : suite.cases) {
      std::size_t blocks = 0;
      for (const auto& arm : c.arms) blocks = std::max(blocks, arm.trials.size());
      if (c.wall_s > 0 && blocks > 0) {
        out[c.name] = {.block_s = c.wall_s / static_cast<double>(blocks), .blocks = static_cast<int>(blocks)};
      }
    }
  }
  return out;
}

}  // namespace tipbench
