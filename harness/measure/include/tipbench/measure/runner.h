// Executes suites on a device: for every case, `blocks` blocks, each one trial of every runnable
// arm in shuffled order; trials of sticky process-wide knobs run in fresh processes. Returns the
// filled results (raw samples, summaries, comparisons). Example:
//   tipbench::Progress progress(tipbench::Progress::stderr_is_tty());
//   auto suites = tipbench::run_suites({suite_ptrs, context, settings}, progress);
#pragma once

#include "tipbench/results/partial_run.h"
#include "tipbench/common/progress.h"
#include "tipbench/results/result.h"
#include "tipbench/statistics/settings.h"
#include "tipbench/suite/suite.h"
#include "tipbench/measure/time_budget.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tipbench {

struct RunPlan {
  std::vector<const Suite*> suites;
  SuiteContext context;
  MeasureSettings settings;
  std::string self_executable;  // binary that runs fresh-process trials (`tipbench __trial`)
  // Resuming an interrupted run: cases it finished, by case name, are taken as they are.
  std::map<std::string, CaseResult> finished_cases;
  // Called after every case measured here, with every suite so far (the current one in part),
  // e.g. to keep the finished work in a partial file.
  std::function<void(const std::vector<SuiteResult>&)> case_finished;
  // Called after every block of a case that does not end the case, with the finished cases so
  // far and the case in progress: a long case can then finish in a later command.
  std::function<void(const std::vector<SuiteResult>&, const CaseInProgress&)> block_finished;
  // Resuming inside a case: its finished blocks (the run's options must be the same).
  std::optional<CaseInProgress> resumed_case;
  // Under a time budget: the cases' times in an earlier run, for the forecast said up front of
  // which cases the budget will cut or never start.
  std::map<std::string, CaseTime> earlier_case_times;
  // A failed arm's reason is one line; verbose also prints the error's whole text (backtrace).
  bool verbose = false;
};

std::vector<SuiteResult> run_suites(const RunPlan& plan, Progress& progress);

}  // namespace tipbench
