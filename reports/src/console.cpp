#include "tipbench/reports/console.h"

#include "tipbench/reports/format.h"

#include <fmt/format.h>

namespace tipbench::reports {

namespace {

void print_arm(const ArmResult& arm, std::FILE* out) {
  const std::string label = arm.arm + (arm.baseline ? " (baseline)" : "");
  if (arm.status != ArmStatus::ok) {
    fmt::print(out, "    {:<22} {:<8} {}\n", label, to_string(arm.status), arm.reason);
    return;
  }
  const auto& s = arm.step_time_ms;
  const std::string memory = arm.peak_memory_bytes ? human_bytes(*arm.peak_memory_bytes) : "-";
  fmt::print(out, "    {:<22} {:<8} {:>9.3f} ({:.3f}-{:.3f}) {:>12.1f} {:>7} {:>11}\n", label,
             "ok", s.median, s.p10, s.p90, arm.throughput_samples_per_s.median,
             percent(arm.throughput_samples_per_s.cv), memory);
}

void print_comparison(const Comparison& c, std::FILE* out) {
  fmt::print(out, "    {} vs {}: {} {}  {}{}\n", c.treatment, c.baseline, metric_label(c.metric),
             ratio_with_ci(c), verdict_label(c), c.noisy ? "  [noisy]" : "");
  if (!c.recommendation.empty()) fmt::print(out, "      -> {}\n", c.recommendation);
}

}  // namespace

void print_run_summary(const Result& result, std::FILE* out) {
  const std::string injected = injected_slowdown_banner(result);
  if (!injected.empty()) fmt::print(out, "\n{}\n", injected);
  for (const auto& suite : result.suites) {
    fmt::print(out, "\n{} - {}\n", suite.name, suite.description);
    for (const auto& c : suite.cases) {
      fmt::print(out, "  {}\n", c.name);
      fmt::print(out, "    {:<22} {:<8} {:>9} {:<13} {:>12} {:>7} {:>11}\n", "arm", "status",
                 "step ms", "(p10-p90)", "samples/s", "CV", "peak mem");
      for (const auto& arm : c.arms) print_arm(arm, out);
      for (const auto& cmp : c.comparisons) print_comparison(cmp, out);
    }
    for (const auto& note : suite.notes) fmt::print(out, "  {}\n", note);
  }
  for (const auto& w : result.context.warnings) fmt::print(out, "\nwarning: {}\n", w);
  if (!injected.empty()) fmt::print(out, "\n{}\n", injected);
}

}  // namespace tipbench::reports
