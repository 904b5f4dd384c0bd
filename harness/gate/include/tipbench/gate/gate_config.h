// The gate's thresholds: which metrics are gated, the practical threshold of each (per suite
// where a suite needs its own), and the family-wise false-alarm rate. Committed as JSON
// (ci/gate-thresholds.json); unknown keys are an error. Example:
//   auto cfg = tipbench::gate::read_gate_config("ci/gate-thresholds.json");   // throws InputError
//   std::optional<double> t = cfg.threshold_for("zero_grad", "throughput_samples_per_s");  // 0.03
#pragma once

#include "tipbench/gate/between_runs.h"
#include "tipbench/environment/run_conditions.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tipbench::gate {

struct GateConfig {
  double alpha = 0.05;  // family-wise error rate over all checks of one gate (Holm)
  // metric -> practical threshold (a fraction, 0.03 = 3%); a metric not listed is not gated.
  std::map<std::string, double> metrics{{"throughput_samples_per_s", 0.03}};
  // Replaces `metrics` when the gated run is on a CPU (for_device): e.g. CPU time per step,
  // which a shared CPU runner's neighbours disturb less than wall time. Empty: `metrics` for all.
  std::map<std::string, double> cpu_metrics;
  // suite -> metric -> threshold: overrides `metrics` for that suite. A threshold of 0 there
  // turns the metric off for the suite.
  std::map<std::string, std::map<std::string, double>> suites;
  // Counted work (count_checks.h): metric -> the change allowed, a fraction of the baseline's
  // count (0: exact). In the file: "counts": {"ops_per_step": {"tolerance_pct": 0}, ...}; an empty
  // object gates no count.
  std::map<std::string, double> counts{
      {"ops_per_step", 0.0},           {"allocations_per_step", 0.0}, {"allocated_bytes_per_step", 0.01},
      {"kernels_per_step", 0.0},       {"copies_per_step", 0.0},      {"syncs_per_step", 0.0},
      {"instructions_per_step", 0.002}};
  // Two unpaired runs (a stored baseline and a run, or a run and its confirmation) whose
  // conditions differ beyond this cannot fail the gate: INCONCLUSIVE, with the reason.
  ConditionsBound conditions;
  // Two unpaired runs differ by more than their blocks show (between_runs.h): the least relative
  // SD of one run's level of a cell, by device kind ("cpu", "cuda"), used where no repeated runs
  // measured it. In the file: "between_run_floor_pct": {"cpu": 0, "cuda": 0.5}. None on a CPU by
  // default: a shared CPU's spread is too large for any floor to leave a stored gate useful
  // (docs/gate.md, "Between runs"); gate CPU runs interleaved.
  std::map<std::string, double> between_run_floor{{"cpu", 0.0}, {"cuda", 0.005}};
  // What unpaired comparisons widen their intervals by: for_device() sets its floor; a stored
  // gate adds what its stored baselines measured. Not part of the file.
  BetweenRunSpread between_runs;

  // nullopt: the metric is not gated for this suite.
  std::optional<double> threshold_for(const std::string& suite, const std::string& metric) const;
  std::vector<std::string> suite_names() const;
  // The config that gates a run on `device` ("cpu", "cuda:0"): cpu_metrics in place of metrics on
  // a CPU when there are any, and that device kind's between-run floor.
  GateConfig for_device(const std::string& device) const;
};

// Percent in the file ("threshold_pct"), fractions in memory. Throws InputError naming the file
// and the offending key on anything unexpected.
GateConfig parse_gate_config(const nlohmann::json& j, const std::string& origin);
GateConfig read_gate_config(const std::string& path);
nlohmann::json gate_config_to_json(const GateConfig& config);

}  // namespace tipbench::gate
