#include "tipbench/reports/run_set.h"

#include "tipbench/gate/cells.h"
#include "tipbench/reports/format.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <utility>

namespace tipbench::reports {

std::vector<gate::RunComparison> compare_to_reference(const std::vector<NamedRun>& runs,
                                                      const gate::CompareOptions& options) {
  std::vector<gate::RunComparison> out;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    out.push_back(gate::compare_runs(runs.front().result, runs[i].result, options));
  }
  return out;
}

namespace {

RunPart part_of(const NamedRun& run) {
  RunPart part{.label = run.label, .git = run.result.context.git, .timestamp_utc = run.result.context.timestamp_utc};
  for (const auto& s : run.result.suites) part.suites.push_back(s.name);
  return part;
}

std::string build_name(const GitState& git) { return git.sha.substr(0, 12) + (git.dirty ? " (dirty)" : ""); }

// Each distinct warning once; where only some runs had it, the files that did.
std::vector<std::string> distinct_warnings(const std::vector<NamedRun>& runs) {
  std::vector<std::pair<std::string, std::vector<std::string>>> seen;
  for (const auto& run : runs) {
    for (const auto& w : run.result.context.warnings) {
      auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& entry) { return entry.first == w; });
      if (it == seen.end()) {
        seen.push_back({w, {}});
        it = seen.end() - 1;
      }
      if (std::find(it->second.begin(), it->second.end(), run.label) == it->second.end()) {
        it->second.push_back(run.label);
      }
    }
  }
  std::vector<std::string> out;
  for (const auto& [text, labels] : seen) {
    out.push_back(labels.size() == runs.size() ? text : fmt::format("{} ({})", text, fmt::join(labels, ", ")));
  }
  return out;
}

}  // namespace

NamedRun merge_runs_of_one_machine(const std::vector<NamedRun>& runs) {
  if (runs.empty()) throw InputError("no runs to merge");
  if (runs.size() == 1) return runs.front();
  NamedRun merged = runs.front();
  merged.parts = {part_of(runs.front())};
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
    merged.parts.push_back(part_of(run));
  }
  // Only the first context is kept: the builds and times are the parts', and every run's
  // warnings are kept once per text.
  merged.result.context.warnings = distinct_warnings(runs);
  merged.label = fmt::format("{} runs", runs.size());
  return merged;
}

std::vector<std::string> builds_of(const NamedRun& run) {
  if (run.parts.empty()) return {build_name(run.result.context.git)};
  std::vector<std::string> out;
  for (const auto& part : run.parts) {
    const auto name = build_name(part.git);
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

std::string format_delta(const gate::CellComparison& c) {
  const auto& e = c.test.estimate;
  return fmt::format("{:+.1f}% [{:+.1f}%, {:+.1f}%]", 100 * (e.ratio - 1), 100 * (e.ci_low - 1), 100 * (e.ci_high - 1));
}

}  // namespace tipbench::reports
