#include "tipbench/history/change_points.h"

#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tipbench::history {

namespace {

struct Moments {
  double mean = 0, variance = 0;  // sample variance (n - 1)
  std::size_t n = 0;
};

Moments moments(const std::vector<double>& x, std::size_t begin, std::size_t end) {
  Moments m;
  m.n = end - begin;
  m.mean = std::accumulate(x.begin() + begin, x.begin() + end, 0.0) / m.n;
  for (std::size_t i = begin; i < end; ++i) m.variance += (x[i] - m.mean) * (x[i] - m.mean);
  m.variance = m.n > 1 ? m.variance / (m.n - 1) : 0;
  return m;
}

// Student's t-test (pooled variance) of [begin, split) against [split, end), with the ratio of
// the means and its 95% interval (the difference's interval over the first mean). Pooled, not
// Welch's: a series has one noise level, and a side of two or three runs says little about it
// alone (Welch's test called two close runs next to a long segment a change with p <= 0.001 in 25
// of 200 step-free series of 100 runs at CV 2%; the pooled test in 2).
ChangePoint t_test(const std::vector<double>& x, std::size_t begin, std::size_t split, std::size_t end,
                   bool with_interval = false) {
  const Moments a = moments(x, begin, split), b = moments(x, split, end);
  ChangePoint p;
  p.index = split;
  p.n_before = a.n;
  p.n_after = b.n;
  p.mean_before = a.mean;
  p.mean_after = b.mean;
  p.ratio = p.ratio_low = p.ratio_high = a.mean != 0 ? b.mean / a.mean : 1;
  const double df = static_cast<double>(a.n + b.n) - 2;
  const double pooled = df > 0 ? ((a.n - 1) * a.variance + (b.n - 1) * b.variance) / df : 0;
  const double se = std::sqrt(pooled * (1.0 / a.n + 1.0 / b.n));
  if (se == 0 || !std::isfinite(se)) {  // both sides constant: a change iff the means differ
    p.p_value = a.mean == b.mean ? 1 : 0;
    return p;
  }
  const boost::math::students_t t_dist(df);
  const double t = (b.mean - a.mean) / se;
  p.p_value = 2 * boost::math::cdf(boost::math::complement(t_dist, std::abs(t)));
  if (with_interval && a.mean != 0) {  // Boost's quantile is a root search: only for the points reported
    const double half = boost::math::quantile(boost::math::complement(t_dist, 0.025)) * se;
    p.ratio_low = 1 + (b.mean - a.mean - half) / a.mean;
    p.ratio_high = 1 + (b.mean - a.mean + half) / a.mean;
    if (p.ratio_low > p.ratio_high) std::swap(p.ratio_low, p.ratio_high);
  }
  return p;
}

struct Split {
  std::size_t at = 0;
  double q = -1;  // < 0: no admissible split
};

// The split of x[begin, end) with the largest E-divisive statistic (alpha = 1):
//   Q(tau) = m n / (m + n) * (2/(m n) sum|a - b| - 1/C(m,2) sum|a - a'| - 1/C(n,2) sum|b - b'|),
// updated in O(1) per tau from the pairwise distances' row sums (Otava's MATH.md gives the same
// sums as recurrences): O(n^2) per segment.
Split best_split(const std::vector<double>& x, std::size_t begin, std::size_t end, std::size_t min_segment) {
  const std::size_t n = end - begin;
  Split best;
  if (n < 2 * min_segment) return best;
  // to_left[k]: sum of |x_k - x_i| for i < k; to_right[k]: for i > k (within the segment).
  std::vector<double> to_left(n, 0), to_right(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    for (std::size_t i = 0; i < k; ++i) {
      const double d = std::abs(x[begin + k] - x[begin + i]);
      to_left[k] += d;
      to_right[i] += d;
    }
  }
  double within_left = 0, within_right = std::accumulate(to_left.begin(), to_left.end(), 0.0), cross = 0;
  for (std::size_t tau = 1; tau < n; ++tau) {  // move point tau-1 from the right side to the left
    const std::size_t k = tau - 1;
    cross += to_right[k] - to_left[k];  // its distances to the right now cross; those to the left stop
    within_left += to_left[k];
    within_right -= to_right[k];
    if (tau < min_segment || n - tau < min_segment) continue;
    const double m = static_cast<double>(tau), r = static_cast<double>(n - tau);
    const double e = 2 * cross / (m * r) - (m > 1 ? within_left / (m * (m - 1) / 2) : 0) -
                     (r > 1 ? within_right / (r * (r - 1) / 2) : 0);
    const double q = m * r / (m + r) * e;
    if (q > best.q) best = {begin + tau, q};
  }
  return best;
}

// E-divisive within x[begin, end): split the segment whose best split has the largest Q, while
// that split's t-test passes. The change points' indices, sorted.
std::vector<std::size_t> split_window(const std::vector<double>& x, std::size_t begin, std::size_t end,
                                      const DetectorOptions& o) {
  std::vector<std::size_t> bounds{begin, end};
  std::vector<Split> best_of{best_split(x, begin, end, o.min_segment)};  // per segment, kept until it splits
  for (;;) {
    std::size_t seg = 0;
    for (std::size_t s = 1; s < best_of.size(); ++s) {
      if (best_of[s].q > best_of[seg].q) seg = s;
    }
    const Split best = best_of[seg];
    if (best.q < 0 || t_test(x, bounds[seg], best.at, bounds[seg + 1]).p_value > o.max_p_value) break;
    bounds.insert(bounds.begin() + seg + 1, best.at);
    best_of[seg] = best_split(x, bounds[seg], bounds[seg + 1], o.min_segment);
    best_of.insert(best_of.begin() + seg + 1, best_split(x, bounds[seg + 1], bounds[seg + 2], o.min_segment));
  }
  return {bounds.begin() + 1, bounds.end() - 1};
}

bool passes(const ChangePoint& p, const DetectorOptions& o) {
  return p.p_value <= o.max_p_value && std::abs(p.ratio - 1) >= o.min_change;
}

}  // namespace

