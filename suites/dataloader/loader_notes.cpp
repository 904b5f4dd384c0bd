#include "loader_notes.h"

#include "tipbench/statistics/stats.h"
#include "tipbench/results/summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

namespace tipbench::suites {

namespace {

// Loader-only: each grid cell's ceiling against the model's consumption rate, paired by block.
void loader_only_notes(const CaseResult& c, const MeasureSettings& settings, std::vector<std::string>& notes) {
  const ArmResult* model = nullptr;
  for (const auto& arm : c.arms) {
    if (arm.arm == "synthetic" && arm.status == ArmStatus::ok) model = &arm;
  }
  if (model == nullptr) return;
  notes.push_back(fmt::format("{}: loader ceiling vs {}'s consumption on synthetic data ({:.1f} samples/s)", c.name,
                              level(c.params, "model"), model->throughput_samples_per_s.median));
  std::string first_to_keep_up;
  for (const auto& arm : c.arms) {
    if (&arm == model || arm.status != ArmStatus::ok) continue;
    // The harness's comparison rule: ceiling over consumption, paired by block.
    const auto k = compare_arms(arm, *model, trial_throughput(), settings);
    if (!k) continue;  // too few paired blocks for an interval
    const auto verdict = k->verdict;
    const char* what = verdict == stats::Verdict::slower   ? "input-bound: the loader cannot keep the model fed"
                       : verdict == stats::Verdict::faster ? "keeps up: the model is the bottleneck"
                                                           : "about even";
    notes.push_back(fmt::format("  {:<11} {:>10.1f} samples/s  x{:.3f} [{:.3f}, {:.3f}]  {}{}", arm.arm,
                                arm.throughput_samples_per_s.median, k->estimate.ratio, k->estimate.ci_low,
                                k->estimate.ci_high, what, k->noisy ? " [noisy]" : ""));
    if (verdict == stats::Verdict::faster && first_to_keep_up.empty()) first_to_keep_up = arm.arm;
  }
  notes.push_back(first_to_keep_up.empty()
                      ? fmt::format("  no arm's ceiling exceeds {}'s consumption", level(c.params, "model"))
                      : fmt::format("  the first arm whose ceiling exceeds {}'s consumption: {}",
                                    level(c.params, "model"), first_to_keep_up));
}

// Training: how long each cell's loop blocked on the loader.
void data_wait_notes(const CaseResult& c, std::vector<std::string>& notes) {
  std::vector<std::string> cells;
  for (const auto& arm : c.arms) {
    auto it = arm.metrics.find("data_wait_fraction");
    if (arm.status == ArmStatus::ok && it != arm.metrics.end()) {
      cells.push_back(fmt::format("{} {:.0f}%", arm.arm, 100 * it->second.median));
    }
  }
  if (!cells.empty()) {
    notes.push_back(fmt::format("{}: the loop waited for data {} of the step time", c.name, fmt::join(cells, ", ")));
  }
}

// Files the loader skipped (--corrupt-policy skip), so they are not only in the JSON.
void skipped_file_notes(const CaseResult& c, std::vector<std::string>& notes) {
  std::map<std::string, std::string> skipped;  // path -> reason, over every arm
  for (const auto& arm : c.arms) {
    if (!arm.info.contains("skipped_files")) continue;
    for (const auto& f : arm.info.at("skipped_files")) skipped.emplace(f.at("path"), f.at("reason"));
  }
  if (skipped.empty()) return;
  notes.push_back(fmt::format("{}: {} file(s) skipped as corrupt or missing (arms' info.skipped_files), e.g. {}: {}",
                              c.name, skipped.size(), skipped.begin()->first, skipped.begin()->second));
}

}  // namespace

std::vector<std::string> dataloader_notes(const SuiteResult& result, const MeasureSettings& settings) {
  std::vector<std::string> notes;
  for (const auto& c : result.cases) {
    if (level(c.params, "mode") == "loader_only") {
      loader_only_notes(c, settings, notes);
    } else {
      data_wait_notes(c, notes);
    }
    skipped_file_notes(c, notes);
  }
  return notes;
}

}  // namespace tipbench::suites
