#include "tipbench/reports/run_set.h"

#include "tipbench/gate/cells.h"
#include "tipbench/reports/format.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <set>

namespace tipbench::reports {

std::vector<gate::RunComparison> compare_to_reference(const std::vector<NamedRun>& runs,
                                                      const gate::CompareOptions& options) {
  std::vector<gate::RunComparison> out;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    out.push_back(gate::compare_runs(runs.front().result, runs[i].result, options));
  }
  return out;
}

NamedRun merge_runs_of_one_machine(const std::vector<NamedRun>& runs) {
  if (runs.empty()) throw InputError("no runs to merge");
  NamedRun merged = runs.front();
  const nlohmann::json settings = merged.result.context.settings;
  std::set<std::string> suites;
  for (const auto& s : merged.result.suites) suites.insert(s.name);
  for (std::size_t i = 1; i < runs.size(); ++i) {
    const auto& run = runs[i];
    if (run.result.context.fingerprint_slug != merged.result.context.fingerprint_slug) {
      throw InputError(fmt::format("{}: measured on {}, {} on {}: runs of two machines are a comparison, not one run",
                                   run.label, run.result.context.fingerprint_slug, runs.front().label,
                                   merged.result.context.fingerprint_slug));
    }
    if (nlohmann::json(run.result.context.settings) != settings) {
      throw InputError(
          fmt::format("{}: measured with other settings than {} (blocks, trial time, --quick): "
                      "not one campaign",
                      run.label, runs.front().label));
    }
    for (const auto& s : run.result.suites) {
      if (!suites.insert(s.name).second) {
        throw InputError(
            fmt::format("{}: suite {} is in an earlier run too: two measurements of one suite are "
                        "a comparison, not one run",
                        run.label, s.name));
      }
      merged.result.suites.push_back(s);
    }
    // Only the first context is kept: what the others' contexts say that it does not goes to the
    // warnings, by label (a partial run, a resumed one, another build of the campaign).
    auto& warnings = merged.result.context.warnings;
    const auto& git = run.result.context.git;
    if (git.sha != merged.result.context.git.sha || git.dirty != merged.result.context.git.dirty) {
      warnings.push_back(fmt::format("{}: measured by another build, git {}{}", run.label, git.sha.substr(0, 12),
                                     git.dirty ? " (dirty)" : ""));
    }
    for (const auto& w : run.result.context.warnings) warnings.push_back(fmt::format("{}: {}", run.label, w));
    merged.label += " + " + run.label;
  }
  return merged;
}

std::string format_delta(const gate::CellComparison& c) {
  const auto& e = c.test.estimate;
  return fmt::format("{:+.1f}% [{:+.1f}%, {:+.1f}%]", 100 * (e.ratio - 1), 100 * (e.ci_low - 1), 100 * (e.ci_high - 1));
}

}  // namespace tipbench::reports
