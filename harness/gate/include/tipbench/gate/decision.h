// The regression gate's decision. A check is one gated cell (suite/case/arm/metric). A cell is a
// regression candidate only when it is statistically significant after Holm's correction over
// all checks of the gate AND worse than its practical threshold; a candidate is re-measured once
// and fails the gate only if the re-measurement reproduces it. A check passes only when its 95%
// interval rules a regression of the threshold's size out. Outcome and exit code:
// PASS 0, FAIL 1 (confirmed regression), INCONCLUSIVE 3 (too noisy, nothing to compare, no
// baseline for a suite). Example:
//   auto report = tipbench::gate::evaluate_gate(baseline, current, config, {.paired = false});
//   tipbench::gate::confirm_candidates(report, remeasure, config);
//   return report.exit_code();
#pragma once

#include "tipbench/gate/check.h"
#include "tipbench/gate/compare.h"
#include "tipbench/gate/count_checks.h"
#include "tipbench/gate/gate_config.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tipbench::gate {

enum class Outcome { pass, fail, inconclusive };
std::string_view to_string(Outcome outcome);  // "PASS", "FAIL", "INCONCLUSIVE"

struct GateOptions {
  bool paired = false;  // baseline and current come from one interleaved session
  std::uint64_t seed = 0;
};

struct GateReport {
  std::string mode;  // "stored baseline" or "same-machine interleaved"
  // What differs in software between the two sides, from their fingerprints ("libtorch_version
  // 2.11.0 -> 2.15.0"): a stack A/B's change under test. Empty when only the code differs.
  std::vector<std::string> change_under_test;
  std::vector<Check> checks;  // worst first once finished
  // Counted work, by its own rule (count_checks.h): a FAIL here fails the gate. Failures first.
  std::vector<CountCheck> count_checks;
  // Why the baseline's and the current run's conditions of measurement differ beyond the config's
  // bound (unpaired runs only; "" when they do not). It is then also a problem (INCONCLUSIVE):
  // only a re-measurement under the baseline's conditions can confirm a regression (FAIL).
  std::string unequal_conditions;
  std::vector<std::string> problems;  // make the gate INCONCLUSIVE on their own
  std::vector<std::string> notes;     // informational
  std::vector<std::string> recommendations;
  Outcome outcome = Outcome::inconclusive;
  int exit_code() const;
};

// Bootstrap resamples for a family of m checks: enough that the smallest attainable p-value
// (2 / (resamples + 1)) is well below Holm's strictest level alpha / m.
std::size_t resamples_for(std::size_t checks, double alpha);

// Builds the checks and decides what it can without re-measuring; candidates stay
// `regression` with "not yet confirmed" until confirm_candidates runs. Calls finish().
GateReport evaluate_gate(const Result& baseline, const Result& current, const GateConfig& config,
                         const GateOptions& options);

// Re-measures the candidates (all at once: the caller can batch them per case) and keeps a
// regression only where the re-measurement, on its own, is significant at alpha and worse than
// the threshold, and was measured under the reference's conditions (CellComparison's
// unequal_conditions empty). When the first comparison's conditions differ (unequal_conditions),
// the gate is INCONCLUSIVE with that reason unless a re-measurement confirms a regression. remeasure returns the new
// comparison per key; a key it leaves out could not be re-measured and stays an unconfirmed regression. Calls finish().
using Remeasure = std::function<std::map<CellKey, CellComparison>(const std::vector<CellKey>&)>;
void confirm_candidates(GateReport& report, const Remeasure& remeasure, const GateConfig& config);

// Sorts the checks worst first and sets the outcome and recommendations.
void finish(GateReport& report);

nlohmann::json gate_report_to_json(const GateReport& report);

}  // namespace tipbench::gate
