#include "why_section.h"

#include "tipbench/common/escape.h"
#include "tipbench/explain/explain.h"
#include "tipbench/gate/explain_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tipbench::reports::detail {

namespace {

using json = nlohmann::json;

struct Explained {
  std::string title;
  Explanation why;
};

bool explained(const Explanation& e) { return e.missing.empty() && !e.causes.empty(); }

// Within each run: every throughput comparison of a case whose arms hold breakdowns.
void within_runs(const std::vector<NamedRun>& runs, std::vector<Explained>& out) {
  for (const auto& run : runs) {
    if (run.result.context.settings.explain_steps <= 0) continue;
    for (const auto& suite : run.result.suites) {
      for (const auto& c : suite.cases) {
        for (const auto& cmp : c.comparisons) {
          if (cmp.metric != kThroughputMetric) continue;
          const auto* t = find_arm(c, cmp.treatment);
          const auto* b = find_arm(c, cmp.baseline);
          if (!t || !b) continue;
          auto e = explain_arms(*t, *b, {.paired = true});
          if (explained(e))
            out.push_back({fmt::format("{}: {} vs {} ({})", c.name, cmp.treatment, cmp.baseline, run.label), e});
        }
      }
    }
  }
}

// Each later run's arms against the first run's, cell by cell.
void across_runs(const std::vector<NamedRun>& runs, const HtmlOptions& options, std::vector<Explained>& out) {
  if (runs.size() < 2 || runs.front().result.context.settings.explain_steps <= 0) return;
  const auto& reference = runs.front().result;
  for (std::size_t r = 1; r < runs.size(); ++r) {
    if (runs[r].result.context.settings.explain_steps <= 0) continue;
    for (const auto& suite : runs[r].result.suites) {
      for (const auto& c : suite.cases) {
        for (const auto& arm : c.arms) {
          const gate::CellKey key{suite.name, c.name, arm.arm, kThroughputMetric};
          auto e = gate::explain_cell(key, reference, runs[r].result, options.paired);
          if (explained(e))
            out.push_back({fmt::format("{}/arm:{}: {} vs {}", c.name, arm.arm, runs[r].label, runs.front().label), e});
        }
      }
    }
  }
}

json chart_of(const Explained& x, std::size_t index) {
  json labels = json::array(), values = json::array(), low = json::array(), high = json::array();
  for (const auto& c : x.why.causes) {
    labels.push_back(c.phase + " " + c.op);
    values.push_back(c.ms_per_step.delta);
    low.push_back(c.ms_per_step.low);
    high.push_back(c.ms_per_step.high);
  }
  return {{"kind", "bars_ci"},
          {"id", fmt::format("why-{}", index)},
          {"title", "Why " + x.title + ": Δ ms per step by phase and op (95% CI)"},
          {"value_label", "Δ ms per step, treatment − baseline"},
          {"reference", 0.0},
          {"labels", labels},
          {"datasets", json::array({{{"label", "Δ ms/step"}, {"values", values}, {"low", low}, {"high", high}}})}};
}

}  // namespace

json why_entries(const std::vector<NamedRun>& runs, const HtmlOptions& options, json& charts) {
  std::vector<Explained> all;
  within_runs(runs, all);
  across_runs(runs, options, all);
  const auto size = [](const Explained& x) {
    return std::abs(x.why.timed_step_ms ? x.why.timed_step_ms->delta : x.why.step_ms.delta);
  };
  std::stable_sort(all.begin(), all.end(), [&](const auto& a, const auto& b) { return size(a) > size(b); });
  json entries = json::array();
  for (std::size_t i = 0; i < std::min(all.size(), kMaxWhyOnAPage); ++i) {
    charts.push_back(chart_of(all[i], i));
    entries.push_back({{"title", all[i].title}, {"lines", explanation_lines(all[i].why)}});
  }
  if (all.size() > kMaxWhyOnAPage) {
    entries.push_back({{"title", fmt::format("{} more comparisons explained", all.size() - kMaxWhyOnAPage)},
                       {"lines", json::array({"not shown: this page explains the largest step differences first"})}});
  }
  return entries;
}

std::string why_section(const json& entries) {
  if (entries.empty()) return "";
  std::string h =
      "<h2>Why</h2>\n<p class=note>Which phases and ops made each difference: extra steps profiled after each "
      "trial's timed ones (<code>run --explain</code>), paired by block; see docs/explain.md.</p>\n";
  for (const auto& entry : entries) {
    h += fmt::format("<h3>{}</h3>\n<ul class=why>\n", html_escape(entry.at("title").get<std::string>()));
    for (const auto& line : entry.at("lines"))
      h += "<li><code>" + html_escape(line.get<std::string>()) + "</code></li>\n";
    h += "</ul>\n";
  }
  return h;
}

}  // namespace tipbench::reports::detail
