// Confirming the gate's regression candidates by re-measurement (decision.h).
#include "tipbench/gate/decision.h"

#include "check_rules.h"

#include <fmt/format.h>

namespace tipbench::gate {

void confirm_candidates(GateReport& report, const Remeasure& remeasure, const GateConfig& config) {
  std::vector<CellKey> keys;
  for (const auto& c : report.checks) {
    if (c.candidate) keys.push_back(c.key);
  }
  std::map<CellKey, CellComparison> again;
  if (!keys.empty() && remeasure) again = remeasure(keys);
  for (auto& check : report.checks) {
    if (!check.candidate) continue;
    auto it = again.find(check.key);
    if (it == again.end()) {
      if (!report.unequal_conditions.empty()) {
        check.status = CheckStatus::inconclusive;
        check.detail = fmt::format(
            "flagged ({}) under other conditions than the baseline's, and no re-measurement "
            "was possible",
            describe(*check.comparison));
        continue;
      }
      check.status = CheckStatus::regression;
      check.detail = "regression, NOT confirmed (no re-measurement was possible): " + describe(*check.comparison);
      continue;
    }
    const CellComparison& r = it->second;
    check.rerun = r;
    const bool worse = worse_than(r, check.threshold);
    if (worse && !r.unequal_conditions.empty()) {
      // A loaded machine is slower whatever the build: the re-run proves nothing either.
      check.status = CheckStatus::inconclusive;
      check.detail =
          fmt::format("flagged ({}), re-run worse too ({}) but under other conditions than the baseline's: {}",
                      describe(*check.comparison), describe(r), r.unequal_conditions);
    } else if (worse && r.test.p_value < config.alpha) {
      check.status = CheckStatus::regression;
      check.detail = fmt::format("confirmed on re-run: {}; re-run {}", describe(*check.comparison), describe(r));
    } else if (worse) {
      check.status = CheckStatus::inconclusive;
      check.detail =
          fmt::format("flagged ({}), re-run worse but not significant ({})", describe(*check.comparison), describe(r));
    } else {
      check.status = CheckStatus::pass;
      check.detail = fmt::format("flagged ({}) but not reproduced on re-run ({}): treated as noise",
                                 describe(*check.comparison), describe(r));
    }
  }
  finish(report);
}

}  // namespace tipbench::gate
