#include "tipbench/reports/format.h"

#include "tipbench/gate/cells.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace tipbench::reports {

std::string human_bytes(std::int64_t bytes) {
  constexpr std::array<const char*, 5> units{"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (std::abs(value) >= 1024 && unit + 1 < units.size()) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

std::string percent(double fraction, int decimals) { return fmt::format("{:.{}f}%", 100 * fraction, decimals); }

std::string ratio_with_ci(const Comparison& c) {
  return fmt::format("x{:.3f} [{:.3f}, {:.3f}]", c.estimate.ratio, c.estimate.ci_low, c.estimate.ci_high);
}

std::string metric_label(const std::string& metric) {
  if (metric == gate::kThroughput) return "throughput";
  if (metric == gate::kCpuTime) return "cpu time";
  return "memory";
}

std::string metric_heading(const std::string& metric) {
  const std::string label = metric_label(metric);
  return label == "memory" ? metric : label;
}

std::string verdict_label(const std::string& metric, stats::Verdict verdict) {
  if (metric_label(metric) == "memory" && verdict == stats::Verdict::faster) return "less memory";
  if (metric_label(metric) == "memory" && verdict == stats::Verdict::slower) return "more memory";
  return std::string(stats::verdict_words(verdict));
}

std::string verdict_label(const Comparison& c) { return verdict_label(c.metric, c.verdict); }

std::string format_metric_value(const std::string& metric, double value) {
  if (metric == gate::kThroughput) return fmt::format("{:.1f}/s", value);
  if (metric == gate::kCpuTime) return fmt::format("{:.3f} ms", value);
  return human_bytes(static_cast<std::int64_t>(value));
}

std::string source_claim_line(const SuiteResult& suite) {
  if (!suite.source_claim) return "";
  return fmt::format("source claim ({}): {}", suite.source_claim->sources, suite.source_claim->claim);
}

namespace {

// The knobs and modes that make a run's times no measurement of the code on this machine.
std::string other_banner(const MeasureSettings& s) {
  if (s.inject_extra_ops > 0) {
    return fmt::format(
        "!!! INJECTED WORK: every step made {} more aten::add calls on purpose (--inject-extra-ops, a count-gate "
        "calibration knob). These are NOT real measurements. !!!",
        s.inject_extra_ops);
  }
  if (s.instructions == "callgrind") {
    return "!!! UNDER CALLGRIND: this run ran under Valgrind's Callgrind (--instructions callgrind) to count "
           "instructions; its times are Callgrind's, tens of times slower than the machine's. Only its counts are the "
           "code's. !!!";
  }
  return "";
}

}  // namespace

std::string injected_slowdown_banner(const Result& result) {
  const double pct = result.context.settings.inject_slowdown_pct;
  if (!(pct > 0)) return other_banner(result.context.settings);
  if (const auto& op = result.context.settings.inject_slowdown_op; !op.empty()) {
    return fmt::format(
        "!!! INJECTED SLOWDOWN: every timed step spent {:g}% of a warm-up step busy-waiting inside {} on purpose "
        "(--inject-slowdown-op, a test knob for --explain). These are NOT real measurements. !!!",
        pct, op);
  }
  return fmt::format(
      "!!! INJECTED SLOWDOWN: every timed step was slowed by {:g}% on purpose (--inject-slowdown, a "
      "gate-calibration test knob). These are NOT real measurements. !!!",
      pct);
}

}  // namespace tipbench::reports
