#include "tipbench/gate/decision.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace tipbench::gate {

namespace {

// Worse than the practical threshold, on the metric's bad side.
bool worse_than(const CellComparison& c, double threshold) {
  const double ratio = c.test.estimate.ratio;
  return higher_is_better(c.key.metric) ? 1 - ratio >= threshold : ratio - 1 >= threshold;
}

// How bad a change is, in the metric's own direction (positive = worse), for sorting.
double badness(const CellComparison& c) {
  const double delta = c.delta();
  return higher_is_better(c.key.metric) ? -delta : delta;
}

std::string describe(const CellComparison& c) {
  const auto& e = c.test.estimate;
  return fmt::format("x{:.3f} [{:.3f}, {:.3f}] ({:+.1f}%), p={:.4f}, CV {:.1f}%", e.ratio, e.ci_low,
                     e.ci_high, 100 * c.delta(), c.test.p_value, 100 * c.cv);
}

// Blocks per side that would shrink the interval to half the threshold on either side of the
// estimate (its width falls as 1/sqrt(blocks)), so that it either rules a threshold-size
// regression out or becomes significant.
std::size_t blocks_to_resolve(const CellComparison& c, double threshold) {
  const auto& e = c.test.estimate;
  const double half_width = (e.ci_high - e.ci_low) / 2;
  const double target = threshold / 2;
  const double scale = half_width / target;
  return std::max<std::size_t>(e.blocks, static_cast<std::size_t>(std::ceil(static_cast<double>(e.blocks) * scale * scale)));
}

int rank(CheckStatus s) {
  switch (s) {
    case CheckStatus::regression: return 0;
    case CheckStatus::inconclusive: return 1;
    case CheckStatus::pass: return 2;
  }
  return 3;
}

template <typename States>
const ArmState* find_state(const States& states, const std::string& c, const std::string& arm) {
  for (const auto& s : states) {
    if (s.case_name == c && s.arm == arm) return &s;
  }
  return nullptr;
}

// The interval rules a regression of the threshold's size out when its bad-side end stays short
// of it: throughput ci_low > 1 - t, memory ci_high < 1 + t.
bool rules_out_regression(const CellComparison& c, double threshold) {
  const auto& e = c.test.estimate;
  return higher_is_better(c.key.metric) ? e.ci_low > 1 - threshold : e.ci_high < 1 + threshold;
}

void decide_without_rerun(Check& check) {
  const CellComparison& c = *check.comparison;
  const bool worse = worse_than(c, check.threshold);
  check.noisy = !rules_out_regression(c, check.threshold);
  if (check.significant && worse) {
    check.candidate = true;
    check.status = CheckStatus::regression;
    check.detail = "regression candidate, not yet confirmed: " + describe(c);
  } else if (worse) {
    check.status = CheckStatus::inconclusive;
    check.detail = fmt::format("worse by at least the {:g}% threshold but not significant after Holm: {}",
                               100 * check.threshold, describe(c));
  } else if (check.noisy) {
    check.status = CheckStatus::inconclusive;
    check.detail = fmt::format("too noisy to rule out a {:g}% regression (the 95% interval reaches it): {}",
                               100 * check.threshold, describe(c));
  } else {
    check.status = CheckStatus::pass;
    const char* what = !check.significant ? "no significant change"
                       : badness(c) > 0   ? "significant, but below the threshold"
                                          : "better";
    check.detail = fmt::format("{}: {}", what, describe(c));
  }
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

std::size_t resamples_for(std::size_t checks, double alpha) {
  const double needed = 20.0 * static_cast<double>(std::max<std::size_t>(checks, 1)) / alpha;
  return std::max<std::size_t>(2000, static_cast<std::size_t>(std::ceil(needed)));
}

GateReport evaluate_gate(const Result& baseline, const Result& current, const GateConfig& config,
                         const GateOptions& options) {
  GateReport report;
  report.mode = options.paired ? "same-machine interleaved" : "stored baseline";
  if (current.context.settings.inject_slowdown_pct > 0) {
    report.notes.push_back(fmt::format("the current run has an INJECTED slowdown of {:g}% (calibration knob)",
                                       current.context.settings.inject_slowdown_pct));
  }
  if (baseline.context.settings.inject_slowdown_pct > 0) {
    report.notes.push_back(fmt::format("the baseline has an INJECTED slowdown of {:g}% (calibration knob)",
                                       baseline.context.settings.inject_slowdown_pct));
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

  std::set<std::string> baseline_suites;
  for (const auto& s : baseline.suites) baseline_suites.insert(s.name);
  std::set<std::string> current_suites;
  for (const auto& s : current.suites) {
    current_suites.insert(s.name);
    if (!baseline_suites.contains(s.name)) {
      report.problems.push_back(fmt::format(
          "suite {} is not in the baseline: no matching baseline to compare it with", s.name));
    }
  }
  for (const auto& name : baseline_suites) {
    if (!current_suites.contains(name)) report.notes.push_back("suite " + name + " was not run now: not checked");
  }

  // Arms that ran in the baseline but failed, were skipped or were invalid now.
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
      report.problems.push_back(fmt::format("{}/arm:{} was {} now but ran in the baseline: {}", now.case_name,
                                            now.arm, to_string(now.status), now.reason));
    }
  }

  std::map<CellKey, Cell> base_cells;
  for (auto& cell : extract_cells(baseline)) base_cells.emplace(cell.key, std::move(cell));
  std::vector<std::pair<const Cell*, Cell>> pairs;
  std::vector<double> thresholds;
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
    pairs.emplace_back(&it->second, std::move(cell));
    thresholds.push_back(*threshold);
  }
  if (ungated > 0) {
    report.notes.push_back(fmt::format("{} cell(s) carry metrics the gate config does not gate", ungated));
  }

