// The gate's outcome from its checks (decision.h): the order worst first, PASS / FAIL /
// INCONCLUSIVE with its exit code, and the recommendations.
#include "tipbench/gate/decision.h"

#include "check_rules.h"

#include <fmt/format.h>

#include <algorithm>

namespace tipbench::gate {

namespace {

int rank(CheckStatus s) {
  switch (s) {
    case CheckStatus::regression: return 0;
    case CheckStatus::inconclusive: return 1;
    case CheckStatus::pass: return 2;
  }
  return 3;
}

}  // namespace

std::string_view to_string(CheckStatus status) {
  switch (status) {
    case CheckStatus::pass: return "PASS";
    case CheckStatus::regression: return "FAIL";
    case CheckStatus::inconclusive: return "INCONCLUSIVE";
  }
  return "?";
}

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::pass: return "PASS";
    case Outcome::fail: return "FAIL";
    case Outcome::inconclusive: return "INCONCLUSIVE";
  }
  return "?";
}

int GateReport::exit_code() const {
  switch (outcome) {
    case Outcome::pass: return 0;
    case Outcome::fail: return 1;
    case Outcome::inconclusive: return 3;
  }
  return 3;
}

void finish(GateReport& report) {
  std::stable_sort(report.checks.begin(), report.checks.end(), [](const Check& a, const Check& b) {
    if (rank(a.status) != rank(b.status)) return rank(a.status) < rank(b.status);
    const double ba = a.comparison ? badness(*a.comparison) : 1e9;  // a failed arm is worst
    const double bb = b.comparison ? badness(*b.comparison) : 1e9;
    return ba > bb;
  });
  judge_side_by_side(report.count_checks, report.checks);
  bool regression = false;
  for (const auto& c : report.count_checks) regression |= c.fails();
  bool inconclusive = !report.problems.empty();
  std::size_t blocks = 0;
  for (const auto& c : report.checks) {
    regression |= c.status == CheckStatus::regression;
    inconclusive |= c.status == CheckStatus::inconclusive;
    if (c.status == CheckStatus::inconclusive && c.comparison)
      blocks = std::max(blocks, blocks_to_resolve(*c.comparison, c.threshold));
  }
  if (report.checks.empty() && report.count_checks.empty()) {
    inconclusive = true;
    if (report.problems.empty()) report.problems.push_back("no gated cell is in both runs: nothing to compare");
  }
  report.outcome = regression ? Outcome::fail : inconclusive ? Outcome::inconclusive : Outcome::pass;
  report.recommendations.clear();
  if (blocks > 0) {
    report.recommendations.push_back(
        fmt::format("noisy checks: about {} blocks per side would resolve their thresholds (--blocks {}); quiet the "
                    "machine (no other jobs, performance governor) first",
                    blocks, blocks));
  }
  for (const auto& p : report.problems) {
    if (p.find("not in the baseline") != std::string::npos) {
      report.recommendations.push_back(
          "the baseline lacks what was run now: store a new one (tipbench baseline save RUN.json --force) "
          "or gate head vs base on this machine (--base-binary/--head-binary)");
      break;
    }
  }
  if (std::any_of(report.count_checks.begin(), report.count_checks.end(), [](const auto& c) { return c.fails(); })) {
    report.recommendations.push_back(
        "counted work grew: `tipbench run --explain` on both builds names the ops and kernels per phase; a change "
        "that does more work on purpose is accepted by saving a new baseline");
  }
  if (std::any_of(report.checks.begin(), report.checks.end(),
                  [](const auto& c) { return c.status == CheckStatus::regression; })) {
    report.recommendations.push_back(
        "a confirmed regression: reproduce it with `tipbench run --suite S --model M` on both builds, or "
        "accept it by saving a new baseline");
  }
}

}  // namespace tipbench::gate
