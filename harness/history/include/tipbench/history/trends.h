// The store's series as the detector and the dashboard read them: one cell (case, arm, metric) on
// one kind of hardware and one model, its runs merged across software stacks in time order (a
// LibTorch upgrade stays in the series, and a change at it is named), each run's block median,
// and which runs were measured under load (conditions of measurement).
// Example:
//   for (const auto& t : tipbench::history::read_trends(store, "zero_grad/")) use(t.cell, t.medians);
#pragma once

#include "tipbench/history/store.h"

#include <string>
#include <vector>

namespace tipbench::history {

struct SeriesTrend {
  std::string suite, cell, metric, hardware, model_sha256;  // cell: "case/arm:name"
  std::vector<TrendPoint> runs;                             // oldest first
  std::vector<double> medians;                              // per run: the median of its blocks' samples
  std::vector<bool> loaded;              // per run: other processes or the hypervisor took a share of the CPUs
  std::vector<std::string> excluded;     // per run: an exclude_run annotation's note ("" when none)
  std::vector<std::int64_t> series_ids;  // the stored series it joins (one per software stack)
  std::vector<Annotation> expected;      // expected_change annotations that apply to it
};

// Every series whose "cell metric" contains `filter` ("" = all), in (cell, metric, hardware,
// model) order, with the store's annotations applied: an expected change applies to a trend when
// it names one of its series, or names none and its run is in the trend. Throws StoreError.
std::vector<SeriesTrend> read_trends(const HistoryStore& store, const std::string& filter);

// The hardware part of a fingerprint slug ("nvidia-h100-80gb-hbm3" of
// "nvidia-h100-80gb-hbm3_cuda13.0_torch2.11.0"): what the runs of one series share.
std::string hardware_of_slug(const std::string& slug);

}  // namespace tipbench::history
