// The summary printed at the end of `tipbench run`: per case, one row per arm (median step time
// with p10-p90, throughput, between-block CV, memory) and one line per comparison with its
// ratio, 95% CI and verdict; noisy rows carry their fix.
//   tipbench::reports::print_run_summary(result, stdout);
#pragma once

#include "tipbench/results/result.h"

#include <cstdio>

namespace tipbench::reports {

void print_run_summary(const Result& result, std::FILE* out);

}  // namespace tipbench::reports
