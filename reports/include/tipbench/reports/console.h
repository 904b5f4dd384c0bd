// The summary printed at the end of `tipbench run`: per case, one row per arm (median step time
// with p10-p90, throughput, between-block CV, memory) and one line per comparison with its
// ratio, 95% CI and verdict; noisy rows carry their fix. Then the run's answer: the findings
// table (findings.h), one noise line, one warm-up line (its arms with --verbose).
//   tipbench::reports::print_run_summary(result, stdout);
#pragma once

#include "tipbench/results/result.h"

#include <cstdio>

namespace tipbench::reports {

struct ConsoleOptions {
  bool verbose = false;  // the warm-up check lists its arms
};

void print_run_summary(const Result& result, std::FILE* out, const ConsoleOptions& options = {});

}  // namespace tipbench::reports
