// tipbench_detect_accuracy: how well `tipbench history detect` finds known steps and how often it
// cries wolf, on synthetic nightly series, beside a plain threshold (TorchBench's: a run more than
// 7% slower than the one before). A benchmark, not a test: it prints the table docs/history.md
// quotes. Usage: tipbench_detect_accuracy [--series N] [--seed S] [--p-value P] [--noise-multiple K]
#include "tipbench/history/detect.h"

#include <fmt/format.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

namespace h = tipbench::history;

constexpr std::size_t kStepAt = 50;    // runs before the step
constexpr std::size_t kRunsAfter = 5;  // "found within 5 runs"
constexpr std::size_t kStepFreeRuns = 100;
constexpr double kThreshold = 0.07;  // TorchBench's nightly regression threshold

// Per-run throughputs around 1000 with run-to-run CV `cv`, times (1 - step) from kStepAt on.
std::vector<double> nightly(std::size_t runs, double cv, double step, std::mt19937_64& rng) {
  std::normal_distribution<double> noise(0.0, cv);
  std::vector<double> x;
  for (std::size_t i = 0; i < runs; ++i) x.push_back(1000 * (i >= kStepAt ? 1 - step : 1.0) * (1 + noise(rng)));
  return x;
}

// Our detector: a regression whose first run after is within 2 of `at`; any, for at = npos.
bool ours_flags(const std::vector<double>& x, std::size_t at, const h::DetectRequest& request) {
  for (const auto& c : h::judge_series(x, /*higher_is_better=*/true, request)) {
    if (!c.regression) continue;
    if (at == std::string::npos) return true;
    const auto i = c.point.index;
    if (i + 2 >= at && i <= at + 2) return true;
  }
  return false;
}

// The plain threshold: a run more than 7% under the one before, in runs [from, to).
bool threshold_flags(const std::vector<double>& x, std::size_t from, std::size_t to) {
  for (std::size_t i = std::max<std::size_t>(from, 1); i < to; ++i) {
    if (x[i] < (1 - kThreshold) * x[i - 1]) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t series = 1000;
  std::uint64_t seed = 1;
  h::DetectRequest request;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--series") series = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--seed") seed = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--p-value") request.detector.max_p_value = std::strtod(argv[i + 1], nullptr);
    if (flag == "--noise-multiple") request.noise_multiple = std::strtod(argv[i + 1], nullptr);
  }
  if (series == 0 || argc % 2 == 0) {
    fmt::print(stderr, "usage: tipbench_detect_accuracy [--series N] [--seed S] [--p-value P] [--noise-multiple K]\n");
    return 2;
  }
  std::mt19937_64 rng(seed);
  const std::vector<double> cvs{0.02, 0.05, 0.10, 0.15}, steps{0.01, 0.02, 0.05, 0.10};
  fmt::print("Detector: E-divisive, window {}, p <= {}, bound max({}%, {} x run-to-run noise)\n\n",
             request.detector.window, request.detector.max_p_value, 100 * request.min_change_floor,
             request.noise_multiple);
  fmt::print("Detection within {} runs of a slowdown after {} runs ({} series per cell): ours / 7% threshold\n\n",
             kRunsAfter, kStepAt, series);
  fmt::print("| run-to-run CV |");
  for (const double s : steps) fmt::print(" {:.0f}% step |", 100 * s);
  fmt::print("\n|---:|");
  for (std::size_t i = 0; i < steps.size(); ++i) fmt::print("---:|");
  fmt::print("\n");
  for (const double cv : cvs) {
    fmt::print("| {:.0f}% |", 100 * cv);
    for (const double step : steps) {
      std::size_t ours = 0, plain = 0;
      for (std::size_t k = 0; k < series; ++k) {
        const auto x = nightly(kStepAt + kRunsAfter, cv, step, rng);
        ours += ours_flags(x, kStepAt, request);
        plain += threshold_flags(x, kStepAt, x.size());
      }
      fmt::print(" {:.1f}% / {:.1f}% |", 100.0 * ours / series, 100.0 * plain / series);
    }
    fmt::print("\n");
  }
  fmt::print("\nFalse alarms per 1,000 step-free series of {} runs: ours / 7% threshold\n\n", kStepFreeRuns);
  fmt::print("| run-to-run CV | ours | 7% threshold |\n|---:|---:|---:|\n");
  for (const double cv : cvs) {
    std::size_t ours = 0, plain = 0;
    for (std::size_t k = 0; k < series; ++k) {
      const auto x = nightly(kStepFreeRuns, cv, 0.0, rng);
      ours += ours_flags(x, std::string::npos, request);
      plain += threshold_flags(x, 1, x.size());
    }
    fmt::print("| {:.0f}% | {:.1f} | {:.1f} |\n", 100 * cv, 1000.0 * ours / series, 1000.0 * plain / series);
  }
  return 0;
}
