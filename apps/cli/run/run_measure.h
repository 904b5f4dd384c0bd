// Internal to the CLI: a run from its banner to its written result. The finished cases are kept in
// the partial file as the run goes on (and the line an interrupt prints names it), the result is
// written atomically, and the partial file goes only once the result holds every case it kept.
// Example (run_command.cpp):
//   return measure_and_write(o, plan, result, partial_path);   // "" : no partial file (a rank)
#pragma once

#include "run_options.h"
#include "tipbench/results/result.h"
#include "tipbench/measure/runner.h"

#include <string>

namespace tipbench::cli {

// Runs the plan into `result` and writes it to o.out. Returns run's exit code: 0, 1 when an arm
// failed or is invalid (the result is still written), 2 for bad input found while staging or
// measuring (nothing written), 4 when the result cannot be written.
int measure_and_write(const RunOptions& o, RunPlan& plan, Result& result, const std::string& partial_path);

}  // namespace tipbench::cli
