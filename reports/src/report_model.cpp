// The HTML report's chart data, from result documents only (see html_report.h for the kinds).
#include "tipbench/reports/html_report.h"

#include "why_section.h"

#include "tipbench/gate/cells.h"
#include "tipbench/results/levels.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace tipbench::reports {

namespace {

using json = nlohmann::json;

std::optional<double> as_number(const std::string& s) {
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    return used == s.size() ? std::optional<double>(v) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Whether a suite gets the chart of `kind`: the kind it declared, as its result records it. A result
// from before schema 1.4 records none: every kind is tried on it and draws where the arms carry
// its encoding, as the report inferred charts then.
bool draws(const SuiteResult& suite, ChartKind kind) { return !suite.chart || *suite.chart == kind; }

json nullable(std::optional<double> v) { return v ? json(*v) : json(nullptr); }

std::optional<double> mib(const ArmResult& arm) {
  if (!arm.peak_memory_bytes) return std::nullopt;
  return static_cast<double>(*arm.peak_memory_bytes) / (1024.0 * 1024.0);
}

// Per-tip speedup: every throughput comparison in the runs, one dataset per run.
json speedup_chart(const std::vector<NamedRun>& runs) {
  std::vector<std::string> labels;
  std::vector<std::map<std::string, const Comparison*>> per_run(runs.size());
  for (std::size_t r = 0; r < runs.size(); ++r) {
    for (const auto& suite : runs[r].result.suites) {
      for (const auto& c : suite.cases) {
        for (const auto& cmp : c.comparisons) {
          if (cmp.metric != gate::kThroughput) continue;
          const std::string label = fmt::format("{} {} vs {}", c.name, cmp.treatment, cmp.baseline);
          if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
          per_run[r][label] = &cmp;
        }
      }
    }
  }
  if (labels.empty()) return nullptr;
  json datasets = json::array();
  for (std::size_t r = 0; r < runs.size(); ++r) {
    json values = json::array(), low = json::array(), high = json::array();
    for (const auto& l : labels) {
      auto it = per_run[r].find(l);
      values.push_back(it == per_run[r].end() ? json(nullptr) : json(it->second->estimate.ratio));
      low.push_back(it == per_run[r].end() ? json(nullptr) : json(it->second->estimate.ci_low));
      high.push_back(it == per_run[r].end() ? json(nullptr) : json(it->second->estimate.ci_high));
    }
    datasets.push_back({{"label", runs[r].label}, {"values", values}, {"low", low}, {"high", high}});
  }
  return {{"kind", "bars_ci"},
          {"id", "speedup"},
          {"title", "Per-tip speedup: throughput of each treatment / its baseline arm (95% CI)"},
          {"value_label", "throughput ratio (x, log scale centred on 1)"},
          {"reference", 1.0},
          // Ratios on a log axis centred on 1: x0.5 and x2 are as far from 1, and x0.987 shows
          // beside x3.4.
          {"scale", "log"},
          {"labels", labels},
          {"datasets", datasets}};
}

// Change of each later run against the first, per throughput cell.
json change_chart(const std::vector<NamedRun>& runs, const HtmlOptions& options) {
  if (runs.size() < 2) return nullptr;
  const auto comparisons =
      compare_to_reference(runs, {.paired = options.paired, .practical_threshold = options.practical_threshold});
  std::vector<gate::CellKey> keys;
  for (const auto& rc : comparisons) {
    for (const auto& c : rc.cells) {
      if (c.key.metric == gate::kThroughput && std::find(keys.begin(), keys.end(), c.key) == keys.end()) {
        keys.push_back(c.key);
      }
    }
  }
  if (keys.empty()) return nullptr;
  json labels = json::array();
  for (const auto& k : keys) labels.push_back(k.case_name + "/arm:" + k.arm);
  json datasets = json::array();
  for (std::size_t r = 0; r < comparisons.size(); ++r) {
    json values = json::array(), low = json::array(), high = json::array();
    for (const auto& k : keys) {
      auto it = std::find_if(comparisons[r].cells.begin(), comparisons[r].cells.end(),
                             [&](const auto& c) { return c.key == k; });
      const bool found = it != comparisons[r].cells.end();
      values.push_back(found ? json(100 * (it->test.estimate.ratio - 1)) : json(nullptr));
      low.push_back(found ? json(100 * (it->test.estimate.ci_low - 1)) : json(nullptr));
      high.push_back(found ? json(100 * (it->test.estimate.ci_high - 1)) : json(nullptr));
    }
    datasets.push_back(
        {{"label", runs[r + 1].label + " vs " + runs[0].label}, {"values", values}, {"low", low}, {"high", high}});
  }
  return {{"kind", "bars_ci"},
          {"id", "change"},
          {"title", fmt::format("Throughput change vs {} (%, 95% CI)", runs[0].label)},
          {"value_label", "change in throughput (%)"},
          {"reference", 0.0},
          {"labels", labels},
          {"datasets", datasets}};
}

// A case whose arms set the same two factors, each with at least two levels.
void heatmaps(const NamedRun& run, json& charts) {
  for (const auto& suite : run.result.suites) {
    for (const auto& c : suite.cases) {
      std::map<std::pair<std::string, std::string>, int> pairs;
      for (const auto& arm : c.arms) {
        if (arm.levels.size() == 2) ++pairs[{arm.levels[0].first, arm.levels[1].first}];
      }
      for (const auto& [factors, count] : pairs) {
        if (count < 4) continue;
        std::vector<std::string> xs, ys;
        json cells = json::array();
        for (const auto& arm : c.arms) {
          const auto x = find_level(arm.levels, factors.first);
          const auto y = find_level(arm.levels, factors.second);
          if (arm.levels.size() != 2 || !x || !y) continue;
          if (std::find(xs.begin(), xs.end(), *x) == xs.end()) xs.push_back(*x);
          if (std::find(ys.begin(), ys.end(), *y) == ys.end()) ys.push_back(*y);
          const bool ok = arm.status == ArmStatus::ok && arm.throughput_samples_per_s.n > 0;
          cells.push_back({{"x", *x},
                           {"y", *y},
                           {"value", ok ? json(arm.throughput_samples_per_s.median) : json(nullptr)},
                           {"note", ok ? std::string() : std::string(to_string(arm.status))}});
        }
        if (xs.size() < 2 || ys.size() < 2) continue;
        charts.push_back(
            {{"kind", "heatmap"},
             {"id", "heatmap-" + c.name},
             {"title", fmt::format("{}: throughput by {} x {} ({})", c.name, factors.first, factors.second, run.label)},
             {"x_label", factors.first},
             {"y_label", factors.second},
             {"x", xs},
             {"y", ys},
             {"value_label", "samples/s"},
             {"cells", cells}});
      }
    }
  }
}

// The ok arms of a case with a numeric value of `level`, sorted by it.
std::vector<std::pair<double, const ArmResult*>> arms_by_level(const CaseResult& c, const std::string& level) {
  std::vector<std::pair<double, const ArmResult*>> points;
  for (const auto& arm : c.arms) {
    const auto v = find_level(arm.levels, level);
    if (!v || arm.status != ArmStatus::ok || arm.throughput_samples_per_s.n == 0) continue;
    if (auto x = as_number(*v)) points.emplace_back(*x, &arm);
  }
  std::stable_sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return points;
}

json xy(double x, double y) { return {{"x", x}, {"y", y}}; }

// Throughput (left axis) and memory (right axis) against a numeric arm level (a sweep: one arm
// per value; a case whose arms share a value differs in something else and gets no curve).
void level_curves(const NamedRun& run, const std::string& level, ChartKind kind, json& charts) {
  for (const auto& suite : run.result.suites) {
    if (!draws(suite, kind)) continue;
    for (const auto& c : suite.cases) {
      const auto points = arms_by_level(c, level);
      if (points.size() < 2) continue;
      const auto same_x = [](const auto& a, const auto& b) { return a.first == b.first; };
      if (std::adjacent_find(points.begin(), points.end(), same_x) != points.end()) continue;
      json throughput = json::array(), memory = json::array();
      for (const auto& [x, arm] : points) {
        throughput.push_back(xy(x, arm->throughput_samples_per_s.median));
        if (auto m = mib(*arm)) memory.push_back(xy(x, *m));
      }
      json datasets = json::array({{{"label", "throughput (samples/s)"}, {"points", throughput}, {"axis", "y"}}});
      if (!memory.empty()) datasets.push_back({{"label", "peak memory (MiB)"}, {"points", memory}, {"axis", "y2"}});
      charts.push_back({{"kind", "lines"},
                        {"id", fmt::format("{}-{}", level, c.name)},
                        {"title", fmt::format("{}: throughput and memory vs {} ({})", c.name, level, run.label)},
                        {"x_label", level},
                        {"y_label", "samples/s"},
                        {"y2_label", memory.empty() ? "" : "MiB"},
                        {"datasets", datasets}});
    }
  }
}

// Scaling: throughput against the arms' numeric `world_size` level with the ideal linear line
// from the smallest world size. Arms that differ in other levels (ddp with and without overlap,
// dp) are separate lines, each starting from the smallest world size's arm (the reference).
void scaling_curves(const NamedRun& run, json& charts) {
  for (const auto& suite : run.result.suites) {
    if (!draws(suite, ChartKind::scaling)) continue;
    for (const auto& c : suite.cases) {
      const auto points = arms_by_level(c, "world_size");
      if (points.size() < 2 || points.front().first <= 0 || points.back().first == points.front().first) continue;
      const auto& [x0, reference] = points.front();
      const double y0 = reference->throughput_samples_per_s.median;
      // Series: the arms' levels without world_size and mode; one series when nothing else differs.
      std::vector<std::pair<std::string, json>> series;
      for (const auto& [x, arm] : points) {
        if (arm == reference) continue;
        Levels rest;
        for (const auto& kv : arm->levels) {
          if (kv.first != "world_size") rest.push_back(kv);
        }
        const std::string key = join_levels(rest);
        auto it = std::find_if(series.begin(), series.end(), [&](const auto& s) { return s.first == key; });
        if (it == series.end()) {
          series.push_back({key, {{"label", arm->arm}, {"points", json::array({xy(x0, y0)})}, {"axis", "y"}}});
          it = series.end() - 1;
        } else {
          it->second["label"] = it->second["label"].get<std::string>() + ", " + arm->arm;
        }
        it->second["points"].push_back(xy(x, arm->throughput_samples_per_s.median));
      }
      json datasets = json::array();
      for (auto& [key, dataset] : series) {
        if (series.size() == 1) dataset["label"] = "throughput (samples/s)";
        datasets.push_back(dataset);
      }
      json ideal = json::array();
      for (const auto& [x, arm] : points) {
        if (ideal.empty() || ideal.back().at("x").get<double>() != x) ideal.push_back(xy(x, y0 * x / x0));
      }
      datasets.push_back({{"label", "ideal linear scaling"}, {"points", ideal}, {"axis", "y"}, {"dashed", true}});
      charts.push_back({{"kind", "lines"},
                        {"id", "world_size-" + c.name},
                        {"title", fmt::format("{}: scaling vs world_size ({})", c.name, run.label)},
                        {"x_label", "world_size"},
                        {"y_label", "samples/s"},
                        {"y2_label", ""},
                        {"datasets", datasets}});
    }
  }
}

// The input-pipeline ladder (a case with param pipeline=ladder): each rung's images/s as a bar,
// and the model's consumption rate (its `synthetic` arm, loader-only runs) as a line across them.
void ladder_charts(const NamedRun& run, json& charts) {
  for (const auto& suite : run.result.suites) {
    if (!draws(suite, ChartKind::pipeline_ladder)) continue;
    for (const auto& c : suite.cases) {
      if (find_level(c.params, "pipeline") != std::optional<std::string>("ladder")) continue;
      json labels = json::array(), values = json::array();
      std::optional<double> consumption;
      for (const auto& arm : c.arms) {
        const bool ok = arm.status == ArmStatus::ok && arm.throughput_samples_per_s.n > 0;
        if (arm.arm == "synthetic") {
          if (ok) consumption = arm.throughput_samples_per_s.median;
          continue;
        }
        // A rung that did not run is a gap named with its status ("uint8 (skipped)").
        labels.push_back(ok ? arm.arm : fmt::format("{} ({})", arm.arm, to_string(arm.status)));
        values.push_back(ok ? json(arm.throughput_samples_per_s.median) : json(nullptr));
      }
      if (labels.empty()) continue;
      charts.push_back({{"kind", "ladder"},
                        {"id", "ladder-" + c.name},
                        {"title", fmt::format("{}: images/s per rung of the input pipeline{} ({})", c.name,
                                              consumption ? ", and the model's consumption" : "", run.label)},
                        {"value_label", "images/s"},
                        {"labels", labels},
                        {"values", values},
                        {"consumption", nullable(consumption)},
                        {"consumption_label", "the model's consumption (training on synthetic data)"}});
    }
  }
}

// Memory against step time, one point per arm, for arms with a `checkpoint` level.
void tradeoffs(const NamedRun& run, json& charts) {
  for (const auto& suite : run.result.suites) {
    if (!draws(suite, ChartKind::memory_vs_time)) continue;
    for (const auto& c : suite.cases) {
      json datasets = json::array();
      for (const auto& arm : c.arms) {
        if (!find_level(arm.levels, "checkpoint") || arm.status != ArmStatus::ok || !mib(arm)) continue;
        datasets.push_back(
            {{"label", arm.arm}, {"points", json::array({{{"x", arm.step_time_ms.median}, {"y", *mib(arm)}}})}});
      }
      if (datasets.size() < 2) continue;
      charts.push_back({{"kind", "scatter"},
                        {"id", "tradeoff-" + c.name},
                        {"title", fmt::format("{}: peak memory vs step time per policy ({})", c.name, run.label)},
                        {"x_label", "median step time (ms)"},
                        {"y_label", "peak memory (MiB)"},
                        {"datasets", datasets}});
    }
  }
}

// Each suite's arms across runs in time order.
void trends(std::vector<const NamedRun*> runs, json& charts) {
  std::stable_sort(runs.begin(), runs.end(), [](const NamedRun* a, const NamedRun* b) {
    return a->result.context.timestamp_utc < b->result.context.timestamp_utc;
  });
  if (runs.size() < 2) return;
  json x_labels = json::array();
  for (const auto* r : runs) x_labels.push_back(r->result.context.timestamp_utc + " " + r->label);
  std::vector<std::string> suites;
  for (const auto* r : runs) {
    for (const auto& s : r->result.suites) {
      if (std::find(suites.begin(), suites.end(), s.name) == suites.end()) suites.push_back(s.name);
    }
  }
  for (const auto& suite : suites) {
    std::vector<std::string> arms;
    std::map<std::string, std::vector<std::optional<double>>> series;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      for (const auto& s : runs[i]->result.suites) {
        if (s.name != suite) continue;
        for (const auto& c : s.cases) {
          for (const auto& arm : c.arms) {
            if (arm.status != ArmStatus::ok || arm.throughput_samples_per_s.n == 0) continue;
            const std::string label = c.name + "/arm:" + arm.arm;
            if (!series.contains(label)) {
              arms.push_back(label);
              series[label].resize(runs.size());
            }
            series[label][i] = arm.throughput_samples_per_s.median;
          }
        }
      }
    }
    json datasets = json::array();
    for (const auto& label : arms) {
      json values = json::array();
      int points = 0;
      for (const auto& v : series[label]) {
        values.push_back(nullable(v));
        points += v.has_value();
      }
      if (points >= 2) datasets.push_back({{"label", label}, {"values", values}});  // a trend needs two points
    }
    if (datasets.empty()) continue;
    charts.push_back({{"kind", "trend"},
                      {"id", "trend-" + suite},
                      {"title", fmt::format("History: {} throughput per arm across {} runs", suite, runs.size())},
                      {"y_label", "samples/s"},
                      {"x_labels", x_labels},
                      {"datasets", datasets}});
  }
}

}  // namespace

