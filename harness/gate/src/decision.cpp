// evaluate_gate (decision.h): what differs between the runs, which suites and arms can be checked,
// the gated cells paired with the baseline's, and their comparisons tested together under Holm.
#include "tipbench/gate/decision.h"

#include "check_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace tipbench::gate {

namespace {

// An injected slowdown on either side, and other hardware: said before any check. A software
// difference is the change under test (a stack A/B), not a note.
void note_run_differences(const Result& baseline, const Result& current, GateReport& report) {
  if (current.context.settings.inject_slowdown_pct > 0) {
    const auto& op = current.context.settings.inject_slowdown_op;
    report.notes.push_back(fmt::format("the current run has an INJECTED slowdown of {:g}%{} (calibration knob)",
                                       current.context.settings.inject_slowdown_pct,
                                       op.empty() ? "" : " inside " + op));
  }
  if (baseline.context.settings.inject_slowdown_pct > 0) {
    report.notes.push_back(fmt::format("the baseline has an INJECTED slowdown of {:g}% (calibration knob)",
                                       baseline.context.settings.inject_slowdown_pct));
  }
  for (const auto* side : {&baseline, &current}) {
    const auto& settings = side->context.settings;
    const char* which = side == &current ? "the current run" : "the baseline";
    if (settings.inject_extra_ops > 0) {
      report.notes.push_back(fmt::format("{} has {} INJECTED extra ops per step (count-gate calibration knob)", which,
                                         settings.inject_extra_ops));
    }
    if (settings.instructions == "callgrind") {
      report.notes.push_back(
          fmt::format("{} ran under Callgrind: its times are Callgrind's, only its counts are the "
                      "code's",
                      which));
    }
  }
  std::string hardware;
  for (const auto& change : fingerprint_changes(baseline.context.fingerprint, current.context.fingerprint)) {
    if (!change.hardware) {
      report.change_under_test.push_back(to_string(change));
    } else {
      hardware += (hardware.empty() ? "" : ", ") + to_string(change);
    }
  }
  if (!hardware.empty()) report.notes.push_back("the hardware differs: " + hardware);
}

// A suite run now without a baseline is a problem; a baseline suite not run now, a note. Returns
// the baseline's suites.
std::set<std::string> check_suite_coverage(const Result& baseline, const Result& current, GateReport& report) {
  std::set<std::string> baseline_suites;
  for (const auto& s : baseline.suites) baseline_suites.insert(s.name);
  std::set<std::string> current_suites;
  for (const auto& s : current.suites) {
    current_suites.insert(s.name);
    if (!baseline_suites.contains(s.name)) {
      report.problems.push_back(
          fmt::format("suite {} is not in the baseline: no matching baseline to compare it with", s.name));
    }
  }
  for (const auto& name : baseline_suites) {
    if (!current_suites.contains(name)) report.notes.push_back("suite " + name + " was not run now: not checked");
  }
  return baseline_suites;
}

const ArmState* find_state(const std::vector<ArmState>& states, const std::string& c, const std::string& arm) {
  for (const auto& s : states) {
    if (s.case_name == c && s.arm == arm) return &s;
  }
  return nullptr;
}

// Arms that ran in the baseline but failed (a regression), were skipped or were invalid now.
void check_arm_states(const Result& baseline, const Result& current, const GateConfig& config, GateReport& report) {
  const auto base_states = arm_states(baseline);
  for (const auto& now : arm_states(current)) {
    const ArmState* before = find_state(base_states, now.case_name, now.arm);
    if (!before || before->status != ArmStatus::ok || now.status == ArmStatus::ok) continue;
    if (now.status == ArmStatus::failed) {
      Check check;
      check.key = {now.suite, now.case_name, now.arm, kThroughput};
      check.threshold = config.threshold_for(now.suite, kThroughput).value_or(0);
      check.status = CheckStatus::regression;
      check.detail = "the arm failed now and ran in the baseline: " + now.reason;
      report.checks.push_back(std::move(check));
    } else {  // skipped or invalid: nothing to compare, which is no verdict either way
      report.problems.push_back(fmt::format("{}/arm:{} was {} now but ran in the baseline: {}", now.case_name, now.arm,
                                            to_string(now.status), now.reason));
    }
  }
}

// A gated cell of the current run with the baseline's cell of the same key.
struct GatedPair {
  const Cell* baseline;
  Cell current;
  double threshold;
};

// The current run's cells that the config gates and the baseline holds; a gated cell the baseline
// lacks (in a suite it ran) is a problem, and cells of ungated metrics are counted in a note.
std::vector<GatedPair> gated_pairs(const std::map<CellKey, Cell>& base_cells, const Result& current,
                                   const GateConfig& config, const std::set<std::string>& baseline_suites,
                                   GateReport& report) {
  std::vector<GatedPair> pairs;
  std::size_t ungated = 0;
  for (auto& cell : extract_cells(current)) {
    const auto threshold = config.threshold_for(cell.key.suite, cell.key.metric);
    if (!threshold) {
      ++ungated;
      continue;
    }
    auto it = base_cells.find(cell.key);
    if (it == base_cells.end()) {
      if (baseline_suites.contains(cell.key.suite)) {
        report.problems.push_back(cell.key.label() + " is not in the baseline: nothing to compare it with");
      }
      continue;
    }
    pairs.push_back({&it->second, std::move(cell), *threshold});
  }
  if (ungated > 0) {
    report.notes.push_back(fmt::format("{} cell(s) carry metrics the gate config does not gate", ungated));
  }
  return pairs;
}

// Each pair's comparison, resampled enough for Holm over the whole family; a pair with too few
// blocks is an inconclusive check at once, the others come back for the test.
std::vector<Check> compare_pairs(const std::vector<GatedPair>& pairs, const GateConfig& config,
                                 const GateOptions& options, GateReport& report) {
  const CompareOptions compare{.paired = options.paired,
                               .resamples = resamples_for(pairs.size(), config.alpha),
                               .seed = options.seed,
                               .between_runs = &config.between_runs};
  std::vector<Check> compared;
  for (const auto& pair : pairs) {
    Check check;
    check.key = pair.current.key;
    check.threshold = pair.threshold;
    auto options_i = compare;
    options_i.practical_threshold = pair.threshold;
    check.comparison = compare_cell(*pair.baseline, pair.current, options_i);
    if (!check.comparison) {
      check.status = CheckStatus::inconclusive;
      check.detail =
          fmt::format("fewer than {} {}blocks on a side: nothing to test", kMinBlocks, options.paired ? "paired " : "");
      report.checks.push_back(std::move(check));
      continue;
    }
    compared.push_back(std::move(check));
  }
  return compared;
}

// Holm over the family: the k-th smallest p-value is tested at alpha / (m - k). Then each check
// is decided as far as it can be without a re-run.
void test_family(std::vector<Check> compared, double alpha, GateReport& report) {
  std::vector<double> p_values;
  for (const auto& check : compared) p_values.push_back(check.comparison->test.p_value);
  const auto reject = stats::holm_reject(p_values, alpha);
  std::vector<std::size_t> order(p_values.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return p_values[a] < p_values[b]; });
  for (std::size_t k = 0; k < order.size(); ++k) {
    compared[order[k]].holm_alpha = alpha / static_cast<double>(order.size() - k);
  }
  for (std::size_t i = 0; i < compared.size(); ++i) {
    compared[i].significant = reject[i];
    decide_without_rerun(compared[i]);
    report.checks.push_back(std::move(compared[i]));
  }
}

}  // namespace

