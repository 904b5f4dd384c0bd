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

}  // namespace tipbench::reports
