#include "tipbench/gate/explain_checks.h"

#include <fmt/format.h>

namespace tipbench::gate {

namespace {

const ArmResult* arm_of(const Result& r, const CellKey& key) {
  const auto* suite = find_suite(r, key.suite);
  if (!suite) return nullptr;
  for (const auto& c : suite->cases) {
    if (c.name == key.case_name) return find_arm(c, key.arm);
  }
  return nullptr;
}

}  // namespace

Explanation explain_cell(const CellKey& key, const Result& reference, const Result& candidate, bool paired) {
  const auto* ref = arm_of(reference, key);
  const auto* cand = arm_of(candidate, key);
  if (!ref || !cand) {
    Explanation e;
    e.missing = fmt::format("the arm is absent from the {} run", ref ? "current" : "reference");
    return e;
  }
  return explain_arms(*cand, *ref, {.paired = paired});
}

void explain_checks(GateReport& report, const Result& reference, const Result& candidate, bool paired, bool every) {
  for (auto& check : report.checks) {
    if (!every && check.status != CheckStatus::regression) continue;
    if (check.rerun && check.rerun->why && check.rerun->why->missing.empty()) {
      check.why = check.rerun->why;
      check.why_from_rerun = true;
      continue;
    }
    check.why = explain_cell(check.key, reference, candidate, paired);
    if (!check.why->missing.empty() && check.rerun && check.rerun->why)
      check.why->missing += "; its confirmation run: " + check.rerun->why->missing;
  }
}

}  // namespace tipbench::gate
