// Sequential blocks: where a case looks at its comparisons, at what confidence, and when it stops
// (docs/measurement.md, "Sequential blocks"). Each look's interval is at 1 - 0.05 / K for K looks
// (Bonferroni over the looks), so the interval a case stops with covers at 95% or more whatever
// look it stops at. Example:
//   for (int look : tipbench::block_looks(settings)) { run up to `look` blocks; if settled, stop }
#pragma once

#include "tipbench/statistics/settings.h"
#include "tipbench/statistics/stats.h"

#include <cstddef>
#include <string_view>
#include <vector>

namespace tipbench {

// Block counts at which a case looks: {min_blocks, then about x1.6 each, ..., blocks}, e.g.
// {5, 8, 13, 20}; one look {blocks} when the count is fixed (min_blocks >= blocks, or a profiled
// run, whose traces are taken after an arm's last planned block).
std::vector<int> block_looks(const MeasureSettings& settings);
bool fixed_blocks(const MeasureSettings& settings);

// The confidence of each look's interval: 0.95 for a fixed count, 1 - 0.05 / K for K looks.
double look_confidence(const MeasureSettings& settings);

// Why a comparison's blocks were enough (or were not).
enum class StopReason {
  fixed,            // a fixed block count: nothing was decided by the data
  settled_outside,  // the interval lies wholly outside the practical band [1 - t, 1 + t]
  settled_inside,   // ... wholly inside it
  precise,          // its half-width is at most `precision` of the ratio
  unresolved,       // none of these yet
};
std::string_view to_string(StopReason reason);
StopReason stop_reason_from_string(std::string_view text);  // throws std::invalid_argument

// The reason an estimate (with its interval at look_confidence) gives under these settings.
StopReason stop_reason(const stats::RatioEstimate& estimate, const MeasureSettings& settings);

// Blocks at which an unresolved comparison with log-ratio SD `sd` would settle at its present
// estimate (precise, or wholly on one side of a band edge), at look_confidence.
std::size_t blocks_to_resolve(const stats::RatioEstimate& estimate, double sd, const MeasureSettings& settings);

}  // namespace tipbench
