// `tipbench history detect`: change points in every stored series (docs/history.md). A series is
// one cell (suite, case, arm, metric) on one kind of hardware and one model; its software (LibTorch,
// CUDA, driver) may change along it, and a change point names what changed between its two sides.
// Example:
//   tipbench::history::HistoryStore store("results/history.db");
//   const auto report = tipbench::history::detect(store, {});
//   fmt::print("{}", tipbench::history::detect_console(report));
#pragma once

#include "tipbench/gate/gate_config.h"
#include "tipbench/history/change_points.h"
#include "tipbench/history/store.h"
#include "tipbench/history/trends.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace tipbench::history {

struct DetectRequest {
  DetectorOptions detector;        // window, p-value; min_change is set per series (below)
  double min_change_floor = 0.01;  // no change under 1% is reported (Chromium's dashboard's filter)
  double noise_multiple = 1.5;     // ... nor one under 1.5 x the series' run-to-run noise (docs/history.md)
  std::string since;               // UTC time: only changes whose first run after is this late are new
  std::string filter;              // substring of "suite/case/arm metric" ("" = every series)
  // Series of counted work (gate/count_checks.h): a step at the first run whose count moved beyond
  // the metric's tolerance from the run before it, no window and no statistics; load flags none.
  std::map<std::string, double> count_tolerances = gate::GateConfig{}.counts;
};

// One change point of one series' per-run values, judged: which way it went, the series' own bound.
struct JudgedChange {
  ChangePoint point;
  double min_change = 0;    // the series' own bound (noise-derived, at least the floor)
  bool regression = false;  // the metric moved the wrong way
};

// The change points of one series (per-run values, oldest first), with the request's bounds.
std::vector<JudgedChange> judge_series(const std::vector<double>& values, bool higher_is_better,
                                       const DetectRequest& request);

// A count series' steps: every run whose count differs from the run before it by more than
// `tolerance` (a fraction of that count; 0: any change). mean_before and mean_after are the two
// runs' counts, n_before and n_after the runs since the step before and until the next; ratio is
// after / before (a count from 0: 1 + after), p_value 0 (exact). More work is a regression.
std::vector<JudgedChange> judge_count_series(const std::vector<double>& values, double tolerance);

struct SeriesChange {
  std::string suite;
  std::string cell;  // "suite/model:m/batch:8/arm:base": the case and the arm
  std::string metric, hardware, model_sha256;
  ChangePoint point;
  double min_change = 0;    // the series' own bound (noise-derived, at least the floor)
  bool regression = false;  // the metric moved the wrong way
  bool is_new = true;       // its first run after is no earlier than `since`
  std::string before_time, after_time, before_git, after_git;
  std::int64_t before_run = 0, after_run = 0;
  std::int64_t after_series = 0;  // the stored series (one software stack's) of the run after
  std::string software_change;    // "libtorch_version 2.11.0 -> 2.15.0, ..." between the two runs; "" if none
  std::string expected;           // an expected_change annotation's note: never a new regression ("" if none)
};

// "REGRESSION" (new), "regression" (before --since), "improvement" or "expected" (annotated).
std::string verdict_of(const SeriesChange& change);

struct DetectReport {
  DetectRequest request;
  std::size_t series = 0, runs = 0;     // series examined, run points in them
  std::size_t flagged = 0;              // points left out: measured under load (conditions of measurement)
  std::size_t excluded = 0;             // points left out by an exclude_run annotation
  std::vector<SeriesChange> changes;    // by series, then by run
  std::size_t new_regressions() const;  // exit 1 when > 0
};

// Reads every series of the store and finds its change points. Throws StoreError.
DetectReport detect(const HistoryStore& store, const DetectRequest& request);
// The same for series already read (read_trends with the request's filter): a caller that draws
// them too (the dashboard) reads the store once.
DetectReport detect(const std::vector<SeriesTrend>& trends, const DetectRequest& request);

// The report's change points as the store keeps them (`detect --record`), detected at `now_utc`.
std::vector<StoredChangePoint> stored_change_points(const DetectReport& report, const std::string& now_utc);

std::string detect_console(const DetectReport& report);
std::string detect_markdown(const DetectReport& report);
nlohmann::json detect_json(const DetectReport& report);

}  // namespace tipbench::history
