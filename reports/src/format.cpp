#include "tipbench/reports/format.h"

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

std::string percent(double fraction, int decimals) {
  return fmt::format("{:.{}f}%", 100 * fraction, decimals);
}

std::string ratio_with_ci(const Comparison& c) {
  return fmt::format("x{:.3f} [{:.3f}, {:.3f}]", c.estimate.ratio, c.estimate.ci_low, c.estimate.ci_high);
}

std::string metric_label(const std::string& metric) {
  return metric == "throughput_samples_per_s" ? "throughput" : "memory";
}

std::string verdict_label(const Comparison& c) {
  if (metric_label(c.metric) == "throughput") return std::string(stats::to_string(c.verdict));
  switch (c.verdict) {
    case stats::Verdict::faster: return "less memory";
    case stats::Verdict::slower: return "more memory";
    case stats::Verdict::no_significant_difference: break;
  }
  return std::string(stats::to_string(c.verdict));
}

std::string injected_slowdown_banner(const Result& result) {
  const double pct = result.context.settings.inject_slowdown_pct;
  if (!(pct > 0)) return "";
  return fmt::format(
      "!!! INJECTED SLOWDOWN: every timed step was slowed by {:g}% on purpose (--inject-slowdown, a "
      "gate-calibration test knob). These are NOT real measurements. !!!",
      pct);
}

}  // namespace tipbench::reports