std::size_t resamples_for(std::size_t checks, double alpha) {
  const double needed = 20.0 * static_cast<double>(std::max<std::size_t>(checks, 1)) / alpha;
  return std::max<std::size_t>(2000, static_cast<std::size_t>(std::ceil(needed)));
}

GateReport evaluate_gate(const Result& baseline, const Result& current, const GateConfig& config,
                         const GateOptions& options) {
  GateReport report;
  report.mode = options.paired ? "same-machine interleaved" : "stored baseline";
  if (!options.paired) {  // interleaved blocks share their conditions; runs far apart may not
    report.unequal_conditions =
        conditions_difference(baseline.context.conditions, current.context.conditions, config.conditions);
  }
  if (!report.unequal_conditions.empty()) {  // INCONCLUSIVE unless a re-run under the baseline's confirms
    report.problems.push_back(
        "the baseline and the current run were measured under different conditions: " + report.unequal_conditions +
        ". Re-run when the machine is as quiet as it was for the baseline, or gate head against "
        "base interleaved (--base-binary/--head-binary), whose blocks share their conditions");
  }
  note_run_differences(baseline, current, report);
  const auto baseline_suites = check_suite_coverage(baseline, current, report);
  check_arm_states(baseline, current, config, report);
  std::map<CellKey, Cell> base_cells;
  for (auto& cell : extract_cells(baseline)) base_cells.emplace(cell.key, std::move(cell));
  const auto pairs = gated_pairs(base_cells, current, config, baseline_suites, report);
  test_family(compare_pairs(pairs, config, options, report), config.alpha, report);
  report.count_checks = compare_counts(baseline, current, config.counts, report.notes);
  finish(report);
  return report;
}

}  // namespace tipbench::gate
