#include "tipbench/gate/between_runs.h"

#include "tipbench/statistics/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tipbench::gate {

namespace {

double sample_sd(const std::vector<double>& xs) {
  double mean = 0;
  for (double x : xs) mean += x;
  mean /= static_cast<double>(xs.size());
  double squares = 0;
  for (double x : xs) squares += (x - mean) * (x - mean);
  return std::sqrt(squares / static_cast<double>(xs.size() - 1));
}

}  // namespace

double BetweenRunSpread::for_cell(const CellKey& key) const {
  const auto it = measured.find(key);
  return it == measured.end() ? floor : std::max(floor, it->second.sd);
}

std::string BetweenRunSpread::describe(const CellKey& key) const {
  const auto it = measured.find(key);
  if (it == measured.end() || it->second.sd <= floor) {
    return it == measured.end() ? fmt::format("{:.2f}% (floor)", 100 * floor)
                                : fmt::format("{:.2f}% (floor; {} stored runs: {:.2f}%)", 100 * floor, it->second.runs,
                                              100 * it->second.sd);
  }
  return fmt::format("{:.2f}% ({} stored runs)", 100 * it->second.sd, it->second.runs);
}

BetweenRunSpread between_run_spread(const std::vector<Result>& runs, double floor) {
  std::map<CellKey, std::vector<double>> log_medians;
  for (const auto& run : runs) {
    for (const auto& cell : extract_cells(run)) {
      const auto values = cell.values();
      if (!values.empty()) log_medians[cell.key].push_back(std::log(stats::median(values)));
    }
  }
  BetweenRunSpread spread;
  spread.floor = floor;
  for (const auto& [key, logs] : log_medians) {
    if (logs.size() >= kMinRunsForSpread) spread.measured[key] = {sample_sd(logs), logs.size()};
  }
  return spread;
}

}  // namespace tipbench::gate
