// Internal to the CLI: the options of `tipbench run` (tipbench/results/recorded_options.h, shared with
// the partial-file reader) and what only the CLI does with them: the suite context they give, the
// suite options' defaults, and the catalogue of this build's suites, models and options that a
// recorded run is checked against. Example:
//   RunOptions o;  o.suite_options = default_suite_options();
//   const ResumeFile r = read_resume_file(path, run_option_catalogue());
#pragma once

#include "tipbench/results/recorded_options.h"
#include "tipbench/suite/suite.h"

namespace tipbench::cli {

using tipbench::kRanksPerCoreOversubscribed;
using tipbench::measure_settings_from;
using tipbench::run_option_differences;
using tipbench::run_option_problems;
using tipbench::run_options_from_json;
using tipbench::run_options_to_json;
using tipbench::RunOptions;

// Every declared suite option at its default: what a run starts from before the flags.
SuiteOptionValues default_suite_options();
// This build's suites, models and declared suite options.
RunOptionCatalogue run_option_catalogue();
SuiteContext suite_context_from(const RunOptions& o, const c10::Device& device);

}  // namespace tipbench::cli