std::vector<ChangePoint> find_change_points(const std::vector<double>& series, const DetectorOptions& o) {
  const std::size_t n = series.size();
  const std::size_t window = std::max<std::size_t>(o.window, 2 * o.min_segment);
  std::vector<std::size_t> found;
  // Windows overlap by half; the next starts at the last point found if that is further (Otava).
  for (std::size_t start = 0; start < n;) {
    // The last window ends at the last run and is full: a change near the trailing edge is
    // judged against a full window's runs before it.
    if (start + window > n) start = n > window ? n - window : 0;
    const std::size_t end = std::min(start + window, n);
    const auto in_window = split_window(series, start, end, o);
    found.insert(found.end(), in_window.begin(), in_window.end());
    if (end == n) break;
    start = std::max(in_window.empty() ? 0 : in_window.back(), start + window / 2);
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());

  // Merge: test each point against its neighbours' segments; drop the weakest failing one, repeat.
  for (;;) {
    std::vector<ChangePoint> points;
    for (std::size_t i = 0; i < found.size(); ++i) {
      const std::size_t begin = i == 0 ? 0 : found[i - 1], end = i + 1 == found.size() ? n : found[i + 1];
      points.push_back(t_test(series, begin, found[i], end));
    }
    std::size_t weakest = points.size();
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (passes(points[i], o)) continue;
      if (weakest == points.size() || points[i].p_value > points[weakest].p_value ||
          (points[i].p_value == points[weakest].p_value &&
           std::abs(points[i].ratio - 1) < std::abs(points[weakest].ratio - 1))) {
        weakest = i;
      }
    }
    if (weakest == points.size()) {
      for (std::size_t i = 0; i < found.size(); ++i) {
        points[i] = t_test(series, points[i].index - points[i].n_before, found[i], found[i] + points[i].n_after, true);
      }
      return points;
    }
    found.erase(found.begin() + weakest);
  }
}

double run_to_run_noise(const std::vector<double>& series) {
  if (series.size() < 3) return 0;
  std::vector<double> steps, values(series);
  for (std::size_t i = 1; i < series.size(); ++i) steps.push_back(std::abs(series[i] - series[i - 1]));
  const auto median = [](std::vector<double>& v) {
    const auto mid = v.begin() + v.size() / 2;
    std::nth_element(v.begin(), mid, v.end());
    if (v.size() % 2) return *mid;
    return (*mid + *std::max_element(v.begin(), mid)) / 2;
  };
  const double level = median(values);
  return level != 0 ? 1.4826 * median(steps) / std::sqrt(2.0) / std::abs(level) : 0;
}

}  // namespace tipbench::history
