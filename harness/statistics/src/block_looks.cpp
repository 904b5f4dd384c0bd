#include "tipbench/statistics/block_looks.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace tipbench {

namespace {

constexpr double kAlpha = 0.05;
// Looks grow by this factor: few looks keep the Bonferroni share large, and a case that needs
// 20 blocks wastes at most about a third of them past the count that settles it.
constexpr double kLookGrowth = 1.6;
// The most blocks a recommendation names (kBlocksRange's cap, recorded_options.h).
constexpr std::size_t kMostBlocks = 10000;

}  // namespace

bool fixed_blocks(const MeasureSettings& s) { return s.min_blocks >= s.blocks || !s.profile_dir.empty(); }

std::vector<int> block_looks(const MeasureSettings& s) {
  if (fixed_blocks(s)) return {s.blocks};
  std::vector<int> looks{std::max(1, s.min_blocks)};
  while (looks.back() < s.blocks) {
    const int next = std::max(looks.back() + 1, static_cast<int>(std::ceil(looks.back() * kLookGrowth)));
    looks.push_back(std::min(next, s.blocks));
  }
  return looks;
}

double look_confidence(const MeasureSettings& s) { return 1 - kAlpha / static_cast<double>(block_looks(s).size()); }

std::string_view to_string(StopReason reason) {
  switch (reason) {
    case StopReason::fixed: return "fixed";
    case StopReason::settled_outside: return "settled_outside";
    case StopReason::settled_inside: return "settled_inside";
    case StopReason::precise: return "precise";
    case StopReason::unresolved: return "unresolved";
  }
  return "unknown";
}

StopReason stop_reason_from_string(std::string_view text) {
  for (auto r : {StopReason::fixed, StopReason::settled_outside, StopReason::settled_inside, StopReason::precise,
                 StopReason::unresolved}) {
    if (to_string(r) == text) return r;
  }
  throw std::invalid_argument("unknown stop reason '" + std::string(text) + "'");
}

StopReason stop_reason(const stats::RatioEstimate& e, const MeasureSettings& s) {
  if (fixed_blocks(s)) return StopReason::fixed;
  const double band = s.practical_threshold;
  if (e.ci_low > 1 + band || e.ci_high < 1 - band) return StopReason::settled_outside;
  if (e.ci_low >= 1 - band && e.ci_high <= 1 + band) return StopReason::settled_inside;
  if ((e.ci_high - e.ci_low) / 2 <= s.precision * e.ratio) return StopReason::precise;
  return StopReason::unresolved;
}

std::size_t blocks_to_resolve(const stats::RatioEstimate& e, double sd, const MeasureSettings& s) {
  // On the log scale: the precision's half-width, or the distance to the nearest band edge
  // (an interval narrower than that lies wholly on one side of it), whichever is wider.
  const double at = std::log(e.ratio);
  const double to_edge =
      std::min(std::abs(at - std::log1p(s.practical_threshold)), std::abs(at - std::log1p(-s.practical_threshold)));
  const double half_width = std::max(std::log1p(s.precision), to_edge);
  return stats::blocks_for_half_width(sd, half_width, look_confidence(s), kMostBlocks);
}

}  // namespace tipbench
