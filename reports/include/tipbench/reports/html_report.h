// `tipbench report`: one self-contained HTML file (opens offline) with charts drawn by Chart.js,
// whose source is read from Debian's libjs-chart.js and inlined into the page. The page's data
// is a JSON "model" built here (testable without a browser); every string from a result is
// escaped. Charts, each drawn only where its data is present:
//   speedup   per-tip throughput ratio vs the case's baseline arm, 95% CI whiskers, per run
//   change    per-cell change of each later run vs the first (or vs --baseline), 95% CI
//   heatmap   a case whose arms vary in two factors (dataloader: workers x pin_memory)
//   batch     throughput and memory vs an arm's `batch` level (batch_size sweep)
//   tradeoff  memory vs step time per arm for arms with a `checkpoint` level
//   scaling   throughput vs a `world_size` level or param (DDP), with ideal linear scaling
//   ladder    a `pipeline:ladder` case (dataloader): images/s per rung, with the model's
//             consumption on synthetic data as a line when the case has a `synthetic` arm
//   trend     each arm's throughput across runs in time order (history)
// Example:
//   auto model = tipbench::reports::report_model(runs, history, {});
//   std::string html = tipbench::reports::render_html(model, tipbench::reports::read_chartjs(path));
#pragma once

#include "tipbench/results/advice.h"

#include "tipbench/reports/run_set.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tipbench::reports {

inline constexpr const char* kDefaultChartJs = "/usr/share/javascript/chart.js/chart.min.js";
// Where `report` looks for Chart.js without --chartjs: $TIPBENCH_CHARTJS when set (the device
// bundle ships its own copy, for machines without Debian's libjs-chart.js), else kDefaultChartJs.
std::string default_chartjs_path();

struct HtmlOptions {
  std::string title = "tipbench report";
  double practical_threshold = 0.03;
  bool paired = false;      // the runs come from one interleaved session
  std::size_t primary = 0;  // the run whose own charts (heatmap, curves, trade-offs) are drawn
};

// runs: the first is the reference (RUN.json, or --baseline when given). history: more runs of
// the same machine for the trend charts (may be empty).
nlohmann::json report_model(const std::vector<NamedRun>& runs, const std::vector<NamedRun>& history,
                            const HtmlOptions& options);

// The Chart.js UMD bundle; throws InputError naming the package to install when it is missing.
std::string read_chartjs(const std::string& path);

// The page: summary tables rendered here (escaped), charts drawn by the inlined script from the
// model (embedded with json_for_script). When every chart has drawn, <body> carries
// data-charts-drawn="N" (canvases with painted pixels) and data-js-errors="K". An arm profiled with
// `run --profile` gets a row with its top ops and a link to its trace, relative to `page_dir` (the
// directory the page is written to; "": the path as recorded). `advice`: an advise report's
// "Advice" section (advice_report.h), after the runs.
std::string render_html(const nlohmann::json& model, const std::vector<NamedRun>& runs,
                        const std::string& chartjs_source, const std::string& page_dir = "",
                        const Advice* advice = nullptr);

}  // namespace tipbench::reports
