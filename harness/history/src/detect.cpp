#include "tipbench/history/detect.h"

#include "tipbench/common/escape.h"
#include "tipbench/environment/fingerprint.h"
#include "tipbench/gate/cells.h"
#include "tipbench/gate/count_checks.h"
#include "tipbench/history/trends.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tipbench::history {

namespace {

std::string software_change(const std::string& before, const std::string& after) {
  try {
    Fingerprint a, b;
    from_json(nlohmann::json::parse(before), a);
    from_json(nlohmann::json::parse(after), b);
    return fingerprint_changes_text(a, b);
  } catch (const std::exception&) {
    return "";  // an unreadable stored fingerprint names no change
  }
}

std::string short_git(const std::string& sha) { return sha.empty() ? "-" : sha.substr(0, 12); }

std::string interval(const ChangePoint& p) {
  return fmt::format("x{:.3f} [{:.3f}, {:.3f}]", p.ratio, p.ratio_low, p.ratio_high);
}

// A count's step says its two counts; a time's change its ratio and interval.
std::string change_text(const SeriesChange& c) {
  if (!gate::is_count_metric(c.metric)) return fmt::format("{} p={:.2g}", interval(c.point), c.point.p_value);
  return fmt::format("{:g} -> {:g} per step (exact count)", c.point.mean_before, c.point.mean_after);
}

}  // namespace

std::string verdict_of(const SeriesChange& c) {
  if (!c.expected.empty()) return "expected";
  if (!c.regression) return "improvement";
  return c.is_new ? "REGRESSION" : "regression";
}

std::vector<JudgedChange> judge_series(const std::vector<double>& values, bool higher_is_better,
                                       const DetectRequest& request) {
  DetectorOptions options = request.detector;
  options.min_change = std::max(request.min_change_floor, request.noise_multiple * run_to_run_noise(values));
  std::vector<JudgedChange> out;
  for (const auto& cp : find_change_points(values, options)) {
    out.push_back({cp, options.min_change, higher_is_better ? cp.ratio < 1 : cp.ratio > 1});
  }
  return out;
}

std::vector<JudgedChange> judge_count_series(const std::vector<double>& values, double tolerance) {
  std::vector<std::size_t> steps;
  for (std::size_t i = 1; i < values.size(); ++i) {
    if (std::fabs(values[i] - values[i - 1]) > tolerance * values[i - 1] + 1e-9) steps.push_back(i);
  }
  std::vector<JudgedChange> out;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const std::size_t i = steps[k];
    ChangePoint p;
    p.index = i;
    p.n_before = i - (k > 0 ? steps[k - 1] : 0);
    p.n_after = (k + 1 < steps.size() ? steps[k + 1] : values.size()) - i;
    p.mean_before = values[i - 1];
    p.mean_after = values[i];
    p.ratio = p.ratio_low = p.ratio_high = values[i - 1] > 0 ? values[i] / values[i - 1] : 1 + values[i];
    p.p_value = 0;
    out.push_back({p, tolerance, values[i] > values[i - 1]});
  }
  return out;
}

std::size_t DetectReport::new_regressions() const {
  return std::count_if(changes.begin(), changes.end(),
                       [](const SeriesChange& c) { return c.regression && c.is_new && c.expected.empty(); });
}

DetectReport detect(const HistoryStore& store, const DetectRequest& request) {
  return detect(read_trends(store, request.filter), request);
}

DetectReport detect(const std::vector<SeriesTrend>& trends, const DetectRequest& request) {
  DetectReport report;
  report.request = request;
  for (const auto& t : trends) {
    // Runs measured under load are flagged, never cut at: a loaded machine looks like a slower build.
    // A count does not depend on the load.
    const bool counted = gate::is_count_metric(t.metric);
    const auto tolerance = request.count_tolerances.find(t.metric);
    if (counted && tolerance == request.count_tolerances.end()) continue;  // a count the config does not gate
    std::vector<const TrendPoint*> points;
    std::vector<double> values;
    for (std::size_t i = 0; i < t.runs.size(); ++i) {
      if (i < t.excluded.size() && !t.excluded[i].empty()) {
        ++report.excluded;
        continue;
      }
      if (t.loaded[i] && !counted) {
        ++report.flagged;
        continue;
      }
      points.push_back(&t.runs[i]);
      values.push_back(t.medians[i]);
    }
    ++report.series;
    report.runs += points.size();
    const auto judged_changes = counted ? judge_count_series(values, tolerance->second)
                                        : judge_series(values, gate::higher_is_better(t.metric), request);
    for (const auto& judged : judged_changes) {
      const auto& cp = judged.point;
      SeriesChange c;
      c.suite = t.suite;
      c.cell = t.cell;
      c.metric = t.metric;
      c.hardware = t.hardware;
      c.model_sha256 = t.model_sha256;
      c.point = cp;
      c.min_change = judged.min_change;
      c.regression = judged.regression;
      const auto& before = *points[cp.index - 1];
      const auto& after = *points[cp.index];
      c.before_time = before->timestamp_utc;
      c.after_time = after->timestamp_utc;
      c.before_git = before->git_sha;
      c.after_git = after->git_sha;
      c.before_run = before->run_id;
      c.after_run = after->run_id;
      c.after_series = after.series_id;
      c.is_new = request.since.empty() || after->timestamp_utc >= request.since;
      c.software_change = software_change(before->fingerprint, after->fingerprint);
      // An expected change annotated at a run after the last one before it, up to the first after it.
      for (const auto& a : t.expected) {
        if (a.run_time > before->timestamp_utc && a.run_time <= after->timestamp_utc) {
          c.expected = a.note.empty() ? "expected" : a.note;
        }
      }
      report.changes.push_back(std::move(c));
    }
  }
  return report;
}

