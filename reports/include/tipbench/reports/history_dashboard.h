// `tipbench history report --out DIR`: the history store as a static site that opens from file://
// (docs/history.md "Dashboard"): index.html (filters, one trend chart per series, change points
// and runs measured under load marked), chart.min.js (Chart.js, copied), series-index.js (every
// series: its cell, metric, hardware, model, stacks) and series/<n>.js (one series' points, loaded
// by a <script> tag when shown: file:// pages cannot fetch()). Every file is written atomically.
// Example:
//   const auto changes = tipbench::history::detect(store, {});
//   tipbench::reports::write_history_dashboard(store, changes, "results/dashboard", chartjs, {});
#pragma once

#include "tipbench/history/detect.h"
#include "tipbench/history/trends.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tipbench::reports {

struct DashboardOptions {
  std::string title = "tipbench history";
  std::size_t recent_points = 200;  // per series: the newest N runs at full detail, older ones thinned
};

struct DashboardSummary {
  std::size_t series = 0, points = 0, changes = 0, files = 0;
};

// One series' points for the page: at most 2 * recent_points, the newest recent_points all kept,
// the older ones thinned evenly (each kept point is a real run, never an average).
std::vector<std::size_t> kept_points(std::size_t runs, std::size_t recent_points);

// The series index and one data document per series (testable without a browser).
nlohmann::json dashboard_index(const std::vector<history::SeriesTrend>& trends, const history::DetectReport& changes);
nlohmann::json dashboard_series(const history::SeriesTrend& trend, const history::DetectReport& changes,
                                const DashboardOptions& options);

// Writes the site into `dir` (made when absent). Throws std::runtime_error when a file cannot be written.
DashboardSummary write_history_dashboard(const std::vector<history::SeriesTrend>& trends,
                                         const history::DetectReport& changes, const std::string& dir,
                                         const std::string& chartjs_source, const DashboardOptions& options);

}  // namespace tipbench::reports
