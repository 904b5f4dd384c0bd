// Internal to the CLI: what `tipbench run` checks before any work (docs/cli.md: bad input is exit
// 2, found in a second, not after the benchmark), and `run --dry-run`, which stops after them.
// Example (run_command.cpp):
//   if (auto code = check_outputs(o, argv, /*keeps_partial=*/o.resume.empty())) return *code;
#pragma once

#include "cli/shared/cli_checks.h"     // usage_error
#include "cli/shared/device_choice.h"  // resolve_device

#include "run_options.h"
#include "tipbench/measure/runner.h"

#include <c10/core/Device.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tipbench::cli {

// The suites named (or all); an unknown name is an InputError, never dropped silently.
std::vector<const Suite*> selected_suites(const std::vector<std::string>& names);

// A suite's own flag (`--bucket-mb`) given while no selected suite declares it would be ignored
// without a word: the reason, naming the suites that declare it.
std::optional<std::string> suite_option_problem(const std::vector<const Suite*>& selected,
                                                const std::set<std::string>& typed);

// The command line is valid UTF-8 (a result records it as JSON text), --out (given its default
// here), --profile's directory and, when the run keeps its finished cases, the partial file beside
// --out can be written: else the error is printed and its exit code returned.
std::optional<int> check_outputs(RunOptions& o, const std::vector<std::string>& argv, bool keeps_partial);

// --dry-run: the checks above, then one line and exit 0 with nothing measured or written. The
// gate asks each of its binaries this before block 0.
int dry_run(RunOptions o, const RunPlan& plan, const std::vector<std::string>& argv);

}  // namespace tipbench::cli