  const CompareOptions compare{.paired = options.paired,
                               .resamples = resamples_for(pairs.size(), config.alpha),
                               .seed = options.seed};
  std::vector<Check> compared;
  std::vector<double> p_values;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    Check check;
    check.key = pairs[i].second.key;
    check.threshold = thresholds[i];
    auto options_i = compare;
    options_i.practical_threshold = thresholds[i];
    check.comparison = compare_cell(*pairs[i].first, pairs[i].second, options_i);
    if (!check.comparison) {
      check.status = CheckStatus::inconclusive;
      check.detail = fmt::format("fewer than {} {}blocks on a side: nothing to test", kMinBlocks,
                                 options.paired ? "paired " : "");
      report.checks.push_back(std::move(check));
      continue;
    }
    p_values.push_back(check.comparison->test.p_value);
    compared.push_back(std::move(check));
  }
  // Holm over the family: the k-th smallest p-value is tested at alpha / (m - k).
  const auto reject = stats::holm_reject(p_values, config.alpha);
  std::vector<std::size_t> order(p_values.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return p_values[a] < p_values[b]; });
  for (std::size_t k = 0; k < order.size(); ++k) {
    compared[order[k]].holm_alpha = config.alpha / static_cast<double>(order.size() - k);
  }
  for (std::size_t i = 0; i < compared.size(); ++i) {
    compared[i].significant = reject[i];
    decide_without_rerun(compared[i]);
    report.checks.push_back(std::move(compared[i]));
  }
  finish(report);
  return report;
}

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
      check.status = CheckStatus::regression;
      check.detail = "regression, NOT confirmed (no re-measurement was possible): " + describe(*check.comparison);
      continue;
    }
    const CellComparison& r = it->second;
    check.rerun = r;
    const bool worse = worse_than(r, check.threshold);
    if (worse && r.test.p_value < config.alpha) {
      check.status = CheckStatus::regression;
      check.detail = fmt::format("confirmed on re-run: {}; re-run {}", describe(*check.comparison), describe(r));
    } else if (worse) {
      check.status = CheckStatus::inconclusive;
      check.detail = fmt::format("flagged ({}), re-run worse but not significant ({})",
                                 describe(*check.comparison), describe(r));
    } else {
      check.status = CheckStatus::pass;
      check.detail = fmt::format("flagged ({}) but not reproduced on re-run ({}): treated as noise",
                                 describe(*check.comparison), describe(r));
    }
  }
  finish(report);
}

void finish(GateReport& report) {
  std::stable_sort(report.checks.begin(), report.checks.end(), [](const Check& a, const Check& b) {
    if (rank(a.status) != rank(b.status)) return rank(a.status) < rank(b.status);
    const double ba = a.comparison ? badness(*a.comparison) : 1e9;  // a failed arm is worst
    const double bb = b.comparison ? badness(*b.comparison) : 1e9;
    return ba > bb;
  });
  bool regression = false;
  bool inconclusive = !report.problems.empty();
  std::size_t blocks = 0;
  for (const auto& c : report.checks) {
    regression |= c.status == CheckStatus::regression;
    inconclusive |= c.status == CheckStatus::inconclusive;
    if (c.status == CheckStatus::inconclusive && c.comparison) blocks = std::max(blocks, blocks_to_resolve(*c.comparison, c.threshold));
  }
  if (report.checks.empty()) {
    inconclusive = true;
    if (report.problems.empty()) report.problems.push_back("no gated cell is in both runs: nothing to compare");
  }
  report.outcome = regression ? Outcome::fail : inconclusive ? Outcome::inconclusive : Outcome::pass;
  report.recommendations.clear();
  if (blocks > 0) {
    report.recommendations.push_back(fmt::format(
        "noisy checks: about {} blocks per side would resolve their thresholds (--blocks {}); quiet the "
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
  if (regression) {
    report.recommendations.push_back(
        "a confirmed regression: reproduce it with `tipbench run --suite S --model M` on both builds, or "
        "accept it by saving a new baseline");
  }
}

nlohmann::json gate_report_to_json(const GateReport& report) {
  auto comparison_json = [](const CellComparison& c) {
    return nlohmann::json{{"ratio", c.test.estimate.ratio},
                          {"ci95_low", c.test.estimate.ci_low},
                          {"ci95_high", c.test.estimate.ci_high},
                          {"p_value", c.test.p_value},
                          {"blocks", c.test.estimate.blocks},
                          {"paired", c.paired},
                          {"cv", c.cv},
                          {"reference_median", c.reference.median},
                          {"candidate_median", c.candidate.median}};
  };
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : report.checks) {
    nlohmann::json j = {{"suite", c.key.suite},       {"case", c.key.case_name},
                        {"arm", c.key.arm},           {"metric", c.key.metric},
                        {"status", to_string(c.status)}, {"threshold", c.threshold},
                        {"significant", c.significant}, {"candidate", c.candidate},
                        {"noisy", c.noisy},           {"detail", c.detail}};
    if (c.comparison) {
      j["comparison"] = comparison_json(*c.comparison);
      j["holm_alpha"] = c.holm_alpha;
    }
    if (c.rerun) j["rerun"] = comparison_json(*c.rerun);
    checks.push_back(std::move(j));
  }
  return {{"outcome", to_string(report.outcome)},
          {"exit_code", report.exit_code()},
          {"mode", report.mode},
          {"change_under_test", report.change_under_test},
          {"checks", checks},
          {"problems", report.problems},
          {"notes", report.notes},
          {"recommendations", report.recommendations}};
}

}  // namespace tipbench::gate
