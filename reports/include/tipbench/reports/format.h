// Number formatting shared by every reporter, so a figure reads the same everywhere.
//   human_bytes(1536) == "1.5 KiB";  ratio_with_ci(c) == "x1.043 [1.021, 1.065]"
#pragma once

#include "tipbench/results/result.h"

#include <cstdint>
#include <string>

namespace tipbench::reports {

std::string human_bytes(std::int64_t bytes);
std::string percent(double fraction, int decimals = 1);  // 0.0123 -> "1.2%"
std::string ratio_with_ci(const Comparison& c);
// "throughput" for throughput_samples_per_s, "cpu time" for step_cpu_time_ms, "memory" for the
// memory metrics.
std::string metric_label(const std::string& metric);
// As metric_label, but a memory metric keeps its own name (peak_allocated_bytes, ...): for tables
// that show several memory figures side by side.
std::string metric_heading(const std::string& metric);
// The verdict in words that fit the metric: "faster"/"slower" for throughput and CPU time, "less
// memory"/"more memory" for memory (the schema keeps faster/slower for all; docs/result-schema.md).
std::string verdict_label(const std::string& metric, stats::Verdict verdict);
std::string verdict_label(const Comparison& c);
// A metric's value with its unit: "1234.5/s", "12.345 ms", "1.5 MiB".
std::string format_metric_value(const std::string& metric, double value);
// What the tip's sources claim, for the line under the suite's name: "source claim (002):
// \"moderately improves performance\", less memory"; "" for a suite without one.
std::string source_claim_line(const SuiteResult& suite);
// "" for a real run; for a run made with --inject-slowdown, a loud one-line warning that its
// numbers were slowed down on purpose (every reporter prints it, so it cannot pass for real).
std::string injected_slowdown_banner(const Result& result);

}  // namespace tipbench::reports
