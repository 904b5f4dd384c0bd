// `tipbench compare`: per suite/case/arm/metric, each run's median with its 95% interval, and each
// later run against the first as a change in percent with a 95% interval and a verdict. Runs
// whose fingerprints differ are allowed (comparing GPUs is a main use) and marked, with the
// differing fields. Example:
//   tipbench::reports::print_comparison(runs, {.practical_threshold = 0.03}, stdout);
#pragma once

#include "tipbench/reports/run_set.h"

#include <cstdio>
#include <string>

namespace tipbench::reports {

void print_comparison(const std::vector<NamedRun>& runs, const gate::CompareOptions& options, std::FILE* out);
// A Markdown summary for PR comments: runs, then one table, the worst changes first.
std::string comparison_markdown(const std::vector<NamedRun>& runs, const gate::CompareOptions& options);
// One run on its own: every tip's ratio to its baseline arm, the worst first.
std::string run_markdown(const NamedRun& run);

}  // namespace tipbench::reports
