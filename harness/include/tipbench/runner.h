// Executes suites on a device: for every case, `blocks` blocks, each one trial of every runnable
// arm in shuffled order; trials of sticky process-wide knobs run in fresh processes. Returns the
// filled results (raw samples, summaries, comparisons). Example:
//   tipbench::Progress progress(tipbench::Progress::stderr_is_tty());
//   auto suites = tipbench::run_suites({suite_ptrs, context, settings}, progress);
#pragma once

#include "tipbench/progress.h"
#include "tipbench/result.h"
#include "tipbench/settings.h"
#include "tipbench/suite.h"

#include <string>
#include <vector>

namespace tipbench {

struct RunPlan {
  std::vector<const Suite*> suites;
  SuiteContext context;
  MeasureSettings settings;
  std::string self_executable;  // binary that runs fresh-process trials (`tipbench __trial`)
};

std::vector<SuiteResult> run_suites(const RunPlan& plan, Progress& progress);

}  // namespace tipbench
