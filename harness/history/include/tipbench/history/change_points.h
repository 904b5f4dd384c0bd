// Change points in one series of per-run values: E-divisive means with a t-test, as Apache Otava
// (ex-Hunter, docs/MATH.md there) does it. No store, no I/O: the detector of `tipbench history
// detect` (docs/history.md) and of its accuracy benchmark.
// Example:
//   const auto points = tipbench::history::find_change_points(medians, {.min_change = 0.02});
//   for (const auto& p : points) fmt::print("run {}: x{:.3f} p={}\n", p.index, p.ratio, p.p_value);
#pragma once

#include <cstddef>
#include <vector>

namespace tipbench::history {

struct DetectorOptions {
  std::size_t window = 50;     // points per window (Otava's default); windows overlap by half
  double max_p_value = 0.001;  // Student's t-test between the two sides of a split (Otava's default)
  double min_change = 0.0;     // |after / before - 1| below which a change point is dropped
  // Points each side of a change: 2 means a change at the trailing edge needs two runs beyond it.
  std::size_t min_segment = 2;
};

struct ChangePoint {
  std::size_t index = 0;                  // the first point after the change
  std::size_t n_before = 0, n_after = 0;  // points of the two segments it separates
  double mean_before = 0, mean_after = 0;
  double ratio = 1, ratio_low = 1, ratio_high = 1;  // mean_after / mean_before, 95% interval
  double p_value = 1;
};

// The change points of `series`, in order. Each window is split where the energy statistic Q of
// E-divisive (alpha = 1) is largest, as long as the t-test between the split's two sides gives
// p <= max_p_value; then, over the whole series, the weakest point (largest p, or a change under
// min_change) is dropped and its neighbours re-tested until every point passes (Otava's merge).
std::vector<ChangePoint> find_change_points(const std::vector<double>& series, const DetectorOptions& options);

// A series' run-to-run noise relative to its level: 1.4826 * median |x[i+1] - x[i]| / sqrt(2),
// over median(x). Robust to the steps themselves (a step is one difference of many). 0 for < 3 points.
double run_to_run_noise(const std::vector<double>& series);

}  // namespace tipbench::history
