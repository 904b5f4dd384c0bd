// Internal to the reports: the page's "Why" section (`run --explain`, docs/explain.md). For every
// throughput comparison whose arms recorded step breakdowns (a run's own treatment against its
// baseline, and each later run's cell against the first run's), the explanation's lines and a
// bar chart of its top keys' Δ ms per step with their 95% intervals.
#pragma once

#include "tipbench/reports/html_report.h"
#include "tipbench/reports/run_set.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tipbench::reports::detail {

// At most this many comparisons are explained on one page (the largest step differences first).
inline constexpr std::size_t kMaxWhyOnAPage = 24;

// Appends a bars_ci chart per explained comparison to `charts` and returns the section's entries:
// [{"title": ..., "lines": [...]}].
nlohmann::json why_entries(const std::vector<NamedRun>& runs, const HtmlOptions& options, nlohmann::json& charts);

// The section's HTML (escaped), "" without entries.
std::string why_section(const nlohmann::json& entries);

}  // namespace tipbench::reports::detail
