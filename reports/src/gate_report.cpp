#include "tipbench/reports/gate_report.h"

#include "tipbench/common/escape.h"
#include "tipbench/explain/explain.h"
#include "tipbench/reports/format.h"
#include "tipbench/reports/run_set.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tipbench::reports {

namespace {

std::string metric_name(const std::string& metric) { return metric_heading(metric); }

std::string check_label(const gate::Check& c) {
  return c.key.case_name + "/arm:" + c.key.arm + " " + metric_name(c.key.metric);
}

std::size_t equal_counts(const gate::GateReport& report) {
  std::size_t n = 0;
  for (const auto& c : report.count_checks) n += c.status == gate::CountStatus::equal;
  return n;
}

}  // namespace

void print_gate_report(const gate::GateReport& report, const std::string& baseline_label,
                       const std::string& current_label, std::FILE* out, std::optional<int> exit_code) {
  fmt::print(out, "tipbench gate ({}): current {} vs baseline {}\n", report.mode, current_label, baseline_label);
  if (!report.change_under_test.empty()) {
    fmt::print(out, "change under test: {}\n", fmt::join(report.change_under_test, ", "));
  }
  for (const auto& n : report.notes) fmt::print(out, "note: {}\n", n);
  fmt::print(out, "\nChecks ({}; threshold per metric, Holm over all checks):\n", report.checks.size());
  for (const auto& c : report.checks) {
    fmt::print(out, "  {:<12}  {}  (threshold {:g}%)\n    {}\n", gate::to_string(c.status), check_label(c),
               100 * c.threshold, c.detail);
    if (c.why) {
      fmt::print(out, "    why{}:\n", c.why_from_rerun ? " (from its confirmation run)" : "");
      for (const auto& line : explanation_lines(*c.why)) fmt::print(out, "      {}\n", line);
    }
  }
  if (!report.count_checks.empty()) {
    fmt::print(out, "\nCounted work ({} checks, {} equal; no statistics: per metric a tolerance):\n",
               report.count_checks.size(), equal_counts(report));
    for (const auto& c : report.count_checks) {
      if (c.status == gate::CountStatus::equal) continue;
      fmt::print(out, "  {:<12}  {}\n    {}\n", gate::to_string(c.status), c.label(), c.detail);
    }
    if (equal_counts(report) == report.count_checks.size()) fmt::print(out, "  every count equal\n");
  }
  if (!report.problems.empty()) {
    fmt::print(out, "\nProblems:\n");
    for (const auto& p : report.problems) fmt::print(out, "  - {}\n", p);
  }
  if (!report.recommendations.empty()) {
    fmt::print(out, "\nRecommendations:\n");
    for (const auto& r : report.recommendations) fmt::print(out, "  - {}\n", r);
  }
  const int code = exit_code.value_or(report.exit_code());
  if (code == report.exit_code()) {
    fmt::print(out, "\nResult is: {} (exit {})\n", gate::to_string(report.outcome), code);
  } else {
    fmt::print(out, "\nResult is: {}, but the gate could not deliver it (exit {})\n", gate::to_string(report.outcome),
               code);
  }
}

std::string gate_markdown(const gate::GateReport& report, const std::string& baseline_label,
                          const std::string& current_label) {
  const char* icon = report.outcome == gate::Outcome::pass   ? "✅"
                     : report.outcome == gate::Outcome::fail ? "❌"
                                                             : "⚠️";
  std::string md = fmt::format("### {} tipbench gate: **{}**\n\n{}: current `{}` vs baseline `{}`\n\n", icon,
                               gate::to_string(report.outcome), markdown_escape(report.mode),
                               markdown_escape(current_label), markdown_escape(baseline_label));
  if (!report.change_under_test.empty()) {
    md += "**Change under test:** " + markdown_escape(fmt::format("{}", fmt::join(report.change_under_test, ", "))) +
          "\n\n";
  }
  for (const auto& n : report.notes) md += "> " + markdown_escape(n) + "\n";
  if (!report.notes.empty()) md += "\n";
  md += "| status | cell | metric | Δ (95% CI) | p | threshold | detail |\n|---|---|---|---:|---:|---:|---|\n";
  for (const auto& c : report.checks) {
    std::string delta = "-";
    std::string p = "-";
    if (c.comparison) {
      delta = format_delta(*c.comparison);
      p = fmt::format("{:.4f}", c.comparison->test.p_value);
    }
    const bool bad = c.status == gate::CheckStatus::regression;
    // The table is what a PR's reader sees first: an explained check names its top cause there.
    const std::string detail = c.why ? c.detail + "; why: " + explanation_headline(*c.why) : c.detail;
    md += fmt::format("| {}{}{} | {} | {} | {} | {} | {:g}% | {} |\n", bad ? "**" : "", gate::to_string(c.status),
                      bad ? "**" : "", markdown_escape(c.key.case_name + "/arm:" + c.key.arm),
                      markdown_escape(metric_name(c.key.metric)), delta, p, 100 * c.threshold, markdown_escape(detail));
  }
  if (report.count_checks.size() > equal_counts(report)) {
    md += fmt::format(
        "\n**Counted work** ({} checks, {} equal):\n\n| status | cell | count | baseline | current | "
        "detail |\n|---|---|---|---:|---:|---|\n",
        report.count_checks.size(), equal_counts(report));
    for (const auto& c : report.count_checks) {
      if (c.status == gate::CountStatus::equal) continue;
      md += fmt::format("| {}{}{} | {} | {} | {:g} | {:g} | {} |\n", c.fails() ? "**" : "", gate::to_string(c.status),
                        c.fails() ? "**" : "", markdown_escape(c.case_name + "/arm:" + c.arm),
                        markdown_escape(c.metric), c.baseline, c.current, markdown_escape(c.detail));
    }
  } else if (!report.count_checks.empty()) {
    md += fmt::format("\n**Counted work:** {} checks, every count equal.\n", report.count_checks.size());
  }
  for (const auto& c : report.checks) {
    if (!c.why) continue;
    md += fmt::format("\n**Why** {} {}:\n\n", markdown_escape(c.key.case_name + "/arm:" + c.key.arm),
                      markdown_escape(metric_name(c.key.metric)));
    for (const auto& line : explanation_lines(*c.why)) md += "- " + markdown_escape(line) + "\n";
  }
  if (!report.problems.empty()) {
    md += "\n**Problems**\n\n";
    for (const auto& p : report.problems) md += "- " + markdown_escape(p) + "\n";
  }
  if (!report.recommendations.empty()) {
    md += "\n**Recommendations**\n\n";
    for (const auto& r : report.recommendations) md += "- " + markdown_escape(r) + "\n";
  }
  md += fmt::format("\nExit code {} (0 pass, 1 confirmed regression, 3 inconclusive). Worst first.\n",
                    report.exit_code());
  return md;
}

}  // namespace tipbench::reports
