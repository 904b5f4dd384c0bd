#include "tipbench/reports/history_dashboard.h"

#include "history_dashboard_page.h"
#include "tipbench/common/atomic_file.h"
#include "tipbench/common/escape.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace tipbench::reports {

namespace {

using Key = std::tuple<std::string, std::string, std::string, std::string>;  // cell, metric, hardware, model

Key key_of(const history::SeriesTrend& t) { return {t.cell, t.metric, t.hardware, t.model_sha256}; }
Key key_of(const history::SeriesChange& c) { return {c.cell, c.metric, c.hardware, c.model_sha256}; }

// "torch 2.11.0, CUDA 13.0": what a run's software stack is called in filters and tooltips. A
// store holds few distinct fingerprints and a page many points: each one is parsed once.
std::string stack_of(const history::TrendPoint& p) {
  thread_local std::unordered_map<std::string, std::string> cuda_of_fingerprint;
  auto [known, added] = cuda_of_fingerprint.try_emplace(p->fingerprint);
  if (added) {
    try {
      known->second = nlohmann::json::parse(p->fingerprint).value("cuda_runtime_version", "");
    } catch (const std::exception&) {  // an unreadable stored fingerprint names no CUDA
    }
  }
  return "torch " + p->libtorch_version + (known->second.empty() ? "" : ", CUDA " + known->second);
}

std::string model_label(const std::string& sha) { return sha.empty() ? "built-in" : "file " + sha.substr(0, 12); }

}  // namespace

std::vector<std::size_t> kept_points(std::size_t runs, std::size_t recent_points) {
  std::vector<std::size_t> kept;
  const std::size_t recent_from = runs > recent_points ? runs - recent_points : 0;
  // The older runs thinned to at most recent_points, evenly: every stride-th.
  const std::size_t stride = recent_points == 0 ? 1 : (recent_from + recent_points - 1) / recent_points;
  for (std::size_t i = 0; i < recent_from; i += std::max<std::size_t>(stride, 1)) kept.push_back(i);
  for (std::size_t i = recent_from; i < runs; ++i) kept.push_back(i);
  return kept;
}

nlohmann::json dashboard_index(const std::vector<history::SeriesTrend>& trends, const history::DetectReport& changes) {
  std::map<Key, std::pair<std::size_t, std::size_t>> counts;  // changes, new regressions
  for (const auto& c : changes.changes) {
    auto& n = counts[key_of(c)];
    ++n.first;
    n.second += c.regression && c.is_new && c.expected.empty();
  }
  nlohmann::json series = nlohmann::json::array();
  for (std::size_t i = 0; i < trends.size(); ++i) {
    const auto& t = trends[i];
    std::set<std::string> stacks;
    for (const auto& p : t.runs) stacks.insert(stack_of(p));
    const auto n = counts[key_of(t)];
    series.push_back({{"id", i},
                      {"suite", t.suite},
                      {"cell", t.cell},
                      {"metric", t.metric},
                      {"hardware", t.hardware},
                      {"model", model_label(t.model_sha256)},
                      {"stacks", stacks},
                      {"runs", t.runs.size()},
                      {"changes", n.first},
                      {"regressions", n.second}});
  }
  return {{"series", series},
          {"window", changes.request.detector.window},
          {"max_p_value", changes.request.detector.max_p_value},
          {"new_regressions", changes.new_regressions()}};
}

nlohmann::json dashboard_series(const history::SeriesTrend& t, const history::DetectReport& changes,
                                const DashboardOptions& options) {
  std::vector<std::size_t> kept = kept_points(t.runs.size(), options.recent_points);
  // A change point's two runs are always drawn, whatever the thinning.
  std::map<std::int64_t, std::size_t> by_run;
  for (std::size_t i = 0; i < t.runs.size(); ++i) by_run[t.runs[i]->run_id] = i;
  nlohmann::json marks = nlohmann::json::array();
  for (const auto& c : changes.changes) {
    if (key_of(c) != key_of(t)) continue;
    for (const auto run : {c.before_run, c.after_run}) {
      if (by_run.count(run)) kept.push_back(by_run[run]);
    }
    marks.push_back({{"after_run", c.after_run},
                     {"verdict", history::verdict_of(c)},
                     {"note", c.expected},
                     {"ratio", c.point.ratio},
                     {"ratio_low", c.point.ratio_low},
                     {"ratio_high", c.point.ratio_high},
                     {"p_value", c.point.p_value},
                     {"software_change", c.software_change},
                     {"git", fmt::format("{} -> {}", c.before_git.substr(0, 12), c.after_git.substr(0, 12))}});
  }
  // Runs with an expected-change annotation are drawn too, with its note.
  std::map<std::int64_t, std::string> annotated;
  for (const auto& a : t.expected) {
    annotated[a.run_id] = a.note.empty() ? "expected change" : a.note;
    if (by_run.count(a.run_id)) kept.push_back(by_run[a.run_id]);
  }
  std::sort(kept.begin(), kept.end());
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  nlohmann::json points = nlohmann::json::array();
  for (const auto i : kept) {
    const auto& p = t.runs[i];
    const auto [lo, hi] = std::minmax_element(p.samples.begin(), p.samples.end());
    points.push_back({{"time", p->timestamp_utc},
                      {"value", t.medians[i]},
                      {"low", *lo},
                      {"high", *hi},
                      {"run", p->run_id},
                      {"git", p->git_sha.substr(0, 12)},
                      {"stack", stack_of(p)},
                      {"loaded", static_cast<bool>(t.loaded[i])},
                      {"excluded", i < t.excluded.size() ? t.excluded[i] : ""},
                      {"annotated", annotated.contains(p->run_id) ? annotated[p->run_id] : ""}});
  }
  return {
      {"cell", t.cell},        {"metric", t.metric}, {"hardware", t.hardware}, {"model", model_label(t.model_sha256)},
      {"runs", t.runs.size()}, {"points", points},   {"changes", marks}};
}

DashboardSummary write_history_dashboard(const std::vector<history::SeriesTrend>& trends,
                                         const history::DetectReport& changes, const std::string& dir,
                                         const std::string& chartjs_source, const DashboardOptions& options) {
  namespace fs = std::filesystem;
  fs::create_directories(fs::path(dir) / "series");
  DashboardSummary summary;
  summary.series = trends.size();
  summary.changes = changes.changes.size();
  for (std::size_t i = 0; i < trends.size(); ++i) {
    const auto data = dashboard_series(trends[i], changes, options);
    summary.points += data.at("points").size();
    write_file_atomically((fs::path(dir) / "series" / fmt::format("{}.js", i)).string(),
                          fmt::format("window.tipbenchSeriesLoaded({}, {});\n", i, json_for_script(data)));
    ++summary.files;
  }
  write_file_atomically((fs::path(dir) / "series-index.js").string(),
                        "window.TIPBENCH_INDEX = " + json_for_script(dashboard_index(trends, changes)) + ";\n");
  write_file_atomically((fs::path(dir) / "chart.min.js").string(), chartjs_source);
  write_file_atomically((fs::path(dir) / "index.html").string(), dashboard_page(options.title));
  summary.files += 3;
  return summary;
}

}  // namespace tipbench::reports
