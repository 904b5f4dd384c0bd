#include "time_budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tipbench::detail {

TimeBudget::TimeBudget(double budget_s, int cases) : budget_s_(budget_s), cases_left_(std::max(cases, 1)) {}

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

std::string TimeBudget::duration_text(double seconds) {
  if (seconds < 10) return fmt::format("{:.1f}s", seconds);
  const auto whole = static_cast<long long>(std::llround(seconds));
  if (whole < 60) return fmt::format("{}s", whole);
  if (whole < 3600) return fmt::format("{}m {}s", whole / 60, whole % 60);
  return fmt::format("{}h {}m", whole / 3600, (whole % 3600) / 60);
}

}  // namespace tipbench::detail
