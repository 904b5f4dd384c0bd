// One gate check: a gated cell (suite/case/arm/metric), its comparison, and what the gate decided
// about it and why (decision.h decides; src/check_rules.h judges one check from its comparison).
#pragma once

#include "tipbench/explain/explain.h"
#include "tipbench/gate/compare.h"

#include <optional>
#include <string>
#include <string_view>

namespace tipbench::gate {

enum class CheckStatus { pass, regression, inconclusive };
std::string_view to_string(CheckStatus status);  // "PASS", "FAIL", "INCONCLUSIVE"

struct Check {
  CellKey key;
  double threshold = 0;
  std::optional<CellComparison> comparison;  // absent when the arm failed in the current run
  double holm_alpha = 0;                     // the level its p-value was tested at in Holm's step-down
  bool significant = false;                  // rejected "no change" by Holm over the whole family
  bool candidate = false;                    // significant and worse by at least the threshold
  bool noisy = false;                        // the 95% interval cannot rule out a regression of the threshold's size
  std::optional<CellComparison> rerun;       // the confirmation re-measurement, when one was made
  CheckStatus status = CheckStatus::pass;
  std::string detail;  // one line: why this status
  // Which ops and kernels made the difference (explain_checks.h): under a FAIL, or every check
  // with `gate --explain`.
  std::optional<Explanation> why;
  bool why_from_rerun = false;  // explained by the confirmation re-run's breakdowns
};

}  // namespace tipbench::gate
