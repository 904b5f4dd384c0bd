// A tipbench run as Google Benchmark JSON, so google/benchmark's tools/compare.py can compare two
// runs: one benchmark per arm, one repetition per trial (block) with real_time = cpu_time = the
// trial's mean step time in ms, plus the median aggregate. compare.py's U test then runs over
// the repetitions. Example:
//   std::string text = tipbench::reports::to_gbench_json(result).dump(2);
#pragma once

#include "tipbench/results/result.h"

#include <nlohmann/json.hpp>

namespace tipbench::reports {

// Benchmark names: "<suite>/<case params>/arm:<arm>" (the arm's full name). Skipped and failed arms
// are left out (compare.py has no notion of them); their names are listed in context.
nlohmann::ordered_json to_gbench_json(const Result& result);

}  // namespace tipbench::reports