json report_model(const std::vector<NamedRun>& runs, const std::vector<NamedRun>& history, const HtmlOptions& options) {
  json charts = json::array();
  if (auto c = speedup_chart(runs); !c.is_null()) charts.push_back(c);
  if (auto c = change_chart(runs, options); !c.is_null()) charts.push_back(c);
  if (!runs.empty()) {
    const NamedRun& primary = runs.at(std::min(options.primary, runs.size() - 1));
    heatmaps(primary, charts);
    level_curves(primary, "batch", ChartKind::batch_curves, charts);
    tradeoffs(primary, charts);
    scaling_curves(primary, charts);
    ladder_charts(primary, charts);
  }
  std::vector<const NamedRun*> timeline;
  for (const auto& r : history) timeline.push_back(&r);
  if (history.empty()) {
    for (const auto& r : runs) timeline.push_back(&r);
  }
  trends(timeline, charts);
  const json why = detail::why_entries(runs, options, charts);
  json run_list = json::array();
  for (const auto& r : runs) {
    const auto& ctx = r.result.context;
    run_list.push_back({{"label", r.label},
                        {"fingerprint_slug", ctx.fingerprint_slug},
                        {"device", ctx.device},
                        {"timestamp_utc", ctx.timestamp_utc},
                        {"git", ctx.git.sha},
                        {"inject_slowdown_pct", ctx.settings.inject_slowdown_pct}});
  }
  return {{"title", options.title}, {"runs", run_list}, {"charts", charts}, {"why", why}};
}

}  // namespace tipbench::reports