std::vector<StoredChangePoint> stored_change_points(const DetectReport& report, const std::string& now_utc) {
  std::vector<StoredChangePoint> out;
  for (const auto& c : report.changes) {
    out.push_back({c.after_series, c.after_run, now_utc, c.point.ratio, c.point.ratio_low, c.point.ratio_high,
                   c.point.p_value, verdict_of(c)});
  }
  return out;
}

std::string detect_console(const DetectReport& r) {
  std::string out = fmt::format(
      "history detect: {} series, {} runs ({} flagged: measured under load, left out{}); E-divisive, "
      "window {}, p <= {}\n",
      r.series, r.runs, r.flagged, r.excluded ? fmt::format("; {} excluded by annotation", r.excluded) : "",
      r.request.detector.window, r.request.detector.max_p_value);
  if (r.changes.empty()) out += "no change points\n";
  for (const auto& c : r.changes) {
    out += fmt::format("{:<12} {} {} on {}: {} (bound {:.1f}%), runs {} -> {} (git {} -> {}, {} -> {}){}{}\n",
                       verdict_of(c), c.cell, c.metric, c.hardware, change_text(c), 100 * c.min_change, c.before_run,
                       c.after_run, short_git(c.before_git), short_git(c.after_git), c.before_time, c.after_time,
                       c.software_change.empty() ? "" : "; software changed: " + c.software_change,
                       c.expected.empty() ? "" : "; annotated: " + c.expected);
  }
  out += fmt::format("{} new regression(s)\n", r.new_regressions());
  return out;
}

std::string detect_markdown(const DetectReport& r) {
  std::string out = fmt::format(
      "### tipbench history detect: {} new regression(s)\n\n{} series, {} runs ({} flagged as measured "
      "under load and left out); E-divisive means with a t-test, window {}, p <= {}.\n\n",
      r.new_regressions(), r.series, r.runs, r.flagged, r.request.detector.window, r.request.detector.max_p_value);
  if (r.changes.empty()) return out + "No change points.\n";
  out += "| verdict | series | metric | hardware | ratio [95% CI] | p | runs | git | software changed | note |\n";
  out += "|---|---|---|---|---:|---:|---|---|---|---|\n";
  for (const auto& c : r.changes) {
    // Every string from the store is escaped: a note's | or newline would break the table, its
    // [link](...), <img> or @team would render in the job summary.
    const bool counted = gate::is_count_metric(c.metric);
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} → {} | {} → {} | {} | {} |\n", verdict_of(c), markdown_escape(c.cell),
        markdown_escape(c.metric), markdown_escape(c.hardware),
        counted ? fmt::format("{:g} → {:g} per step", c.point.mean_before, c.point.mean_after) : interval(c.point),
        counted ? std::string("exact") : fmt::format("{:.2g}", c.point.p_value), c.before_run, c.after_run,
        markdown_escape(short_git(c.before_git)), markdown_escape(short_git(c.after_git)),
        c.software_change.empty() ? "-" : markdown_escape(c.software_change),
        c.expected.empty() ? "-" : markdown_escape(c.expected));
  }
  return out;
}

nlohmann::json detect_json(const DetectReport& r) {
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& c : r.changes) {
    changes.push_back({{"verdict", verdict_of(c)},
                       {"cell", c.cell},
                       {"metric", c.metric},
                       {"hardware", c.hardware},
                       {"model_sha256", c.model_sha256},
                       {"ratio", c.point.ratio},
                       {"ratio_low", c.point.ratio_low},
                       {"ratio_high", c.point.ratio_high},
                       {"p_value", c.point.p_value},
                       {"min_change", c.min_change},
                       {"runs_before", c.point.n_before},
                       {"runs_after", c.point.n_after},
                       {"before", {{"run", c.before_run}, {"time", c.before_time}, {"git", c.before_git}}},
                       {"after", {{"run", c.after_run}, {"time", c.after_time}, {"git", c.after_git}}},
                       {"software_change", c.software_change},
                       {"expected", c.expected}});
  }
  return {{"series", r.series},
          {"runs", r.runs},
          {"flagged", r.flagged},
          {"excluded", r.excluded},
          {"window", r.request.detector.window},
          {"max_p_value", r.request.detector.max_p_value},
          {"since", r.request.since},
          {"new_regressions", r.new_regressions()},
          {"changes", changes}};
}

}  // namespace tipbench::history
